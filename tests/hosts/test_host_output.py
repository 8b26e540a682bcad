"""Host, controller and platform files checked by the tools that consume them.

netplan generate, ovs-vsctl / ovn-nbctl / ovn-sbctl against throwaway ovsdb-servers,
nft -c, vtysh --dryrun and configparser. A missing tool skips its test with the reason;
CI installs all of them.
"""

from __future__ import annotations

import configparser
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import pytest

from fabricgen.pipeline import Build
from fabricgen.plan.deployments import OWNER_KEY, Chassis, chassis
from support.fabrics import REPO, SITES, build_file, build_text
from support.ovsdb import OPEN_VSWITCH, OVN_NB, OVN_SB, OvsdbServers, missing

pytestmark = pytest.mark.lab  # starts real programs: netplan, nft, ovn-nbctl, ovn-sbctl, ovs-vsctl...

PLATFORM_SITES = [s for s in SITES if "ovnDeployments:" in s.read_text(encoding="utf-8")]


def _builds() -> list[Build]:
    return [build_file(site) for site in PLATFORM_SITES]


def _files(suffix: str) -> list[tuple[str, str]]:
    return [(str(path), out.text) for b in _builds() for path, out in b.files.items()
            if path.name.endswith(suffix)]


def _chassis() -> list[tuple[Build, Chassis]]:
    return [(b, c) for b in _builds() for d in b.plan.fabric.ovn_deployments for c in chassis(d)]


def _need(*tools: str) -> None:
    gone = [t for t in tools if shutil.which(t) is None]
    if gone:
        pytest.skip(f"not installed: {', '.join(gone)}")


def _write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def test_samples_exist() -> None:
    names = {p.parent.name for p in PLATFORM_SITES}
    assert {"cloudstack", "openstack-k8s"} <= names


def test_host_files_stay_out_of_kustomizations() -> None:
    for build in _builds():
        for path in build.files:
            if "_host" in path.parts:
                assert not any(path.parent == PurePosixPath(build.site, d) for d in build.manifests)
        for directory in build.manifests:
            assert not directory.startswith("_")


@pytest.mark.parametrize(("name", "text"), _files("60-fabricgen-ovn.yaml"),
                         ids=lambda v: v if v.endswith(".yaml") else "")
def test_netplan_generate(name: str, text: str, tmp_path: Path) -> None:
    _need("netplan")
    if not Path("/usr/bin/ovs-vsctl").exists():
        pytest.skip("netplan needs /usr/bin/ovs-vsctl (openvswitch-switch) for openvswitch: bridges")
    etc = tmp_path / "etc" / "netplan"
    etc.mkdir(parents=True)
    target = _write(etc, "60-fabricgen-ovn.yaml", text)
    target.chmod(0o600)
    result = subprocess.run(["netplan", "generate", "--root-dir", str(tmp_path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    units = tmp_path / "run" / "systemd"
    assert list(units.glob("network/10-netplan-*.network")), "netplan wrote no networkd units"
    assert list(units.glob("system/netplan-ovs-*.service")), "netplan wrote no OVS units"


@pytest.mark.parametrize(("name", "text"), _files(".nft"), ids=lambda v: v if v.endswith(".nft") else "")
def test_nftables_check(name: str, text: str, tmp_path: Path) -> None:
    _need("nft")
    path = _write(tmp_path, "rules.nft", text)
    result = subprocess.run(["nft", "-c", "-f", str(path)], capture_output=True, text=True)
    if result.returncode != 0 and "Operation not permitted" in result.stderr:
        _need("unshare")
        result = subprocess.run(["unshare", "-rn", "nft", "-c", "-f", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(("name", "text"), _files("frr.conf"), ids=lambda v: v if v.endswith(".conf") else "")
def test_frr_dry_run(name: str, text: str, tmp_path: Path) -> None:
    _need("vtysh")
    path = _write(tmp_path, "frr.conf", text)
    result = subprocess.run(["vtysh", "--dryrun", "-f", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Unknown command" not in result.stdout + result.stderr


def test_frr_dry_run_catches_errors(tmp_path: Path) -> None:
    _need("vtysh")
    path = _write(tmp_path, "frr.conf", "router bgp 65000\n bogus-command here\n")
    assert subprocess.run(["vtysh", "--dryrun", "-f", str(path)], capture_output=True).returncode != 0


def _ini(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.read_string(text)
    return parser


@pytest.mark.parametrize(("name", "text"), _files("ml2_conf.ini"), ids=lambda v: v if v.endswith(".ini") else "")
def test_neutron_ini(name: str, text: str) -> None:
    ini = _ini(text)
    assert ini["ml2"]["mechanism_drivers"] == "ovn"
    assert ini["ovn"]["ovn_nb_connection"].startswith(("tcp:", "ssl:"))
    assert ini["ovn"]["ovn_sb_connection"].endswith(":6642")
    header = int(ini["ml2_type_geneve"]["max_header_size"])
    assert header >= 38  # OVN needs at least 38
    assert int(ini["ml2"]["path_mtu"]) - 20 - header == 1442


@pytest.mark.parametrize(("name", "text"), _files("ovn_k8s.conf"), ids=lambda v: v if v.endswith(".conf") else "")
def test_ovn_kubernetes_ini(name: str, text: str) -> None:
    # gcfg (what ovnkube uses) accepts the same subset: sections, key=value, '#' comments.
    ini = _ini(text)
    assert ini["default"]["mtu"] == "1442"
    assert ini["default"]["encap-type"] == "geneve"
    assert ini["ovnnorth"]["address"].endswith(":6641")
    assert ini["ovnsouth"]["address"].endswith(":6642")
    assert ini["ovnkubernetesfeature"]["enable-interconnect"] == "false"


def test_ovn_kubernetes_configmap_matches_file() -> None:
    for build in _builds():
        for directory in build.manifests:
            objects = {o["metadata"]["name"] + "/" + o["kind"]: o for o in build.objects(directory)}
            if "ovnkube-config/ConfigMap" not in objects:
                continue
            conf = objects["ovnkube-config/ConfigMap"]["data"]["ovn_k8s.conf"]
            files = [out.text for p, out in build.files.items() if p.name == "ovn_k8s.conf"]
            assert conf in files
            ini = _ini(conf)
            assert objects["ovn-config/ConfigMap"]["data"]["mtu"] == ini["default"]["mtu"]
            endpoints = objects["ovnkube-db/Endpoints"]["subsets"][0]["addresses"]
            for ip in (a["ip"] for a in endpoints):
                assert f"tcp:{ip}:6641" in ini["ovnnorth"]["address"]


# --- scripts against throwaway databases ---------------------------------------------


@pytest.fixture
def databases(tmp_path: Path) -> Iterator[OvsdbServers]:
    gone = missing()
    if gone:
        pytest.skip(f"not installed: {', '.join(gone)}")
    with OvsdbServers(tmp_path / "db") as servers:
        yield servers


def _run(script: Path, env: dict[str, str], netns_setup: str | None = None) -> subprocess.CompletedProcess[str]:
    if netns_setup is None:
        return subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True)
    return subprocess.run(["unshare", "-n", "sh", "-c", f"{netns_setup}\nexec sh {script}"],
                          env=env, capture_output=True, text=True)


def _netns_usable() -> bool:
    """True when a private network namespace with a veth device can be made here."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    probe = ["unshare", "-n", "ip", "link", "add", "fgprobe", "type", "veth", "peer", "name", "fgpeer"]
    return subprocess.run(probe, capture_output=True).returncode == 0


def _netns_setup(item: Chassis, with_address: bool = True) -> str:
    """Shell lines creating the tunnel device in a private network namespace."""
    lines = ["set -e"]
    if item.device != "lo":
        lines.append(f"ip link add {item.device} type veth peer name fgpeer")
    if with_address:
        prefix = 32 if item.device == "lo" else 20
        lines.append(f"ip addr add {item.address}/{prefix} dev {item.device}")
    return "\n".join(lines)


def _get(env: dict[str, str], *args: str) -> str:
    return subprocess.run(["ovs-vsctl", *args], env=env, capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.parametrize("index", range(len(_chassis())))
def test_host_script_twice(index: int, databases: OvsdbServers, tmp_path: Path) -> None:
    build, item = _chassis()[index]
    ovs = databases.start(OPEN_VSWITCH)
    env = {**os.environ, "OVS_RUNDIR": str(ovs.directory)}
    env.pop("OVN_ENCAP_IP", None)
    path = next(p for p in build.files if p.name == "configure-ovn-host.sh" and item.host.name in p.parts)
    script = _write(tmp_path, "configure-ovn-host.sh", build.files[path].text)
    setup = _netns_setup(item) if _netns_usable() else None
    if setup is None:
        env["OVN_ENCAP_IP"] = str(item.address)  # no namespace: skip reading the interface

    first = _run(script, env, setup)
    assert first.returncode == 0, first.stderr
    after_first = ovs.dump()
    second = _run(script, env, setup)
    assert second.returncode == 0, second.stderr
    assert ovs.dump() == after_first, "the second run changed the database"

    ids = lambda key: _get(env, "--if-exists", "get", "Open_vSwitch", ".", f"external_ids:{key}").strip('"')  # noqa: E731
    assert ids("system-id") == item.host.chassis_name
    assert ids("ovn-encap-ip") == str(item.address)
    assert ids("ovn-encap-type") == item.deployment.encapsulation
    members = item.deployment.databases.members
    assert ids("ovn-remote") == ",".join(f"tcp:{m.address}:{item.deployment.databases.sb_port}" for m in members)
    mappings = ",".join(f"{m.physical_network}:{m.bridge}" for m in item.host.bridge_mappings)
    assert ids("ovn-bridge-mappings") == mappings
    loopback = item.host.tunnel_endpoint.loopback is not None
    assert ids("ovn-set-local-ip") == ("true" if loopback and item.deployment.needs_set_local_ip else "")
    assert ids("ovn-cms-options") == ("enable-chassis-as-gw" if item.host.gateway_chassis else "")


def _host(name: str) -> tuple[Build, Chassis]:
    return next((b, c) for b, c in _chassis() if c.host.name == name)


def _host_script(tmp_path: Path, name: str) -> tuple[Path, dict[str, str]]:
    build, item = _host(name)
    path = next(p for p in build.files if p.name == "configure-ovn-host.sh" and item.host.name in p.parts)
    return (_write(tmp_path, f"configure-ovn-host-{name}.sh", build.files[path].text),
            {"OVN_ENCAP_IP": str(item.address)})


def _ovs_set(env: dict[str, str], **keys: str) -> None:
    subprocess.run(["ovs-vsctl", "--no-wait", "init", "--", "set", "Open_vSwitch", ".",
                    *(f"external_ids:{k.replace('_', '-')}={json.dumps(v)}" for k, v in keys.items())],
                   env=env, check=True, capture_output=True)


def test_host_script_leaves_what_ovnkube_node_wrote(databases: OvsdbServers, tmp_path: Path) -> None:
    """An OVN-Kubernetes node's Open vSwitch as ovnkube-node leaves it (ovn-kubernetes v1.3.0
    `go-controller/pkg/node/gateway_shared_intf.go` merges `physnet:breth0` into
    ovn-bridge-mappings; `node/default_node_network_controller.go` writes ovn-encap-ip,
    ovn-encap-type and system-id): the script sets its keys and, run twice, leaves the mapping,
    which the fabric does not want on k8s-node-1, as it was."""
    ovs = databases.start(OPEN_VSWITCH)
    script, extra = _host_script(tmp_path, "k8s-node-1")
    env = {**os.environ, "OVS_RUNDIR": str(ovs.directory), **extra}
    _ovs_set(env, ovn_bridge_mappings="physnet:breth0", ovn_encap_ip=extra["OVN_ENCAP_IP"], ovn_encap_type="geneve",
             system_id="0a5e1f6c-2b1d-4bb4-9e49-6e2a0d4e8f31")
    for _run_number in range(2):
        done = _run(script, env)
        assert done.returncode == 0, done.stderr
        assert "left external_ids:ovn-bridge-mappings='physnet:breth0': not written by fabricgen" in done.stdout
        assert _get(env, "get", "Open_vSwitch", ".", "external_ids:ovn-bridge-mappings") == '"physnet:breth0"'
    owned = _get(env, "get", "Open_vSwitch", ".", "external_ids:fabricgen-keys").strip('"').split(",")
    assert "ovn-bridge-mappings" not in owned and "ovn-remote" in owned and "system-id" in owned
    assert _get(env, "get", "Open_vSwitch", ".", "external_ids:system-id") == "k8s-node-1"  # ovs-ctl's: set over


def test_host_script_stops_on_a_setting_someone_else_wrote(databases: OvsdbServers, tmp_path: Path) -> None:
    """ovn-remote written by hand towards another database, and a gateway option with an
    availability zone a deployment tool added: nothing is changed, both are named."""
    ovs = databases.start(OPEN_VSWITCH)
    script, extra = _host_script(tmp_path, "net1")
    env = {**os.environ, "OVS_RUNDIR": str(ovs.directory), **extra}
    _ovs_set(env, ovn_remote="tcp:10.9.9.9:6642", ovn_cms_options="enable-chassis-as-gw,availability-zones=az1")
    before = ovs.dump()
    done = _run(script, env)
    assert done.returncode == 1
    assert ovs.dump() == before
    assert "this Open vSwitch holds settings someone else wrote; nothing was changed" in done.stderr
    assert ("external_ids:ovn-remote is 'tcp:10.9.9.9:6642', not written by fabricgen (it would set "
            "'tcp:10.20.0.11:6642,tcp:10.20.0.12:6642,tcp:10.20.0.13:6642')") in done.stderr
    assert "external_ids:ovn-cms-options is 'enable-chassis-as-gw,availability-zones=az1'" in done.stderr


def test_host_script_removes_only_its_own_keys(databases: OvsdbServers, tmp_path: Path) -> None:
    """net1's script, then cmp1's on the same Open vSwitch (the host's role changed in the fabric):
    the gateway keys net1's run wrote are its own and go; a key of someone else's stays."""
    ovs = databases.start(OPEN_VSWITCH)
    env = {**os.environ, "OVS_RUNDIR": str(ovs.directory)}
    gateway, gateway_env = _host_script(tmp_path, "net1")
    assert _run(gateway, {**env, **gateway_env}).returncode == 0
    _ovs_set(env, ovn_monitor_all="true")  # an operator's
    compute, compute_env = _host_script(tmp_path, "cmp1")
    done = _run(compute, {**env, **compute_env})
    assert done.returncode == 0, done.stderr
    ids = _get(env, "get", "Open_vSwitch", ".", "external_ids")
    for key in ("ovn-bridge-mappings", "ovn-cms-options", "ovn-is-interconn"):
        assert f"{key}=" not in ids, ids
    assert 'ovn-monitor-all="true"' in ids and 'system-id=cmp1' in ids, ids


def test_host_script_with_ssl_twice(databases: OvsdbServers, tmp_path: Path) -> None:
    """With protocol ssl the SSL row joins the one ovs-vsctl transaction, and only when it differs."""
    from support.deployment_fabrics import BASE
    from support.fabrics import build_text

    text = BASE.replace("      clientNetworks: [10.0.0.0/24]\n", "      clientNetworks: [10.0.0.0/24]\n"
                        "      protocol: ssl\n      ssl:\n        privateKey: /etc/ovn/key.pem\n"
                        "        certificate: /etc/ovn/cert.pem\n        caCertificate: /etc/ovn/ca.pem\n", 1)
    build = build_text(text, "sites/t/fabric.yaml")
    path = next(p for p in build.files if p.name == "configure-ovn-host.sh" and "kvm01" in p.parts)
    script = _write(tmp_path, "configure-ovn-host.sh", build.files[path].text)
    ovs = databases.start(OPEN_VSWITCH)
    env = {**os.environ, "OVS_RUNDIR": str(ovs.directory), "OVN_ENCAP_IP": "10.250.0.21"}
    first = _run(script, env)
    assert first.returncode == 0, first.stderr
    assert _get(env, "get-ssl").splitlines()[:3] == [
        "Private key: /etc/ovn/key.pem", "Certificate: /etc/ovn/cert.pem", "CA Certificate: /etc/ovn/ca.pem"]
    assert _get(env, "get", "Open_vSwitch", ".", "external_ids:ovn-remote") == '"ssl:10.0.0.10:6642"'
    after_first = ovs.dump()
    second = _run(script, env)
    assert second.returncode == 0, second.stderr
    assert ovs.dump() == after_first, "the second run changed the database"


def test_host_script_refuses_missing_tunnel_address(databases: OvsdbServers, tmp_path: Path) -> None:
    if not _netns_usable():
        pytest.skip("needs `unshare -n` (a private network namespace) to fake the tunnel interface")
    build, item = next((b, c) for b, c in _chassis() if c.device != "lo")
    ovs = databases.start(OPEN_VSWITCH)
    env = {**os.environ, "OVS_RUNDIR": str(ovs.directory)}
    env.pop("OVN_ENCAP_IP", None)
    path = next(p for p in build.files if p.name == "configure-ovn-host.sh" and item.host.name in p.parts)
    script = _write(tmp_path, "configure-ovn-host.sh", build.files[path].text)
    result = _run(script, env, _netns_setup(item, with_address=False))
    assert result.returncode == 1
    assert f"{item.device} does not hold {item.address}" in result.stderr


def _controllers() -> list[tuple[Build, PurePosixPath]]:
    return [(b, p) for b in _builds() for p in b.files if p.name == "configure-ovn-central.sh"]


@pytest.mark.parametrize("index", range(len(_controllers())))
def test_controller_script_twice(index: int, databases: OvsdbServers, tmp_path: Path) -> None:
    build, path = _controllers()[index]
    deployment = next(d for d in build.plan.fabric.ovn_deployments if d.name == path.parts[2])
    nb, sb = databases.start(OVN_NB), databases.start(OVN_SB)
    env = {**os.environ, "OVN_NB_DB": nb.remote, "OVN_SB_DB": sb.remote}
    script = _write(tmp_path, "configure-ovn-central.sh", build.files[path].text)

    first = _run(script, env)
    assert first.returncode == 0, first.stderr
    dumps = nb.dump(), sb.dump()
    second = _run(script, env)
    assert second.returncode == 0, second.stderr
    assert (nb.dump(), sb.dump()) == dumps, "the second run changed a database"

    def nbctl(*args: str) -> str:
        return subprocess.run(["ovn-nbctl", *args], env=env, capture_output=True, text=True,
                              check=True).stdout.strip()

    db = deployment.databases
    single = len(db.members) == 1
    nb_target = f"ptcp:{db.nb_port}:{db.members[0].address}" if single else f"ptcp:{db.nb_port}"
    assert nbctl("get-connection") == nb_target
    sb_conn = subprocess.run(["ovn-sbctl", "get-connection"], env=env, capture_output=True, text=True,
                             check=True).stdout.strip()
    assert sb_conn.endswith(f"ptcp:{db.sb_port}:{db.members[0].address}" if single else f"ptcp:{db.sb_port}")
    for network in deployment.provider_networks:
        port = network.port_name
        assert nbctl("lsp-get-type", port) == "localnet"
        assert nbctl("lsp-get-addresses", port) == "unknown"
        assert nbctl("lsp-get-options", port) == f"network_name={network.physical_network}"
        assert nbctl("lsp-get-ls", port).endswith(f"({network.name})")
        for table, name in (("Logical_Switch", network.name), ("Logical_Switch_Port", port)):
            assert nbctl("get", table, name, f"external_ids:{OWNER_KEY}") == f'"central/{deployment.name}"'


# What the netplan renderer writes for hosts that FG515/FG516 now refuse, read by the real
# `netplan generate`: the schema alone accepts each of these hosts.
_HOST = {"name": "kvm01", "tunnelEndpoint": {"interface": "eth1.2000"},
         "vlans": [{"name": "eth1.2000", "id": 2000, "link": "eth1", "addresses": ["10.250.0.21/20"]}]}
_REFUSED_HOSTS = {
    "bridge named like an ethernet": {"ethernets": [{"name": "eth1"}, {"name": "eth2"}],
                                      "bridges": [{"name": "eth2", "interfaces": ["eth1"]}]},
    "VLAN named like an ethernet": {"ethernets": [{"name": "eth1"}, {"name": "eth2"}],
                                    "vlans": [*_HOST["vlans"], {"name": "eth2", "id": 5, "link": "eth1"}]},
}


def _netplan(tmp_path: Path, host: dict[str, object]) -> subprocess.CompletedProcess[str]:
    from fabricgen.model.hosts import Host
    from fabricgen.render.host_netplan import network
    from fabricgen.serialise.manifest_yaml import dump

    etc = tmp_path / "etc" / "netplan"
    etc.mkdir(parents=True)
    target = _write(etc, "60-fabricgen-ovn.yaml", dump(network(Host.model_validate({**_HOST, **host}))))
    target.chmod(0o600)
    return subprocess.run(["netplan", "generate", "--root-dir", str(tmp_path)], capture_output=True, text=True)


@pytest.mark.parametrize("case", sorted(_REFUSED_HOSTS))
def test_netplan_rejects_an_interface_name_used_twice(case: str, tmp_path: Path) -> None:
    _need("netplan")
    if not Path("/usr/bin/ovs-vsctl").exists():
        pytest.skip("netplan needs /usr/bin/ovs-vsctl (openvswitch-switch) for openvswitch: bridges")
    result = _netplan(tmp_path, _REFUSED_HOSTS[case])
    assert result.returncode != 0 and "changes device type" in result.stderr, result.stderr


def test_netplan_would_take_br_int_and_merge_duplicates_silently(tmp_path: Path) -> None:
    """What netplan accepts but must not get: so fabricgen refuses these itself (FG515, FG516)."""
    _need("netplan")
    if not Path("/usr/bin/ovs-vsctl").exists():
        pytest.skip("netplan needs /usr/bin/ovs-vsctl (openvswitch-switch) for openvswitch: bridges")
    from fabricgen.model.hosts import Host
    from fabricgen.render.host_netplan import network

    result = _netplan(tmp_path, {"ethernets": [{"name": "eth1"}, {"name": "eth2"}],
                                 "bridges": [{"name": "br-int", "interfaces": ["eth2"]}]})
    assert result.returncode == 0, result.stderr
    units = "".join(p.read_text() for p in (tmp_path / "run" / "systemd" / "system").glob("netplan-ovs-*"))
    assert "br-int" in units  # netplan would own ovn-controller's integration bridge
    doubled = Host.model_validate({**_HOST, "ethernets": [{"name": "eth1", "mtu": 9000}, {"name": "eth1"}]})
    assert network(doubled)["network"]["ethernets"] == {"eth1": {}}  # the first entry's MTU is lost
    on_lo = Host.model_validate({**_HOST, "tunnelEndpoint": {"loopback": "10.255.0.1/32"},
                                 "ethernets": [{"name": "eth1"}, {"name": "lo", "addresses": ["10.9.9.9/32"]}]})
    assert network(on_lo)["network"]["ethernets"]["lo"]["addresses"] == ["10.255.0.1/32"]  # 10.9.9.9 dropped


def test_a_jumbo_underlay_reaches_the_tunnel_nics_as_netplan_reads_them(tmp_path: Path) -> None:
    """underlayMTU 9000 on the CloudStack sample: the tunnel endpoint eth1.2000 and its link eth1
    get MTU 9000 in what `netplan generate` writes (systemd-networkd's MTUBytes), the management
    NIC eth0 keeps its own; before, no NIC got it while the overlay was sized for 9000."""
    _need("netplan")
    if not Path("/usr/bin/ovs-vsctl").exists():
        pytest.skip("netplan needs /usr/bin/ovs-vsctl (openvswitch-switch) for openvswitch: bridges")
    site = REPO / "sites" / "cloudstack" / "fabric.yaml"
    text = site.read_text(encoding="utf-8").replace("    underlayMTU: 1500 ", "    underlayMTU: 9000 ", 1)
    assert "underlayMTU: 9000" in text
    build = build_text(text, "sites/cloudstack/fabric.yaml")
    [out] = [f for p, f in build.files.items() if p.name == "60-fabricgen-ovn.yaml" and "kvm01" in p.as_posix()]
    etc = tmp_path / "etc" / "netplan"
    etc.mkdir(parents=True)
    _write(etc, "60-fabricgen-ovn.yaml", out.text).chmod(0o600)
    result = subprocess.run(["netplan", "generate", "--root-dir", str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    units = {p.name: p.read_text() for p in (tmp_path / "run" / "systemd" / "network").glob("10-netplan-*")}
    assert "MTUBytes=9000" in units["10-netplan-eth1.link"] and "MTUBytes=9000" in units["10-netplan-eth1.network"]
    assert "MTUBytes=9000" in units["10-netplan-eth1.2000.network"]
    assert "MTUBytes" not in units.get("10-netplan-eth0.network", "") + units.get("10-netplan-eth0.link", "")
