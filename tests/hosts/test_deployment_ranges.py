"""Numbers and addresses of OVN deployments get the range their reader accepts.

A value fabricgen accepts must pass its reader, or the host script that writes it fails half
way. Each bound comes from the reader's source, and the accepted edge runs through the real
tool here:

- `inactivityProbe`: ovsdb-server reads Connection `inactivity_probe` into the C `int`
  `ovsdb_jsonrpc_options.probe_interval` (openvswitch/ovs ovsdb/ovsdb-server.c,
  add_manager_options; ovsdb/jsonrpc-server.h), and reconnect_set_probe_interval
  (lib/reconnect.c) raises any non-zero value below 1000 ms to 1000. So 0, or 1000 to
  2147483647; the central script writes 2147483647 and ovsdb-server stores it.
- Host addresses: netplan refuses prefix /0 ("invalid prefix length", netplan.io src/parse.c,
  where it reads `addresses`) and takes /1 to /32; `netplan generate` (0.106) shows both.
- `interconnect.gatewayChassis`: priorities 100, 99, ... in list order, and ovn-nbctl's
  lrp-set-gateway-chassis takes 0 to 32767 (ovn-org/ovn utilities/ovn-nbctl.c; the NB schema's
  Gateway_Chassis priority), so at most 101 chassis; the IC script sets all 101.
- The other numbers at their edges: BGP ASN and maximum-paths through vtysh --dryrun, VLAN ids
  through netplan generate and the central script (the NB schema's tag), NIC MTUs through the
  kernel (a veth device in a private network namespace).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from ipaddress import IPv4Interface
from pathlib import Path

import pytest
from test_script_ownership import IC, OVN_IC_NB, OVN_IC_SB, central_env, ic_databases, ic_script_env
from test_script_pruning import FABRIC, controller_script, ctl, sh

from support.deployment_fabrics import BASE, NAME
from support.fabrics import build_text, diagnostic_lines, edit
from support.ovsdb import OVN_NB, OVN_SB, OvsdbServers, missing

pytestmark = pytest.mark.lab  # starts real programs: netplan, ovn-ic-nbctl, ovn-nbctl, ovn-sbctl, ovsdb-server...

CLIENTS = "      clientNetworks: [10.0.0.0/24]\n"
PROBE_LINE = 12  # the line after CLIENTS in BASE


def with_probe(text: str, value: str) -> str:
    return edit(text, CLIENTS, f"{CLIENTS}      inactivityProbe: {value}\n")


def test_probe_line_is_where_the_edit_puts_it() -> None:
    assert with_probe(BASE, "1").splitlines()[PROBE_LINE - 1] == "      inactivityProbe: 1"


@pytest.mark.parametrize("value", ["0", "1000", "60000", "2147483647"])
def test_inactivity_probe_ovsdb_server_reads(value: str) -> None:
    assert diagnostic_lines(with_probe(BASE, value), NAME) == []


@pytest.mark.parametrize("value", ["-1", "1", "999", "2147483648", "99999999999999999999"])
def test_inactivity_probe_outside_what_ovsdb_server_reads(value: str) -> None:
    assert diagnostic_lines(with_probe(BASE, value), NAME) == [
        f"{NAME}:{PROBE_LINE}:24: ovnDeployments[0].databases.inactivityProbe: {value} ms is not an interval "
        "ovsdb-server keeps: it reads inactivity_probe into a C int (at most 2147483647) and raises any "
        "value below 1000 to 1000; use 0 to turn the probe off, or 1000 to 2147483647 [FG003]"]


@pytest.fixture
def databases(tmp_path: Path) -> Iterator[OvsdbServers]:
    gone = missing() + [str(s) for s in (OVN_IC_NB, OVN_IC_SB) if not s.exists()]
    if gone:
        pytest.skip(f"not installed: {', '.join(gone)}")
    with OvsdbServers(tmp_path / "db") as servers:
        yield servers


@pytest.mark.parametrize("value", ["0", "1000", "2147483647"])
def test_the_central_script_writes_every_accepted_probe(databases: OvsdbServers, tmp_path: Path,
                                                       value: str) -> None:
    nb, sb = databases.start(OVN_NB), databases.start(OVN_SB)
    env = central_env(nb, sb)
    fabric = edit(FABRIC, "      clientNetworks: [10.20.0.0/24]\n",
                  f"      clientNetworks: [10.20.0.0/24]\n      inactivityProbe: {value}\n")
    result = sh(controller_script(fabric, "configure-ovn-central.sh", tmp_path), env)
    assert result.returncode == 0, result.stderr
    for tool in ("ovn-nbctl", "ovn-sbctl"):
        assert ctl(tool, env, "--bare", "--columns=inactivity_probe", "list", "Connection") == value


# --- host addresses ---------------------------------------------------------------------------

ADDRESS = "            addresses: [10.0.0.21/24]\n"  # cloudbr0's, line 23 of BASE


@pytest.mark.parametrize("written", ["10.0.0.21/0", "10.0.0.21/0.0.0.0"])
def test_a_host_address_with_prefix_0_is_refused(written: str) -> None:
    assert BASE.splitlines()[22] == ADDRESS.rstrip("\n")
    assert diagnostic_lines(edit(BASE, ADDRESS, f"            addresses: [{written}]\n"), NAME) == [
        f"{NAME}:23:25: ovnDeployments[0].hosts[0].bridges[0].addresses[0]: 10.0.0.21/0 has prefix /0, which "
        "netplan refuses (an address takes a prefix of 1 to 32); give the prefix of its network, e.g. "
        "10.0.0.21/24 [FG003]"]


@pytest.mark.parametrize(("where", "old"), [
    ("ethernets", "          - name: eth1\n        bridges:"),
    ("vlans", "            addresses: [10.250.0.21/20]\n"),
])
def test_every_host_address_list_refuses_prefix_0(where: str, old: str) -> None:
    new = ("          - name: eth1\n            addresses: [10.9.0.1/0]\n        bridges:" if where == "ethernets"
           else "            addresses: [10.250.0.21/20, 10.9.0.1/0]\n")
    found = diagnostic_lines(edit(BASE, old, new), NAME)
    assert len(found) == 1 and f".{where}[" in found[0] and "10.9.0.1/0 has prefix /0" in found[0], found


def netplan_generate(tmp_path: Path, address: str) -> subprocess.CompletedProcess[str]:
    """netplan generate on what the renderer writes for a bridge holding `address`: the model is
    bypassed (model_construct) so that the value netplan sees is the one fabricgen now refuses."""
    from fabricgen.model.hosts import Bridge, Host
    from fabricgen.render.host_netplan import network
    from fabricgen.serialise.manifest_yaml import dump

    bridge = Bridge.model_construct(name="cloudbr0", interfaces=["eth0"], addresses=[IPv4Interface(address)])
    host = Host.model_validate({"name": "kvm01", "ethernets": [{"name": "eth0"}], "bridges": [bridge],
                                "tunnelEndpoint": {"interface": "cloudbr0"}})
    etc = tmp_path / "etc" / "netplan"
    etc.mkdir(parents=True)
    target = etc / "60-fabricgen-ovn.yaml"
    target.write_text(dump(network(host)), encoding="utf-8")
    target.chmod(0o600)
    return subprocess.run(["netplan", "generate", "--root-dir", str(tmp_path)], capture_output=True, text=True)


@pytest.mark.parametrize(("address", "accepted"), [("10.0.0.21/0", False), ("10.0.0.21/1", True),
                                                   ("10.0.0.21/32", True)])
def test_netplan_takes_exactly_the_prefixes_fabricgen_accepts(tmp_path: Path, address: str, accepted: bool) -> None:
    if shutil.which("netplan") is None or not Path("/usr/bin/ovs-vsctl").exists():
        pytest.skip("needs netplan and /usr/bin/ovs-vsctl (openvswitch: bridges)")
    result = netplan_generate(tmp_path, address)
    assert (result.returncode == 0) == accepted, result.stderr
    if not accepted:
        assert f"invalid prefix length in address '{address}'" in result.stderr
    text = edit(BASE, ADDRESS, f"            addresses: [{address}]\n")
    assert (diagnostic_lines(text, NAME) == []) == accepted


# --- IC gateway chassis ------------------------------------------------------------------------

DC_HOSTS = "    hosts:\n      - name: gw1\n"
DC_CHASSIS = "      gatewayChassis: [gw1]\n"


def with_gateways(count: int) -> str:
    """FABRIC with `count` gateway chassis on deployment dc (gw1 and count - 1 more)."""
    hosts = "".join(f"      - name: gwx{i}\n        ethernets:\n          - name: eth0\n        tunnelEndpoint:\n"
                    f"          loopback: 10.254.{i // 200}.{i % 200 + 1}/32\n        bgp:\n          asn: 65101\n"
                    "          uplinks: [eth0]\n" for i in range(count - 1))
    names = ", ".join(["gw1", *(f"gwx{i}" for i in range(count - 1))])
    text = edit(FABRIC, DC_HOSTS, "    hosts:\n" + hosts + "      - name: gw1\n")
    return edit(text, DC_CHASSIS, f"      gatewayChassis: [{names}]\n")


def test_102_gateway_chassis_are_refused() -> None:
    found = diagnostic_lines(with_gateways(102), "sites/pruned/fabric.yaml")
    assert len(found) == 1, found
    assert found[0].endswith(
        "ovnDeployments[0].interconnect.gatewayChassis: 102 gateway chassis: configure-ovn-ic.sh gives them "
        "priorities 100, 99, ... in list order and OVN takes 0 to 32767, so at most 101; list fewer [FG003]")


def test_101_gateway_chassis_get_priorities_down_to_0(databases: OvsdbServers, tmp_path: Path) -> None:
    build = build_text(with_gateways(101), "sites/pruned/fabric.yaml")
    (join, _other) = build.plan.joins
    assert [p for _c, p in join.gateway_chassis] == list(range(100, -1, -1))
    dbs = ic_databases(databases)
    env = ic_script_env(dbs)
    result = sh(controller_script(with_gateways(101), IC, tmp_path), env)
    assert result.returncode == 0, result.stderr + result.stdout
    out = json.loads(ctl("ovn-nbctl", env, "--format=json", "--columns=chassis_name,priority", "list",
                         "Gateway_Chassis"))
    assert sorted(p for _name, p in out["data"]) == list(range(0, 101))


# --- the other numbers at their edges, through their readers ----------------------------------

BGP = "          asn: 65002\n          uplinks: [eth0]\n"  # kvm02's


def with_bgp(asn: int, paths: int) -> str:
    return edit(BASE, BGP, f"          asn: {asn}\n          uplinks: [eth0]\n          maximumPaths: {paths}\n")


def test_frr_takes_the_bgp_numbers_fabricgen_accepts(tmp_path: Path) -> None:
    """`router bgp (1-4294967295)` and `maximum-paths (1-MULTIPATH_NUM)` (FRRouting bgpd/bgp_vty.c;
    Debian's FRR 8.4 is built with 256 paths), read by vtysh --dryrun."""
    if shutil.which("vtysh") is None:
        pytest.skip("needs vtysh (frr)")

    def dry_run(text: str) -> subprocess.CompletedProcess[str]:
        path = tmp_path / "frr.conf"
        path.write_text(text, encoding="utf-8")
        return subprocess.run(["vtysh", "--dryrun", "-f", str(path)], capture_output=True, text=True)

    for asn, paths in ((1, 1), (4294967295, 128)):
        build = build_text(with_bgp(asn, paths), NAME)
        (conf,) = [out.text for p, out in build.files.items() if p.name == "frr.conf"]
        assert f"router bgp {asn}\n" in conf and f"maximum-paths {paths}\n" in conf
        result = dry_run(conf)
        assert result.returncode == 0, result.stdout + result.stderr
    for asn, paths in ((0, 64), (4294967296, 64), (65002, 0), (65002, 129)):
        found = diagnostic_lines(with_bgp(asn, paths), NAME)
        assert len(found) == 1 and "[FG003]" in found[0], found
    for line in ("router bgp 0\n", "router bgp 4294967296\n"):
        assert dry_run(line).returncode != 0, line


@pytest.mark.parametrize(("vlan", "accepted"), [(1, True), (4094, True), (4095, False)])
def test_netplan_takes_the_vlan_ids_fabricgen_accepts(tmp_path: Path, vlan: int, accepted: bool) -> None:
    """netplan: "invalid id ... (allowed values are 0 to 4094)" (netplan.io src/validation.c); FG505
    refuses 0 (untagged) and 4095."""
    if shutil.which("netplan") is None:
        pytest.skip("needs netplan")
    from fabricgen.model.hosts import Host
    from fabricgen.render.host_netplan import network
    from fabricgen.serialise.manifest_yaml import dump

    host = Host.model_validate({"name": "kvm01", "ethernets": [{"name": "eth1"}],
                                "vlans": [{"name": "eth1.x", "id": vlan, "link": "eth1"}],
                                "tunnelEndpoint": {"interface": "eth1.x"}})
    etc = tmp_path / "etc" / "netplan"
    etc.mkdir(parents=True)
    target = etc / "60-fabricgen-ovn.yaml"
    target.write_text(dump(network(host)), encoding="utf-8")
    target.chmod(0o600)
    result = subprocess.run(["netplan", "generate", "--root-dir", str(tmp_path)], capture_output=True, text=True)
    assert (result.returncode == 0) == accepted, result.stderr
    found = diagnostic_lines(edit(BASE, "            id: 2000\n", f"            id: {vlan}\n"), NAME)
    assert (found == []) == accepted, found


def test_the_kernel_takes_the_mtus_fabricgen_accepts() -> None:
    """Ethernet `mtu` 576 to 9216 on a veth device in a private network namespace (the kernel's
    Ethernet minimum is 68, ETH_MIN_MTU); fabricgen refuses 575 and 9217."""
    probe = ["unshare", "-rn", "sh", "-c", "ip link add fga type veth peer name fgb && "
             "ip link set fga mtu 576 && ip link set fga mtu 9216"]
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs unshare and ip")
    result = subprocess.run(probe, capture_output=True, text=True)
    if "Operation not permitted" in result.stderr:
        pytest.skip("no private network namespace here")
    assert result.returncode == 0, result.stderr
    for mtu, accepted in ((576, True), (9216, True), (575, False), (9217, False)):
        text = edit(BASE, "          - name: eth1\n        bridges:",
                    f"          - name: eth1\n            mtu: {mtu}\n        bridges:")
        assert (diagnostic_lines(text, NAME) == []) == accepted, mtu


def test_the_central_script_tags_provider_networks_at_the_vlan_edges(databases: OvsdbServers,
                                                                    tmp_path: Path) -> None:
    """The NB schema's Logical_Switch_Port tag takes 1 to 4095; the model's 1 to 4094 is set."""
    nb, sb = databases.start(OVN_NB), databases.start(OVN_SB)
    env = central_env(nb, sb)
    fabric = edit(edit(FABRIC, "        vlan: 20\n", "        vlan: 4094\n"), "        vlan: 30\n", "        vlan: 1\n")
    result = sh(controller_script(fabric, "configure-ovn-central.sh", tmp_path), env)
    assert result.returncode == 0, result.stderr
    assert ctl("ovn-nbctl", env, "get", "Logical_Switch_Port", "storage-external", "tag") == "4094"
    assert ctl("ovn-nbctl", env, "get", "Logical_Switch_Port", "mgmt-uplink", "tag") == "1"
    refused = edit(FABRIC, "        vlan: 20\n", "        vlan: 4095\n")
    assert diagnostic_lines(refused, "sites/pruned/fabric.yaml")
