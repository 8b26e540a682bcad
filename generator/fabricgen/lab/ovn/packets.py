"""The packets the data-plane lab sends, and the pcap files it reads back.

A probe is an Ethernet frame with an IPv4 ICMP echo request (or reply) whose identifier and
sequence number name the pair it proves; a segment is the first packet of a TCP connection (a
SYN; its reply the SYN-ACK) or a UDP datagram, whose ports name the flow it proves. Both carry
correct checksums: Open vSwitch's user-space conntrack checks the IPv4, TCP and UDP checksums of
a packet without offload flags and treats a bad one as invalid (`lib/conntrack.c`
`extract_l3_ipv4`, `check_l4_tcp`, `check_l4_udp`), and a stateful ACL drops what conntrack
calls invalid. `netdev-dummy/receive PORT HEX` injects a frame at a VM port (Open vSwitch
`lib/netdev-dummy.c`), and the port's `options:tx_pcap` file records what came out of it, in
the classic pcap format (`lib/pcap-file.c`): a 24-byte file header, then per packet a 16-byte
record header (seconds, microseconds, captured and original length) and the frame.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from ipaddress import IPv4Address
from pathlib import Path

ETH_IPV4 = 0x0800
ICMP, TCP, UDP = 1, 6, 17
ECHO_REQUEST, ECHO_REPLY = 8, 0
IPV4_HEADER = 20
ICMP_HEADER = 8
MIN_IP_SIZE = IPV4_HEADER + ICMP_HEADER + 8
TCP_SYN, TCP_ACK = 0x02, 0x10
TCP_WINDOW = 64240
PAYLOAD = b"fabricgen"  # a UDP datagram's payload
Key = tuple[str, str, int, int, int, int]  # (ip src, ip dst, protocol, and three numbers that name the packet)


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
        return _ipv4(self.eth_src, self.eth_dst, self.ip_src, self.ip_dst, self.ident, self.ttl, ICMP, icmp)

    def hex(self) -> str:
        return self.frame().hex()

    @property
    def key(self) -> Key:
        return (str(self.ip_src), str(self.ip_dst), ICMP, self.kind, self.ident, self.sequence)

    def routed(self, eth_src: str, eth_dst: str, hops: int) -> Probe:
        """The same packet as it leaves the last router: new MACs, TTL lowered once per router."""
        return Probe(eth_src, eth_dst, self.ip_src, self.ip_dst, self.ident, self.sequence, self.size,
                     self.ttl - hops, self.kind)


def _ipv4(eth_src: str, eth_dst: str, src: IPv4Address, dst: IPv4Address, ident: int, ttl: int, protocol: int,
          body: bytes) -> bytes:
    """An Ethernet frame of an IPv4 packet (don't fragment) around `body`, checksummed."""
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, IPV4_HEADER + len(body), ident & 0xFFFF, 0x4000, ttl, protocol, 0,
                         src.packed, dst.packed)
    header = header[:10] + struct.pack("!H", checksum(header)) + header[12:]
    return _mac(eth_dst) + _mac(eth_src) + struct.pack("!H", ETH_IPV4) + header + body


@dataclass(frozen=True)
class Segment:
    """The first packet of a TCP connection (a SYN) or a UDP datagram between two VMs, or with
    `reply` the packet that answers it (a SYN-ACK acknowledging the SYN, a datagram back), sent
    from the other end: `ip_src`/`source_port` are the sender's. The initial sequence numbers are
    fixed, so that a reply acknowledges exactly the SYN it answers, as conntrack checks
    (`lib/conntrack-tcp.c`)."""

    eth_src: str
    eth_dst: str
    ip_src: IPv4Address
    ip_dst: IPv4Address
    protocol: int  # TCP or UDP
    source_port: int
    destination_port: int
    ident: int  # the IPv4 identification: names the packet in its wave
    reply: bool = False
    ttl: int = 64

    SYN_SEQUENCE = 0x10000000
    SYN_ACK_SEQUENCE = 0x20000000

    def body(self) -> bytes:
        if self.protocol == TCP:
            flags, sequence, ack = ((TCP_SYN | TCP_ACK, self.SYN_ACK_SEQUENCE, self.SYN_SEQUENCE + 1) if self.reply
                                    else (TCP_SYN, self.SYN_SEQUENCE, 0))
            l4 = struct.pack("!HHIIBBHHH", self.source_port, self.destination_port, sequence, ack, 5 << 4, flags,
                             TCP_WINDOW, 0, 0)
            at = 16
        elif self.protocol == UDP:
            l4 = struct.pack("!HHHH", self.source_port, self.destination_port, 8 + len(PAYLOAD), 0) + PAYLOAD
            at = 6
        else:
            raise ValueError(f"a segment is TCP or UDP, not IP protocol {self.protocol}")
        pseudo = self.ip_src.packed + self.ip_dst.packed + struct.pack("!BBH", 0, self.protocol, len(l4))
        value = checksum(pseudo + l4) or (0xFFFF if self.protocol == UDP else 0)  # UDP: 0 means "none"
        return l4[:at] + struct.pack("!H", value) + l4[at + 2:]

    def frame(self) -> bytes:
        return _ipv4(self.eth_src, self.eth_dst, self.ip_src, self.ip_dst, self.ident, self.ttl, self.protocol,
                     self.body())

    @property
    def size(self) -> int:
        """The IPv4 packet's total length."""
        return IPV4_HEADER + len(self.body())

    def hex(self) -> str:
        return self.frame().hex()

    @property
    def key(self) -> Key:
        return (str(self.ip_src), str(self.ip_dst), self.protocol, self.source_port, self.destination_port, self.ident)

    def answer(self, eth_src: str, eth_dst: str, ident: int) -> Segment:
        """The reply to this packet, from its destination (with the MACs it sends from and to)."""
        return Segment(eth_src, eth_dst, self.ip_dst, self.ip_src, self.protocol, self.destination_port,
                       self.source_port, ident, reply=True)


@dataclass(frozen=True)
class Seen:
    """A frame read back from a pcap file, with what identifies a probe in it."""

    frame: bytes

    @property
    def key(self) -> Key | None:
        """What names the packet, as `Probe.key` and `Segment.key` give it: (ip src, ip dst, 1, ICMP
        type, identifier, sequence) of an ICMP frame; (ip src, ip dst, protocol, source port,
        destination port, IPv4 identification) of a TCP or UDP one; else None."""
        f = self.frame
        if len(f) < 14 + IPV4_HEADER + 8 or struct.unpack("!H", f[12:14])[0] != ETH_IPV4 or \
                f[23] not in (ICMP, TCP, UDP):
            return None
        ihl = (f[14] & 0x0F) * 4
        l4 = f[14 + ihl:]
        if len(l4) < 8:
            return None
        addresses = (str(IPv4Address(f[26:30])), str(IPv4Address(f[30:34])))
        if f[23] == ICMP:
            kind, _code, _sum, ident, sequence = struct.unpack("!BBHHH", l4[:8])
            return (*addresses, ICMP, kind, ident, sequence)
        source, destination = struct.unpack("!HH", l4[:4])
        return (*addresses, f[23], source, destination, struct.unpack("!H", f[18:20])[0])

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
