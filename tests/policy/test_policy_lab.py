"""The policy proven in real OVN: `fabricgen verify` builds the lab's tenant VPCs with the ACLs
Kube-OVN writes from the rendered Subnets (modelled on kubeovn/kube-ovn v1.16.2
`pkg/ovs/ovn-nb-acl.go` `UpdateLogicalSwitchACL`, `newACL`; `pkg/ovs/ovn-nb-logical_router_port.go`
`CreatePeerRouterPort`), and proves every flow of the policy, first packet and reply: as packets
through the simulated chassis (ovs-vswitchd's dummy datapath with its user-space conntrack,
ovn-controller), or with `--logical` through northd's pipeline with ovn-trace; on OVN 23.03 (no
ACL tiers) and 25.03.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from fabricgen.lab import assembly
from fabricgen.lab.ovn import packets
from fabricgen.lab.ovn.programs import Programs
from fabricgen.lab.platforms import kubeovn
from fabricgen.lab.provers import dataplane, policy_flows, policy_packets
from support.fabrics import REPO, build_file, build_text
from support.lab_programs import BOTH, DEBIAN13, fabricgen, needs_25_03, prefix_args

pytestmark = pytest.mark.lab  # starts real programs: ovn-controller, ovn-ic, ovn-ic-nbctl, ovn-nbctl, ovn-northd...

LAB = REPO / "sites" / "lab" / "fabric.yaml"


def flows_of(programs: Programs) -> tuple[int, dict[str, Any]]:
    done = fabricgen("verify", "sites/lab/fabric.yaml", "--logical", "--format", "json", *prefix_args(programs))
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("programs", BOTH)
def test_the_lab_policy_holds_in_ovn(programs: Programs) -> None:
    code, doc = flows_of(programs)
    assert code == 0 and doc["ok"], doc["flows"]
    flows = {(f["policy"], f["source"], f["destination"], f["protocol"], f["port"]): (f["expected"], f["observed"])
             for f in doc["flows"]}
    assert flows[("prod-app-to-prod-db", "hq/prod-app", "hq/prod-db", "tcp", 5432)] == ("allow", "delivered")
    assert flows[("prod-app-to-prod-db: another port", "hq/prod-app", "hq/prod-db", "tcp", 5433)] == \
        ("deny", "dropped")
    assert flows[("prod-app-to-prod-db: another source", "hq/prod-web", "hq/prod-db", "tcp", 5432)] == \
        ("deny", "dropped")
    assert flows[("prod-app-to-prod-db: the reverse direction", "hq/prod-db", "hq/prod-app", "tcp", 5432)] == \
        ("deny", "dropped")
    allowed = next(f for f in doc["flows"] if f["policy"] == "prod-app-to-prod-db")
    assert allowed["reply"] == "delivered"  # allow-related lets the reply back through prod-app's own drop
    assert allowed["decidedBy"] == ("ACL to-lport 1200 allow-related "
                                    "`ip4.src == 10.100.2.0/24 && ip4.dst == 10.100.1.0/24 && tcp.dst == 5432`")
    assert {tuple(sorted(f)) for f in doc["flows"]} >= {tuple(sorted(
        ["policy", "source", "destination", "protocol", "port", "expected", "observed", "decidedBy", "ok"]))}


def test_a_workload_that_holds_a_sources_range_and_a_source_without_a_route_fail_verify() -> None:
    """tests/policy/test_policy.py's office_and_dev: prod-web holds office's addresses and reaches prod-db;
    the ACL admits it by address, and the policy, by who it is, denies it: not as the policy says.
    prod-app and shared-svc hold them too, and their own rules allow them. dev-app has no route to
    prod-db: its flow is not proven, never left out of the count."""
    from test_policy import office_and_dev

    with assembly.running(build_text(office_and_dev(), "sites/lab/fabric.yaml")) as lab:
        flows = {f.policy: f for f in policy_flows.prove_flows(lab)}
    holder = flows["office-to-prod-db: prod-web holds office's addresses"]
    assert (holder.source, holder.destination, holder.expected, holder.observed, holder.ok) == \
        ("hq/prod-web", "hq/prod-db", "deny", "delivered", False)
    assert holder.decided_by == ("ACL to-lport 1200 allow-related "
                                 "`ip4.src == 10.100.0.0/16 && ip4.dst == 10.100.1.0/24 && tcp.dst == 5432`")
    cut = flows["dev-to-prod-db"]
    assert (cut.source, cut.expected, cut.observed, cut.ok) == ("hq/dev-app", "allow", "not proven", False)
    assert cut.decided_by == ("no route from VPC vpc-dev to VPC vpc-prod (not peered): the rule opens nothing for "
                              "this source")
    for name, source in (("dev-to-prod-db: prod-app holds dev's addresses", "hq/prod-app"),
                         ("office-to-prod-db: prod-app holds office's addresses", "hq/prod-app"),
                         ("office-to-prod-db: shared-svc holds office's addresses", "hq/shared-svc")):
        assert (flows[name].source, flows[name].expected, flows[name].ok) == (source, "allow", True), flows[name]
    assert [f.policy for f in flows.values() if not f.ok] == [
        "office-to-prod-db: prod-web holds office's addresses", "dev-to-prod-db"]


def test_every_port_a_rule_opens_is_sent() -> None:
    """A rule of a port and a range: the port and both ends of the range are sent and delivered,
    the port after the range is dropped."""
    text = LAB.read_text().replace('- {from: prod-app, to: prod-db, protocol: tcp, ports: ["5432"]}',
                                   '- {from: prod-app, to: prod-db, protocol: tcp, ports: ["5432", "6000-6010"]}', 1)
    with assembly.running(build_text(text, "sites/lab/fabric.yaml")) as lab:
        flows = [f for f in policy_flows.prove_flows(lab) if f.policy.startswith("prod-app-to-prod-db")
                 and f.source == "hq/prod-app"]
    assert [(f.policy, f.port, f.observed, f.ok) for f in flows] == [
        ("prod-app-to-prod-db", 5432, "delivered", True), ("prod-app-to-prod-db", 6000, "delivered", True),
        ("prod-app-to-prod-db", 6010, "delivered", True),
        ("prod-app-to-prod-db: another port", 6011, "dropped", True)]


@pytest.fixture
def kube_ovn_network_policy_allows_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Kube-OVN NetworkPolicy on prod-db's pods, as its controller writes it: an allow at 2001 in
    tier 2 (`pkg/util/const.go` IngressAllowPriority), above the policy's drop at 1100."""
    made = kubeovn.tenant_commands

    def with_foreign_allow(zone: str, vpcs: Sequence[Mapping[str, Any]], subnets: Sequence[Mapping[str, Any]], *,
                           tiers: bool = True) -> tuple[dict[str, kubeovn.Backbone], list[list[str]]]:
        networks, commands = made(zone, vpcs, subnets, tiers=tiers)
        foreign = [{"direction": "to-lport", "priority": 2001, "match": "ip4.dst == 10.100.1.0/24",
                    "action": "allow-related"}]
        return networks, commands + kubeovn.acl_commands("prod-db", "np-someone-else", foreign, tiers=tiers)

    monkeypatch.setattr(kubeovn, "tenant_commands", with_foreign_allow)


@needs_25_03
def test_a_row_that_outranks_the_policy_fails_verify_and_is_named(kube_ovn_network_policy_allows_everything: None,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from fabricgen.lab.ovn.programs import PREFIX_VARIABLE

    monkeypatch.setenv(PREFIX_VARIABLE, str(DEBIAN13.prefix))
    with assembly.running(build_file(LAB), programs=DEBIAN13, final=True) as lab:
        flows = policy_flows.prove_flows(lab)
    wrong = [f for f in flows if not f.ok]
    assert wrong, flows
    stranger = next(f for f in wrong if f.policy == "prod-app-to-prod-db: another source")
    assert (stranger.expected, stranger.observed) == ("deny", "delivered")
    assert stranger.decided_by == "another ACL, priority 2001: `ip4.dst == 10.100.1.0/24`"


def test_the_expected_verdict_comes_from_the_policy_alone() -> None:
    from ipaddress import IPv4Address as A

    policy = build_file(LAB).plan.policy
    app, db, web, shared = A("10.100.2.5"), A("10.100.1.5"), A("10.100.3.5"), A("10.100.10.5")
    assert policy_flows.expected(policy, app, db, "tcp", 5432) == "allow"
    assert policy_flows.expected(policy, app, db, "tcp", 5433) == "deny"
    assert policy_flows.expected(policy, web, db, "tcp", 5432) == "deny"
    assert policy_flows.expected(policy, shared, db, "tcp", 5432) == "allow"
    assert policy_flows.expected(policy, db, web, "udp", 53) == "allow"  # prod-web is open
    assert policy_flows.expected(policy, A("10.100.1.9"), db, "icmp", None) == "allow"  # its own group


# ---------------------------------------------------------------- as packets through the chassis
@pytest.mark.parametrize("programs", BOTH)
def test_the_lab_policy_holds_with_packets(programs: Programs) -> None:
    done = fabricgen("verify", "sites/lab/fabric.yaml", "--format", "json", *prefix_args(programs))
    doc = json.loads(done.stdout)
    assert doc["mode"] == "data-plane"
    assert doc["flows"] and all(f["ok"] for f in doc["flows"]), doc["flows"]
    flows = {(f["policy"], f["source"], f["destination"], f["protocol"], f["port"]): f for f in doc["flows"]}
    allowed = flows[("prod-app-to-prod-db", "hq/prod-app", "hq/prod-db", "tcp", 5432)]
    assert (allowed["expected"], allowed["observed"], allowed["reply"]) == ("allow", "delivered", "delivered")
    # ovn-trace names the row, and agrees with what the chassis did: nothing is appended to it
    assert allowed["decidedBy"] == ("ACL to-lport 1200 allow-related "
                                    "`ip4.src == 10.100.2.0/24 && ip4.dst == 10.100.1.0/24 && tcp.dst == 5432`")
    for name in ("another port", "another source", "the reverse direction"):
        denied = next(f for key, f in flows.items() if key[0] == f"prod-app-to-prod-db: {name}")
        assert (denied["expected"], denied["observed"]) == ("deny", "dropped")
        assert "ovn-trace of the same packet" not in denied["decidedBy"]


@pytest.fixture(scope="module")
def packet_lab() -> Iterator[assembly.Lab]:
    if DEBIAN13.missing(data_plane=True):
        pytest.skip("OVN 25.03 is not extracted (scripts/setup.sh --test)")
    with assembly.running(build_file(LAB), data_plane=True, programs=DEBIAN13) as lab:
        yield lab


def _connection(lab: assembly.Lab, src: str, dst: str, protocol: str, port: int | None) -> policy_packets.Connection:
    return policy_packets.Connection("hq", lab.tenants["hq"][src], "hq", lab.tenants["hq"][dst], protocol, port)


@needs_25_03
def test_a_reply_passes_only_after_its_connection_was_committed(packet_lab: assembly.Lab) -> None:
    """The SYN-ACK of prod-app -> prod-db tcp/5432, sent before any SYN, meets prod-app's default
    drop (conntrack: new, not a reply); sent after its SYN, conntrack knows the connection and
    allow-related lets it back. The verdict is conntrack's, not a rule's."""
    app, db = packet_lab.tenants["hq"]["prod-app"], packet_lab.tenants["hq"]["prod-db"]
    syn = packets.Segment(app.vm_mac, app.router_mac, app.vm_ip, db.vm_ip, packets.TCP, 41000, 5432, 900)
    early = dataplane.Leg(1, "hq", "hq", db, app, syn.answer(db.vm_mac, db.router_mac, 901), None)
    assert dataplane.send_wave(packet_lab, [early]) == {1: []}  # nothing arrived
    [(first, reply)] = policy_packets.exchange(packet_lab, [_connection(packet_lab, "prod-app", "prod-db", "tcp",
                                                                        5432)], lambda _i: True)
    assert (first, reply) == ("delivered", "delivered")


@needs_25_03
def test_a_segment_with_a_bad_checksum_is_dropped_by_conntrack(packet_lab: assembly.Lab) -> None:
    """The same allowed SYN with one bit of its TCP checksum flipped is invalid to conntrack and
    dropped; the segment as `packets` builds it is delivered: its checksums are right."""
    app, db = packet_lab.tenants["hq"]["prod-app"], packet_lab.tenants["hq"]["prod-db"]
    good = packets.Segment(app.vm_mac, app.router_mac, app.vm_ip, db.vm_ip, packets.TCP, 42000, 5432, 910)

    class Corrupt(packets.Segment):
        def body(self) -> bytes:
            raw = bytearray(super().body())
            raw[17] ^= 0x01  # the checksum's low byte
            return bytes(raw)

    bad = Corrupt(app.vm_mac, app.router_mac, app.vm_ip, db.vm_ip, packets.TCP, 42001, 5432, 911)
    legs = [dataplane.Leg(1, "hq", "hq", app, db, good, None), dataplane.Leg(2, "hq", "hq", app, db, bad, None)]
    assert dataplane.send_wave(packet_lab, legs) == {2: []}


@needs_25_03
def test_udp_and_icmp_connections_and_their_replies(packet_lab: assembly.Lab) -> None:
    """prod-db -> prod-web (open) on UDP and ICMP: delivered, and the replies come back through
    prod-db's own default drop as replies of committed connections. prod-web -> prod-db on UDP is
    no rule's: dropped."""
    connections = [_connection(packet_lab, "prod-db", "prod-web", "udp", 53),
                   _connection(packet_lab, "prod-db", "prod-web", "icmp", None),
                   _connection(packet_lab, "prod-web", "prod-db", "udp", 53)]
    assert policy_packets.exchange(packet_lab, connections, lambda _i: True) == [
        ("delivered", "delivered"), ("delivered", "delivered"), ("dropped", None)]
