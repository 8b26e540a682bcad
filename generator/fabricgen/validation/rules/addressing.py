"""Rules on addresses: backbones, gateways, transit addresses, cluster ranges."""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import IPv4Address, IPv4Network

from fabricgen.diagnostics import Finding, Path, Severity
from fabricgen.model import Fabric
from fabricgen.plan.zones import first_host
from fabricgen.validation.network_index import NetworkIndex
from fabricgen.validation.registry import rule


def _cluster_ranges(fabric: Fabric) -> list[tuple[str, str, IPv4Network]]:
    out = []
    for zone in fabric.zones:
        c = zone.cluster
        out += [(zone.name, "podCIDR", c.pod_cidr), (zone.name, "joinCIDR", c.join_cidr),
                (zone.name, "serviceCIDR", c.service_cidr)]
        if c.primary_pod_cidr is not None:
            out.append((zone.name, "primaryPodCIDR", c.primary_pod_cidr))
    return out


@rule("FG201", "backbone-overlap", "Two zones' backbone CIDRs overlap; cross-zone routes would be ambiguous.")
def backbone_overlap(fabric: Fabric) -> Iterator[Finding]:
    for i, j in NetworkIndex([zone.backbone.cidr for zone in fabric.zones]).overlapping_earlier():
        zone, other = fabric.zones[i], fabric.zones[j]
        yield Finding("FG201", ("zones", i, "backbone", "cidr"),
                      f"backbone {zone.backbone.cidr} overlaps the backbone {other.backbone.cidr} "
                      f"of zone {other.name!r}; give every zone its own non-overlapping range")


@rule("FG202", "backbone-cluster-overlap", "A backbone overlaps a pod, join or service CIDR of some zone.")
def backbone_cluster_overlap(fabric: Fabric) -> Iterator[Finding]:
    ranges = _cluster_ranges(fabric)
    index = NetworkIndex([cidr for _owner, _field, cidr in ranges])
    for i, zone in enumerate(fabric.zones):
        for k in index.overlapping(zone.backbone.cidr):
            owner, field, cidr = ranges[k]
            if zone.backbone.cidr.overlaps(cidr):
                yield Finding("FG202", ("zones", i, "backbone", "cidr"),
                              f"backbone {zone.backbone.cidr} overlaps the {field} {cidr} of zone {owner!r}; "
                              "traffic for it would stay inside that cluster; pick a range outside "
                              "every zone's pod, join and service CIDRs")


@rule("FG203", "backbone-transit-overlap", "A backbone overlaps the transit switch subnet.")
def backbone_transit_overlap(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None:
        return
    transit = fabric.interconnection.transit_switch.subnet
    for i, zone in enumerate(fabric.zones):
        if zone.backbone.cidr.overlaps(transit):
            yield Finding("FG203", ("zones", i, "backbone", "cidr"),
                          f"backbone {zone.backbone.cidr} overlaps the transit subnet {transit}; "
                          "link-local ranges cannot be Kube-OVN subnets; pick another range")


def reserved(address: IPv4Address, cidr: IPv4Network) -> str | None:
    """Which reserved address of `cidr` `address` is: `network`, `broadcast`, or None."""
    if address == cidr.network_address:
        return "network"
    if address == cidr.broadcast_address:
        return "broadcast"
    return None


@rule("FG204", "gateway-outside-cidr", "A subnet's gateway is not inside its CIDR.")
def gateway_outside(fabric: Fabric) -> Iterator[Finding]:
    for path, cidr, gateway in _gateways(fabric):
        if gateway not in cidr:
            yield Finding("FG204", path, f"gateway {gateway} is outside {cidr}; "
                          f"use an address inside it, e.g. {first_host(cidr)}")


@rule("FG205", "gateway-reserved", "A subnet's gateway is its network or broadcast address.")
def gateway_reserved(fabric: Fabric) -> Iterator[Finding]:
    for path, cidr, gateway in _gateways(fabric):
        which = reserved(gateway, cidr) if cidr.num_addresses > 2 else None
        if which is not None:
            yield Finding("FG205", path, f"gateway {gateway} is the {which} address of {cidr}; "
                          f"use a host address, e.g. {first_host(cidr)}")


def _gateways(fabric: Fabric) -> Iterator[tuple[Path, IPv4Network, IPv4Address]]:
    """Every gateway set explicitly, with its path and its subnet's CIDR."""
    for i, zone in enumerate(fabric.zones):
        if zone.backbone.gateway is not None:
            yield ("zones", i, "backbone", "gateway"), zone.backbone.cidr, zone.backbone.gateway
        for v, vpc in enumerate(zone.vpcs):
            for s, sub in enumerate(vpc.subnets):
                if sub.gateway is not None:
                    yield ("zones", i, "vpcs", v, "subnets", s, "gateway"), sub.cidr, sub.gateway


@rule("FG206", "transit-outside-subnet", "A zone's transit address is outside the transit subnet.")
def transit_outside(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None:
        return
    transit = fabric.interconnection.transit_switch.subnet
    for i, zone in enumerate(fabric.zones):
        if zone.transit_address is not None and zone.transit_address not in transit:
            yield Finding("FG206", ("zones", i, "transitAddress"),
                          f"transit address {zone.transit_address} is outside the transit subnet "
                          f"{transit}; copy the zone's address from `ovn-ic-sbctl show`")


@rule("FG207", "transit-duplicate", "Two zones claim the same transit address.")
def transit_duplicate(fabric: Fabric) -> Iterator[Finding]:
    seen: dict[IPv4Address, str] = {}
    for i, zone in enumerate(fabric.zones):
        address = zone.transit_address
        if address is None:
            continue
        if address in seen:
            yield Finding("FG207", ("zones", i, "transitAddress"),
                          f"transit address {address} is also the address of zone {seen[address]!r}; each zone has its "
                          "own port on the transit switch; re-read both from `ovn-ic-sbctl show`")
        else:
            seen[address] = zone.name


@rule("FG208", "transit-kube-ovn-range",
      "A Kube-OVN zone's transit address is outside the lower half Kube-OVN allocates from.")
def transit_range(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None:
        return
    transit = fabric.interconnection.transit_switch.subnet
    half = transit.num_addresses // 2
    for i, zone in enumerate(fabric.zones):
        address = zone.transit_address
        if address is None or address not in transit:
            continue
        if int(address) - int(transit.network_address) >= half:
            low, high = transit.network_address, transit.network_address + half - 1
            yield Finding("FG208", ("zones", i, "transitAddress"),
                          f"Kube-OVN picks its transit address at random from {low}-{high}, so "
                          f"{address} cannot be the address of zone {zone.name!r}; copy the real address from "
                          "`ovn-ic-sbctl show`")


@rule("FG209", "pod-cidr-primary-cni", "Kube-OVN's pod CIDR overlaps the primary CNI's pod range.")
def pod_primary(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        c = zone.cluster
        if c.primary_pod_cidr is not None and c.pod_cidr.overlaps(c.primary_pod_cidr):
            yield Finding("FG209", ("zones", i, "cluster", "podCIDR"),
                          f"podCIDR {c.pod_cidr} overlaps the primary CNI's {c.primary_pod_cidr}; with "
                          "natOutgoing on ovn-default this masquerades cross-node traffic; renumber "
                          "Kube-OVN (add-on, then Configuration, then the subnet)",
                          Severity.ERROR)
