"""Rules on VPC NAT gateways, their elastic IPs and NAT rules (FG410 onwards, tenant VPCs)."""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import IPv4Address

from fabricgen.diagnostics import Finding, Path
from fabricgen.model import Fabric
from fabricgen.model.nat_gateway import NatGateway
from fabricgen.model.tenancy import TenantSubnet, Vpc
from fabricgen.model.zone import Zone
from fabricgen.plan.zones import first_host
from fabricgen.validation.registry import rule
from fabricgen.validation.rules.addressing import reserved


def _gateways(zone: Zone, i: int) -> Iterator[tuple[Path, Vpc, NatGateway]]:
    """Every NAT gateway of a zone: (path to it, its VPC, the gateway)."""
    for v, vpc in enumerate(zone.vpcs):
        if vpc.nat_gateway is not None:
            yield ("zones", i, "vpcs", v, "natGateway"), vpc, vpc.nat_gateway


def _subnet_of(vpc: Vpc, address: IPv4Address) -> TenantSubnet | None:
    return next((s for s in vpc.subnets if address in s.cidr), None)


@rule("FG410", "nat-external-network", "A VPC has a NAT gateway but its zone declares no externalNetwork.")
def external_network(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        if zone.external_network is not None:
            continue
        for path, _vpc, gw in _gateways(zone, i):
            yield Finding("FG410", path,
                          f"NAT gateway {gw.name!r} needs the zone's external network; declare "
                          f"zones[{i}].externalNetwork (the dedicated NIC, its CIDR and gateway)")


@rule("FG411", "nat-lan-ip", "A NAT gateway's subnet is not in its VPC, or its lanIp is outside that subnet "
                             "or is the subnet's gateway, network or broadcast address.")
def lan_ip(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        for path, vpc, gw in _gateways(zone, i):
            sub = next((s for s in vpc.subnets if s.name == gw.subnet), None)
            if sub is None:
                names = ", ".join(s.name for s in vpc.subnets) or "none"
                yield Finding("FG411", (*path, "subnet"),
                              f"subnet {gw.subnet!r} is not a subnet of VPC {vpc.name!r} (its subnets: {names}); "
                              "put the gateway on one of them")
                continue
            gateway = sub.gateway or first_host(sub.cidr)
            if gw.lan_ip not in sub.cidr:
                problem = f"is outside subnet {sub.name!r} ({sub.cidr})"
            elif gw.lan_ip == gateway:
                problem = f"is the gateway of subnet {sub.name!r}"
            elif (which := reserved(gw.lan_ip, sub.cidr)) is not None:
                problem = f"is the {which} address of {sub.cidr}"
            else:
                continue
            yield Finding("FG411", (*path, "lanIp"),
                          f"lanIp {gw.lan_ip} {problem}; pick a free host address of the subnet, "
                          "e.g. its last one")


@rule("FG412", "eip-address", "An elastic IP's address is outside the external network, reserved there, "
                              "excluded, or taken by another elastic IP.")
def eip_address(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        ext = zone.external_network
        if ext is None:
            continue  # FG410
        excluded = [tuple(IPv4Address(p) for p in (r.split("..")[0], r.split("..")[-1]))
                    for r in ext.exclude_ips]
        seen: dict[IPv4Address, str] = {}
        for path, _vpc, gw in _gateways(zone, i):
            for e, eip in enumerate(gw.eips):
                address = eip.address
                if address is None:
                    continue
                if address not in ext.cidr:
                    problem = f"is outside the external network {ext.cidr}"
                elif address == ext.gateway:
                    problem = "is the external network's gateway"
                elif (which := reserved(address, ext.cidr)) is not None:
                    problem = f"is the {which} address of {ext.cidr}"
                elif any(first <= address <= last for first, last in excluded):
                    problem = "is in the external network's excludeIps"
                elif address in seen:
                    problem = f"is already elastic IP {seen[address]!r}"
                else:
                    seen[address] = eip.name
                    continue
                yield Finding("FG412", (*path, "eips", e, "address"),
                              f"elastic IP {eip.name!r}: {address} {problem}; use a free address of "
                              f"{ext.cidr}, or omit address and let Kube-OVN pick one")


@rule("FG413", "nat-eip-unknown", "A SNAT or DNAT rule names an elastic IP its gateway does not declare.")
def eip_unknown(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        for path, _vpc, gw in _gateways(zone, i):
            names = {eip.name for eip in gw.eips}
            rules = [("snat", k, r.eip) for k, r in enumerate(gw.snat)]
            rules += [("dnat", k, r.eip) for k, r in enumerate(gw.dnat)]
            for kind, k, name in rules:
                if name not in names:
                    yield Finding("FG413", (*path, kind, k, "eip"),
                                  f"elastic IP {name!r} is not declared by NAT gateway {gw.name!r}; "
                                  "add it under eips")


@rule("FG414", "snat-internal-cidr", "A SNAT rule's internal CIDR is not inside one of its VPC's subnets.")
def snat_cidr(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        for path, vpc, gw in _gateways(zone, i):
            for k, snat in enumerate(gw.snat):
                if not any(snat.internal_cidr.subnet_of(s.cidr) for s in vpc.subnets):
                    yield Finding("FG414", (*path, "snat", k, "internalCIDR"),
                                  f"{snat.internal_cidr} is not inside a subnet of VPC {vpc.name!r}; the "
                                  "gateway only sees the VPC's traffic; use a subnet's CIDR or part of it")


@rule("FG415", "dnat-internal-ip", "A DNAT rule's internal IP is not inside one of its VPC's subnets.")
def dnat_ip(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        for path, vpc, gw in _gateways(zone, i):
            for k, dnat in enumerate(gw.dnat):
                if _subnet_of(vpc, dnat.internal_ip) is None:
                    yield Finding("FG415", (*path, "dnat", k, "internalIp"),
                                  f"{dnat.internal_ip} is not inside a subnet of VPC {vpc.name!r}; "
                                  "point the rule at an address of the VPC")


@rule("FG416", "dnat-duplicate-port", "Two DNAT rules publish the same elastic IP, protocol and port.")
def dnat_duplicate(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        for path, _vpc, gw in _gateways(zone, i):
            seen: dict[tuple[str, str, int], str] = {}
            for k, dnat in enumerate(gw.dnat):
                key = (dnat.eip, dnat.protocol, dnat.external_port)
                if key in seen:
                    yield Finding("FG416", (*path, "dnat", k, "externalPort"),
                                  f"{dnat.protocol}/{dnat.external_port} on elastic IP {dnat.eip!r} is "
                                  f"already published by DNAT rule {seen[key]!r}; use another port or EIP")
                else:
                    seen[key] = dnat.name


@rule("FG417", "nat-external-overlap", "The external network overlaps the backbone or a subnet of a VPC "
                                       "with a NAT gateway.")
def external_overlap(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        ext = zone.external_network
        if ext is None:
            continue
        ranges = [("the backbone", zone.backbone.cidr)]
        ranges += [(f"{vpc.name}/{s.name}", s.cidr) for _p, vpc, _gw in _gateways(zone, i) for s in vpc.subnets]
        for what, cidr in ranges:
            if ext.cidr.overlaps(cidr):
                yield Finding("FG417", ("zones", i, "externalNetwork", "cidr"),
                              f"external network {ext.cidr} overlaps {what} ({cidr}); the NAT gateway "
                              "could not tell the two sides apart; use disjoint ranges")


@rule("FG418", "nat-name", "Two NAT gateways, elastic IPs, SNAT or DNAT rules of a zone share a name "
                           "(all four are cluster-scoped).")
def nat_names(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        seen: dict[str, set[str]] = {"VpcNatGateway": set(), "IptablesEIP": set(),
                                     "IptablesSnatRule": set(), "IptablesDnatRule": set()}
        for path, _vpc, gw in _gateways(zone, i):
            named: list[tuple[str, Path, str]] = [("VpcNatGateway", (*path, "name"), gw.name)]
            named += [("IptablesEIP", (*path, "eips", k, "name"), x.name) for k, x in enumerate(gw.eips)]
            named += [("IptablesSnatRule", (*path, "snat", k, "name"), x.name) for k, x in enumerate(gw.snat)]
            named += [("IptablesDnatRule", (*path, "dnat", k, "name"), x.name) for k, x in enumerate(gw.dnat)]
            for kind, where, name in named:
                if name in seen[kind]:
                    yield Finding("FG418", where,
                                  f"{kind} {name!r} already exists in zone {zone.name!r}; {kind} names "
                                  "are cluster-wide; rename it")
                seen[kind].add(name)
