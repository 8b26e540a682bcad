"""The policy proven in the lab: who may talk to whom, traced through the ACLs Kube-OVN writes.

A zone whose rendered tenant Subnets carry `acls` gets its tenant VPCs in the lab
(`kubeovn.tenant_commands`: routers, peerings, a switch and a VM per Subnet, the Subnet's ACLs in
tier 2). For every rule into a protected group with a tenant subnet, and a source in the same
zone, the lab sends what the rule allows and what it must not:

- the allowed connection's first packet, and its reply (`ct_state=est,rpl`: `allow-related`
  lets it back), on every port the rule names (both ends of a range; at most 16);
- the same source on a port no rule opens (deny, unless another rule opens it);
- the reverse direction (whatever the policy says of it);
- a subnet of the zone that reaches the destination's VPC but is not a source of the rule
  (deny);
- every other subnet of the zone that holds the source group's addresses and reaches the
  destination: the platforms admit it by address, but the policy says what it says of who it
  is (its own groups), so a rule that admits more than its group fails here;
- and a source the rule names that has no route to the destination (another VPC, not peered) is
  a flow the lab cannot send: "not proven", never left out of the count.

The expected verdict comes from the policy alone (`expected`), never from the ACLs; the observed
one from ovn-trace of the packet through the zone's logical pipeline (northd's flows compiled
from the ACL rows), with the ACL that decided it. The first packets are traced by the zone's
tracing daemon in one batch; a reply, which needs its own conntrack state, once per pair of
ends. A pair that fails names that ACL: the policy is not enforced as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address
from typing import Any

from fabricgen.lab.assembly import Lab, tenant_objects
from fabricgen.lab.platforms.kubeovn import Backbone
from fabricgen.lab.provers.policy_packets import DELIVERED, DROPPED, SENT, Connection, exchange
from fabricgen.lab.provers.tracing import flow
from fabricgen.plan.policy import KUBE_OVN, Allowed, PolicyPlan

ALLOW, DENY = "allow", "deny"
NOT_PROVEN = "not proven"  # observed where the lab could not send the flow
PROTOCOL_NUMBER = {"tcp": 6, "udp": 17, "sctp": 132, "icmp": 1}
SOURCE_PORT = 40000
ACL_PRIORITY_OFFSET = 1000  # northd's `OVN_ACL_PRI_OFFSET`: an ACL's flow is its priority + 1000
# The conntrack state each `ct_next` of a reply reports (ovn-trace applies one --ct per ct_next, in
# order): established and a reply in the destination port's zone and in the source's (the
# connection was committed there: northd commits every new connection on a switch with stateful
# ACLs). One per switch the packet crosses, and one to spare.
REPLY = ("--ct=est,rpl",) * 3
_ACL_LINE = re.compile(r"^\s*\d+\.\s+ls_(?:in|out)_acl\w*\s+\([^)]*\):\s*(?P<match>.*), priority (?P<priority>\d+)")


@dataclass(frozen=True)
class Flow:
    policy: str  # the rule it tests, or what it tests without one
    source: str  # ZONE/SUBNET
    destination: str
    protocol: str
    port: int | None
    expected: str  # ALLOW or DENY
    observed: str  # DELIVERED or DROPPED
    decided_by: str  # the ACL that decided, or why none did
    reply: str | None = None  # for an allowed connection: its reply DELIVERED or DROPPED

    @property
    def ok(self) -> bool:
        if self.expected == ALLOW:
            return self.observed == DELIVERED and self.reply in (None, DELIVERED)
        return self.observed == DROPPED

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"policy": self.policy, "source": self.source, "destination": self.destination,
                               "protocol": self.protocol, "port": self.port, "expected": self.expected,
                               "observed": self.observed, "decidedBy": self.decided_by, "ok": self.ok}
        if self.reply is not None:
            out["reply"] = self.reply
        return out


class Once:
    """Whether a flow of a kind (the reverse direction, another source, a reply) is the first for
    its ends and protocol: each is sent once, however many rules open ports between them."""

    def __init__(self) -> None:
        self.done: set[tuple[str, ...]] = set()

    def __call__(self, what: str, source: str, destination: str, protocol: str) -> bool:
        key = (what, source, destination, protocol)
        if key in self.done:
            return False
        self.done.add(key)
        return True


def probe(rule: Allowed) -> tuple[str, int | None, int | None]:
    """What a rule's flows send: (protocol, the port it opens, a port it does not open). `any` is
    tested with TCP, a rule without ports on port 80; a port no rule opens is the one after the
    rule's last (None: ICMP, or a rule of every port)."""
    protocol = "tcp" if rule.protocol == "any" else rule.protocol
    if protocol == "icmp":
        return protocol, None, None
    if not rule.ports:
        return protocol, 80, None
    return protocol, rule.ports[0][0], rule.ports[-1][1] % 65535 + 1


SENT_PORTS_MAX = 16  # ports one rule's flows send at most


def opened(rule: Allowed) -> list[int | None]:
    """Every port a rule's flows send: each port it names and both ends of each range it names
    (the first is `probe`'s), at most 16; `[None]` for ICMP, `[80]` for a rule of every port."""
    protocol, first, _other = probe(rule)
    if protocol == "icmp" or not rule.ports:
        return [first]
    ends = [port for a, b in rule.ports for port in ((a,) if a == b else (a, b))]
    sent: list[int | None] = list(dict.fromkeys(ends))
    return sent[:SENT_PORTS_MAX]


def expected(policy: PolicyPlan, source: IPv4Address, target: IPv4Address, protocol: str, port: int | None) -> str:
    """What the policy says of a connection from `source` to `target`, by address, as every
    platform's objects filter it."""
    into = [g for g in sorted(policy.protected) if any(target in c for c in policy.cidrs(g))]
    if not into:
        return ALLOW
    group = into[0]
    if any(source in c for c in policy.cidrs(group)):
        return ALLOW
    if any(opens(rule, protocol, port) for rule in policy.into(group)
           if any(source in c for c in policy.cidrs(rule.source))):
        return ALLOW
    return DENY


def opens(rule: Allowed, protocol: str, port: int | None) -> bool:
    """Whether a rule allows a connection of `protocol` to `port`."""
    return rule.protocol == "any" or (rule.protocol == protocol and (
        not rule.ports or (port is not None and any(a <= port <= b for a, b in rule.ports))))


def by_identity(policy: PolicyPlan, zone: str, source: str, target: str, protocol: str, port: int | None) -> str:
    """What the policy says of tenant subnet `source` to `target` (both of `zone`) by the groups
    `source` is a member of, not by its addresses: where another workload holds a source group's
    range, the platforms admit it by address, and the policy never named it."""
    def groups(subnet: str) -> set[str]:
        return {name for name, ends in policy.groups.items()
                for e in ends if e.kind == "tenantSubnet" and e.zone == zone and e.subnet == subnet}

    into = sorted(groups(target) & policy.protected)
    if not into:
        return ALLOW
    own = groups(source)
    if into[0] in own:
        return ALLOW
    return ALLOW if any(opens(rule, protocol, port) for rule in policy.into(into[0]) if rule.source in own) else DENY


def _microflow(sender: Backbone, receiver: Backbone, protocol: str, ports: tuple[int | None, int | None],
               icmp_type: int) -> str:
    base = flow(sender.vm_mac, sender.router_mac, sender.vm_ip, receiver.vm_ip, sender.vm)
    return with_protocol(base, protocol, ports, icmp_type)


def with_protocol(base: str, protocol: str, ports: tuple[int | None, int | None], icmp_type: int) -> str:
    """An ovn-trace microflow's transport fields added to its addresses."""
    if protocol == "icmp":
        return f"{base} && ip.proto==1 && icmp4.type=={icmp_type} && icmp4.code==0"
    return f"{base} && ip.proto=={PROTOCOL_NUMBER[protocol]} && {protocol}.src=={ports[0]} && " \
           f"{protocol}.dst=={ports[1]}"


def _packet(src: Backbone, dst: Backbone, protocol: str, port: int | None) -> str:
    """A connection's first packet (an echo request for ICMP), from the source's VM."""
    return _microflow(src, dst, protocol, (SOURCE_PORT, port), 8)


def _reply(src: Backbone, dst: Backbone, protocol: str, port: int | None) -> str:
    """The reply of `_packet`, from the destination's VM back to the source's."""
    return _microflow(dst, src, protocol, (port, SOURCE_PORT), 0)


def delivered_to(detailed: str, port: str) -> bool:
    """A detailed trace output the packet to the VM's port (`/* output to "PORT", type "" */`)."""
    return f'/* output to "{port}"' in detailed


def judge_flows(lab: Lab, connections: Sequence[Connection], traces: Sequence[str],
                acls: Sequence[list[dict[str, Any]]], first_reply: Callable[[int], bool],
                reply_delivered: Callable[[int], bool]) -> list[tuple[str, str, str | None, str]]:
    """Per connection (its detailed ovn-trace as it arrives where its destination's rows are, and
    those rows): (expected, observed, reply, decided by). The expected verdict is the policy's;
    with the data plane, the connections the chassis carry (`policy_packets.SENT`) are sent as
    packets and the chassis give the observed verdict and the reply's, ovn-trace naming the row
    (and saying so where it disagrees); otherwise the trace is the verdict and `reply_delivered(i)`
    traces the reply. A reply is sent or traced for an allowed connection that was delivered, and
    only where `first_reply(i)` says it is the first for its ends and protocol."""
    policy = lab.build.plan.policy
    wants = [expected(policy, c.source.vm_ip, c.destination.vm_ip, c.protocol, c.port) for c in connections]
    sent: dict[int, tuple[str, str | None]] = {}
    if lab.underlay is not None:
        chosen = [i for i, c in enumerate(connections) if c.protocol in SENT]
        carried = exchange(lab, [connections[i] for i in chosen],
                           lambda k: wants[chosen[k]] == ALLOW and first_reply(chosen[k]))
        sent = dict(zip(chosen, carried, strict=True))
    out: list[tuple[str, str, str | None, str]] = []
    for i, (c, detailed) in enumerate(zip(connections, traces, strict=True)):
        traced = DELIVERED if delivered_to(detailed, c.destination.vm) else DROPPED
        decided = deciding_acl(detailed, acls[i])
        reply: str | None = None
        if i in sent:
            seen, reply = sent[i]
            if seen != traced:
                decided += f"; ovn-trace of the same packet: {traced}"
        else:
            seen = traced
            if wants[i] == ALLOW and seen == DELIVERED and first_reply(i):
                reply = DELIVERED if reply_delivered(i) else DROPPED
        out.append((wants[i], seen, reply, decided))
    return out


def deciding_acl(detailed: str, acls: list[dict[str, Any]]) -> str:
    """The ACL whose logical flow decided the packet last in the trace: one of the destination
    Subnet's (`ACL DIRECTION PRIORITY ACTION MATCH`), or a row of someone else's, by its priority
    (the flow's less northd's offset of 1000) and match; or that none did."""
    decided = ""
    for line in detailed.splitlines():
        found = _ACL_LINE.match(line)
        if found is None or "(" not in found["match"]:
            continue  # northd's own flows of the stage (conntrack hints, the default verdict)
        text, priority = found["match"], int(found["priority"]) - ACL_PRIORITY_OFFSET
        known = next((a for a in acls if f"({a['match']})" in text and int(a.get("priority", 0)) == priority), None)
        if known is not None:
            owner = f"{known['owner']}: " if known.get("owner") else ""
            decided = f"{owner}ACL {known['direction']} {known['priority']} {known['action']} `{known['match']}`"
        else:
            inner = text[text.index("(") + 1:text.rindex(")")]
            decided = f"another ACL, priority {priority}: `{inner}`"
    return decided or "no ACL matched"


class _Prover:
    def __init__(self, lab: Lab, zone: str) -> None:
        self.lab, self.zone = lab, zone
        self.policy = lab.build.plan.policy
        self.vms = lab.tenants[zone]
        vpcs, subnets = tenant_objects(lab.build, zone)
        self.acls = {str(s["metadata"]["name"]): list(s["spec"].get("acls", [])) for s in subnets}
        self.vpc_of = {str(s["metadata"]["name"]): str(s["spec"]["vpc"]) for s in subnets}
        self.peers = {(str(v["metadata"]["name"]), str(p["remoteVpc"])) for v in vpcs
                      for p in v.get("spec", {}).get("vpcPeerings", [])}
        self.once = Once()
        self.unproven: list[Flow] = []  # a rule's flow the lab cannot send (no route): never an ok
        # flows whose verdict is the policy's by who the source is, not by its address: a workload
        # outside the rule's source group that holds its addresses
        self.identities: dict[tuple[str, str, str, int | None], str] = {}

    def switch(self, packet: str) -> str:
        datapath = packet.split('inport=="', 1)[1].split('"', 1)[0]
        return next(b.switch for b in self.vms.values() if b.vm == datapath)

    def forward(self, packets: list[str]) -> list[str]:
        """Detailed traces of first packets, from the zone's tracing daemon in one pipelined batch.
        Its conntrack state is ovn-trace's default, established and not a reply, which OVN's ACL
        stages judge as they judge a new connection (`ls_*_acl_hint`: an established packet that
        is not a reply is evaluated against every ACL, and a drop marks the connection blocked)."""
        sb = self.lab.sandbox
        if not sb.tracing(self.zone):
            sb.start_tracers([self.zone])
        return sb.traced_many(self.zone, [(self.switch(p), p, ()) for p in packets])

    def reply(self, packet: str) -> str:
        """A reply's trace: a process of its own, since the daemon's `trace` takes no --ct."""
        return self.lab.sandbox.trace(self.zone, self.switch(packet), packet, *REPLY)

    def run(self, planned: list[tuple[str, str, str, str, int | None]]) -> list[Flow]:
        traces = self.forward([_packet(self.vms[src], self.vms[dst], protocol, port)
                               for _policy, src, dst, protocol, port in planned])
        connections = [Connection(self.zone, self.vms[src], self.zone, self.vms[dst], protocol, port)
                       for _policy, src, dst, protocol, port in planned]

        def reply_delivered(i: int) -> bool:
            c = connections[i]
            return delivered_to(self.reply(_reply(c.source, c.destination, c.protocol, c.port)), c.source.vm)

        acls = [self.acls.get(dst, []) for _policy, _src, dst, _protocol, _port in planned]
        judged = judge_flows(self.lab, connections, traces, acls,
                             lambda i: self.once("reply", planned[i][1], planned[i][2], planned[i][3]), reply_delivered)
        return [Flow(policy, f"{self.zone}/{src}", f"{self.zone}/{dst}", protocol, port,
                     self.identities.get((src, dst, protocol, port), want), seen, decided, reply)
                for (policy, src, dst, protocol, port), (want, seen, reply, decided)
                in zip(planned, judged, strict=True)]

    def routable(self, src: str, dst: str) -> bool:
        a, b = self.vpc_of.get(src), self.vpc_of.get(dst)
        return a is not None and b is not None and (a == b or (a, b) in self.peers)

    def flows(self) -> list[Flow]:
        planned: list[tuple[str, str, str, str, int | None]] = []
        targets = [e for e in self.policy.enforced_by(KUBE_OVN)
                   if e.zone == self.zone and e.kind == "tenantSubnet" and e.subnet in self.vms]
        for target in targets:
            assert target.subnet is not None
            for rule in self.policy.into(target.group):
                planned += self.rule_flows(rule, target.subnet)
        return self.run(list(dict.fromkeys(planned))) + self.unproven

    def rule_flows(self, rule: Allowed, dst: str) -> list[tuple[str, str, str, str, int | None]]:
        """What to send for one rule into `dst`: (what it tests, source, destination, protocol, port)."""
        sources = [e.subnet for e in self.policy.groups[rule.source]
                   if e.kind == "tenantSubnet" and e.zone == self.zone and e.subnet in self.vms and e.subnet != dst]
        protocol, port, other = probe(rule)
        out: list[tuple[str, str, str, str, int | None]] = []
        for src in sources:
            assert src is not None
            if not self.routable(src, dst):
                self.unproven.append(Flow(
                    rule.name, f"{self.zone}/{src}", f"{self.zone}/{dst}", protocol, port, ALLOW, NOT_PROVEN,
                    f"no route from VPC {self.vpc_of.get(src)} to VPC {self.vpc_of.get(dst)} (not peered): the rule "
                    "opens nothing for this source"))
                continue
            out += [(rule.name, src, dst, protocol, each) for each in opened(rule)]
            if other is not None:
                out.append((f"{rule.name}: another port", src, dst, protocol, other))
            if self.routable(dst, src) and self.once("reverse", dst, src, protocol):
                out.append((f"{rule.name}: the reverse direction", dst, src, protocol, port))
        strangers = [name for name in sorted(self.vms) if name != dst and name not in sources and
                     self.routable(name, dst) and
                     expected(self.policy, self.vms[name].vm_ip, self.vms[dst].vm_ip, protocol, port) == DENY]
        if sources and strangers and self.once("stranger", rule.source, dst, protocol):
            out.append((f"{rule.name}: another source", strangers[0], dst, protocol, port))
        ranges = self.policy.cidrs(rule.source)
        for name in sorted(self.vms):
            holder = self.vms[name].vm_ip
            if name != dst and name not in sources and any(holder in c for c in ranges) and \
                    self.routable(name, dst):
                self.identities[(name, dst, protocol, port)] = by_identity(self.policy, self.zone, name, dst,
                                                                         protocol, port)
                out.append((f"{rule.name}: {name} holds {rule.source}'s addresses", name, dst, protocol, port))
        return out


def prove_flows(lab: Lab) -> tuple[Flow, ...]:
    """Every policy flow between the zones' tenant subnets, in zone order."""
    flows: list[Flow] = []
    for zone in sorted(lab.tenants):
        flows += _Prover(lab, zone).flows()
    return tuple(dict.fromkeys(flows))
