"""OVN deployments joined to the interconnection, against real OVN (Debian OVN 23.03).

A sandbox (`fabricgen/lab/sandbox.py`) runs the IC databases, a Kube-OVN-style zone `hq`
and a plain OVN AZ for deployment `dc`. The rendered `configure-ovn-ic.sh` of `dc`
runs twice against that AZ's NB (the second run changes nothing), `hq` gets its
rendered Vpc routes the way Kube-OVN applies them, and ovn-trace follows packets
both ways across the transit switch; `ovn-ic-sbctl show` lists `dc`'s port with the
rendered address. The `openstack-k8s` sample's two deployments are joined the same way
and reach each other's advertised ranges.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path, PurePosixPath

import pytest
from test_ovn_sandbox import flow, minimal_actions, rendered_vpc_spec, route_zone, stage

from fabricgen.lab.ovn.running import poll, run
from fabricgen.lab.ovn.sandbox import Sandbox, ZoneSpec, missing_prerequisites, transit_mac
from fabricgen.lab.platforms import kubeovn as kubeovn_nb
from fabricgen.observe import icsb_show
from fabricgen.pipeline import Build
from fabricgen.plan.joins import transit_mac as az_mac
from support.fabrics import REPO, build_file, build_text

_MISSING = missing_prerequisites()
pytestmark = [pytest.mark.lab, pytest.mark.skipif(
    bool(_MISSING),
    reason="real OVN needed (apt-get install ovn-central ovn-host ovn-ic ovn-ic-db openvswitch-switch); "
    f"missing: {', '.join(_MISSING)}",
)]

FABRIC = """\
apiVersion: fabricgen.io/v1alpha1
kind: Fabric
metadata:
  name: joined
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
ovnDeployments:
  - name: dc
    databases:
      members:
        - host: ctl1
          address: 10.20.0.11
      clientNetworks: [10.20.0.0/24]
    hosts:
      - name: gw1
        ethernets:
          - name: eth0
        tunnelEndpoint:
          loopback: 10.255.0.1/32
        bgp:
          asn: 65101
          uplinks: [eth0]
    interconnect:
      transitAddress: 169.254.100.200
      gatewayChassis: [gw1]
      advertise: [10.100.0.0/16]
"""
SITE_FILE = "sites/joined/fabric.yaml"
DEPLOYMENT, AZ, ROUTER_DC = "dc", "dc", "ic-router"
DC_TRANSIT = IPv4Address("169.254.100.200")
HQ_TRANSIT = IPv4Address("169.254.100.23")
ADVERTISED = IPv4Network("10.100.0.0/16")
HQ_BACKBONE = IPv4Network("172.30.10.0/24")


@dataclass(frozen=True)
class Joined:
    sandbox: Sandbox
    build: Build
    runs: tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]
    dumps: tuple[str, str]
    hq: kubeovn_nb.Backbone
    dc: kubeovn_nb.Backbone


def script_env(sandbox: Sandbox, az: str) -> dict[str, str]:
    return {**sandbox.env(), "OVN_NB_DB": sandbox.nb_db(az), "OVN_SB_DB": sandbox.sb_db(az),
            "OVN_IC_NB_DB": sandbox.ic_nb, "OVN_IC_SB_DB": sandbox.ic_sb}


def run_script(sandbox: Sandbox, script: Path, az: str = AZ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(script)], capture_output=True, text=True, env=script_env(sandbox, az),
                          check=False)


def nb_dump(sandbox: Sandbox, az: str = AZ) -> str:
    return run(["ovsdb-client", "dump", sandbox.nb_db(az), "OVN_Northbound"], env=sandbox.env())


def published(sandbox: Sandbox, port: str) -> bool:
    ports = icsb_show.parse(sandbox.icsb("show")).ports_on("ts")
    return any(p.name == port for p in ports.values())


def remote_bound(sandbox: Sandbox, az: str, port: str) -> bool:
    chassis = sandbox.sb(az, "--bare", "--columns=chassis", "find", "Port_Binding", f"logical_port={port}")
    return bool(chassis.strip())


def add_advertised_network(sandbox: Sandbox, az: str = AZ, router: str = ROUTER_DC,
                           cidr: IPv4Network = ADVERTISED, tag: int = 0x0D) -> kubeovn_nb.Backbone:
    """What the platform behind the deployment's router has: a switch on the advertised range."""
    gateway = cidr.network_address + 1
    vm_ip = kubeovn_nb.host_in(cidr, gateway)
    mac_router, mac_vm, vm = f"00:00:{tag:02x}:64:00:01", f"00:00:{tag:02x}:64:00:05", f"vm-{az}"
    sandbox.nb(az, "ls-add", "tenant")
    sandbox.nb(az, "lrp-add", router, f"{router}-tenant", mac_router, f"{gateway}/{cidr.prefixlen}")
    sandbox.nb(az, "lsp-add", "tenant", "tenant-router", "--", "lsp-set-type", "tenant-router", "router",
               "--", "lsp-set-addresses", "tenant-router", "router",
               "--", "lsp-set-options", "tenant-router", f"router-port={router}-tenant")
    sandbox.nb(az, "lsp-add", "tenant", vm, "--", "lsp-set-addresses", vm, f"{mac_vm} {vm_ip}")
    sandbox.sync(az)
    return kubeovn_nb.Backbone(az, "tenant", cidr, gateway, mac_router, vm, mac_vm, vm_ip)


@pytest.fixture(scope="module")
def joined(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Joined]:
    build = build_text(FABRIC, SITE_FILE)
    script = tmp_path_factory.mktemp("ic-join") / "configure-ovn-ic.sh"
    rel = PurePosixPath(build.site, "_host", DEPLOYMENT, "controllers", "ctl1", "configure-ovn-ic.sh")
    script.write_text(build.files[rel].text)
    hq = ZoneSpec("hq", HQ_TRANSIT, "hq-gw1", IPv4Address("127.0.0.10"))
    with Sandbox.running([hq]) as sandbox:
        sandbox.start_az(AZ)  # unnamed: the script names it
        sandbox.add_gateway_chassis(AZ, "gw1", IPv4Address("127.0.0.20"))
        first = run_script(sandbox, script)
        assert first.returncode == 0, first.stderr + first.stdout
        sandbox.sync(AZ)
        # What ovn-controller on gw1 would do: claim the chassisredirect port of the transit port.
        sandbox.sb(AZ, "wait-until", "Port_Binding", f"cr-{AZ}-ts")
        sandbox.sb(AZ, "lsp-bind", f"cr-{AZ}-ts", "gw1")
        poll("ts-dc in `ovn-ic-sbctl show`", lambda: published(sandbox, f"ts-{AZ}"))
        poll("ts-dc bound as a remote port in hq", lambda: remote_bound(sandbox, "hq", f"ts-{AZ}"))
        poll("ts-hq bound as a remote port in dc", lambda: remote_bound(sandbox, AZ, "ts-hq"))
        sandbox.sync(AZ)
        before = nb_dump(sandbox)
        second = run_script(sandbox, script)
        assert second.returncode == 0, second.stderr + second.stdout
        after = nb_dump(sandbox)  # no `sync` before it: that alone bumps NB_Global nb_cfg
        hq_backbone = route_zone(sandbox, build.plan.fabric, "hq", rendered_vpc_spec(build, "hq"))
        dc_network = add_advertised_network(sandbox)
        yield Joined(sandbox, build, (first, second), (before, after), hq_backbone, dc_network)


def test_second_run_changes_nothing(joined: Joined) -> None:
    before, after = joined.dumps
    assert after == before
    second = joined.runs[1]
    assert second.stderr == ""
    assert f"IC SB port ts-{AZ}: {az_mac(AZ)} {DC_TRANSIT}/24" in second.stdout


def test_the_script_builds_the_az_the_way_ovn_ic_expects(joined: Joined) -> None:
    sb = joined.sandbox
    assert sb.nb(AZ, "--bare", "--columns=name", "list", "NB_Global").strip() == AZ
    assert AZ in sb.registered_zones()
    port = sb.nb(AZ, "--bare", "--columns=mac,networks", "find", "Logical_Router_Port", f"name={AZ}-ts")
    assert port.split() == [az_mac(AZ), f"{DC_TRANSIT}/24"]
    assert sb.nb(AZ, "lsp-get-type", f"ts-{AZ}").strip() == "router"
    assert sb.nb(AZ, "get", "Logical_Switch_Port", f"ts-{AZ}", "options:router-port").strip() == f"{AZ}-ts"
    # ovn-ic's own key on the port survived the second run.
    assert sb.nb(AZ, "get", "Logical_Switch_Port", f"ts-{AZ}", "options:requested-tnl-key").strip()
    assert sb.nb(AZ, "lrp-get-gateway-chassis", f"{AZ}-ts").split() == [f"{AZ}-ts-gw1", "100"]
    routes = sb.nb(AZ, "lr-route-list", ROUTER_DC)
    assert f"{HQ_BACKBONE}" in routes and f"{HQ_TRANSIT} dst-ip" in routes, routes
    assert sb.nb(AZ, "--if-exists", "get", "NB_Global", ".", "options:ic-route-adv").strip() == ""


def test_ic_sb_lists_the_deployments_port_with_the_rendered_address(joined: Joined) -> None:
    show = icsb_show.parse(joined.sandbox.icsb("show"))
    assert sorted(show.zones) == ["dc", "hq"]
    port = show.ports_on("ts")[AZ]
    assert port.name == f"ts-{AZ}"
    assert port.gateway == "gw1"
    assert port.ipv4 is not None and port.ipv4.ip == DC_TRANSIT
    (join,) = joined.build.plan.joins
    assert port.ipv4 == join.network
    assert port.mac == join.mac == az_mac(AZ)


def test_zone_backbone_to_advertised_range_leaves_through_the_deployments_port(joined: Joined) -> None:
    sb, hq, dc = joined.sandbox, joined.hq, joined.dc
    packet = flow(hq.vm_mac, hq.router_mac, hq.vm_ip, dc.vm_ip, hq.vm)
    actions = minimal_actions(sb.trace("hq", hq.switch, packet, "--minimal"))
    assert actions[-1] == f'output("ts-{AZ}");', actions
    assert f"eth.dst = {az_mac(AZ)};" in actions
    detailed = sb.trace("hq", hq.switch, packet)
    assert f"reg0 = {DC_TRANSIT};" in stage(detailed, "lr_in_ip_routing"), detailed
    assert "priority 31000" in stage(detailed, "lr_in_policy").splitlines()[0], detailed
    # In dc, from the transit switch to the VM behind the deployment's router.
    arriving = flow(transit_mac(HQ_TRANSIT), az_mac(AZ), hq.vm_ip, dc.vm_ip, "ts-hq", ttl=63)
    there = minimal_actions(sb.trace(AZ, "ts", arriving, "--minimal"))
    assert there[-1] == f'output("{dc.vm}");', there


def test_deployment_router_to_zone_backbone_leaves_through_the_zones_port(joined: Joined) -> None:
    sb, hq, dc = joined.sandbox, joined.hq, joined.dc
    packet = flow(dc.vm_mac, dc.router_mac, dc.vm_ip, hq.vm_ip, dc.vm)
    actions = minimal_actions(sb.trace(AZ, dc.switch, packet, "--minimal"))
    assert actions[-1] == 'output("ts-hq");', actions
    assert f"eth.dst = {transit_mac(HQ_TRANSIT)};" in actions
    routing = stage(sb.trace(AZ, dc.switch, packet), "lr_in_ip_routing")
    assert f"reg0 = {HQ_TRANSIT};" in routing and f'outport = "{AZ}-ts";' in routing, routing
    # In hq, from the transit switch to the backbone VM.
    arriving = flow(az_mac(AZ), transit_mac(HQ_TRANSIT), dc.vm_ip, hq.vm_ip, f"ts-{AZ}", ttl=63)
    there = minimal_actions(sb.trace("hq", "ts", arriving, "--minimal"))
    assert there[-1] == f'output("{hq.vm}");', there


# ---------------------------------------------------------------- the openstack-k8s sample
SAMPLE = REPO / "sites" / "openstack-k8s" / "fabric.yaml"


def test_sample_openstack_and_kubernetes_reach_each_other_through_ovn_ic(tmp_path: Path) -> None:
    """Both deployments of the sample as AZs: their rendered scripts join them, twice, and each
    one's router sends the other's advertised range out through the other's transit port."""
    build = build_file(SAMPLE)
    joins = {j.deployment.name: j for j in build.plan.joins}
    assert sorted(joins) == ["kubernetes", "openstack"]
    with Sandbox.running([]) as sandbox:
        scripts: dict[str, Path] = {}
        for name, join in joins.items():
            host = join.deployment.databases.members[0].host
            script = tmp_path / f"{name}.sh"
            rel = PurePosixPath(build.site, "_host", name, "controllers", host, "configure-ovn-ic.sh")
            script.write_text(build.files[rel].text)
            sandbox.start_az(name)
            for i, (chassis, _priority) in enumerate(join.gateway_chassis):
                sandbox.add_gateway_chassis(name, chassis, IPv4Address("127.0.1.1") + 16 * len(scripts) + i)
            result = run_script(sandbox, script, name)
            assert result.returncode == 0, result.stderr + result.stdout
            sandbox.sync(name)
            sandbox.sb(name, "wait-until", "Port_Binding", f"cr-{join.router_port}")
            sandbox.sb(name, "lsp-bind", f"cr-{join.router_port}", join.gateway_chassis[0][0])
            scripts[name] = script
        for name, join in joins.items():
            other = next(j for j in joins.values() if j is not join)
            poll(f"{other.switch_port} bound in {name}",
                 lambda n=name, p=other.switch_port: remote_bound(sandbox, n, p))
        ports = icsb_show.parse(sandbox.icsb("show")).ports_on("ts")
        assert {p.name: (p.mac, p.ipv4) for p in ports.values()} == {
            j.switch_port: (j.mac, j.network) for j in joins.values()}
        for name in joins:
            sandbox.sync(name)
            before = nb_dump(sandbox, name)
            again = run_script(sandbox, scripts[name], name)
            assert again.returncode == 0 and again.stderr == "", again.stderr
            assert nb_dump(sandbox, name) == before

        tags = {"openstack": 0x0A, "kubernetes": 0x0B}
        vms = {name: add_advertised_network(sandbox, name, j.router, j.deployment.interconnect.advertise[0], tags[name])
               for name, j in joins.items() if j.deployment.interconnect is not None}
        assert sorted(vms) == sorted(joins)
        for name, join in joins.items():
            other = next(j for j in joins.values() if j is not join)
            src, dst = vms[name], vms[other.deployment.name]
            packet = flow(src.vm_mac, src.router_mac, src.vm_ip, dst.vm_ip, src.vm)
            actions = minimal_actions(sandbox.trace(name, src.switch, packet, "--minimal"))
            assert actions[-1] == f'output("{other.switch_port}");', actions
            assert f"eth.dst = {other.mac};" in actions
            arriving = flow(join.mac, other.mac, src.vm_ip, dst.vm_ip, join.switch_port, ttl=63)
            there = minimal_actions(sandbox.trace(other.deployment.name, "ts", arriving, "--minimal"))
            assert there[-1] == f'output("{dst.vm}");', there
