"""Rules on tenant VPCs, their subnets, overlay networks and peerings."""

from __future__ import annotations

from collections.abc import Iterator

from fabricgen.diagnostics import Finding, Path
from fabricgen.model import Fabric
from fabricgen.model.zone import Zone
from fabricgen.plan.zones import DEFAULT_VPC, backbone_subnet_name, tenant_network
from fabricgen.validation.network_index import NetworkIndex
from fabricgen.validation.registry import rule


def _networks(zone: Zone, i: int) -> Iterator[tuple[Path, str, str, str | None]]:
    """Every overlay network of a zone: (path to its name, name, namespace, cluster network)."""
    net = zone.backbone.network
    yield ("zones", i, "backbone", "network", "name"), net.name, net.namespace, net.cluster_network
    for v, vpc in enumerate(zone.vpcs):
        for s, sub in enumerate(vpc.subnets):
            name, ns, cluster = tenant_network(sub)
            path: Path = ("zones", i, "vpcs", v, "subnets", s)
            path = (*path, "network", "name") if sub.network else (*path, "name")
            yield path, name, ns, cluster


@rule("FG401", "tenant-interconnect", "A tenant VPC asks for interconnection; only ovn-cluster joins OVN-IC.")
def tenant_interconnect(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        for v, vpc in enumerate(zone.vpcs):
            if vpc.interconnect:
                yield Finding("FG401", ("zones", i, "vpcs", v, "interconnect"),
                              "Kube-OVN attaches only the default VPC ovn-cluster to the transit switch; "
                              "tenant VPCs stay local; put cross-zone workloads on the backbone and "
                              "set interconnect: false")


@rule("FG402", "peering-default-vpc", "A peering names the default VPC, which cannot peer with custom VPCs.")
def peering_default(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        for p, peering in enumerate(zone.peerings):
            for k, name in enumerate(peering.vpcs):
                if name == DEFAULT_VPC:
                    yield Finding("FG402", ("zones", i, "peerings", p, "vpcs", k),
                                  "custom VPCs cannot peer with the default VPC ovn-cluster; attach the "
                                  "workload to the backbone instead, or peer two tenant VPCs")


@rule("FG403", "overlay-cluster-network",
      "An overlay network names a cluster network other than its zone's overlayClusterNetwork.")
def overlay_cluster(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        if zone.platform != "harvester":
            continue
        for path, name, _ns, cluster in _networks(zone, i):
            if cluster is not None and cluster != zone.overlay_cluster_network:
                yield Finding("FG403", (*path[:-1], "clusterNetwork"),
                              f"overlay network {name!r} is on cluster network {cluster!r}, but SUSE "
                              "Virtualization labels every Kube-OVN NAD of the zone with the cluster network "
                              f"that carries Kube-OVN's tunnel, here {zone.overlay_cluster_network!r} "
                              "(overlayClusterNetwork); leave clusterNetwork out or set overlayClusterNetwork")


@rule("FG404", "network-name-dots", "An overlay network name contains a dot; Kube-OVN providers are <nad>.<ns>.ovn.")
def network_dots(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        for path, name, ns, _cluster in _networks(zone, i):
            if "." in name:
                yield Finding("FG404", path,
                              f"network name {name!r} contains a dot: the provider {name}.{ns}.ovn would "
                              "not have three fields and Kube-OVN would not treat it as OVN; use '-'")


@rule("FG405", "tenant-subnet-overlap", "Subnets of one VPC, or of two peered VPCs, overlap.")
def tenant_overlap(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        index = {vpc.name: v for v, vpc in enumerate(zone.vpcs)}
        cidrs = [NetworkIndex([sub.cidr for sub in vpc.subnets]) for vpc in zone.vpcs]
        for v, vpc in enumerate(zone.vpcs):
            for s, t in cidrs[v].overlapping_earlier():
                sub, other = vpc.subnets[s], vpc.subnets[t]
                yield Finding("FG405", ("zones", i, "vpcs", v, "subnets", s, "cidr"),
                              f"{sub.cidr} overlaps {other.name!r} ({other.cidr}) "
                              f"in the same VPC {vpc.name!r}; use disjoint ranges")
        for p, peering in enumerate(zone.peerings):
            a, b = peering.vpcs
            if a == b or a not in index or b not in index:
                continue  # FG406 reports a self-peering or an unknown VPC
            for sa in zone.vpcs[index[a]].subnets:
                for k in cidrs[index[b]].overlapping(sa.cidr):
                    sb = zone.vpcs[index[b]].subnets[k]
                    if sa.cidr.overlaps(sb.cidr):
                        yield Finding("FG405", ("zones", i, "peerings", p, "vpcs"),
                                      f"peered VPCs overlap: {a}/{sa.name} {sa.cidr} and {b}/{sb.name} "
                                      f"{sb.cidr}; routes between them would be ambiguous")
        yield from _peers_overlap(i, zone, index)


def _peers_overlap(i: int, zone: Zone, index: dict[str, int]) -> Iterator[Finding]:
    """Two VPCs peered with one third whose subnets overlap: the third's routes to the range go two
    ways (Kube-OVN adds one static route per peering, and OVN takes both as ECMP), so its replies
    reach either VPC."""
    peered: dict[str, list[tuple[int, str]]] = {}
    for p, peering in enumerate(zone.peerings):
        a, b = peering.vpcs
        if a != b and a in index and b in index:
            peered.setdefault(a, []).append((p, b))
            peered.setdefault(b, []).append((p, a))
    for hub, peers in peered.items():
        held = [(p, peer, sub) for p, peer in peers for sub in zone.vpcs[index[peer]].subnets]
        named: set[tuple[str, str]] = set()
        for s, t in NetworkIndex([sub.cidr for _p, _peer, sub in held]).overlapping_earlier():
            (p, peer, x), (_q, earlier, y) = held[s], held[t]
            if peer == earlier or (earlier, peer) in named:
                continue
            named.add((earlier, peer))
            yield Finding("FG405", ("zones", i, "peerings", p, "vpcs"),
                          f"VPC {hub} peers with {earlier} and {peer}, whose subnets overlap ({earlier}/{y.name} "
                          f"{y.cidr}, {peer}/{x.name} {x.cidr}): {hub}'s routes to the range would go both ways, "
                          "and replies reach either VPC; use disjoint ranges")


@rule("FG406", "peering-unknown", "A peering names a VPC the zone does not declare, or the same VPC twice.")
def peering_unknown(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        names = {vpc.name for vpc in zone.vpcs}
        for p, peering in enumerate(zone.peerings):
            if peering.vpcs[0] == peering.vpcs[1]:
                yield Finding("FG406", ("zones", i, "peerings", p, "vpcs"),
                              "a VPC cannot peer with itself; name two different VPCs")
            for k, name in enumerate(peering.vpcs):
                if name not in names and name != DEFAULT_VPC:
                    yield Finding("FG406", ("zones", i, "peerings", p, "vpcs", k),
                                  f"VPC {name!r} is not declared in zone {zone.name!r}; declare it under vpcs")
            if peering.connect_cidr.num_addresses < 4:
                yield Finding("FG406", ("zones", i, "peerings", p, "connectCIDR"),
                              f"{peering.connect_cidr} is too small; use a /30 (connect IPs .1 and .2)")


@rule("FG407", "duplicate-network", "Two subnets of a zone use the same overlay network (one Subnet per NAD).")
def duplicate_network(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        seen: set[tuple[str, str]] = set()
        for path, name, ns, _cluster in _networks(zone, i):
            if (ns, name) in seen:
                yield Finding("FG407", path,
                              f"network {ns}/{name} is already used by another subnet; Kube-OVN maps one "
                              "NAD to one Subnet; give this subnet its own network")
            seen.add((ns, name))


@rule("FG408", "duplicate-subnet", "Two Subnets of a zone share a name (Subnets are cluster-scoped).")
def duplicate_subnet(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        seen = {backbone_subnet_name(zone)}
        for v, vpc in enumerate(zone.vpcs):
            for s, sub in enumerate(vpc.subnets):
                if sub.name in seen:
                    yield Finding("FG408", ("zones", i, "vpcs", v, "subnets", s, "name"),
                                  f"Subnet {sub.name!r} already exists in zone {zone.name!r}; Subnet "
                                  "names are cluster-wide; rename it")
                seen.add(sub.name)


@rule("FG420", "subnet-namespace", "A tenant subnet names a namespace its VPC does not list; Kube-OVN refuses it.")
def subnet_namespace(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        for v, vpc in enumerate(zone.vpcs):
            for s, sub in enumerate(vpc.subnets):
                for n, namespace in enumerate(sub.namespaces):
                    if namespace not in vpc.namespaces:
                        yield Finding("FG420", ("zones", i, "vpcs", v, "subnets", s, "namespaces", n),
                                      f"namespace {namespace!r} is not one of VPC {vpc.name!r}'s namespaces, and "
                                      "Kube-OVN refuses the Subnet (\"out of range to custom vpc\"); add it to the "
                                      "VPC's namespaces or remove it here")


@rule("FG409", "vpc-name", "A tenant VPC is named ovn-cluster or repeats another VPC's name.")
def vpc_name(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        seen: set[str] = set()
        for v, vpc in enumerate(zone.vpcs):
            if vpc.name == DEFAULT_VPC:
                yield Finding("FG409", ("zones", i, "vpcs", v, "name"),
                              "ovn-cluster is the default VPC, which fabricgen manages itself; "
                              "rename the tenant VPC")
            elif vpc.name in seen:
                yield Finding("FG409", ("zones", i, "vpcs", v, "name"),
                              f"VPC {vpc.name!r} is declared twice in zone {zone.name!r}; merge them")
            seen.add(vpc.name)


# Subnets (and so logical switches) that exist in every Kube-OVN cluster under these names, from
# kube-ovn pkg/controller/config.go (--default-ls, --node-switch, --external-gateway-switch) and
# pkg/util/const.go (the external gateway's logical switch); and the VPC NAT gateways' external
# subnet, which fabricgen writes itself (render/nat_gateways.py).
RESERVED_SUBNETS = {
    "ovn-default": "Kube-OVN's default pod subnet (--default-ls)",
    "join": "Kube-OVN's join subnet between nodes and pods (--node-switch)",
    "external": "Kube-OVN's external gateway subnet (--external-gateway-switch)",
    "ovn-external": "the logical switch of Kube-OVN's external gateway",
    "ovn-vpc-external-network": "the external subnet of VPC NAT gateways, which fabricgen writes from "
                                "externalNetwork",
}


@rule("FG419", "reserved-subnet-name",
      "A tenant or backbone subnet is named like one Kube-OVN creates (ovn-default, join...) or the transit switch.")
def reserved_subnet(fabric: Fabric) -> Iterator[Finding]:
    reserved = dict(RESERVED_SUBNETS)
    if fabric.interconnection is not None:
        name = fabric.interconnection.transit_switch.name
        reserved[name] = f"the transit switch {name!r}, which ovn-ic creates as a logical switch in every zone"
    for i, zone in enumerate(fabric.zones):
        named: list[tuple[Path, str]] = []
        if zone.backbone.subnet_name is not None:
            named.append((("zones", i, "backbone", "subnetName"), zone.backbone.subnet_name))
        for v, vpc in enumerate(zone.vpcs):
            named += [(("zones", i, "vpcs", v, "subnets", s, "name"), sub.name) for s, sub in enumerate(vpc.subnets)]
        for path, name in named:
            if name in reserved:
                yield Finding("FG419", path,
                              f"{name!r} is {reserved[name]}; a Subnet of this name would overwrite it in "
                              f"zone {zone.name!r}; choose another name")
