"""An index of IPv4 networks that finds every network overlapping a given one.

Rules that compare ranges (backbones against backbones, against cluster ranges,
advertised CIDRs against everything routed) ask "which of these overlap this
one?" once per range. Comparing every pair is quadratic in the number of zones;
the index answers in O(log n + 32 + hits).

Two CIDR networks overlap only when one contains the other. The networks that
overlap a query `q` are therefore those that start inside `q` (found by bisection
in a list sorted by first address) and those that strictly contain `q` while
starting before it: supernets of `q`, at most one per prefix length, found in a
dictionary keyed by (network address, prefix length).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from ipaddress import IPv4Network

_ALL = 0xFFFFFFFF


class NetworkIndex:
    """Networks added in order; `overlapping(q)` gives the positions (in adding order, ascending)
    of every added network that overlaps `q`."""

    def __init__(self, networks: list[IPv4Network] | None = None) -> None:
        self._starts: list[tuple[int, int]] = []  # (first address, position), sorted
        self._exact: dict[tuple[int, int], list[int]] = {}  # (first address, prefix length) -> positions
        self._prefixes: list[int] = []  # prefix lengths present, ascending
        self._networks: list[IPv4Network] = []  # by position
        self._count = 0
        for network in networks or ():
            self.add(network)

    def __len__(self) -> int:
        return self._count

    def add(self, network: IPv4Network) -> int:
        """Add a network; returns its position."""
        position = self._count
        self._count += 1
        self._networks.append(network)
        start, prefix = int(network.network_address), network.prefixlen
        bisect.insort(self._starts, (start, position))
        self._exact.setdefault((start, prefix), []).append(position)
        if prefix not in self._prefixes:
            bisect.insort(self._prefixes, prefix)
        return position

    def overlapping(self, network: IPv4Network) -> list[int]:
        """Positions of the added networks that overlap `network`, ascending."""
        start, prefix = int(network.network_address), network.prefixlen
        end = start | (_ALL >> prefix)
        lo = bisect.bisect_left(self._starts, (start, -1))
        hi = bisect.bisect_right(self._starts, (end, self._count))
        found = [position for _start, position in self._starts[lo:hi]]
        for shorter in self._prefixes:
            if shorter >= prefix:
                break
            base = start & (_ALL ^ (_ALL >> shorter))
            if base != start:  # a supernet starting at `start` itself was found by bisection
                found.extend(self._exact.get((base, shorter), ()))
        found.sort()
        return found

    def overlapping_earlier(self) -> Iterator[tuple[int, int]]:
        """Every pair of added networks that overlap, once: (i, j) with j < i, by i and then j
        (a rule reports the later of two ranges, naming the earlier)."""
        for i, network in enumerate(self._networks):
            for j in self.overlapping(network):
                if j >= i:
                    break
                if network.overlaps(self._networks[j]):
                    yield i, j
