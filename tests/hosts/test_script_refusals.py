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
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_script_ownership import (
    CENTRAL,
    IC,
    OVN_IC_NB,
    OVN_IC_SB,
    PLATFORM_ROUTER,
    central_env,
    ic_databases,
    ic_script_env,
)
from test_script_pruning import FABRIC, ROUTER, controller_script, ctl, edited, rows, sh

from fabricgen.plan.deployments import OWNER_KEY
from support.ovsdb import OPEN_VSWITCH, OVN_NB, OVN_SB, Database, OvsdbServers, missing

pytestmark = pytest.mark.lab  # starts real programs: ovn-ic-nbctl, ovn-nbctl, ovn-sbctl, ovsdb-client, ovsdb-server...


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


# --- configure-ovn-ic.sh --------------------------------------------------------------------


def test_a_refused_ic_run_creates_no_global_row(databases: OvsdbServers, scripts: Path) -> None:
    """An operator's router port in the way; the SB and IC SB are new, without their global rows."""
    dbs = ic_databases(databases)
    env = ic_script_env(dbs)
    ctl("ovn-nbctl", env, "lr-add", "operators-router", "--",
        "lrp-add", "operators-router", "dc-ts", "00:00:00:00:99:01", "169.254.100.99/24")
    before = dumps(dbs)
    refused = sh(controller_script(FABRIC, IC, scripts), env)
    assert refused.returncode == 1, refused.stderr + refused.stdout
    assert f"router port dc-ts exists and is not fabricgen's ({OWNER_KEY}: none); left alone" in refused.stderr
    assert dumps(dbs) == before, "a refused run changed a database"
    for name, table in (("sb", "SB_Global"), ("ic_sb", "IC_SB_Global")):
        assert "_uuid" not in global_rows(dbs[name], table).splitlines()[-1], table


def test_a_missing_platform_router_stops_the_ic_script_before_any_write(
        databases: OvsdbServers, scripts: Path) -> None:
    dbs = ic_databases(databases)
    env = ic_script_env(dbs)
    before = dumps(dbs)
    refused = sh(controller_script(edited(FABRIC, PLATFORM_ROUTER), IC, scripts), env)
    assert refused.returncode == 1, refused.stderr + refused.stdout
    assert f"router {ROUTER} does not exist; its platform creates it (createRouter: false)" in refused.stderr
    assert dumps(dbs) == before, "the script wrote before it stopped"


def test_the_ic_script_waits_for_the_transit_switch_before_it_adds_ports(
        databases: OvsdbServers, scripts: Path) -> None:
    """ovn-ic copies the transit switch only once NB_Global names the AZ. On a first run the name
    is the only write before the wait; once the name is set, a run whose transit switch does not
    arrive writes nothing. FABRICGEN_TS_WAIT shortens the wait (seconds, default 60)."""
    dbs = ic_databases(databases, copied=False)
    env = {**ic_script_env(dbs), "FABRICGEN_TS_WAIT": "1"}
    script = controller_script(FABRIC, IC, scripts)

    first = sh(script, env)
    assert first.returncode == 1, first.stderr + first.stdout
    assert "ovn-ic has not copied transit switch ts into the northbound database" in first.stderr
    assert ctl("ovn-nbctl", env, "get", "NB_Global", ".", "name") == "dc"
    assert rows(env, "Logical_Router", "name") == {}
    assert rows(env, "Logical_Router_Port", "name") == {}

    before = dumps(dbs)
    again = sh(script, env)
    assert again.returncode == 1, again.stderr + again.stdout
    assert "ovn-ic has not copied transit switch ts into the northbound database" in again.stderr
    assert dumps(dbs) == before, "a run waiting for the transit switch wrote"


@pytest.mark.parametrize("wait", ["", "0", "abc", "1;touch x", "-1", "0x10", "100000"])
def test_the_ic_script_refuses_a_wait_that_is_not_a_number(databases: OvsdbServers, scripts: Path,
                                                            wait: str) -> None:
    dbs = ic_databases(databases)
    env = {**ic_script_env(dbs), "FABRICGEN_TS_WAIT": wait}
    before = dumps(dbs)
    refused = sh(controller_script(FABRIC, IC, scripts), env)
    assert refused.returncode == 1, refused.stderr + refused.stdout
    assert f"FABRICGEN_TS_WAIT '{wait}' is not a whole number of seconds from 1 to 99999" in refused.stderr
    assert dumps(dbs) == before


def test_a_local_switch_named_like_the_transit_switch_stops_the_ic_script(
        databases: OvsdbServers, scripts: Path) -> None:
    """A switch `ts` of the AZ's own (not ovn-ic's copy, which carries other_config:interconn-ts)
    would get the transit port, and ovn-ic's copy would make the name ambiguous."""
    dbs = ic_databases(databases, copied=False)
    env = ic_script_env(dbs)
    ctl("ovn-nbctl", env, "ls-add", "ts")
    before = dumps(dbs)
    refused = sh(controller_script(FABRIC, IC, scripts), env)
    assert refused.returncode == 1, refused.stderr + refused.stdout
    assert ("switch ts exists and is not the transit switch ovn-ic copies (other_config:interconn-ts=ts); "
            "left alone") in refused.stderr
    assert dumps(dbs) == before


# --- configure-ovn-host.sh ------------------------------------------------------------------


@pytest.mark.parametrize("value", ["10.250.0.300", '10.250.0.21"', "10.250.0", "eth1", " 10.250.0.21",
                                   "10.250.0.021"])
def test_the_host_script_refuses_an_encap_ip_that_is_not_an_address(databases: OvsdbServers, tmp_path: Path,
                                                                    value: str) -> None:
    from support.deployment_fabrics import BASE
    from support.fabrics import build_text

    build = build_text(BASE, "sites/t/fabric.yaml")
    path = next(p for p in build.files if p.name == "configure-ovn-host.sh" and "kvm01" in p.parts)
    script = tmp_path / "configure-ovn-host.sh"
    script.write_text(build.files[path].text)
    ovs = databases.start(OPEN_VSWITCH)
    env = {**os.environ, "OVS_RUNDIR": str(ovs.directory), "OVN_ENCAP_IP": value}
    before = ovs.dump()
    result = subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True)
    assert result.returncode == 1, result.stderr + result.stdout
    assert f"OVN_ENCAP_IP '{value}' is not an IPv4 address" in result.stderr
    assert ovs.dump() == before, "the script wrote before it stopped"
