"""A host script that stops has written nothing, against real OVN 23.03 and Open vSwitch 3.1.

Every check a script makes (a database that does not answer, a row in its way, a router the
platform has not created yet, an environment value that is not an address, a transit switch
ovn-ic has not copied yet) runs before its first write; the ctl tools' reads run with
`--dry-run`, because ovn-nbctl, ovn-sbctl, ovn-ic-nbctl, ovn-ic-sbctl and ovs-vsctl insert the
database's missing singleton row (NB_Global, SB_Global, IC_NB_Global, IC_SB_Global,
Open_vSwitch) in any transaction they commit, a read included (ovn-org/ovn
utilities/ovn-nbctl.c, utilities/ovn-sbctl.c, ic/ovn-ic-nbctl.c, ic/ovn-ic-sbctl.c and
openvswitch/ovs utilities/ovs-vsctl.c: `..._insert(txn)` when `..._first(idl)` is NULL).
So a refused run leaves every database byte for byte as it was, with no global row created.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabricgen.plan.deployments import OWNER_KEY
from support.ovsdb import OVN_NB, OVN_SB, Database, OvsdbServers, missing
from test_script_ownership import CENTRAL, OVN_IC_NB, OVN_IC_SB, central_env
from test_script_pruning import FABRIC, controller_script, ctl, sh


@pytest.fixture
def databases(tmp_path: Path) -> Iterator[OvsdbServers]:
    gone = missing() + [str(s) for s in (OVN_IC_NB, OVN_IC_SB) if not s.exists()]
    if gone:
        pytest.skip(f"not installed: {', '.join(gone)}")
    with OvsdbServers(tmp_path / "db") as servers:
        yield servers


@pytest.fixture
def scripts(tmp_path: Path) -> Path:
    path = tmp_path / "scripts"
    path.mkdir()
    return path


def dumps(dbs: dict[str, Database]) -> dict[str, str]:
    return {name: db.dump() for name, db in dbs.items()}


def global_rows(db: Database, table: str) -> str:
    """The rows of one table as `ovsdb-client dump` lists them (headings only when empty)."""
    return ctl("ovsdb-client", dict(os.environ), "dump", db.remote, db.name, table)


# --- configure-ovn-central.sh ---------------------------------------------------------------


def test_a_refused_central_run_creates_no_sb_global(databases: OvsdbServers, scripts: Path) -> None:
    """The NB holds an operator's switch in the way; the SB is new, without SB_Global."""
    nb, sb = databases.start(OVN_NB), databases.start(OVN_SB)
    env = central_env(nb, sb)
    ctl("ovn-nbctl", env, "init")
    ctl("ovn-nbctl", env, "ls-add", "storage")
    before = dumps({"nb": nb, "sb": sb})
    refused = sh(controller_script(FABRIC, CENTRAL, scripts), env)
    assert refused.returncode == 1, refused.stderr
    assert f"switch storage exists and is not fabricgen's ({OWNER_KEY}: none); left alone" in refused.stderr
    assert dumps({"nb": nb, "sb": sb}) == before, "a refused run changed a database"
    assert "_uuid" not in global_rows(sb, "SB_Global").splitlines()[-1]


def test_a_refused_central_run_creates_no_nb_global(databases: OvsdbServers, scripts: Path) -> None:
    """The SB holds an operator's listener on the SB port; the NB is new, without NB_Global."""
    nb, sb = databases.start(OVN_NB), databases.start(OVN_SB)
    env = central_env(nb, sb)
    ctl("ovn-sbctl", env, "init")
    ctl("ovn-sbctl", env, "set-connection", "pssl:6642")
    before = dumps({"nb": nb, "sb": sb})
    refused = sh(controller_script(FABRIC, CENTRAL, scripts), env)
    assert refused.returncode == 1, refused.stderr
    assert "southbound Connection pssl:6642 listens on port 6642" in refused.stderr
    assert dumps({"nb": nb, "sb": sb}) == before, "a refused run changed a database"
