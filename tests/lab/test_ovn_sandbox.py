"""fabricgen's interconnection output against real OVN (the Debian OVN 23.03 packages).

Each sandbox is a throwaway OVN-IC control plane in a temp dir (see
`fabricgen/lab/sandbox.py`): IC NB/SB, and per zone NB/SB, ovn-northd and ovn-ic.
The tests drive `configure-ic-db.sh` with ovn-ic-nbctl, build the zones' routers
and transit ports the way Kube-OVN does, apply the rendered Vpc routes with
ovn-nbctl, and follow packets with ovn-trace; they read the transit addresses back
with `ovn-ic-sbctl show`, the way an operator feeds `fabricgen transit`.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from ipaddress import IPv4Address
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from fabricgen.lab.ovn.running import poll, run
from fabricgen.lab.ovn.sandbox import ROUTER, Sandbox, ZoneSpec, missing_prerequisites, transit_mac, workdir
from fabricgen.lab.platforms import kubeovn as kubeovn_nb
from fabricgen.model import Fabric
from fabricgen.model.interconnect import Interconnection
from fabricgen.observe import icsb_show
from fabricgen.pipeline import Build
from support.fabrics import REPO, build_file, build_text

_MISSING = missing_prerequisites()
pytestmark = [pytest.mark.lab, pytest.mark.skipif(
    bool(_MISSING),
    reason="real OVN needed (apt-get install ovn-central ovn-host ovn-ic ovn-ic-db openvswitch-switch); "
    f"missing: {', '.join(_MISSING)}",
)]

LAB = REPO / "sites" / "lab" / "fabric.yaml"
LAB_ZONES = ("hq", "ai", "edge", "dr")
ALLOW_PRIORITY = 31000
# Addresses Kube-OVN might pick after the interconnection is rebuilt: random, from the
# lower half of the transit subnet, .0 and .127 included.
REBUILT = {"hq": "169.254.100.0", "ai": "169.254.100.127", "edge": "169.254.100.9", "dr": "169.254.100.71"}


# ---------------------------------------------------------------- helpers
def interconnection(fabric: Fabric) -> Interconnection:
    assert fabric.interconnection is not None
    return fabric.interconnection


def zone_specs(fabric: Fabric, addresses: dict[str, str] | None = None) -> list[ZoneSpec]:
    """One sandbox AZ per fabric zone; its gateway chassis is the zone's first gateway node."""
    specs = []
    for i, zone in enumerate(fabric.zones):
        address = addresses[zone.name] if addresses else zone.transit_address
        assert address is not None
        specs.append(ZoneSpec(zone.name, IPv4Address(address), zone.gateway_nodes[0],
                              IPv4Address("127.0.0.10") + i))
    return specs


def start(fabric: Fabric, addresses: dict[str, str] | None = None, **options: Any) -> Any:
    ic = interconnection(fabric)
    return Sandbox.running(zone_specs(fabric, addresses), transit_switch=ic.transit_switch.name,
                           transit_subnet=ic.transit_switch.subnet, encapsulation=ic.encapsulation, **options)


def rendered_vpc_spec(build: Build, zone: str) -> dict[str, Any]:
    """`spec` of the Vpc `ovn-cluster` as written to `<zone>/stage-2/default-vpc-routes.yaml`."""
    from ruamel.yaml import YAML

    text = build.files[PurePosixPath(build.site, zone, "stage-2", "default-vpc-routes.yaml")].text
    docs = [d for d in YAML(typ="safe").load_all(text) if d]
    (vpc,) = [d for d in docs if d["kind"] == "Vpc" and d["metadata"]["name"] == ROUTER]
    spec: dict[str, Any] = vpc["spec"]
    return spec


def route_zone(sandbox: Sandbox, fabric: Fabric, zone: str, spec: dict[str, Any]) -> kubeovn_nb.Backbone:
    """A zone as Kube-OVN leaves it: backbone subnet, join network with the 29000 reroute, Vpc routes."""
    z = next(z for z in fabric.zones if z.name == zone)
    gateway = z.backbone.gateway or z.backbone.cidr.network_address + 1
    backbone = kubeovn_nb.add_backbone(sandbox, zone, f"backbone-{zone}", z.backbone.cidr, gateway)
    kubeovn_nb.add_join_reroute(sandbox, zone, z.backbone.cidr)
    kubeovn_nb.apply_vpc_routes(sandbox, zone, spec)
    return backbone


def flow(src_mac: str, dst_mac: str, src: IPv4Address, dst: IPv4Address, inport: str, ttl: int = 64) -> str:
    return (f'inport=="{inport}" && eth.src=={src_mac} && eth.dst=={dst_mac} && '
            f"ip4.src=={src} && ip4.dst=={dst} && ip.ttl=={ttl}")


def stage(trace: str, name: str) -> str:
    """The lines of one pipeline stage in a `--detailed` trace (empty if it was not hit)."""
    match = re.search(rf"^ *\d+\. {name} \(.*\n(?:    .*\n)*", trace, re.MULTILINE)
    return match.group(0) if match else ""


def minimal_actions(trace: str) -> list[str]:
    return [line for line in trace.splitlines() if line and not line.startswith("#")]


def remote_host(fabric: Fabric, zone: str) -> IPv4Address:
    z = next(z for z in fabric.zones if z.name == zone)
    return kubeovn_nb.host_in(z.backbone.cidr, z.backbone.gateway or z.backbone.cidr.network_address + 1)


# ---------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def lab() -> Build:
    return build_file(LAB)


@pytest.fixture(scope="module")
def lab_ic(lab: Build) -> Iterator[Sandbox]:
    """The lab's four zones joined on `ts` with the lab's transit addresses, every zone routed."""
    with start(lab.plan.fabric) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def lab_routed(lab: Build, lab_ic: Sandbox) -> dict[str, kubeovn_nb.Backbone]:
    return {z: route_zone(lab_ic, lab.plan.fabric, z, rendered_vpc_spec(lab, z)) for z in LAB_ZONES}


@pytest.fixture
def ic_db() -> Iterator[Sandbox]:
    """Only the IC northbound and southbound databases, not initialised."""
    with workdir() as path:
        sandbox = Sandbox(path)
        try:
            sandbox.start_ic_databases()
            yield sandbox
        finally:
            sandbox.stop()


# ---------------------------------------------------------------- (a) configure-ic-db.sh
def run_script(sandbox: Sandbox, script: Path) -> subprocess.CompletedProcess[str]:
    env = {**sandbox.env(), "OVN_IC_NB_DB": sandbox.ic_nb}
    return subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env, check=False)


def ic_nb_records(sandbox: Sandbox) -> int:
    """Transactions committed to the IC NB database file so far."""
    return len(run(["ovsdb-tool", "show-log", str(sandbox.workdir / "ic" / "ic_nb.db")]).splitlines())


def ic_nb_global(sandbox: Sandbox) -> str:
    return run(["ovsdb-client", "dump", sandbox.ic_nb, "OVN_IC_Northbound", "IC_NB_Global"], env=sandbox.env())


def script_of(build: Build, zone: str, tmp_path: Path) -> Path:
    path = tmp_path / "configure-ic-db.sh"
    path.write_text(build.files[PurePosixPath(build.site, zone, "ic-db", "configure-ic-db.sh")].text)
    return path


def test_configure_ic_db_sets_vxlan_mode_and_second_run_changes_nothing(
    lab: Build, ic_db: Sandbox, tmp_path: Path
) -> None:
    assert interconnection(lab.plan.fabric).vxlan_mode
    script = script_of(lab, "hq", tmp_path)

    first = run_script(ic_db, script)
    assert first.returncode == 0, first.stderr
    # OVN 23.03's ovn-ic ignores vxlan_mode; what is observable is the stored option
    # on the single IC_NB_Global row, which OVN >= 25.03 acts on.
    assert ic_db.icnb("get", "IC_NB_Global", ".", "options").strip() == '{vxlan_mode="true"}'
    assert len(ic_db.icnb("--bare", "--columns=_uuid", "list", "IC_NB_Global").split()) == 1
    assert ic_db.icnb("--bare", "--columns=name", "list", "Transit_Switch").strip() == ""
    assert 'IC_NB_Global options: {vxlan_mode="true"}' in first.stdout
    state, records = ic_nb_global(ic_db), ic_nb_records(ic_db)

    second = run_script(ic_db, script)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert ic_nb_global(ic_db) == state  # same row, same _uuid, same options
    assert ic_nb_records(ic_db) == records  # not even an empty transaction was committed


def test_configure_ic_db_without_vxlan_removes_the_option(ic_db: Sandbox, tmp_path: Path) -> None:
    text = LAB.read_text().replace("encapsulation: vxlan", "encapsulation: geneve", 1)
    geneve = build_text(text, "sites/lab/fabric.yaml")
    assert not interconnection(geneve.plan.fabric).vxlan_mode
    ic_db.icnb("init")
    ic_db.icnb("set", "IC_NB_Global", ".", "options:vxlan_mode=true", "options:other=kept")

    script = script_of(geneve, "hq", tmp_path)
    first = run_script(ic_db, script)
    assert first.returncode == 0, first.stderr
    assert ic_db.icnb("get", "IC_NB_Global", ".", "options").strip() == '{other=kept}'
    records = ic_nb_records(ic_db)
    second = run_script(ic_db, script)
    assert second.returncode == 0, second.stderr
    assert ic_nb_records(ic_db) == records


def test_configure_ic_db_fails_loudly_without_a_database(lab: Build, tmp_path: Path) -> None:
    with workdir() as path:
        sandbox = Sandbox(path)
        script = script_of(lab, "hq", tmp_path)
        text = script.read_text().replace("--timeout=60", "--timeout=1")
        script.write_text(text)
        result = run_script(sandbox, script)  # nothing listens on the IC NB socket
    assert result.returncode != 0
    assert "vxlan_mode" not in result.stdout


def test_configure_ic_db_check_says_whether_the_database_is_configured(
    lab: Build, ic_db: Sandbox, tmp_path: Path
) -> None:
    """`--check` is the IC server's readiness probe: unready until vxlan_mode is set."""
    script = script_of(lab, "hq", tmp_path)
    check = subprocess.run(["sh", str(script), "--check"], capture_output=True, text=True, check=False,
                           env={**ic_db.env(), "OVN_IC_NB_DB": ic_db.ic_nb})
    assert check.returncode == 1  # no IC_NB_Global row yet
    ic_db.icnb("init")
    assert run_check(ic_db, script) == 1
    assert run_script(ic_db, script).returncode == 0
    records = ic_nb_records(ic_db)
    assert run_check(ic_db, script) == 0
    assert ic_nb_records(ic_db) == records  # the probe only reads
    ic_db.icnb("set", "IC_NB_Global", ".", "options:vxlan_mode=false")
    assert run_check(ic_db, script) == 1
    bad = subprocess.run(["sh", str(script), "--bogus"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "usage" in bad.stderr


def run_check(sandbox: Sandbox, script: Path) -> int:
    env = {**sandbox.env(), "OVN_IC_NB_DB": sandbox.ic_nb}
    return subprocess.run(["sh", str(script), "--check"], capture_output=True, text=True, env=env,
                          check=False).returncode


def test_the_sidecar_configures_a_rebuilt_database_again(lab: Build, ic_db: Sandbox, tmp_path: Path) -> None:
    """The IC server's sidecar (`--every`) sets vxlan_mode, sets it again after the IC database is
    rebuilt from an empty file (how a lost IC database is recovered) without anyone running anything, and applies a
    changed script on its next round."""
    script = script_of(lab, "hq", tmp_path)
    env = {**ic_db.env(), "OVN_IC_NB_DB": ic_db.ic_nb}
    sidecar = subprocess.Popen(["sh", str(script), "--every", "1"], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        poll("vxlan_mode", lambda: run_check(ic_db, script) == 0)
        records = ic_nb_records(ic_db)
        time.sleep(2.5)  # two more rounds
        assert ic_nb_records(ic_db) == records  # a configured database is only read

        # Rebuild: the IC NB server is stopped, its file replaced by an empty one, started again.
        row = ic_db.icnb("--bare", "--columns=_uuid", "list", "IC_NB_Global").strip()
        ic = ic_db.workdir / "ic"
        pid = int((ic / "ic_nb.pid").read_text().strip())
        run(["ovs-appctl", "-t", str(ic / "ic_nb.ctl"), "exit"])
        poll("the IC NB server to stop", lambda: not Path(f"/proc/{pid}").exists())
        ic_db._start_db(ic, "ic_nb", "ovn-ic-nb.ovsschema")
        poll("vxlan_mode after the rebuild", lambda: run_check(ic_db, script) == 0)
        assert ic_db.icnb("--bare", "--columns=_uuid", "list", "IC_NB_Global").strip() not in ("", row)
        assert ic_db.icnb("get", "IC_NB_Global", ".", "options").strip() == '{vxlan_mode="true"}'

        # A changed script (the fabric switched to geneve): the next round runs the new file.
        geneve = build_text(LAB.read_text().replace("encapsulation: vxlan", "encapsulation: geneve", 1),
                            "sites/lab/fabric.yaml")
        script.write_text(geneve.files[PurePosixPath(geneve.site, "hq", "ic-db", "configure-ic-db.sh")].text)
        poll("vxlan_mode removed", lambda: ic_db.icnb("get", "IC_NB_Global", ".", "options").strip() == "{}")
        assert sidecar.poll() is None
    finally:
        sidecar.terminate()
        sidecar.wait(timeout=30)
    assert sidecar.returncode == 0  # TERM ends it cleanly


def test_vxlan_mode_set_before_the_transit_switch_is_only_stored_by_ovn_23_03(lab: Build, tmp_path: Path) -> None:
    """The transit switch key that really comes out when the rendered script ran first."""
    version = run(["ovn-ic", "--version"]).splitlines()[0].split()[-1]
    major = int(version.split(".")[0])
    if major >= 25:
        pytest.skip(f"ovn-ic {version} implements vxlan_mode; this records 23.03 behaviour")
    script = script_of(lab, "hq", tmp_path)
    with start(lab.plan.fabric, before_transit_switch=[["sh", str(script)]]) as sandbox:
        assert sandbox.icnb("get", "IC_NB_Global", ".", "options").strip() == '{vxlan_mode="true"}'
        key = int(sandbox.icsb("--bare", "--columns=tunnel_key", "find", "Datapath_Binding",
                               "transit_switch=ts"))
        encaps = set(sandbox.icsb("--bare", "--columns=type", "list", "Encap").split())
    assert encaps == {"vxlan"}
    # Global datapath keys start at 16711681: beyond VXLAN's 12 bits (<= 4095).
    assert key > 4095


# ---------------------------------------------------------------- (b) routes and traces
@pytest.mark.parametrize("zone", LAB_ZONES)
def test_rendered_routes_send_backbone_traffic_through_the_transit_switch(
    lab: Build, lab_ic: Sandbox, lab_routed: dict[str, kubeovn_nb.Backbone], zone: str
) -> None:
    fabric = lab.plan.fabric
    local = lab_routed[zone]
    routes = lab_ic.nb(zone, "lr-route-list", ROUTER)
    others = [z for z in fabric.zones if z.name != zone]
    own_address = next(z.transit_address for z in fabric.zones if z.name == zone)
    assert own_address is not None
    assert len(others) == 3
    for other in others:
        hop = other.transit_address
        assert hop is not None
        assert re.search(rf"^\s+{re.escape(str(other.backbone.cidr))}\s+{re.escape(str(hop))} dst-ip$",
                         routes, re.MULTILINE), routes
        dst = remote_host(fabric, other.name)
        packet = flow(local.vm_mac, local.router_mac, local.vm_ip, dst, local.vm)

        minimal = lab_ic.trace(zone, local.switch, packet, "--minimal")
        actions = minimal_actions(minimal)
        assert actions[-1] == f'output("ts-{other.name}");', minimal
        assert f"eth.dst = {transit_mac(hop)};" in actions, minimal

        detailed = lab_ic.trace(zone, local.switch, packet)
        routing = stage(detailed, "lr_in_ip_routing")
        assert f"reg0 = {hop};" in routing, detailed
        assert f'outport = "{zone}-ts";' in routing, detailed
        assert f"priority {ALLOW_PRIORITY}" in stage(detailed, "lr_in_policy").splitlines()[0], detailed
        assert f'/* output to "ts-{other.name}", type "remote" */' in detailed

        # The other half, traced in the remote zone: from the transit switch to its VM.
        remote = lab_routed[other.name]
        arriving = flow(transit_mac(own_address), transit_mac(hop), local.vm_ip, dst, f"ts-{zone}", ttl=63)
        there = minimal_actions(lab_ic.trace(other.name, "ts", arriving, "--minimal"))
        assert there[-1] == f'output("{remote.vm}");', there


def test_without_the_allow_policy_kube_ovns_reroute_captures_the_traffic(lab: Build) -> None:
    fabric, zone = lab.plan.fabric, "hq"
    spec = rendered_vpc_spec(lab, zone)
    allows = [p for p in spec["policyRoutes"] if p["priority"] == ALLOW_PRIORITY]
    assert len(allows) == 3 and all(p["action"] == "allow" for p in allows)
    spec = {**spec, "policyRoutes": [p for p in spec["policyRoutes"] if p["priority"] != ALLOW_PRIORITY]}
    with start(fabric) as sandbox:
        local = route_zone(sandbox, fabric, zone, spec)
        node = f"node-{zone}"
        for other in fabric.zones[1:]:
            packet = flow(local.vm_mac, local.router_mac, local.vm_ip, remote_host(fabric, other.name), local.vm)
            actions = minimal_actions(sandbox.trace(zone, local.switch, packet, "--minimal"))
            assert actions[-1] == f'output("{node}");', actions
            detailed = sandbox.trace(zone, local.switch, packet)
            # The static route still picks the transit port; the 29000 policy overrides it.
            assert f"reg0 = {other.transit_address};" in stage(detailed, "lr_in_ip_routing")
            policy = stage(detailed, "lr_in_policy")
            assert f"priority {kubeovn_nb.GATEWAY_ROUTER_PRIORITY}" in policy.splitlines()[0], detailed
            assert 'outport = "ovn-cluster-join";' in policy
            assert "type \"remote\"" not in detailed

        # Put the rendered allow policies back: the traffic leaves through the transit switch again.
        kubeovn_nb.apply_policy_routes(sandbox, zone, allows)
        sandbox.sync(zone)
        for other in fabric.zones[1:]:
            packet = flow(local.vm_mac, local.router_mac, local.vm_ip, remote_host(fabric, other.name), local.vm)
            actions = minimal_actions(sandbox.trace(zone, local.switch, packet, "--minimal"))
            assert actions[-1] == f'output("ts-{other.name}");', actions


# ---------------------------------------------------------------- (c) IC SB ports
def test_ic_sb_lists_each_zones_transit_port_with_the_fabric_address(lab: Build, lab_ic: Sandbox) -> None:
    fabric = lab.plan.fabric
    ts = interconnection(fabric).transit_switch
    show = icsb_show.parse(lab_ic.icsb("show"))
    assert sorted(show.zones) == sorted(LAB_ZONES)
    ports = show.ports_on(ts.name)
    assert sorted(ports) == sorted(LAB_ZONES)
    for zone in fabric.zones:
        port = ports[zone.name]
        assert port.name == f"{ts.name}-{zone.name}"
        assert port.gateway == zone.gateway_nodes[0]
        assert port.ipv4 is not None
        assert port.ipv4.ip == zone.transit_address
        assert port.ipv4.network == ts.subnet
        # Every other zone routes to this zone's backbone through exactly that address.
        for other in lab.plan.zones:
            if other.name != zone.name:
                hops = {r.next_hop for r in other.routes if r.cidr == zone.backbone.cidr}
                assert hops == {port.ipv4.ip}
    # The machine-readable listing (which also shows unclaimed ports) agrees.
    csv = lab_ic.icsb("--format=csv", "--data=bare", "--no-headings",
                      "--columns=logical_port,transit_switch,address", "list", "Port_Binding")
    rows = {line.split(",")[0]: line.split(",")[2] for line in csv.splitlines()}
    assert {name: addr.split()[1] for name, addr in rows.items()} == {
        f"ts-{z.name}": f"{z.transit_address}/{ts.subnet.prefixlen}" for z in fabric.zones
    }


def fabricgen(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabricgen", *args], capture_output=True, text=True,
                          cwd=cwd, input=stdin, check=False)


def test_fabricgen_transit_agrees_with_the_live_ic_sb(lab_ic: Sandbox, tmp_path: Path) -> None:
    show = tmp_path / "show.txt"
    show.write_text(lab_ic.icsb("show"))
    result = fabricgen("transit", str(LAB), str(show), cwd=REPO)
    assert result.returncode == 0, result.stderr + result.stdout
    assert result.stdout == ""
    assert "transit addresses match (4 zone(s))" in result.stderr


def test_after_an_ic_rebuild_transit_write_and_render_restore_the_paths(lab: Build, tmp_path: Path) -> None:
    """Kube-OVN re-randomises transit addresses on a rebuild: the committed routes go stale until
    `fabricgen transit --write` takes the new ones from `ovn-ic-sbctl show` and the fabric is rendered."""
    fabric_file = tmp_path / "fabric.yaml"
    fabric_file.write_text(LAB.read_text())
    old = {z.name: str(z.transit_address) for z in lab.plan.fabric.zones}
    with start(lab.plan.fabric, REBUILT) as sandbox:
        show = sandbox.icsb("show")
        local = route_zone(sandbox, lab.plan.fabric, "hq", rendered_vpc_spec(lab, "hq"))
        packets = {
            other: flow(local.vm_mac, local.router_mac, local.vm_ip, remote_host(lab.plan.fabric, other), local.vm)
            for other in ("ai", "edge", "dr")
        }
        # Stale: the committed routes point at addresses no transit port has any more.
        for other, packet in packets.items():
            actions = minimal_actions(sandbox.trace("hq", local.switch, packet, "--minimal"))
            assert f'output("ts-{other}");' not in actions, actions

        result = fabricgen("transit", "fabric.yaml", "-", cwd=tmp_path, stdin=show)
        assert result.returncode == 3, result.stderr
        assert fabric_file.read_text() == LAB.read_text()  # without --write nothing is touched
        for zone, address in REBUILT.items():
            assert f": {old[zone]} -> {address} (zone {zone}: port ts-{zone} on ts)" in result.stdout

        (tmp_path / "show.txt").write_text(show)
        result = fabricgen("transit", "fabric.yaml", "show.txt", "--write", cwd=tmp_path)
        assert result.returncode == 3, result.stderr
        before, after = LAB.read_text().splitlines(), fabric_file.read_text().splitlines()
        assert len(before) == len(after)
        changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
        assert changed == [(f"    transitAddress: {old[z]}", f"    transitAddress: {REBUILT[z]}") for z in LAB_ZONES]
        again = fabricgen("transit", "fabric.yaml", "show.txt", "--format", "json", cwd=tmp_path)
        assert again.returncode == 0, again.stdout

        # Render the updated fabric and apply hq's new routes over the stale ones, as Kube-OVN would.
        rebuilt = build_text(fabric_file.read_text(), "fabric.yaml")
        kubeovn_nb.apply_vpc_routes(sandbox, "hq", rendered_vpc_spec(rebuilt, "hq"))
        routes = sandbox.nb("hq", "lr-route-list", ROUTER)
        for stale in ("ai", "edge", "dr"):
            assert f" {old[stale]} " not in routes, routes
        for other, packet in packets.items():
            hop = IPv4Address(REBUILT[other])
            actions = minimal_actions(sandbox.trace("hq", local.switch, packet, "--minimal"))
            assert actions[-1] == f'output("ts-{other}");', actions
            assert f"eth.dst = {transit_mac(hop)};" in actions
            assert f"reg0 = {hop};" in stage(sandbox.trace("hq", local.switch, packet), "lr_in_ip_routing")


# ---------------------------------------------------------------- FG711: advertised ranges over a zone's own networks
def test_an_advertised_range_over_a_zones_pod_or_join_cidr_never_works(lab: Build) -> None:
    """Why FG711 refuses an advertised range that overlaps a zone's pod, join or service CIDR: in
    that zone the static route fabricgen would write competes with a connected network, and the
    longer prefix wins. A wider advertised range never carries the zone's traffic to the pod
    addresses it covers; a narrower one takes the zone's own join addresses away."""
    fabric, zone = lab.plan.fabric, "hq"
    z = next(z for z in fabric.zones if z.name == zone)
    transit = "169.254.100.200"  # a deployment's transit address, as FG702/FG703 allow
    wide = f"{z.cluster.pod_cidr.network_address}/{z.cluster.pod_cidr.prefixlen - 1}"  # covers the pod CIDR
    narrow = str(list(z.cluster.join_cidr.subnets(new_prefix=24))[7])  # inside the join CIDR
    spec = rendered_vpc_spec(lab, zone)
    for cidr in (wide, narrow):  # what default_vpc.py writes for an advertised range
        spec["staticRoutes"].append({"cidr": cidr, "nextHopIP": transit, "policy": "policyDst"})
        spec["policyRoutes"].append({"action": "allow", "match": f"ip4.dst == {cidr}", "priority": ALLOW_PRIORITY})
    with start(fabric) as sandbox:
        # Kube-OVN's default subnet: switch ovn-default on router port ovn-cluster-ovn-default.
        pods = z.cluster.pod_cidr
        sandbox.nb(zone, "ls-add", "ovn-default")
        sandbox.nb(zone, "lrp-add", ROUTER, "ovn-cluster-ovn-default", "00:00:03:00:00:01",
                   f"{pods.network_address + 1}/{pods.prefixlen}")
        sandbox.nb(zone, "lsp-add", "ovn-default", "ovn-default-ovn-cluster", "--", "lsp-set-type",
                   "ovn-default-ovn-cluster", "router", "--", "lsp-set-addresses", "ovn-default-ovn-cluster",
                   "router", "--", "lsp-set-options", "ovn-default-ovn-cluster", "router-port=ovn-cluster-ovn-default")
        local = route_zone(sandbox, fabric, zone, spec)
        into_pods = flow(local.vm_mac, local.router_mac, local.vm_ip, pods.network_address + 9, local.vm)
        routing = stage(sandbox.trace(zone, local.switch, into_pods), "lr_in_ip_routing")
        assert 'outport = "ovn-cluster-ovn-default";' in routing and transit not in routing, routing
        join_host = IPv4Address(narrow.split("/")[0]) + 9
        into_join = flow(local.vm_mac, local.router_mac, local.vm_ip, join_host, local.vm)
        routing = stage(sandbox.trace(zone, local.switch, into_join), "lr_in_ip_routing")
        assert f"reg0 = {transit};" in routing and "ovn-cluster-join" not in routing, routing
