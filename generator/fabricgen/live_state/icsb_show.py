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
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from ipaddress import IPv4Interface, IPv6Interface, ip_interface

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

    def ports_on(self, transit_switch: str) -> dict[str, TransitPort]:
        """Each AZ's port on one transit switch, by AZ name."""
        return {p.zone: p for p in self.ports if p.transit_switch == transit_switch}


@dataclass
class _PortDraft:
    zone: str
    gateway: str
    name: str
    line: int
    transit_switch: str | None = None
    address: tuple[str, tuple[IPv4Interface | IPv6Interface, ...]] | None = None


@dataclass
class _GatewayDraft:
    zone: str
    chassis: str
    hostname: str = ""
    encaps: list[tuple[str, str]] = field(default_factory=list)


def parse_address(text: str) -> tuple[str, tuple[IPv4Interface | IPv6Interface, ...]]:
    """`["MAC IP/LEN ..."]` (a JSON list of one string) to the MAC and the interfaces."""
    value = json.loads(text)
    if not isinstance(value, list) or len(value) != 1 or not isinstance(value[0], str):
        raise ValueError("expected a JSON list holding one string")
    mac, *cidrs = value[0].split()
    if not cidrs:
        raise ValueError("the address names no IP")
    return mac, tuple(ip_interface(c) for c in cidrs)


def parse(text: str, name: str = "<ovn-ic-sbctl show>") -> IcSbShow:
    zones: list[str] = []
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
                    try:
                        port.address = parse_address(value)
                    except ValueError as exc:
                        raise fail(lineno, f"port {port.name}: unreadable address {value!r}: {exc}") from None
            elif block == "type" and gateway is not None and key == "ip":
                encap_type, _ = gateway.encaps[-1]
                gateway.encaps[-1] = (encap_type, value)
        elif indent % INDENT:
            raise fail(lineno, f"indentation of {indent} spaces is not a multiple of {INDENT}")

    done: list[TransitPort] = []
    for p in ports:
        if p.transit_switch is None or p.address is None:
            raise fail(p.line, f"port {p.name} has no `transit switch:` or no `address:` line")
        mac, addresses = p.address
        done.append(TransitPort(p.zone, p.gateway, p.name, p.transit_switch, mac, addresses, p.line))
    return IcSbShow(
        zones=tuple(zones),
        gateways=tuple(Gateway(g.zone, g.chassis, g.hostname, tuple(g.encaps)) for g in gateways),
        ports=tuple(done),
    )
