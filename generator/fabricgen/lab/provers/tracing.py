"""Every ordered pair of the lab's endpoints traced with ovn-trace: out of the source AZ onto
the transit switch, and from there in the destination AZ to the VM. A failing pair says where
the packet went (`paths`: its outcome and, in words, its detail).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from ipaddress import IPv4Address

from fabricgen.lab.assembly import Lab
from fabricgen.lab.ovn.running import parallel
from fabricgen.lab.platforms import kubeovn
from fabricgen.lab.provers.paths import ALTERED, DELIVERED, DROPPED, REROUTED, UNRESOLVED, WRONG_ZONE, Endpoint, Pair


def flow(src_mac: str, dst_mac: str, src: IPv4Address, dst: IPv4Address, inport: str, ttl: int = 64) -> str:
    return (f'inport=="{inport}" && eth.src=={src_mac} && eth.dst=={dst_mac} && '
            f"ip4.src=={src} && ip4.dst=={dst} && ip.ttl=={ttl}")


def actions(trace: str) -> list[str]:
    """The lines of a `--minimal` trace after the flow: what the packet finally does."""
    return [line.strip() for line in trace.splitlines() if line.strip() and not line.startswith("#")]


def outputs(trace: str) -> list[str]:
    """The ports a `--minimal` trace outputs the packet to: at the top level or inside the
    connection tracker's blocks (`ct_next(...) {`, `ct_snat(...) {`: the same packet, after
    conntrack or NAT), not inside a packet of the router's own (`arp {`, `icmp4 {`)."""
    out: list[str] = []
    blocks: list[bool] = []  # per open block: does it carry the packet itself?
    for line in actions(trace):
        if all(blocks) and line.startswith('output("') and line.endswith('");'):
            out.append(line[len('output("'):-len('");')])
        for _ in range(line.count("}")):
            if blocks:
                blocks.pop()
        blocks.extend([line.startswith("ct_")] * line.count("{"))
    return out


_NAT = re.compile(r"ct_\w*\((ip[46]\.(?:src|dst)=[^)]*)\)")


def translated(trace: str) -> list[str]:
    """The addresses a `--minimal` trace's conntrack rewrites: `ct_snat(ip4.src=X)`, `ct_dnat(...)`
    (OVN 23.03 prints `ct_snatin_czone(...)` for `ct_snat_in_czone`)."""
    return [match[1] for line in actions(trace) if (match := _NAT.match(line))]


def next_hop(detailed: str) -> str | None:
    """The next hop the router's routing stage picked (`reg0 = IP;`), from a detailed trace."""
    for line in detailed.splitlines():
        text = line.strip()
        if text.startswith("reg0 = ") and text.endswith(";"):
            return text[len("reg0 = "):-1]
    return None


def _trace(lab: Lab, az: str, datapath: str, packet: str, *options: str) -> str:
    return lab.sandbox.traced(az, datapath, packet, *options)


def trace_pair(lab: Lab, src: Endpoint, source: kubeovn.Backbone, dst: Endpoint, target: kubeovn.Backbone,
               first: str | None = None, second: str | None = None) -> Pair:
    """One pair's verdict from ovn-trace; `first` and `second`: its minimal traces in the source and
    destination AZ when they were already made (`trace_pairs`)."""
    ts = lab.sandbox.transit_switch
    packet = flow(source.vm_mac, source.router_mac, source.vm_ip, target.vm_ip, source.vm)
    if first is None:
        first = _trace(lab, src.az, source.switch, packet, "--minimal")
    ports = outputs(first)
    out = ports[-1] if ports else None
    by_port = {f"{ts}-{az}": az for az in lab.azs}
    if out == f"{ts}-{dst.az}" and f"eth.dst = {lab.macs[dst.az]};" in actions(first):
        if second is None:
            second = _trace(lab, dst.az, ts, arriving_flow(lab, source, target, src, dst), "--minimal")
        there = outputs(second)
        if there and there[-1] == target.vm:
            nat = [f"{change} in {az}" for az, trace in ((src.az, first), (dst.az, second))
                   for change in translated(trace)]
            if nat:  # the other side sees another address than the sender's (SNAT on a backbone)
                return Pair(src, dst, ALTERED, f"arrived in {dst.az} altered: {', '.join(nat)} (conntrack NAT)")
            return Pair(src, dst, DELIVERED, f"{src.az} -> {ts} -> {dst.az}")
        where = f"output to {there[-1]}" if there else "dropped"
        return Pair(src, dst, DROPPED, f"reached {dst.az} on {ts} but was not delivered there ({where})")
    detailed = _trace(lab, src.az, source.switch, packet)
    hop = next_hop(detailed)
    if out is not None and out == lab.nodes.get(src.az):
        return Pair(src, dst, REROUTED, f"rerouted to a node by Kube-OVN's priority-29000 policy in {src.az}: "
                                        f"no allow policy above it for {dst.cidr}")
    if out in by_port and by_port[out] != dst.az:
        return Pair(src, dst, WRONG_ZONE, f"sent to {by_port[out]} instead (next hop {hop})")
    owner = next((az for az, address in lab.addresses.items() if str(address) == hop), None)
    if hop is not None and (owner is None or "arp {" in first):
        return Pair(src, dst, UNRESOLVED, f"next hop {hop} unresolved: no transit port on {ts} has that address "
                                          f"({dst.az}'s is {lab.addresses[dst.az]})")
    if hop is None:
        return Pair(src, dst, DROPPED, f"dropped in {src.az}: no route to {dst.cidr}")
    where = f"output to {out}" if out else "dropped"
    return Pair(src, dst, DROPPED, f"{where} in {src.az} (next hop {hop})")


def arriving_flow(lab: Lab, source: kubeovn.Backbone, target: kubeovn.Backbone, src: Endpoint, dst: Endpoint) -> str:
    """The packet as it arrives in the destination AZ on the transit switch."""
    ts = lab.sandbox.transit_switch
    return flow(lab.macs[src.az], lab.macs[dst.az], source.vm_ip, target.vm_ip, f"{ts}-{src.az}", ttl=63)


def trace_pairs(lab: Lab, endpoints: Sequence[tuple[Endpoint, kubeovn.Backbone]]) -> tuple[Pair, ...]:
    """Every ordered pair of endpoints in different AZs, traced with ovn-trace: each AZ's tracing
    daemon gets its pairs' traces in one pipelined batch, the AZs several at once; first every
    pair out of its source AZ, then every pair that reached the transit switch into its destination."""
    pairs = [(src, source, dst, target) for src, source in endpoints for dst, target in endpoints if src.az != dst.az]
    firsts = _batched(lab, [(src.az, source.switch, flow(source.vm_mac, source.router_mac, source.vm_ip,
                                                          target.vm_ip, source.vm))
                            for src, source, dst, target in pairs])
    ts = lab.sandbox.transit_switch
    onward = [i for i, (_src, _s, dst, _t) in enumerate(pairs) if outputs(firsts[i])[-1:] == [f"{ts}-{dst.az}"]]
    seconds = dict(zip(onward, _batched(lab, [(pairs[i][2].az, ts, arriving_flow(lab, pairs[i][1], pairs[i][3],
                                                                                 pairs[i][0], pairs[i][2]))
                                              for i in onward]), strict=True))
    return tuple(trace_pair(lab, src, source, dst, target, firsts[i], seconds.get(i))
                 for i, (src, source, dst, target) in enumerate(pairs))


def _batched(lab: Lab, traces: Sequence[tuple[str, str, str]]) -> list[str]:
    """Minimal traces (AZ, datapath, flow), in order, each AZ's in one batch, several AZs at once."""
    by_az: dict[str, list[int]] = {}
    for i, (az, _datapath, _flow) in enumerate(traces):
        by_az.setdefault(az, []).append(i)
    out: list[str] = [""] * len(traces)

    def one(az: str) -> None:
        indexes = by_az[az]
        answers = lab.sandbox.traced_many(az, [(traces[i][1], traces[i][2], ("--minimal",)) for i in indexes])
        for i, answer in zip(indexes, answers, strict=True):
            out[i] = answer

    parallel(one, list(by_az))
    return out
