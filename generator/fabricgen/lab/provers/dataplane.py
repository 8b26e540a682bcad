"""The data-plane proof: real packets between simulated chassis, every ordered pair of AZs.

For each ordered pair of endpoints in different AZs an ICMP echo request of the source
network's full overlay MTU is injected at the source VM's port (`netdev-dummy/receive`) and
must come out of the destination VM's port (its `options:tx_pcap`, read back) exactly as the
two routers leave it: the destination router's MAC, the VM's MAC, the TTL lowered twice, the
rest unchanged. Then the echo reply goes back the same way. Every request is sent at once,
then every reply; a wave ends when every packet has arrived or when the daemons' counters show
that nothing it sent is still on its way (`settling`); a lab that does not settle is an error
of the lab, never a lost packet.

A pair that is lost is explained: first by `ovn-trace` of the same packet (the logical
verdicts of `tracing.trace_pair`), then by what only the data plane has: the transit switch's
tunnel key differing between the AZs (what VXLAN without `vxlan_mode` does), no encapsulation
both gateways speak, no tunnel from the source's gateway to the destination's, a packet
too big for the underlay (a small probe is then delivered), a packet that arrives altered
(an address translated on the way), and what is left: the underlay between the gateways'
tunnel endpoints drops it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fabricgen.lab.assembly import Lab
from fabricgen.lab.ovn.databases import IC_SB, SB
from fabricgen.lab.ovn.packets import ECHO_REPLY, ECHO_REQUEST, MIN_IP_SIZE, Probe, Seen, Segment, read_pcap
from fabricgen.lab.ovn.processes import POLL_INTERVAL
from fabricgen.lab.ovn.running import SandboxError
from fabricgen.lab.ovn.settling import Port, Settling
from fabricgen.lab.platforms import kubeovn
from fabricgen.lab.provers.paths import ALTERED, DELIVERED, Endpoint, Pair
from fabricgen.lab.provers.tracing import trace_pair
from fabricgen.model.ovn import TUNNEL_OVERHEAD

TUNNEL_KEY = "tunnel-key"
NO_TUNNEL = "no-tunnel"
ENCAPSULATION = "encapsulation"
MTU = "mtu"
LOST = "lost"
OUTCOMES = (TUNNEL_KEY, NO_TUNNEL, ENCAPSULATION, MTU, ALTERED, LOST)

WAVE_POLLS = 1500  # rounds of readings, at most, per wave (20 ms apart while something is on its way)
VXLAN_MAX_KEY = 4095  # OVN's VXLAN mode: 12-bit datapath keys (ovn-architecture, `lib/ovn-util.h`)
HOPS = 2  # routers on the way: the source AZ's and the destination AZ's


@dataclass(frozen=True)
class Leg:
    """One packet of a wave: from one VM to another, and what must arrive (None: any packet with
    the probe's key counts as arrived, whatever the routers made of it)."""

    index: int
    src_az: str
    dst_az: str
    sender: kubeovn.Backbone
    receiver: kubeovn.Backbone
    probe: Probe | Segment
    expected: bytes | None


def overlay_mtu(lab: Lab, az: str) -> int:
    """The largest IPv4 packet a VM of the AZ sends: the underlay MTU of its VM host less the
    tunnel's overhead (`model.ovn.TUNNEL_OVERHEAD`)."""
    host = next(c for c in lab.chassis[az] if c.name == lab.vm_hosts[az])
    kind = host.encapsulation.split(",")[0]
    return host.mtu - TUNNEL_OVERHEAD.get(kind, TUNNEL_OVERHEAD["geneve"])


def _leg(lab: Lab, index: int, src: Endpoint, sender: kubeovn.Backbone, dst: Endpoint,
         receiver: kubeovn.Backbone, kind: int, size: int, sequence: int, ident: int | None = None) -> Leg:
    """A leg whose echo carries `ident` (default: its index). An echo reply carries its request's:
    on a switch with stateful ACLs, conntrack takes a reply with another identifier for a reply
    to nothing, invalid, and drops it."""
    probe = Probe(sender.vm_mac, sender.router_mac, sender.vm_ip, receiver.vm_ip,
                  (index if ident is None else ident) & 0xFFFF, sequence, size, kind=kind)
    expected = probe.routed(receiver.router_mac, receiver.vm_mac, HOPS).frame()
    return Leg(index, src.az, dst.az, sender, receiver, probe, expected)


def send_wave(lab: Lab, legs: Sequence[Leg]) -> dict[int, list[str]]:
    """Inject every leg, then read the destination pcaps until each has arrived or the lab has
    settled (`settling`: nothing the wave sent is still on its way). Returns, per leg that did not
    arrive intact, what differed (empty: nothing arrived). A lab that does not settle within
    `WAVE_POLLS` rounds is a SandboxError that says so: no leg is called lost on a guess."""
    assert lab.underlay is not None
    pcaps: dict[int, Path] = {}
    for leg in legs:
        host = lab.underlay.chassis[lab.vm_hosts[leg.dst_az]]
        pcaps[leg.index] = host.vms[lab.vifs[(leg.dst_az, leg.receiver.vm)]]
    wanted = {leg.index: leg for leg in legs}
    before = {path: len(read_pcap(path)) for path in set(pcaps.values())}
    counts = lab.underlay.counts()
    injected: dict[Port, int] = {}
    for leg in legs:
        port = (lab.vm_hosts[leg.src_az], lab.vifs[(leg.src_az, leg.sender.vm)])
        injected[port] = injected.get(port, counts.get(port, (0, 0))[0]) + 1
    settling = Settling(lab.underlay.links(), injected)
    for leg in legs:
        host = lab.underlay.chassis[lab.vm_hosts[leg.src_az]]
        host.receive(lab.vifs[(leg.src_az, leg.sender.vm)], leg.probe.hex())
    arrived: dict[int, Seen] = {}
    for _ in range(WAVE_POLLS):
        # the counters first: what they show handled is in the pcaps read after them
        settled = settling.add(lab.underlay.counts())
        _arrivals(wanted, pcaps, before, arrived)
        if len(arrived) == len(wanted) or settled:
            break
        if settling.behind:
            time.sleep(POLL_INTERVAL)
    else:
        raise SandboxError(f"the data plane could not settle in {WAVE_POLLS} rounds of its counters; still on the "
                           f"way: {'; '.join(settling.behind[:5]) or 'nothing, but not for long enough'}")
    out: dict[int, list[str]] = {}
    for index, leg in wanted.items():
        got = arrived.get(index)
        if got is None:
            out[index] = []
        elif leg.expected is not None and got.frame != leg.expected:
            out[index] = got.differences(leg.expected)
    return out


def _arrivals(wanted: Mapping[int, Leg], pcaps: Mapping[int, Path], before: Mapping[Path, int],
              arrived: dict[int, Seen]) -> None:
    """Add to `arrived` the legs now in their destination pcaps."""
    seen = {path: read_pcap(path)[before[path]:] for path in set(pcaps.values())}
    for index, leg in wanted.items():
        if index in arrived:
            continue
        key = leg.probe.key
        frames = seen[pcaps[index]]
        # the probe itself, else the same probe (protocol and the numbers that name it: unique in
        # a wave) with other addresses: translated on the way, it arrived altered
        match = next((s for s in frames if s.key == key), None) or next(
            (s for s in frames if s.key is not None and s.key[2:] == key[2:]), None)
        if match is not None:
            arrived[index] = match


def prove_pairs(lab: Lab, endpoints: Sequence[tuple[Endpoint, kubeovn.Backbone]]) -> tuple[Pair, ...]:
    """Every ordered pair of endpoints in different AZs, proven with packets."""
    pairs = [(src, source, dst, target) for src, source in endpoints for dst, target in endpoints
             if src.az != dst.az]
    mtu = {az: overlay_mtu(lab, az) for az in lab.azs}
    requests = [_leg(lab, i + 1, src, source, dst, target, ECHO_REQUEST, mtu[src.az], 1)
                for i, (src, source, dst, target) in enumerate(pairs)]
    replies = [_leg(lab, len(pairs) + i + 1, dst, target, src, source, ECHO_REPLY, mtu[dst.az], 1, ident=i + 1)
               for i, (src, source, dst, target) in enumerate(pairs)]
    lost_requests = send_wave(lab, requests)
    lost_replies = send_wave(lab, replies)
    # A leg lost whole is sent once more at its size before anything is concluded: a first packet
    # may be lost while the lab's routers still resolve a next hop, and would read as an MTU
    # verdict when the small probe then arrives.
    for lost, legs in ((lost_requests, requests), (lost_replies, replies)):
        again = [_resized(leg, leg.probe.size, 3) for leg in legs if leg.index in lost and not lost[leg.index]]
        if again:
            still = send_wave(lab, again)
            for leg in again:
                if leg.index not in still:
                    del lost[leg.index]
    small: dict[int, list[str]] = {}
    retry = [_small(leg) for leg in requests if leg.index in lost_requests and not lost_requests[leg.index]]
    retry += [_small(leg) for leg in replies if leg.index in lost_replies and not lost_replies[leg.index]]
    if retry:
        small = send_wave(lab, retry)
        lab.sandbox.start_tracers(lab.azs)
    out = []
    for (src, source, dst, target), request, reply in zip(pairs, requests, replies, strict=True):
        if request.index in lost_requests:
            out.append(_explain(lab, src, source, dst, target, request, lost_requests[request.index], small, False))
        elif reply.index in lost_replies:
            pair = _explain(lab, dst, target, src, source, reply, lost_replies[reply.index], small, True)
            out.append(Pair(src, dst, pair.outcome, pair.detail))
        else:
            out.append(Pair(src, dst, DELIVERED, f"{src.az} -> {lab.sandbox.transit_switch} -> {dst.az} and back: "
                                                 f"{request.probe.size}-byte ICMP echo and its reply"))
    return tuple(out)


def _small(leg: Leg) -> Leg:
    """The leg's probe again at the smallest size, with another sequence number (so that a late
    original is not taken for it)."""
    return _resized(leg, MIN_IP_SIZE, 2)


def _resized(leg: Leg, size: int, sequence: int) -> Leg:
    """The leg's probe again at `size`, with its own sequence number."""
    assert isinstance(leg.probe, Probe)
    probe = Probe(leg.probe.eth_src, leg.probe.eth_dst, leg.probe.ip_src, leg.probe.ip_dst, leg.probe.ident, sequence,
                  size, kind=leg.probe.kind)
    return Leg(leg.index, leg.src_az, leg.dst_az, leg.sender, leg.receiver, probe,
                probe.routed(leg.receiver.router_mac, leg.receiver.vm_mac, HOPS).frame())


REPLY_LOST = "the request arrived, its reply did not: "  # how a lost reply's verdict begins


def _explain(lab: Lab, src: Endpoint, source: kubeovn.Backbone, dst: Endpoint, target: kubeovn.Backbone,
             leg: Leg, differences: list[str], small: Mapping[int, list[str]], reply: bool) -> Pair:
    """Why a leg was lost (`reply`: the echo reply, from `src` the destination back to `dst`)."""
    if differences:
        what = "the reply " if reply else ""
        return Pair(src, dst, ALTERED, f"{what}arrived in {dst.az} altered: {', '.join(differences)}")
    what = REPLY_LOST if reply else ""
    logical = trace_pair(lab, src, source, dst, target)
    if not logical.delivered:
        return Pair(src, dst, logical.outcome, f"{what}{logical.detail}")
    reason = data_plane_reason(lab, src.az, dst.az)
    if reason is not None:
        return Pair(src, dst, reason[0], f"{what}{reason[1]}")
    if leg.index not in small:  # the small probe arrived: only the big one is too big
        mtus = sorted({c.mtu for az in (src.az, dst.az) for c in lab.chassis[az]})
        return Pair(src, dst, MTU, f"{what}a {leg.probe.size}-byte packet is lost where a {MIN_IP_SIZE}-byte one "
                                   f"arrives: it does not fit the underlay MTU on the way ({', '.join(map(str, mtus))})"
                                   " once encapsulated")
    return Pair(src, dst, LOST,
                f"{what}lost in the data plane, though ovn-trace delivers it{_underlay(lab, src.az, dst.az)}")


TUNNEL_PORTS = {"geneve": 6081, "vxlan": 4789, "stt": 7471}  # the UDP (STT: TCP) port of each encapsulation


def _underlay(lab: Lab, a: str, b: str) -> str:
    """What is left once the tunnel keys, gateways, encapsulation and tunnel are as they should
    be: the underlay between the two gateways' tunnel endpoints (`data_plane_reason` found the
    tunnel, so both gateways are known)."""
    gw_a, gw_b = active_gateway(lab, a), active_gateway(lab, b)
    if lab.underlay is None or gw_a not in lab.underlay.chassis or gw_b not in lab.underlay.chassis:
        return ""
    remote = str(lab.underlay.chassis[gw_b].spec.encap_ip)
    kinds = sorted({kind for kind, ip in lab.underlay.chassis[gw_a].tunnels() if ip == remote})
    ports = ", ".join(f"{kind} {'TCP' if kind == 'stt' else 'UDP'} {TUNNEL_PORTS.get(kind, '?')}" for kind in kinds)
    return (f", and {a}'s gateway {gw_a} ({lab.underlay.chassis[gw_a].spec.encap_ip}) has a tunnel to {b}'s gateway "
            f"{gw_b} ({remote}): the underlay between them drops it; check that it passes {ports or 'the tunnel'}")


def active_gateway(lab: Lab, az: str) -> str | None:
    """The chassis that has claimed the AZ's port on the transit switch (its chassisredirect port)."""
    port = f"cr-{az}-{lab.sandbox.transit_switch}"
    uuid = lab.sandbox.sb(az, "--bare", "--columns=chassis", "find", "Port_Binding", f"logical_port={port}").strip()
    if not uuid:
        return None
    return lab.sandbox.sb(az, "--bare", "--columns=name", "list", "Chassis", uuid).strip() or None


def transit_keys(lab: Lab) -> tuple[str, dict[str, str]]:
    """The transit switch's tunnel key in the IC SB, and in each AZ's SB."""
    ts = lab.sandbox.transit_switch
    ic = lab.sandbox.icsb("--bare", "--columns=tunnel_key", "find", "Datapath_Binding", f"transit_switch={ts}").strip()
    keys = {az: lab.sandbox.sb(az, "--bare", "--columns=tunnel_key", "find", "Datapath_Binding",
                               f"external_ids:interconn-ts={ts}").strip() for az in lab.azs}
    return ic, keys


def encap_types(lab: Lab, az: str, chassis: str) -> set[str]:
    """The encapsulations a chassis is registered with in an AZ's SB (its own, or a remote one's)."""
    rows = lab.sandbox.sb(az, "--bare", "--columns=type", "find", "Encap", f"chassis_name={chassis}")
    return set(rows.split())


def data_plane_reason(lab: Lab, a: str, b: str) -> tuple[str, str] | None:
    """Why a packet from AZ `a` does not reach AZ `b` when ovn-trace delivers it, or None."""
    ts = lab.sandbox.transit_switch
    ic_key, keys = transit_keys(lab)
    vxlan = any("vxlan" in c.encapsulation for az in (a, b) for c in lab.chassis[az])
    if vxlan and keys.get(a) == keys.get(b) and keys.get(a, "").isdigit() and int(keys[a]) > VXLAN_MAX_KEY:
        return TUNNEL_KEY, (f"the transit switch {ts} has tunnel key {keys[a]} in {a} and {b}, which does not fit "
                            f"VXLAN's 12-bit datapath key (at most {VXLAN_MAX_KEY}): the tunnel carries another key; "
                            "set options:vxlan_mode=true on the IC NB (OVN 25.03 and later)")
    if keys.get(a) != keys.get(b) or keys.get(b) != ic_key:
        detail = (f"the transit switch {ts} has tunnel key {keys.get(a) or '(none)'} in {a} and "
                  f"{keys.get(b) or '(none)'} in {b} (the IC SB assigned {ic_key or '(none)'}): "
                  f"{b} does not know the datapath {a} sends to")
        if vxlan and ic_key.isdigit() and int(ic_key) > VXLAN_MAX_KEY:
            detail += (f"; VXLAN carries 12-bit datapath keys and {ic_key} does not fit, so each AZ picked its own: "
                       "set options:vxlan_mode=true on the IC NB (OVN 25.03 and later)")
        return TUNNEL_KEY, detail
    gw_a, gw_b = active_gateway(lab, a), active_gateway(lab, b)
    if gw_a is None or gw_b is None:
        missing = a if gw_a is None else b
        return NO_TUNNEL, f"no gateway chassis of {missing} has claimed its port on {ts}"
    mine, theirs = encap_types(lab, a, gw_a), encap_types(lab, a, gw_b)
    if not theirs:  # ovn-ic syncs the gateways the IC SB lists into every other AZ, with their encaps
        listed = lab.sandbox.rows(lab.sandbox.ic_sb, IC_SB, "Gateway", ["name"], [("name", "==", gw_b)])
        why = ("ovn-ic has not synced it there" if listed else
               f"the IC SB does not list it as a gateway of {b} (it is not an IC gateway: no ovn-is-interconn=true)")
        return NO_TUNNEL, (f"no tunnel from {a}'s gateway {gw_a} to {b}'s gateway {gw_b}: {a} does not know {gw_b}; "
                           f"{why}")
    if not mine & theirs:
        return ENCAPSULATION, (f"{a}'s gateway {gw_a} tunnels with {','.join(sorted(mine)) or 'nothing'}, "
                               f"{b}'s gateway {gw_b} with {','.join(sorted(theirs)) or 'nothing'}: no common "
                               "encapsulation")
    assert lab.underlay is not None
    remote = lab.underlay.chassis[gw_b].spec.encap_ip
    tunnels = lab.underlay.chassis[gw_a].tunnels()
    if not any(ip == str(remote) for _kind, ip in tunnels):
        detail = f"no tunnel from {a}'s gateway {gw_a} to {b}'s gateway {gw_b} ({remote})"
        if not is_interconn(lab, a, gw_a):
            detail += (f": {gw_a} is not an IC gateway (no ovn-is-interconn=true), and ovn-controller tunnels to "
                       "other AZs' gateways only from one")
        return NO_TUNNEL, detail
    return None


def is_interconn(lab: Lab, az: str, chassis: str) -> bool:
    """The chassis registered itself as an IC gateway (`other_config:is-interconn=true`)."""
    rows = lab.sandbox.rows(lab.sandbox.sb_db(az), SB, "Chassis", ["other_config"], [("name", "==", chassis)])
    return any(["is-interconn", "true"] in row["other_config"][1] for row in rows)
