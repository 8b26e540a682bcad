"""The policy's connections as packets through the data-plane lab's chassis.

Each connection is sent as its first packet from the source VM's port: a TCP SYN, a UDP datagram
or an ICMP echo request (`packets`). A stateful ACL (`allow-related`) commits the connection in
the user-space conntrack of the chassis that runs the port's pipeline; so for every connection
that arrived and whose reply the caller wants, the reply is sent from the destination VM once
every first packet has been handled: the SYN-ACK that acknowledges the SYN, the datagram back, the
echo reply. It must come back through the source's own ACLs as a reply (`ct_state=+est+rpl`),
which a default drop stops unless the connection was committed.

Every first packet of a batch goes in one wave, every reply in a second (`dataplane.send_wave`: a
wave ends when all have arrived, or when the daemons' counters show nothing is still on its way).
A packet is delivered when it comes out of the destination VM's port, whatever the routers made
of its addresses on the way. Each has a source port (or ICMP identifier) of its own, so no two
share a conntrack entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fabricgen.lab.assembly import Lab
from fabricgen.lab.ovn.packets import ECHO_REPLY, ECHO_REQUEST, MIN_IP_SIZE, TCP, UDP, Probe, Segment
from fabricgen.lab.platforms.kubeovn import Backbone
from fabricgen.lab.provers.dataplane import Leg, send_wave

DELIVERED, DROPPED = "delivered", "dropped"
SOURCE_PORT = 40000  # a connection's source port is this plus its place in the batch
SENT = ("tcp", "udp", "icmp")  # the protocols sent as packets; SCTP needs an association first
_NUMBER = {"tcp": TCP, "udp": UDP}


@dataclass(frozen=True)
class Connection:
    """One connection to send: from a VM in one AZ to a VM in the same or another."""

    source_az: str
    source: Backbone
    destination_az: str
    destination: Backbone
    protocol: str  # sent as packets when one of SENT (`policy_flows.judge_flows` traces the others)
    port: int | None  # None for ICMP


def _first(index: int, c: Connection) -> Leg:
    a, b = c.source, c.destination
    probe: Probe | Segment
    if c.protocol == "icmp":
        probe = Probe(a.vm_mac, a.router_mac, a.vm_ip, b.vm_ip, index, 1, MIN_IP_SIZE, kind=ECHO_REQUEST)
    else:
        assert c.port is not None
        probe = Segment(a.vm_mac, a.router_mac, a.vm_ip, b.vm_ip, _NUMBER[c.protocol], SOURCE_PORT + index, c.port,
                        index)
    return Leg(index, c.source_az, c.destination_az, a, b, probe, None)


def _reply(index: int, first: Leg, c: Connection) -> Leg:
    a, b = c.source, c.destination
    probe: Probe | Segment
    if isinstance(first.probe, Probe):
        probe = Probe(b.vm_mac, b.router_mac, b.vm_ip, a.vm_ip, first.probe.ident, first.probe.sequence,
                      MIN_IP_SIZE, kind=ECHO_REPLY)
    else:
        probe = first.probe.answer(b.vm_mac, b.router_mac, index)
    return Leg(index, c.destination_az, c.source_az, b, a, probe, None)


def exchange(lab: Lab, connections: Sequence[Connection],
             wants_reply: Callable[[int], bool]) -> list[tuple[str, str | None]]:
    """Per connection, whether its first packet was delivered, and (when it was and
    `wants_reply(i)` says so) whether its reply was, else None."""
    firsts = [_first(i + 1, c) for i, c in enumerate(connections)]
    lost = send_wave(lab, firsts) if firsts else {}
    observed = [DROPPED if leg.index in lost and not lost[leg.index] else DELIVERED for leg in firsts]
    replies: dict[int, Leg] = {}
    for i, (leg, c, seen) in enumerate(zip(firsts, connections, observed, strict=True)):
        if seen == DELIVERED and wants_reply(i):
            replies[i] = _reply(len(firsts) + len(replies) + 1, leg, c)
    lost_back = send_wave(lab, list(replies.values())) if replies else {}
    out: list[tuple[str, str | None]] = []
    for i, seen in enumerate(observed):
        back = replies.get(i)
        reply = None if back is None else DROPPED if back.index in lost_back and not lost_back[back.index] \
            else DELIVERED
        out.append((seen, reply))
    return out
