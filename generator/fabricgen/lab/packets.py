"""The packets the data-plane lab sends, and the pcap files it reads back.

A probe is an Ethernet frame with an IPv4 ICMP echo request (or reply) whose identifier and
sequence number name the pair it proves; `netdev-dummy/receive PORT HEX` injects it at a VM
port (Open vSwitch `lib/netdev-dummy.c`), and the port's `options:tx_pcap` file records
what came out of it, in the classic pcap format (`lib/pcap-file.c`): a 24-byte file header,
then per packet a 16-byte record header (seconds, microseconds, captured and original
length) and the frame.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from ipaddress import IPv4Address
from pathlib import Path

ETH_IPV4 = 0x0800
ICMP = 1
ECHO_REQUEST, ECHO_REPLY = 8, 0
IPV4_HEADER = 20
ICMP_HEADER = 8
MIN_IP_SIZE = IPV4_HEADER + ICMP_HEADER + 8


def _mac(text: str) -> bytes:
    return bytes(int(part, 16) for part in text.split(":"))


def checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071)."""
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


@dataclass(frozen=True)
class Probe:
    """One ICMP echo between two VMs: `size` is the IPv4 packet's total length."""

    eth_src: str
    eth_dst: str
    ip_src: IPv4Address
    ip_dst: IPv4Address
    ident: int
    sequence: int
    size: int
    ttl: int = 64
    kind: int = ECHO_REQUEST

    def frame(self) -> bytes:
        payload = bytes((self.ident + i) & 0xFF for i in range(self.size - IPV4_HEADER - ICMP_HEADER))
        icmp = struct.pack("!BBHHH", self.kind, 0, 0, self.ident, self.sequence) + payload
        icmp = icmp[:2] + struct.pack("!H", checksum(icmp)) + icmp[4:]
        header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, self.size, self.ident & 0xFFFF, 0x4000, self.ttl, ICMP, 0,
                             self.ip_src.packed, self.ip_dst.packed)
        header = header[:10] + struct.pack("!H", checksum(header)) + header[12:]
        return _mac(self.eth_dst) + _mac(self.eth_src) + struct.pack("!H", ETH_IPV4) + header + icmp

    def hex(self) -> str:
        return self.frame().hex()

    def routed(self, eth_src: str, eth_dst: str, hops: int) -> Probe:
        """The same packet as it leaves the last router: new MACs, TTL lowered once per router."""
        return Probe(eth_src, eth_dst, self.ip_src, self.ip_dst, self.ident, self.sequence, self.size,
                     self.ttl - hops, self.kind)


@dataclass(frozen=True)
class Seen:
    """A frame read back from a pcap file, with what identifies a probe in it."""

    frame: bytes

    @property
    def key(self) -> tuple[str, str, int, int, int] | None:
        """(ip src, ip dst, ICMP type, identifier, sequence) of an ICMP frame, else None."""
        f = self.frame
        if len(f) < 14 + MIN_IP_SIZE - 8 or struct.unpack("!H", f[12:14])[0] != ETH_IPV4 or f[23] != ICMP:
            return None
        ihl = (f[14] & 0x0F) * 4
        icmp = f[14 + ihl:]
        if len(icmp) < ICMP_HEADER:
            return None
        kind, _code, _sum, ident, sequence = struct.unpack("!BBHHH", icmp[:8])
        return (str(IPv4Address(f[26:30])), str(IPv4Address(f[30:34])), kind, ident, sequence)

    def differences(self, expected: bytes) -> list[str]:
        """What differs from the expected frame, in words (empty: the same bytes)."""
        if self.frame == expected:
            return []
        out = []
        if self.frame[0:6] != expected[0:6]:
            out.append(f"eth.dst {_text_mac(self.frame[0:6])} (expected {_text_mac(expected[0:6])})")
        if self.frame[6:12] != expected[6:12]:
            out.append(f"eth.src {_text_mac(self.frame[6:12])} (expected {_text_mac(expected[6:12])})")
        if len(self.frame) > 22 and len(expected) > 22 and self.frame[22] != expected[22]:
            out.append(f"ttl {self.frame[22]} (expected {expected[22]})")
        for name, start in (("ip4.src", 26), ("ip4.dst", 30)):  # after a 14-byte Ethernet header
            got, want = self.frame[start:start + 4], expected[start:start + 4]
            if len(got) == len(want) == 4 and got != want:
                out.append(f"{name} {IPv4Address(got)} (expected {IPv4Address(want)})")
        if len(self.frame) != len(expected):
            out.append(f"{len(self.frame)} bytes (expected {len(expected)})")
        return out or ["other bytes differ"]


def _text_mac(raw: bytes) -> str:
    return ":".join(f"{b:02x}" for b in raw)


def read_pcap(path: Path) -> list[Seen]:
    """Every complete frame in a pcap file (a missing or still empty file has none)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    if len(data) < 24:
        return []
    magic = data[:4]
    if magic == b"\xd4\xc3\xb2\xa1":
        order = "<"
    elif magic == b"\xa1\xb2\xc3\xd4":
        order = ">"
    else:
        raise ValueError(f"{path}: not a pcap file")
    out, offset = [], 24
    while offset + 16 <= len(data):
        _sec, _usec, captured, _length = struct.unpack(f"{order}IIII", data[offset:offset + 16])
        if offset + 16 + captured > len(data):
            break  # the writer has not finished this record yet
        out.append(Seen(data[offset + 16:offset + 16 + captured]))
        offset += 16 + captured
    return out
