"""Controller scripts are declarative for what they own, against real OVN (Debian OVN 23.03).

A fabric is rendered and its `configure-ovn-central.sh` / `configure-ovn-ic.sh` run; then a
changed fabric (provider networks removed, a zone and with it its backbone removed, an
advertised CIDR removed from the other deployment, the AZ renamed) is rendered and its
scripts run against the same databases. Objects the scripts marked with
`external_ids:fabricgen-owner` and the new fabric no longer yields are gone; the kept ones
are the same rows (same `_uuid`); rows without the marker, created by hand the way Neutron,
CloudStack or an operator would, survive; a further run changes nothing. (A row of the same
name as one the scripts manage that is not theirs stops them: test_script_ownership.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from ipaddress import IPv4Address
from pathlib import Path, PurePosixPath

import pytest

from fabricgen.lab.ovn.running import poll
from fabricgen.lab.ovn.sandbox import Sandbox, missing_prerequisites
from fabricgen.pipeline import Build
from fabricgen.plan.deployments import OWNER_KEY
from support.fabrics import build_text
from support.ovsdb import OVN_NB, OVN_SB, OvsdbServers, missing

pytestmark = pytest.mark.lab  # starts real programs: ovn-ic, ovn-ic-nbctl, ovn-ic-sbctl, ovn-nbctl, ovn-northd...

SITE_FILE = "sites/pruned/fabric.yaml"
FABRIC = """\
apiVersion: fabricgen.io/v1alpha1
kind: Fabric
metadata:
  name: pruned
interconnection:
  database:
    members:
      - node: ic-db1
        address: 10.20.2.11
zones:
  - name: hq
    platform: kube-ovn
    gatewayNodes: [hq-gw1]
    transitAddress: 169.254.100.23
    backbone:
      cidr: 172.30.10.0/24
  - name: branch
    platform: kube-ovn
    gatewayNodes: [branch-gw1]
    transitAddress: 169.254.100.24
    backbone:
      cidr: 172.30.20.0/24
ovnDeployments:
  - name: dc
    databases:
      members:
        - host: ctl1
          address: 10.20.0.11
      clientNetworks: [10.20.0.0/24]
    providerNetworks:
      - name: public
        physicalNetwork: physnet1
      - name: storage
        physicalNetwork: physnet2
        vlan: 20
      - name: mgmt
        port: mgmt-uplink
        physicalNetwork: physnet1
        vlan: 30
    hosts:
      - name: gw1
        ethernets:
          - name: eth0
          - name: eth1
          - name: eth2
        bridges:
          - name: br-ex
            interfaces: [eth1]
          - name: br-st
            interfaces: [eth2]
        bridgeMappings:
          - physicalNetwork: physnet1
            bridge: br-ex
          - physicalNetwork: physnet2
            bridge: br-st
        tunnelEndpoint:
          loopback: 10.255.0.1/32
        bgp:
          asn: 65101
          uplinks: [eth0]
    interconnect:
      transitAddress: 169.254.100.200
      gatewayChassis: [gw1]
      advertise: [10.100.0.0/16]
  - name: dc2
    databases:
      members:
        - host: ctl2
          address: 10.21.0.11
      clientNetworks: [10.21.0.0/24]
    hosts:
      - name: gw2
        ethernets:
          - name: eth0
        tunnelEndpoint:
          loopback: 10.255.1.1/32
        bgp:
          asn: 65102
          uplinks: [eth0]
    interconnect:
      transitAddress: 169.254.100.201
      gatewayChassis: [gw2]
      advertise: [10.101.0.0/16, 10.102.0.5/32]
"""


def edited(text: str, *cuts: tuple[str, str]) -> str:
    for old, new in cuts:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


WITHOUT_NETWORKS = edited(FABRIC, ("""      - name: storage
        physicalNetwork: physnet2
        vlan: 20
      - name: mgmt
        port: mgmt-uplink
        physicalNetwork: physnet1
        vlan: 30
""", ""))
SHRUNK = edited(
    WITHOUT_NETWORKS,
    ("""  - name: branch
    platform: kube-ovn
    gatewayNodes: [branch-gw1]
    transitAddress: 169.254.100.24
    backbone:
      cidr: 172.30.20.0/24
""", ""),
    ("advertise: [10.101.0.0/16, 10.102.0.5/32]", "advertise: [10.101.0.0/16]"),
)
RENAMED = edited(SHRUNK, ("      transitAddress: 169.254.100.200\n",
                          "      azName: dc-east\n      transitAddress: 169.254.100.200\n"))


def controller_script(text: str, script: str, directory: Path, deployment: str = "dc", host: str = "ctl1") -> Path:
    build: Build = build_text(text, SITE_FILE)
    path = directory / f"{len(list(directory.iterdir()))}-{script}"
    path.write_text(build.files[PurePosixPath(build.site, "_host", deployment, "controllers", host, script)].text)
    return path


def ctl(tool: str, env: dict[str, str], *args: str) -> str:
    return subprocess.run([tool, *args], env=env, capture_output=True, text=True, check=True).stdout.strip()


@dataclass(frozen=True)
class Row:
    uuid: str
    owner: str


def rows(env: dict[str, str], table: str, *key_columns: str) -> dict[tuple[str, ...], Row]:
    """Every row of an NB table by its key columns, with its uuid and fabricgen owner."""
    columns = ["_uuid", "external_ids", *key_columns]
    out = json.loads(ctl("ovn-nbctl", env, "--format=json", f"--columns={','.join(columns)}", "list", table))
    assert out["headings"] == columns
    table_rows = {}
    for uuid, external_ids, *keys in out["data"]:
        owner = dict(external_ids[1]).get(OWNER_KEY, "")
        table_rows[tuple(str(k) for k in keys)] = Row(uuid[1], owner)
    return table_rows


def sh(script: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True, check=False)


# --- configure-ovn-central.sh: provider networks ----------------------------------------


@pytest.fixture
def databases(tmp_path: Path) -> Iterator[OvsdbServers]:
    gone = missing()
    if gone:
        pytest.skip(f"not installed: {', '.join(gone)}")
    with OvsdbServers(tmp_path / "db") as servers:
        yield servers


def test_central_script_prunes_removed_provider_networks_only(databases: OvsdbServers, tmp_path: Path) -> None:
    nb, sb = databases.start(OVN_NB), databases.start(OVN_SB)
    env = {**os.environ, "OVN_NB_DB": nb.remote, "OVN_SB_DB": sb.remote}

    def nbctl(*args: str) -> str:
        return ctl("ovn-nbctl", env, *args)

    scripts = tmp_path / "scripts"
    scripts.mkdir()
    nbctl("init")
    # What Neutron has: a provider network switch of its own, unmarked.
    neutron, provnet = "neutron-6f1c0a52-3d1e-4c55-9c1b-2b1f0e8e6a10", "provnet-0b7e4c1d-5a2f-4e8b-a1c3-9d7f6e5b4a32"
    nbctl("ls-add", neutron, "--", "lsp-add", neutron, provnet, "--", "lsp-set-type", provnet, "localnet",
          "--", "lsp-set-addresses", provnet, "unknown", "--", "lsp-set-options", provnet, "network_name=physnet1")

    first = sh(controller_script(FABRIC, "configure-ovn-central.sh", scripts), env)
    assert first.returncode == 0, first.stderr
    switches, ports = rows(env, "Logical_Switch", "name"), rows(env, "Logical_Switch_Port", "name")
    assert {k[0]: r.owner for k, r in switches.items()} == {
        "public": "central/dc", "storage": "central/dc", "mgmt": "central/dc", neutron: ""}
    assert {k[0]: r.owner for k, r in ports.items()} == {
        "public-external": "central/dc", "storage-external": "central/dc", "mgmt-uplink": "central/dc", provnet: ""}
    nbctl("lsp-add", "mgmt", "vm-on-mgmt")  # a platform's port on a switch fabricgen will drop

    script = controller_script(WITHOUT_NETWORKS, "configure-ovn-central.sh", scripts)
    pruned = sh(script, env)
    assert pruned.returncode == 0, pruned.stderr
    assert "switch mgmt is no longer a provider network but holds ports of others; kept" in pruned.stderr
    after_switches, after_ports = rows(env, "Logical_Switch", "name"), rows(env, "Logical_Switch_Port", "name")
    assert sorted(k[0] for k in after_switches) == sorted(["public", "mgmt", neutron])
    assert sorted(k[0] for k in after_ports) == sorted(["public-external", "vm-on-mgmt", provnet])
    for kept in ("public", neutron):
        assert after_switches[(kept,)] == switches[(kept,)]
    for kept in ("public-external", provnet):
        assert after_ports[(kept,)] == ports[(kept,)]
    assert after_ports[("vm-on-mgmt",)].owner == ""
    assert nbctl("lsp-get-options", provnet) == "network_name=physnet1"

    dumps = nb.dump(), sb.dump()
    again = sh(script, env)
    assert again.returncode == 0, again.stderr
    assert (nb.dump(), sb.dump()) == dumps, "the second run changed a database"

    # Once the platform's port is gone, the next run deletes the switch fabricgen created.
    nbctl("lsp-del", "vm-on-mgmt")
    last = sh(script, env)
    assert last.returncode == 0 and last.stderr == "", last.stderr
    assert sorted(k[0] for k in rows(env, "Logical_Switch", "name")) == sorted(["public", neutron])


def test_central_script_moves_its_port_with_a_renamed_provider_network(databases: OvsdbServers,
                                                                       tmp_path: Path) -> None:
    """The switch `public` becomes `public-v2` and keeps its port name: the port (fabricgen's) moves to
    the new switch instead of `lsp-add` failing half-way ("port already exists but in switch"), and
    the old switch, now empty, goes."""
    nb, sb = databases.start(OVN_NB), databases.start(OVN_SB)
    env = {**os.environ, "OVN_NB_DB": nb.remote, "OVN_SB_DB": sb.remote}
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    first = sh(controller_script(FABRIC, "configure-ovn-central.sh", scripts), env)
    assert first.returncode == 0, first.stderr
    renamed = edited(FABRIC, ("      - name: public\n        physicalNetwork: physnet1\n",
                              "      - name: public-v2\n        port: public-external\n"
                              "        physicalNetwork: physnet1\n"))
    script = controller_script(renamed, "configure-ovn-central.sh", scripts)
    moved = sh(script, env)
    assert moved.returncode == 0, moved.stderr
    switches = rows(env, "Logical_Switch", "name")
    assert ("public",) not in switches and switches[("public-v2",)].owner == "central/dc"
    assert ctl("ovn-nbctl", env, "lsp-get-ls", "public-external").endswith("(public-v2)")
    assert ctl("ovn-nbctl", env, "lsp-get-options", "public-external") == "network_name=physnet1"
    dumps = nb.dump(), sb.dump()
    again = sh(script, env)
    assert again.returncode == 0, again.stderr
    assert (nb.dump(), sb.dump()) == dumps, "the second run changed a database"


# --- configure-ovn-ic.sh: static routes and transit ports ------------------------------

_MISSING = missing_prerequisites()
needs_ovn_ic = pytest.mark.skipif(bool(_MISSING), reason=f"real OVN-IC needed; missing: {', '.join(_MISSING)}")

ROUTER = "ic-router"
FOREIGN = ("192.168.50.0/24", "169.254.100.250")  # an operator's route
SHADOW = ("172.30.20.0/24", "169.254.100.99")  # added later: same prefix as a route fabricgen drops


def routes(env: dict[str, str]) -> dict[tuple[str, str], Row]:
    """The router's static routes by (ip_prefix, nexthop)."""
    on_router = ctl("ovn-nbctl", env, "get", "Logical_Router", ROUTER, "static_routes")
    every = rows(env, "Logical_Router_Static_Route", "ip_prefix", "nexthop")
    return {(prefix, hop): row for (prefix, hop), row in every.items() if row.uuid in on_router}


def nb_dump(sandbox: Sandbox) -> str:
    return ctl("ovsdb-client", sandbox.env(), "dump", sandbox.nb_db("dc"), "OVN_Northbound")


def settled(sandbox: Sandbox, az: str, port: str) -> None:
    """ovn-ic has stamped the transit port and northd has caught up: the NB holds still."""
    poll(f"requested-tnl-key on {port}", lambda: bool(sandbox.nb(
        az, "--if-exists", "get", "Logical_Switch_Port", port, "options:requested-tnl-key").strip()))
    sandbox.sync(az)


@needs_ovn_ic
def test_ic_script_prunes_routes_and_ports_it_no_longer_yields(tmp_path: Path) -> None:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    with Sandbox.running([]) as sandbox:
        sandbox.start_az("dc")
        sandbox.add_gateway_chassis("dc", "gw1", IPv4Address("127.0.0.20"))
        env = {**sandbox.env(), "OVN_NB_DB": sandbox.nb_db("dc"), "OVN_SB_DB": sandbox.sb_db("dc"),
               "OVN_IC_NB_DB": sandbox.ic_nb, "OVN_IC_SB_DB": sandbox.ic_sb}

        def nb(*args: str) -> str:
            return sandbox.nb("dc", *args)

        first = sh(controller_script(FABRIC, "configure-ovn-ic.sh", scripts), env)
        assert first.returncode == 0, first.stderr + first.stdout
        # An operator's route on fabricgen's router to a prefix the fabric does not route.
        nb("lr-route-add", ROUTER, *FOREIGN)
        mine = {("172.30.10.0/24", "169.254.100.23"), ("172.30.20.0/24", "169.254.100.24"),
                ("10.101.0.0/16", "169.254.100.201"), ("10.102.0.5", "169.254.100.201")}
        # Then one to the prefix of a route fabricgen is about to drop, sharing it (ECMP).
        nb("--ecmp", "lr-route-add", ROUTER, *SHADOW)
        start = routes(env)
        assert {k: r.owner for k, r in start.items()} == {**dict.fromkeys(mine, "ic/dc"), FOREIGN: "", SHADOW: ""}
        ports = {"lrp": rows(env, "Logical_Router_Port", "name")[("dc-ts",)],
                 "lsp": rows(env, "Logical_Switch_Port", "name")[("ts-dc",)]}
        assert {r.owner for r in ports.values()} == {"ic/dc"}

        # The branch zone (its backbone) and one advertised CIDR of dc2 leave the fabric.
        script = controller_script(SHRUNK, "configure-ovn-ic.sh", scripts)
        pruned = sh(script, env)
        assert pruned.returncode == 0, pruned.stderr + pruned.stdout
        after = routes(env)
        kept = {("172.30.10.0/24", "169.254.100.23"), ("10.101.0.0/16", "169.254.100.201"), FOREIGN, SHADOW}
        assert set(after) == kept
        assert all(after[k] == start[k] for k in kept)
        assert rows(env, "Logical_Router_Port", "name")[("dc-ts",)] == ports["lrp"]
        assert rows(env, "Logical_Switch_Port", "name")[("ts-dc",)] == ports["lsp"]

        settled(sandbox, "dc", "ts-dc")
        before = nb_dump(sandbox)
        again = sh(script, env)
        assert again.returncode == 0, again.stderr + again.stdout
        assert nb_dump(sandbox) == before, "the second run changed the database"

        # A renamed AZ: new ports; the old ones, fabricgen's, are gone; routes stay the same rows.
        renamed = sh(controller_script(RENAMED, "configure-ovn-ic.sh", scripts), env)
        assert renamed.returncode == 0, renamed.stderr + renamed.stdout
        router_ports = rows(env, "Logical_Router_Port", "name")
        switch_ports = rows(env, "Logical_Switch_Port", "name")
        assert ("dc-east-ts",) in router_ports and ("dc-ts",) not in router_ports
        assert router_ports[("dc-east-ts",)].owner == switch_ports[("ts-dc-east",)].owner == "ic/dc"
        # ovn-ic may bring `ts-dc` back as the remote port of the old AZ, which the IC SB still
        # lists: a row of its own, not fabricgen's.
        old = switch_ports.get(("ts-dc",))
        assert old is None or (old.uuid != ports["lsp"].uuid and old.owner == ""), old
        if old is not None:
            assert sandbox.nb("dc", "lsp-get-type", old.uuid).strip() == "remote"
        assert routes(env) == after
