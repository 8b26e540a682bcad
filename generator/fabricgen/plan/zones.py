"""The plan: everything the renderers need, derived once from the validated model.

Renderers read the plan, never the raw model defaults, so a derived value
(a gateway address, a provider string, the route list) has one definition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network

from fabricgen.model import Fabric
from fabricgen.model.interconnect import Interconnection
from fabricgen.model.names import DEFAULT_VPC
from fabricgen.model.tenancy import Peering, TenantSubnet, Vpc
from fabricgen.model.zone import Zone
from fabricgen.plan.joins import DeploymentJoin, build_joins
from fabricgen.plan.policy import PolicyPlan, build_policy
from fabricgen.plan.routes import Route, destinations, routes_from
from fabricgen.source.provenance import printable

# The priority of `ovn-cluster`'s policy routes that let each other zone's backbone past Kube-OVN's
# own policies (its node and subnet policies are 31000 and below): a route policy, not an ACL.
ROUTE_ALLOW_PRIORITY = 31000


def provider(name: str, namespace: str) -> str:
    """Kube-OVN derives the provider of an attachment as `<nad>.<namespace>.ovn`."""
    return f"{name}.{namespace}.ovn"


def first_host(cidr: IPv4Network) -> IPv4Address:
    return cidr.network_address + 1


@dataclass(frozen=True)
class PeeringSide:
    """One side of a tenant VPC peering as Kube-OVN wants it on that VPC."""

    remote_vpc: str
    local_connect_ip: str  # with prefix length, e.g. 169.254.0.1/30
    remote_ip: IPv4Address
    remote_cidrs: tuple[IPv4Network, ...]


@dataclass(frozen=True)
class ZonePlan:
    zone: Zone
    backbone_subnet: str
    backbone_gateway: IPv4Address
    backbone_provider: str
    routes: tuple[Route, ...]
    hosts_ic_database: bool
    peerings: dict[str, tuple[PeeringSide, ...]]

    @property
    def name(self) -> str:
        return self.zone.name

    @property
    def uses_nat_gateways(self) -> bool:
        """A tenant VPC of the zone has a NAT gateway (Kube-OVN's NAT gateway feature must be on)."""
        return any(vpc.nat_gateway is not None for vpc in self.zone.vpcs)


@dataclass(frozen=True)
class Plan:
    fabric: Fabric
    source_name: str  # the fabric as generated files name it (fabricgen.source.provenance), printable
    zones: tuple[ZonePlan, ...]
    joins: tuple[DeploymentJoin, ...] = ()  # OVN deployments joined to the interconnection
    policy: PolicyPlan = field(default_factory=PolicyPlan)  # who may talk to whom, resolved

    @property
    def site(self) -> str:
        return self.fabric.metadata.name

    @property
    def interconnection(self) -> Interconnection:
        """The interconnection; validation guarantees it whenever there are zones."""
        if self.fabric.interconnection is None:
            raise ValueError("the fabric has no interconnection section")
        return self.fabric.interconnection


def backbone_subnet_name(zone: Zone) -> str:
    """Name of the zone's backbone Subnet object."""
    return zone.backbone.subnet_name or f"backbone-{zone.name}"


def tenant_network(subnet: TenantSubnet) -> tuple[str, str, str | None]:
    """NAD name, namespace and cluster network (None: the zone's) of a tenant subnet."""
    if subnet.network is None:
        return subnet.name, "default", None
    return subnet.network.name, subnet.network.namespace, subnet.network.cluster_network


def _peering_sides(zone: Zone) -> dict[str, tuple[PeeringSide, ...]]:
    vpcs: dict[str, Vpc] = {vpc.name: vpc for vpc in zone.vpcs}
    sides: dict[str, list[PeeringSide]] = {}
    for peering in zone.peerings:
        _add_peering(peering, vpcs, sides)
    return {name: tuple(items) for name, items in sides.items()}


def _add_peering(peering: Peering, vpcs: dict[str, Vpc], sides: dict[str, list[PeeringSide]]) -> None:
    a, b = peering.vpcs
    ip_a, ip_b = peering.connect_cidr.network_address + 1, peering.connect_cidr.network_address + 2
    prefix = peering.connect_cidr.prefixlen
    for local, remote, local_ip, remote_ip in ((a, b, ip_a, ip_b), (b, a, ip_b, ip_a)):
        remote_cidrs = tuple(s.cidr for s in vpcs[remote].subnets) if remote in vpcs else ()
        sides.setdefault(local, []).append(
            PeeringSide(remote, f"{local_ip}/{prefix}", remote_ip, remote_cidrs)
        )


__all__ = [
    "DEFAULT_VPC",
    "ROUTE_ALLOW_PRIORITY",
    "DeploymentJoin",
    "PeeringSide",
    "Plan",
    "Route",
    "ZonePlan",
    "backbone_subnet_name",
    "build_plan",
    "first_host",
    "provider",
    "tenant_network",
]


def build_plan(fabric: Fabric, source_name: str) -> Plan:
    """Derive the plan. The fabric must have passed validation."""
    targets = destinations(fabric)
    ic = fabric.interconnection
    db_zone = ic.database.zone if ic is not None else None
    plans = []
    for zone in fabric.zones:
        routes: tuple[Route, ...] = ()
        if ic is not None and not ic.auto_route:
            routes = routes_from(zone.name, targets)
        net = zone.backbone.network
        plans.append(
            ZonePlan(
                zone=zone,
                backbone_subnet=backbone_subnet_name(zone),
                backbone_gateway=zone.backbone.gateway or first_host(zone.backbone.cidr),
                backbone_provider=provider(net.name, net.namespace),
                routes=routes,
                hosts_ic_database=db_zone == zone.name,
                peerings=_peering_sides(zone),
            )
        )
    return Plan(fabric=fabric, source_name=printable(source_name), zones=tuple(plans),
                joins=build_joins(fabric, targets), policy=build_policy(fabric))
