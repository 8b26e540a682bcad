"""When the simulated data plane has settled: every packet sent has been taken by its receiver.

A wave of the data-plane proof ends when every packet has arrived, or when the lab can say that
nothing is in flight any more, so that a packet which has not arrived was dropped. That is read
from the daemons' own counters, never from time, as Open vSwitch's dummy datapath keeps them
(openvswitch/ovs `lib/netdev-dummy.c`):

- `netdev_dummy_rxq_recv` counts a port's `rx_packets` when the datapath takes the packet from the
  port's queue; ovs-vswitchd's main thread then handles it to the end (lookup, upcall, actions,
  output) before it answers a control command, so a counted packet has been forwarded, delivered
  or dropped;
- `netdev_dummy_send` counts `tx_packets` when it hands a packet to the port's stream (the unix
  socket of `options:stream` / `options:pstream` that joins a chassis' `br-phys` to the underlay
  bridge); a packet too big for the port's MTU is refused before it is counted.

So a packet sent on a link before one reading of its sender has been handled by the receiver when
a later reading shows the receiver's `rx_packets` at least the sender's `tx_packets` of then. Each
reading of every daemon is one `dpctl/show -s`, one after another, so every round of readings
comes wholly after the round before. A packet a daemon handled before its reading in round k was
sent on, if at all, before that reading, so it is in that round's `tx_packets`; when round k+1
holds, the next daemon has handled it before its own reading in round k+1: one link more per
round. After `HOPS + 1` rounds in a row that hold, the first of them once every injected packet
has left its port's queue, nothing the wave sent can still be on its way. Background traffic (BFD every second
on each tunnel) keeps the counters moving but is handled the same way, so it never stalls the
wait. A stream that drops a packet (its queue of 100 full) never balances: the wait gives up and
says the lab could not settle, never that a packet was lost.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

# The longest path of the lab's proof: a VM host's tunnel to its AZ's gateway, the gateways'
# tunnel between AZs, the destination gateway's tunnel to the VM host; each tunnel is two
# transmissions on the underlay (chassis -> underlay bridge -> chassis). Two more allow one
# redirect to another gateway chassis on the way.
HOPS = 8

Port = tuple[str, str]  # (daemon, port name)
Counts = dict[Port, tuple[int, int]]  # (rx_packets, tx_packets)

_PORT = re.compile(r"^\s*port \d+: (\S+)")
_PACKETS = re.compile(r"^\s*([RT]X) packets:(\d+)")


def read_counts(daemon: str, text: str) -> Counts:
    """Per port, (rx_packets, tx_packets) from `ovs-appctl dpctl/show -s` of one daemon."""
    out: Counts = {}
    port: str | None = None
    rx = tx = 0
    for line in text.splitlines():
        named = _PORT.match(line)
        if named is not None:
            port, rx, tx = named.group(1), 0, 0
            continue
        counted = _PACKETS.match(line)
        if counted is None or port is None:
            continue
        if counted.group(1) == "RX":
            rx = int(counted.group(2))
        else:
            tx = int(counted.group(2))
        out[(daemon, port)] = (rx, tx)
    return out


@dataclass
class Settling:
    """The rounds of readings of one wave. `links`: (sender, receiver) port pairs, each direction
    of each stream; `injected`: per port a packet was injected into, the `rx_packets` it reaches
    once the datapath has taken all of them."""

    links: Sequence[tuple[Port, Port]]
    injected: Mapping[Port, int]
    hops: int = HOPS
    _previous: Counts | None = None
    _held: int = 0
    behind: list[str] = field(default_factory=list)  # what the last round found still on its way

    def add(self, counts: Counts) -> bool:
        """One more round of readings; True once the wave has settled."""
        behind = [f"{port[1]} of {port[0]}: {counts.get(port, (0, 0))[0]} of {wanted} injected packets taken"
                  for port, wanted in sorted(self.injected.items()) if counts.get(port, (0, 0))[0] < wanted]
        if self._previous is not None:
            for sender, receiver in self.links:
                sent = self._previous.get(sender, (0, 0))[1]
                taken = counts.get(receiver, (0, 0))[0]
                if taken < sent:
                    behind.append(f"{sender[0]} -> {receiver[0]}: {sent - taken} sent, not yet taken")
        self.behind = behind
        self._held = 0 if behind or self._previous is None else self._held + 1
        self._previous = counts
        return self._held > self.hops
