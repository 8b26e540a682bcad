"""Explicit routes between OVN-IC availability zones (`autoRoute: false`).

Every AZ of the fabric is a destination: a zone with its backbone, an interconnected
OVN deployment with its `advertise` CIDRs, each reached through that AZ's address on
the transit switch. Order is the fabric's: zones first, then deployments, each AZ's
CIDRs as written, so the output is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network

from fabricgen.model import Fabric


@dataclass(frozen=True)
class Route:
    """A route to a remote AZ's CIDR (a zone's backbone or a deployment's advertised
    range) through that AZ's transit address."""

    cidr: IPv4Network
    next_hop: IPv4Address
    via_zone: str  # the remote AZ's name


@dataclass(frozen=True)
class Destination:
    """One availability zone as the others route to it."""

    az: str
    cidrs: tuple[IPv4Network, ...]
    transit_address: IPv4Address | None  # None until a Kube-OVN zone has joined


def destinations(fabric: Fabric) -> tuple[Destination, ...]:
    out = [Destination(z.name, (z.backbone.cidr,), z.transit_address) for z in fabric.zones]
    for deployment in fabric.ovn_deployments:
        ic = deployment.interconnect
        if ic is not None:
            out.append(Destination(ic.az(deployment.name), tuple(ic.advertise), ic.transit_address))
    return tuple(out)


def routes_from(az: str, targets: tuple[Destination, ...]) -> tuple[Route, ...]:
    """Routes from AZ `az` to every other AZ with a known transit address."""
    return tuple(
        Route(cidr, hop, other.az)
        for other in targets
        if other.az != az and (hop := other.transit_address) is not None
        for cidr in other.cidrs
    )
