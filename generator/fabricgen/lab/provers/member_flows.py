"""The policy between platforms and zones: flows between the lab's member VMs (zones' backbones,
Neutron VMs, OVN-Kubernetes pods), within an AZ and across AZs over OVN-IC.

For every rule into a protected group whose member has a VM in the lab (`platform_policy`), from
every member VM of the rule's source group, the lab sends the allowed connection and its reply,
the same source on a port no rule opens, the reverse direction, and a VM of the lab that the
policy does not let in (a member of another group, or an AZ's own VM outside every group). The
expected verdict comes from the policy alone (`policy_flows.expected`).

With the data plane the connections are packets (`policy_packets`): they leave the source's
chassis, cross the transit switch between the AZs' gateways and are filtered by the rows each
platform's controller wrote on the destination's port, the reply by the source's. ovn-trace names
the row that decided: of the packet as it arrives in the destination AZ on the transit switch
(across AZs) or as it leaves the source (within one). Without the data plane (`--logical`) that
trace is the verdict, and a reply is traced as it arrives back in the source's AZ.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricgen.lab.assembly import Lab
from fabricgen.lab.platforms.kubeovn import Backbone
from fabricgen.lab.provers.policy_flows import (
    DENY,
    REPLY,
    SOURCE_PORT,
    Flow,
    Once,
    delivered_to,
    expected,
    judge_flows,
    opened,
    probe,
    with_protocol,
)
from fabricgen.lab.provers.policy_packets import Connection
from fabricgen.lab.provers.tracing import flow
from fabricgen.plan.policy import KUBE_OVN, NEUTRON, OVN_KUBERNETES, Allowed


@dataclass(frozen=True)
class _Vm:
    az: str
    name: str  # AZ/GROUP for a member, AZ/ADDRESS for a deployment's own VM
    vm: Backbone


@dataclass(frozen=True)
class _Planned:
    policy: str
    source: _Vm
    destination: _Vm
    protocol: str
    port: int | None


class _Prover:
    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.policy = lab.build.plan.policy
        self.members: dict[str, list[_Vm]] = {}  # group -> its members' VMs, in AZ order
        for az, found in sorted(lab.members.items()):
            for group, vm in found.vms.items():
                self.members.setdefault(group, []).append(_Vm(az, f"{az}/{group}", vm))
        taken = {v.vm.vm for vms in self.members.values() for v in vms}
        self.others = [_Vm(az, f"{az}/{n.vm_ip}", n) for az in sorted(lab.networks) for n in lab.networks[az]
                       if n.vm not in taken]
        self.everyone = [v for vms in self.members.values() for v in vms] + self.others
        self.once = Once()

    def planned(self) -> list[_Planned]:
        out: list[_Planned] = []
        filtered = {e.group for platform in (KUBE_OVN, NEUTRON, OVN_KUBERNETES)
                    for e in self.policy.enforced_by(platform)}
        for group in sorted(filtered & set(self.members)):
            for dst in self.members[group]:
                for rule in self.policy.into(group):
                    out += self.rule_flows(rule, dst)
        return list(dict.fromkeys(out))

    def rule_flows(self, rule: Allowed, dst: _Vm) -> list[_Planned]:
        protocol, port, other = probe(rule)
        out: list[_Planned] = []
        for source in self.members.get(rule.source, []):
            if source.vm == dst.vm:
                continue
            out += [_Planned(rule.name, source, dst, protocol, each) for each in opened(rule)]
            if other is not None:
                out.append(_Planned(f"{rule.name}: another port", source, dst, protocol, other))
            if self.once("reverse", dst.name, source.name, protocol):
                out.append(_Planned(f"{rule.name}: the reverse direction", dst, source, protocol, port))
        strangers = [v for v in self.everyone if v.vm != dst.vm and
                     expected(self.policy, v.vm.vm_ip, dst.vm.vm_ip, protocol, port) == DENY]
        if strangers and self.once("stranger", rule.source, dst.name, protocol):
            out.append(_Planned(f"{rule.name}: another source", strangers[0], dst, protocol, port))
        return out

    # ------------------------------------------------------------ tracing: the row that decided
    def _arriving(self, src: _Vm, dst: _Vm, protocol: str, ports: tuple[int | None, int | None],
                  icmp_type: int) -> tuple[str, str]:
        """(datapath, microflow) of a packet as it arrives in `dst`'s AZ: on the transit switch from
        the source AZ's port across AZs, from the source VM's port within one."""
        if src.az == dst.az:
            base = flow(src.vm.vm_mac, src.vm.router_mac, src.vm.vm_ip, dst.vm.vm_ip, src.vm.vm)
            return src.vm.switch, with_protocol(base, protocol, ports, icmp_type)
        ts = self.lab.sandbox.transit_switch
        base = flow(self.lab.macs[src.az], self.lab.macs[dst.az], src.vm.vm_ip, dst.vm.vm_ip, f"{ts}-{src.az}",
                    ttl=63)
        return ts, with_protocol(base, protocol, ports, icmp_type)

    def _trace(self, az: str, datapath: str, packet: str, *options: str) -> str:
        sb = self.lab.sandbox
        if not options:
            if not sb.tracing(az):
                sb.start_tracers([az])
            return sb.traced(az, datapath, packet)
        return sb.trace(az, datapath, packet, *options)

    def flows(self) -> list[Flow]:
        planned = self.planned()
        connections = [Connection(p.source.az, p.source.vm, p.destination.az, p.destination.vm, p.protocol, p.port)
                       for p in planned]
        traces = [self._trace(p.destination.az, *self._arriving(p.source, p.destination, p.protocol,
                                                               (SOURCE_PORT, p.port), 8)) for p in planned]
        acls = [[a.as_dict() for a in self.lab.members[p.destination.az].acls]
                if p.destination.az in self.lab.members else [] for p in planned]

        def reply_delivered(i: int) -> bool:
            p = planned[i]
            back = self._arriving(p.destination, p.source, p.protocol, (p.port, SOURCE_PORT), 0)
            return delivered_to(self._trace(p.source.az, *back, *REPLY), p.source.vm.vm)

        judged = judge_flows(self.lab, connections, traces, acls,
                             lambda i: self.once("reply", planned[i].source.name, planned[i].destination.name,
                                                 planned[i].protocol), reply_delivered)
        return [Flow(p.policy, p.source.name, p.destination.name, p.protocol, p.port, want, seen, decided, reply)
                for p, (want, seen, reply, decided) in zip(planned, judged, strict=True)]


def prove_member_flows(lab: Lab) -> list[Flow]:
    """Every flow between the deployments' member VMs the policy speaks of."""
    return _Prover(lab).flows() if lab.members else []
