"""Parsing `ovn-ic-sbctl show` (also `kubectl ko icsbctl show`).

The output is indented by four spaces per level, with no tabs:

    availability-zone NAME                      (indent 0, one per AZ)
        gateway CHASSIS                         (indent 4)
            hostname: H                         (indent 8)
            type: ENCAP                         (indent 8, repeated per encap)
                ip: IP                          (indent 12)
            port LSP                            (indent 8; only ports whose gateway is claimed)
                transit switch: TS              (indent 12)
                address: ["MAC IP/LEN [IP6/LEN]"]

Each AZ's port on a transit switch is what fabricgen needs: its IP is the
zone's `transitAddress`. Other AZ-level or gateway-level lines that later OVN
versions may add are skipped; lines that fit nowhere are errors with their line
number. AZ order is not significant.

A capture that is ambiguous, or whose addresses no transit port can have, is refused
with its line: an AZ listed twice (the IC SB indexes `Availability_Zone` by name), a
port listed twice with another AZ or address (`Port_Binding` is indexed by
`logical_port`; ovn-org/ovn ovn-ic-sb.ovsschema), an address without its prefix
length (ovn-ic copies the router port's `networks`, always IP/LEN; ic/ovn-ic.c), and,
on the transit switch asked for (`ports_on`), an AZ with two ports of different
addresses, and an IPv4 address that is a /32 or its subnet's broadcast address.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from ipaddress import IPv4Interface, IPv6Interface, ip_interface
from pathlib import Path
from typing import TextIO

from fabricgen.errors import FabricgenError

INDENT = 4


class ShowParseError(FabricgenError):
    """The text is not `ovn-ic-sbctl show` output."""

    def __init__(self, name: str, line: int, message: str) -> None:
        self.name, self.line, self.message = name, line, message
        super().__init__(f"{name}:{line}: {message}")


@dataclass(frozen=True)
class TransitPort:
    """An AZ's logical switch port on a transit switch, as the IC southbound DB has it."""

    zone: str  # availability zone name (Kube-OVN: `az-name`, fabricgen: the zone name)
    gateway: str  # the gateway chassis the port is bound to
    name: str  # the LSP, `<ts>-<az>` with Kube-OVN
    transit_switch: str
    mac: str
    addresses: tuple[IPv4Interface | IPv6Interface, ...]
    line: int  # 1-based line of `port NAME`
    address_line: int = 0  # 1-based line of its `address:`

    @property
    def ipv4(self) -> IPv4Interface | None:
        return next((a for a in self.addresses if isinstance(a, IPv4Interface)), None)


@dataclass(frozen=True)
class Gateway:
    zone: str
    chassis: str
    hostname: str = ""
    encaps: tuple[tuple[str, str], ...] = ()  # (type, ip)


@dataclass(frozen=True)
class IcSbShow:
    zones: tuple[str, ...]  # every AZ listed, in output order
    gateways: tuple[Gateway, ...] = ()
    ports: tuple[TransitPort, ...] = ()
    name: str = "<ovn-ic-sbctl show>"  # the capture, as messages give it

    def ports_on(self, transit_switch: str) -> dict[str, TransitPort]:
        """Each AZ's port on one transit switch, by AZ name; ShowParseError where an AZ has
        two ports there with different addresses, or a port an address no port can have."""
        out: dict[str, TransitPort] = {}
        for port in self.ports:
            if port.transit_switch != transit_switch:
                continue
            problem = transit_address_problem(port.ipv4)
            if problem is not None:
                raise ShowParseError(self.name, port.address_line, f"port {port.name} on transit switch "
                                     f"{transit_switch}: {problem}")
            first = out.setdefault(port.zone, port)
            if first is not port and first.ipv4 != port.ipv4:
                raise ShowParseError(
                    self.name, port.line,
                    f"availability zone {port.zone} has two ports on transit switch {transit_switch} with "
                    f"different addresses: {first.name} ({first.ipv4}, line {first.line}) and {port.name} "
                    f"({port.ipv4}); which one is the zone's transit address is ambiguous")
        return out


def transit_address_problem(address: IPv4Interface | None) -> str | None:
    """What makes an IPv4 interface unusable as a transit switch port address, if anything.

    The network address is not among them: Kube-OVN picks a zone's address as the subnet's
    first address plus a random offset below half its size, 0 included (`GenerateRandomIP`,
    kubeovn/kube-ovn pkg/util/net.go), and OVN takes it (`extract_lrp_networks`, ovn-org/ovn
    lib/ovn-util.c, refuses only 0.0.0.0)."""
    if address is None:
        return None
    network = address.network
    if network.prefixlen == 32:
        return (f"{address} is a /32: a transit switch port has the prefix of the transit subnet "
                "(Kube-OVN: /24); pass the capture as `ovn-ic-sbctl show` printed it")
    if network.prefixlen < 31 and address.ip == network.broadcast_address:
        return f"{address.ip} is the broadcast address of {network}; no port can have it"
    return None


@dataclass
class _PortDraft:
    zone: str
    gateway: str
    name: str
    line: int
    transit_switch: str | None = None
    address: tuple[str, tuple[IPv4Interface | IPv6Interface, ...]] | None = None
    address_line: int = 0


@dataclass
class _GatewayDraft:
    zone: str
    chassis: str
    hostname: str = ""
    encaps: list[tuple[str, str]] = field(default_factory=list)


def parse_address(text: str) -> tuple[str, tuple[IPv4Interface | IPv6Interface, ...]]:
    """`["MAC IP/LEN ..."]` (a JSON list of one string) to the MAC and the interfaces."""
    if not text.startswith('["'):  # never nested, never a number: no deep or huge JSON is decoded
        raise ValueError("expected a JSON list holding one string")
    value = json.loads(text)
    if not isinstance(value, list) or len(value) != 1 or not isinstance(value[0], str):
        raise ValueError("expected a JSON list holding one string")
    mac, *cidrs = value[0].split()
    if not cidrs:
        raise ValueError("the address names no IP")
    bare = next((c for c in cidrs if "/" not in c), None)
    if bare is not None:
        raise ValueError(f"{bare} has no prefix length; `ovn-ic-sbctl show` lists every address as IP/LEN")
    return mac, tuple(ip_interface(c) for c in cidrs)


def parse(text: str, name: str = "<ovn-ic-sbctl show>") -> IcSbShow:
    zones: list[str] = []
    zone_lines: dict[str, int] = {}
    gateways: list[_GatewayDraft] = []
    ports: list[_PortDraft] = []
    zone: str | None = None
    gateway: _GatewayDraft | None = None
    block: str | None = None  # "port", "type" or None: what indent-12 lines belong to
    port: _PortDraft | None = None

    def fail(lineno: int, message: str) -> ShowParseError:
        return ShowParseError(name, lineno, message)

    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip():
            continue
        if "\t" in line:
            raise fail(lineno, "tab in indentation; expected the output of `ovn-ic-sbctl show`")
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        if indent == 0:
            keyword, _, value = body.partition(" ")
            if keyword != "availability-zone" or not value:
                raise fail(lineno, f"expected `availability-zone NAME`, found {body!r}; "
                                   "pass the output of `ovn-ic-sbctl show`")
            if value in zone_lines:
                raise fail(lineno, f"availability zone {value} is listed twice (first at line {zone_lines[value]}); "
                                   "`ovn-ic-sbctl show` lists each once: pass a single capture")
            zone_lines[value] = lineno
            zone, gateway, port, block = value, None, None, None
            zones.append(zone)
        elif zone is None:
            raise fail(lineno, "indented line before the first `availability-zone`")
        elif indent == INDENT:
            gateway, port, block = None, None, None
            keyword, _, value = body.partition(" ")
            if keyword == "gateway" and value:
                gateway = _GatewayDraft(zone, value)
                gateways.append(gateway)
        elif indent == 2 * INDENT:
            port, block = None, None
            if gateway is None:
                continue  # an AZ-level detail of a newer OVN
            if body.startswith("port ") and body[5:].strip():
                port = _PortDraft(zone, gateway.chassis, body[5:].strip(), lineno)
                ports.append(port)
                block = "port"
            elif body.startswith("hostname:"):
                gateway.hostname = body.partition(":")[2].strip()
            elif body.startswith("type:"):
                gateway.encaps.append((body.partition(":")[2].strip(), ""))
                block = "type"
        elif indent == 3 * INDENT:
            key, _, value = body.partition(":")
            value = value.strip()
            if block == "port" and port is not None:
                if key == "transit switch":
                    port.transit_switch = value
                elif key == "address":
                    port.address_line = lineno
                    try:
                        port.address = parse_address(value)
                    except ValueError as exc:
                        shown = repr(value[:40]) + (f" ({len(value)} characters)" if len(value) > 40 else "")
                        raise fail(lineno, f"port {port.name}: unreadable address {shown}: {exc}") from None
            elif block == "type" and gateway is not None and key == "ip":
                encap_type, _ = gateway.encaps[-1]
                gateway.encaps[-1] = (encap_type, value)
        elif indent % INDENT:
            raise fail(lineno, f"indentation of {indent} spaces is not a multiple of {INDENT}")

    done: list[TransitPort] = []
    seen: dict[tuple[str, str], TransitPort] = {}
    for p in ports:
        if p.transit_switch is None or p.address is None:
            raise fail(p.line, f"port {p.name} has no `transit switch:` or no `address:` line")
        mac, addresses = p.address
        entry = TransitPort(p.zone, p.gateway, p.name, p.transit_switch, mac, addresses, p.line, p.address_line)
        first = seen.setdefault((entry.transit_switch, entry.name), entry)
        if first is entry:
            done.append(entry)
        elif (first.zone, first.mac, first.addresses) != (entry.zone, entry.mac, entry.addresses):
            raise fail(entry.line, f"port {entry.name} on transit switch {entry.transit_switch} is listed twice "
                                  f"(first at line {first.line}) with another zone or address "
                                  f"({first.zone}: {_listed(first)}; here {entry.zone}: {_listed(entry)}); "
                                  "`ovn-ic-sbctl show` lists each port once: pass a single capture")
    return IcSbShow(
        zones=tuple(zones),
        gateways=tuple(Gateway(g.zone, g.chassis, g.hostname, tuple(g.encaps)) for g in gateways),
        ports=tuple(done),
        name=name,
    )


def _listed(port: TransitPort) -> str:
    return " ".join([port.mac, *map(str, port.addresses)])


def read_show(show: Path | None, stdin: TextIO) -> tuple[str, str]:
    """The text of an `ovn-ic-sbctl show` capture (a file, or stdin for None or `-`), and its name."""
    name = "<stdin>" if show is None or str(show) == "-" else str(show)
    try:
        if show is None or str(show) == "-":
            buffer = getattr(stdin, "buffer", None)
            if buffer is None:  # a text stream without bytes beneath (tests, embedding)
                return stdin.read(), name
            data = buffer.read()
        else:
            data = show.read_bytes()
    except OSError as exc:
        raise FabricgenError(f"cannot read {show}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8")
        line = before.count("\n") + 1
        column = len(before) - before.rfind("\n")
        raise FabricgenError(f"{name}:{line}:{column}: byte 0x{data[exc.start]:02x} is not UTF-8; "
                             "`ovn-ic-sbctl show` prints UTF-8: pass its output as it printed it") from None
