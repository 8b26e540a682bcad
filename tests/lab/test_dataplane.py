"""`fabricgen verify` with packets: simulated chassis on a simulated underlay (slow: real daemons).

Per AZ the lab runs the gateway nodes and a VM host as chassis of their own: an OVS database,
`ovs-vswitchd --enable-dummy` (the user-space dummy datapath) and ovn-controller, built the
way ovn-org/ovn `tests/ovn-macros.at` (`sim_add`, `net_add`, `ovn_az_attach`) and
`tests/ovn-ic.at` ("interconnection") build them. Each pair's ICMP echo is injected at a VM port
with `netdev-dummy/receive` and read back from the other VM port's `options:tx_pcap`.

The tests run on both OVN versions at hand: the system's (Debian 12: OVN 23.03, OVS 3.1) and
Debian 13's OVN 25.03 / OVS 3.5, which `scripts/setup.sh --test` extracts into `.ovn/25.03`.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path

import pytest

from fabricgen import exit_codes
from fabricgen.lab import assembly
from fabricgen.lab.ovn.chassis import NETWORK, ChassisSpec
from fabricgen.lab.ovn.programs import PREFIX_VARIABLE, Programs
from fabricgen.lab.ovn.running import run
from fabricgen.lab.platforms import kubeovn
from fabricgen.lab.provers import dataplane, paths, proof
from fabricgen.pipeline import Build
from support.fabrics import REPO, build_file, build_text, edit
from support.lab_programs import BOTH, DEBIAN13, fabricgen, needs_25_03, prefix_args

pytestmark = pytest.mark.lab  # starts real programs: ovn-controller, ovn-ic, ovn-ic-nbctl, ovn-ic-sbctl, ovn-nbctl...

LAB = REPO / "sites" / "lab" / "fabric.yaml"
OPENSTACK_K8S = REPO / "sites" / "openstack-k8s" / "fabric.yaml"
def geneve(text: str) -> str:
    return edit(text, "  encapsulation: vxlan\n", "  encapsulation: geneve\n")


@pytest.fixture
def without_vxlan_mode(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The lab applies the rendered configure-ic-db.sh without its `vxlan_mode=true`: what an IC
    database set up by hand looks like (validation refuses such a fabric, FG104)."""
    rendered = assembly.ic_database_script

    def script(build: Build) -> str | None:
        text = rendered(build)
        assert text is not None and "options:vxlan_mode=true" in text
        return "\n".join(line for line in text.splitlines() if "vxlan_mode=true" not in line) + "\n"

    monkeypatch.setattr(assembly, "ic_database_script", script)
    yield


@pytest.fixture
def ai_tunnels_geneve(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """ai's nodes tunnel Geneve where the fabric (and every other zone) says VXLAN: a cluster whose
    Kube-OVN was installed with another tunnel type than the fabric's `encapsulation`."""
    rendered = assembly.lab_chassis

    def lab_chassis(build: Build, zones: Sequence[assembly._ZoneSetup]) -> tuple[dict[str, list[ChassisSpec]],
                                                                           dict[str, str]]:
        chassis, hosts = rendered(build, zones)
        assert {c.encapsulation for specs in chassis.values() for c in specs} == {"vxlan"}
        chassis["ai"] = [replace(c, encapsulation="geneve") for c in chassis["ai"]]
        return chassis, hosts

    monkeypatch.setattr(assembly, "lab_chassis", lab_chassis)
    yield


@pytest.fixture
def hq_node_1_not_an_ic_gateway(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """hq's first gateway node (priority 100 in the rendered gw-nodes) is not marked as an IC gateway
    (`ovn-is-interconn`, which Kube-OVN's daemon sets on the gw-nodes): it still claims hq's transit port."""
    rendered = assembly.lab_chassis

    def lab_chassis(build: Build, zones: Sequence[assembly._ZoneSetup]) -> tuple[dict[str, list[ChassisSpec]],
                                                                           dict[str, str]]:
        chassis, hosts = rendered(build, zones)
        assert chassis["hq"][0].name == "hq-node-1" and chassis["hq"][0].gateway
        chassis["hq"][0] = replace(chassis["hq"][0], gateway=False)
        return chassis, hosts

    monkeypatch.setattr(assembly, "lab_chassis", lab_chassis)
    yield


@pytest.fixture
def ai_without_its_allow_for_hq(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """ai's Vpc `ovn-cluster` without the rendered 31000 allow for hq's backbone: ai's traffic to hq
    meets Kube-OVN's 29000 reroute to a node, while hq's traffic to ai still arrives."""
    rendered = assembly._zones
    allow = "ip4.dst == 172.30.10.0/24"

    def zones(build: Build, actual: Mapping[str, IPv4Address]) -> list[assembly._ZoneSetup]:
        out = rendered(build, actual)
        ai = next(z for z in out if z.spec.name == "ai")
        policies = ai.vpc_spec["policyRoutes"]
        assert [p["match"] for p in policies].count(allow) == 1
        spec = {**ai.vpc_spec, "policyRoutes": [p for p in policies if p["match"] != allow]}
        return [replace(z, vpc_spec=spec) if z is ai else z for z in out]

    monkeypatch.setattr(assembly, "_zones", zones)
    yield


SNAT_ADDRESS = "169.254.100.250"


@pytest.fixture
def hq_snats_its_backbone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """hq's router `ovn-cluster` has an OVN SNAT rule for its backbone (added by hand, in the same
    transaction that creates the router): every packet hq sends out of the transit switch comes
    from another address, so the other zones see a source they never routed."""
    rendered = kubeovn.join_reroute_commands

    def join_reroute(zone: str, source: IPv4Network) -> tuple[str, list[list[str]]]:
        node, commands = rendered(zone, source)
        if zone == "hq":
            commands = [*commands, ["lr-nat-add", "ovn-cluster", "snat", SNAT_ADDRESS, str(source)]]
        return node, commands

    monkeypatch.setattr(kubeovn, "join_reroute_commands", join_reroute)
    yield


@pytest.fixture
def underlay_drops_vxlan_between_hq_and_ai() -> Iterator[assembly.Lab]:
    """The lab, whose underlay then drops VXLAN (UDP 4789) between every chassis of hq and of ai,
    both ways: a firewall between two sites that passes everything else."""
    with assembly.running(build_file(LAB), data_plane=True, programs=DEBIAN13) as lab:
        assert lab.underlay is not None and lab.underlay._main is not None
        switch = lab.underlay._main
        ips = {az: [str(c.spec.encap_ip) for c in lab.underlay.chassis.values() if c.spec.az == az]
               for az in ("hq", "ai")}
        flows = [f"priority=100,udp,nw_src={a},nw_dst={b},tp_dst=4789,actions=drop"
                 for a, b in itertools.product(ips["hq"], ips["ai"]) for a, b in ((a, b), (b, a))]
        for flow in flows:
            run(["ovs-ofctl", "add-flow", f"unix:{switch.directory / NETWORK}.mgmt", flow], env=switch.env())
        yield lab


# ---------------------------------------------------------------- the lab, on both OVN versions
@pytest.mark.parametrize("programs", BOTH)
def test_the_lab_with_packets(programs: Programs) -> None:
    result = fabricgen("verify", "sites/lab/fabric.yaml", *prefix_args(programs))
    out = result.stdout.splitlines()
    ovn, ovs = programs.versions()
    assert out[0] == ("sites/lab/fabric.yaml: 4 AZ(s) on transit switch ts (169.254.100.0/24), 12 ordered pair(s) "
                      "proven with packets between simulated chassis")
    assert out[1] == (f"proven with OVN {ovn} and Open vSwitch {ovs}: ICMP echo and reply per pair, injected at a "
                      "VM port (netdev-dummy) and read back at the other")
    if ovn.startswith("25.03."):
        # Kube-OVN 1.16 runs OVN 25.03: what the zones run, and VXLAN with vxlan_mode works.
        assert result.returncode == 0, result.stdout + result.stderr
        assert not any(line.startswith("warning:") for line in out)
        assert out[-1] == "12/12 pairs delivered"
    else:
        # OVN 23.03 has no vxlan_mode: the transit switch's key does not fit VXLAN, every pair is lost,
        # and the proof says it ran another OVN than the zones.
        assert result.returncode == exit_codes.UNREACHABLE, result.stdout + result.stderr
        assert out[2] == (f"warning: the zones (Kube-OVN 1.16) run OVN 25.03, this proof ran OVN {ovn}: it proves "
                          "nothing about OVN 25.03; run it with OVN 25.03 (`--ovn-prefix DIR`, see "
                          "docs/review-and-proof.md)")
        assert out[-1] == "0/12 pairs delivered"
        lost = [line for line in out if line.startswith("not delivered: ")]
        assert len(lost) == 12 and all(": tunnel-key: " in line and "12-bit" in line for line in lost)


@needs_25_03
def test_json_says_how_and_with_what(monkeypatch: pytest.MonkeyPatch) -> None:
    result = fabricgen("verify", "sites/lab/fabric.yaml", "--format", "json", *prefix_args(DEBIAN13))
    doc = json.loads(result.stdout)
    assert (doc["mode"], doc["ovn"], doc["ovs"], doc["warnings"]) == ("data-plane", "25.03.0", "3.5.0", [])
    pair = doc["pairs"][0]
    assert (pair["from"]["az"], pair["to"]["az"], pair["outcome"]) == ("hq", "ai", "delivered")
    assert pair["detail"] == "hq -> ts -> ai and back: 1450-byte ICMP echo and its reply"  # 1500 - VXLAN's 50


# ---------------------------------------------------------------- VXLAN without vxlan_mode
@needs_25_03
def test_vxlan_without_vxlan_mode_loses_every_pair_and_names_the_tunnel_key(without_vxlan_mode: None) -> None:
    result = proof.prove(build_file(LAB), data_plane=True, programs=DEBIAN13)
    assert result.ovn_version == "25.03.0"
    assert result.delivered == 0 and len(result.pairs) == 12
    for pair in result.pairs:
        assert pair.outcome == dataplane.TUNNEL_KEY, pair
        assert "tunnel key" in pair.detail and "options:vxlan_mode=true" in pair.detail


@needs_25_03
def test_vxlan_as_rendered_keys_the_transit_switch_from_vxlans_range() -> None:
    with assembly.running(build_file(LAB), data_plane=True, programs=DEBIAN13) as lab:
        ic_key, keys = dataplane.transit_keys(lab)
        tunnels = lab.underlay.chassis["hq-node-1"].tunnels() if lab.underlay else []
    assert ic_key == "1025"  # the first key of vxlan_mode (tests/ovn-ic.at "VXLAN tunnel key")
    assert set(keys.values()) == {"1025"}
    assert tunnels and {kind for kind, _ip in tunnels} == {"vxlan"}


@pytest.mark.parametrize("programs", BOTH)
def test_geneve_delivers_every_pair(programs: Programs) -> None:
    build = build_text(geneve(LAB.read_text()), "fabric.yaml")
    result = proof.prove(build, data_plane=True, programs=programs)
    assert (result.delivered, len(result.pairs)) == (12, 12), [p.detail for p in result.pairs if not p.delivered]
    assert result.pairs[0].detail.endswith("1442-byte ICMP echo and its reply")  # 1500 - Geneve's 58


@needs_25_03
def test_geneve_does_not_need_vxlan_mode(without_vxlan_mode: None) -> None:
    text = edit(geneve(LAB.read_text()), "    zone: hq ", "    vxlanMode: true\n    zone: hq ")
    result = proof.prove(build_text(text, "fabric.yaml"), data_plane=True, programs=DEBIAN13)
    assert result.ok, [p.detail for p in result.pairs if not p.delivered]


# ---------------------------------------------------------------- what only the data plane shows
AZS = ("hq", "ai", "edge", "dr")


def lost_pairs(pairs: Iterable[paths.Pair]) -> dict[tuple[str, str], paths.Pair]:
    return {(p.source.az, p.target.az): p for p in pairs if not p.delivered}


@needs_25_03
def test_a_zone_tunnelling_another_encapsulation_is_an_encapsulation_verdict(ai_tunnels_geneve: None) -> None:
    lost = lost_pairs(proof.prove(build_file(LAB), data_plane=True, programs=DEBIAN13).pairs)
    assert set(lost) == {(a, b) for a in AZS for b in AZS if a != b and "ai" in (a, b)}
    assert {p.outcome for p in lost.values()} == {dataplane.ENCAPSULATION}
    assert lost[("hq", "ai")].detail == ("hq's gateway hq-node-1 tunnels with vxlan, ai's gateway ai-node-1 with "
                                         "geneve: no common encapsulation")
    assert lost[("ai", "dr")].detail == ("ai's gateway ai-node-1 tunnels with geneve, dr's gateway dr-node-1 with "
                                         "vxlan: no common encapsulation")


@needs_25_03
def test_a_gateway_that_is_not_an_ic_gateway_is_a_no_tunnel_verdict(hq_node_1_not_an_ic_gateway: None) -> None:
    with assembly.running(build_file(LAB), data_plane=True, programs=DEBIAN13) as lab:
        assert dataplane.active_gateway(lab, "hq") == "hq-node-1"  # it claims hq's port all the same
        assert lab.underlay is not None
        own = {str(c.spec.encap_ip) for name, c in lab.underlay.chassis.items()
               if c.spec.az == "hq" and name != "hq-node-1"}
        assert {ip for _kind, ip in lab.underlay.chassis["hq-node-1"].tunnels()} == own  # its own zone's chassis only
        lost = lost_pairs(dataplane.prove_pairs(lab, lab.endpoints()))
        ai_gateway = lab.underlay.chassis["ai-node-1"].spec.encap_ip
    assert set(lost) == {(a, b) for a in AZS for b in AZS if a != b and "hq" in (a, b)}
    assert {p.outcome for p in lost.values()} == {dataplane.NO_TUNNEL}
    assert lost[("hq", "ai")].detail == (
        f"no tunnel from hq's gateway hq-node-1 to ai's gateway ai-node-1 ({ai_gateway}): hq-node-1 is not an IC "
        "gateway (no ovn-is-interconn=true), and ovn-controller tunnels to other AZs' gateways only from one")
    assert lost[("ai", "hq")].detail == (
        "no tunnel from ai's gateway ai-node-1 to hq's gateway hq-node-1: ai does not know hq-node-1; the IC SB does "
        "not list it as a gateway of hq (it is not an IC gateway: no ovn-is-interconn=true)")


@needs_25_03
def test_a_reply_lost_where_its_request_arrived_says_so(ai_without_its_allow_for_hq: None) -> None:
    lost = lost_pairs(proof.prove(build_file(LAB), data_plane=True, programs=DEBIAN13).pairs)
    assert set(lost) == {("hq", "ai"), ("ai", "hq")}
    reroute = ("rerouted to a node by Kube-OVN's priority-29000 policy in ai: no allow policy above it for "
               "172.30.10.0/24")
    assert (lost[("hq", "ai")].outcome, lost[("hq", "ai")].detail) == (
        paths.REROUTED, f"the request arrived, its reply did not: {reroute}")
    assert (lost[("ai", "hq")].outcome, lost[("ai", "hq")].detail) == (paths.REROUTED, reroute)  # its request


@needs_25_03
def test_a_backbone_translated_on_the_way_arrives_altered(hq_snats_its_backbone: None) -> None:
    altered = lost_pairs(proof.prove(build_file(LAB), data_plane=True, programs=DEBIAN13).pairs)
    assert set(altered) == {("hq", b) for b in AZS if b != "hq"}
    assert {p.outcome for p in altered.values()} == {dataplane.ALTERED}
    assert altered[("hq", "ai")].detail == f"arrived in ai altered: ip4.src {SNAT_ADDRESS} (expected 172.30.10.5)"


@pytest.mark.parametrize("programs", BOTH)
def test_ovn_trace_shows_the_translation_too(hq_snats_its_backbone: None, programs: Programs) -> None:
    altered = lost_pairs(proof.prove(build_file(LAB), programs=programs).pairs)
    assert set(altered) == {("hq", b) for b in AZS if b != "hq"}
    assert {p.outcome for p in altered.values()} == {paths.ALTERED}
    assert altered[("hq", "dr")].detail == f"arrived in dr altered: ip4.src={SNAT_ADDRESS} in hq (conntrack NAT)"


@needs_25_03
def test_what_the_underlay_drops_is_a_lost_verdict(underlay_drops_vxlan_between_hq_and_ai: assembly.Lab) -> None:
    lab = underlay_drops_vxlan_between_hq_and_ai
    lost = lost_pairs(dataplane.prove_pairs(lab, lab.endpoints()))
    assert set(lost) == {("hq", "ai"), ("ai", "hq")}
    assert {p.outcome for p in lost.values()} == {dataplane.LOST}
    assert lab.underlay is not None
    hq, ai = (lab.underlay.chassis[name].spec.encap_ip for name in ("hq-node-1", "ai-node-1"))
    assert lost[("ai", "hq")].detail == (
        f"lost in the data plane, though ovn-trace delivers it, and ai's gateway ai-node-1 ({ai}) has a tunnel to "
        f"hq's gateway hq-node-1 ({hq}): the underlay between them drops it; check that it passes vxlan UDP 4789")


# ---------------------------------------------------------------- deployments, MTU
@pytest.mark.parametrize("programs", BOTH)  # the deployments declare ovnVersion 23.03; the zones' 1.16 runs 25.03
def test_deployments_join_with_their_own_chassis_through_their_rendered_scripts(programs: Programs) -> None:
    with assembly.running(build_file(OPENSTACK_K8S), data_plane=True, programs=programs) as lab:
        assert lab.underlay is not None
        chassis = {name: c.vsctl("get", "Open_vSwitch", ".", "external_ids")
                   for name, c in lab.underlay.chassis.items()}
        left_out = sorted(name for name, c in lab.underlay.chassis.items() if c.local_ip_left_out)
        result = dataplane.prove_pairs(lab, lab.endpoints())
    assert sorted(chassis) == ["cmp1", "k8s-node-1", "k8s-node-2", "net1"]
    assert 'ovn-encap-ip="10.255.0.11"' in chassis["cmp1"] and "ovn-is-interconn" not in chassis["cmp1"]
    assert 'ovn-is-interconn="true"' in chassis["net1"] and 'ovn-encap-type=geneve' in chassis["net1"]
    # Their scripts set ovn-set-local-ip=true (OVN < 24.09, loopback tunnel endpoints). Open vSwitch 3.1's
    # dummy datapath gives an address no local route, so a tunnel with local_ip cannot send there: on
    # 23.03 the lab leaves it out (each chassis has that one address); 3.5 simulates it as it is.
    ovn, _ovs = programs.versions()
    assert left_out == ([] if ovn.startswith("25.03.") else ["cmp1", "k8s-node-1", "k8s-node-2", "net1"])
    assert ('ovn-set-local-ip="true"' in chassis["k8s-node-1"]) == (not left_out)
    assert [(p.source.az, p.target.az, p.outcome) for p in result] == [
        ("openstack", "k8s-prod-az", "delivered"), ("k8s-prod-az", "openstack", "delivered")]


@pytest.mark.parametrize("programs", BOTH)
def test_a_packet_bigger_than_the_other_underlay_is_an_mtu_verdict(programs: Programs) -> None:
    text = OPENSTACK_K8S.read_text()
    big = text.replace("    underlayMTU: 1500              # 1442 for pods, as for Neutron",
                       "    underlayMTU: 9000")
    assert big != text
    result = proof.prove(build_text(big, "fabric.yaml"), data_plane=True, programs=programs)
    by_pair = {(p.source.az, p.target.az): p for p in result.pairs}
    lost = by_pair[("k8s-prod-az", "openstack")]
    assert lost.outcome == dataplane.MTU, lost
    assert "8942-byte packet is lost where a 36-byte one arrives" in lost.detail and "1500" in lost.detail
    # the request (1442 bytes, openstack's) arrives; its reply is 8942 bytes too
    replied = by_pair[("openstack", "k8s-prod-az")]
    assert (replied.outcome, replied.detail) == (dataplane.MTU, (
        "the request arrived, its reply did not: a 8942-byte packet is lost where a 36-byte one arrives: it does not "
        "fit the underlay MTU on the way (1500, 9000) once encapsulated"))


@pytest.mark.parametrize("programs", BOTH)
def test_a_jumbo_frame_fabric_is_delivered_at_its_own_mtu(programs: Programs) -> None:
    """Both deployments on a 9000-byte underlay: VMs and pods get 9000 less Geneve's overhead, as
    their platforms give them, and an 8942-byte echo and its reply arrive both ways (the VM ports
    once stayed at 1500 and lost it: a false MTU verdict on every jumbo-frame fabric)."""
    text = OPENSTACK_K8S.read_text()
    big = edit(text, "    underlayMTU: 1500              # 1442 for pods, as for Neutron", "    underlayMTU: 9000")
    big = edit(big, "    underlayMTU: 1500              # 1442 for Neutron networks (path_mtu 1500 - 20 - 38)",
               "    underlayMTU: 9000")
    result = proof.prove(build_text(big, "fabric.yaml"), data_plane=True, programs=programs)
    assert [(p.source.az, p.target.az, p.outcome) for p in result.pairs] == [
        ("openstack", "k8s-prod-az", "delivered"), ("k8s-prod-az", "openstack", "delivered")], result.pairs
    assert all("8942-byte ICMP echo and its reply" in p.detail for p in result.pairs), result.pairs


# ---------------------------------------------------------------- the lab's addresses
def nine_gateways(text: str) -> str:
    """hq with nine gateway nodes: more than the eight lab addresses a zone once had."""
    nodes = ", ".join(f"hq-node-{i}" for i in range(1, 10))
    return edit(text, "gatewayNodes: [hq-node-1, hq-node-2]", f"gatewayNodes: [{nodes}]")


def test_chassis_addresses_follow_one_another_whatever_a_zones_size() -> None:
    build = build_text(nine_gateways(LAB.read_text()), "fabric.yaml")
    zones = assembly._zones(build, {})
    chassis, hosts = assembly.lab_chassis(build, zones)
    assert [len(chassis[az]) for az in ("hq", "ai", "edge", "dr")] == [10, 3, 3, 3]  # the gateways and a VM host
    tunnel = [c.encap_ip for specs in chassis.values() for c in specs]
    assert tunnel == [assembly.UNDERLAY_BASE + n for n in range(19)]
    assert hosts["hq"] == "hq-vm-host" and chassis["ai"][0].encap_ip == assembly.UNDERLAY_BASE + 10
    # the logical lab's chassis rows too (encap IPs that are never bound)
    encap = [ip for zone in zones for _name, ip in zone.spec.chassis_ips()]
    assert encap == [assembly.ENCAP_BASE + n for n in range(15)]


@needs_25_03
def test_a_zone_of_nine_gateways_delivers_every_pair() -> None:
    result = proof.prove(build_text(nine_gateways(LAB.read_text()), "fabric.yaml"), data_plane=True,
                         programs=DEBIAN13)
    assert (result.delivered, len(result.pairs)) == (12, 12), [p.detail for p in result.pairs if not p.delivered]


def test_the_zones_ovn_follows_kube_ovns_release() -> None:
    from fabricgen.lab.ovn.programs import zones_ovn

    assert [zones_ovn(r) for r in ((1, 16), (1, 15), (1, 14), (1, 13), (1, 12))] == [
        "25.03", "25.03", "24.03", "24.03", None]
    assert proof.expected_ovn(build_file(LAB)) == (("the zones (Kube-OVN 1.16)", "25.03"),)
    assert proof.expected_ovn(build_file(OPENSTACK_K8S)) == (
        ("deployment openstack", "23.03"), ("deployment kubernetes", "24.03"))


def test_a_prefix_without_the_programs_is_named(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "fabricgen", "verify", str(LAB), "--ovn-prefix", str(tmp_path)],
                            capture_output=True, text=True, check=False, cwd=REPO)
    assert result.returncode == exit_codes.NO_LAB, result.stderr
    assert f"(from {PREFIX_VARIABLE}={tmp_path.resolve()})" in result.stderr and "ovs-vswitchd" in result.stderr
