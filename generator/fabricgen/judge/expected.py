"""What the fabric says each AZ should hold, read from the build (the rendered objects and the
plan), in the terms the live databases use.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, ip_network
from typing import Any, Literal

from fabricgen.model.names import ROUTE_POLICY
from fabricgen.pipeline import Build
from fabricgen.plan.deployments import OWNER_KEY, owner_marker
from fabricgen.plan.zones import DEFAULT_VPC

# ovn-nbctl's policy column for a Vpc route's `policy` (Kube-OVN `convertPolicy`).


@dataclass(frozen=True)
class StaticRoute:
    prefix: str  # as OVN normalises it (ip_prefix)
    nexthop: str
    policy: str  # dst-ip / src-ip
    table: str = ""
    via: str | None = None  # the AZ whose transit address is the next hop, for generated routes

    @property
    def key(self) -> tuple[str, str, str]:
        return self.table, self.policy, self.prefix


@dataclass(frozen=True)
class Policy:
    priority: int
    match: str
    action: str
    nexthop: str = ""

    @property
    def key(self) -> tuple[int, str]:
        return self.priority, self.match


@dataclass(frozen=True)
class AzIntent:
    """One AZ as the fabric wants it."""

    az: str
    kind: Literal["zone", "deployment"]
    name: str
    router: str
    router_port: str
    transit_address: IPv4Address | None
    gateways: tuple[str, ...]  # node names (zones) or chassis names (deployments), in priority order
    routes: tuple[StaticRoute, ...]
    policies: tuple[Policy, ...]
    advertised: tuple[IPv4Network, ...]  # what the other AZs reach here
    auto_route: bool
    owner: tuple[str, str] | None = None  # (external_ids key, value) on the routes a script creates

    @property
    def subject(self) -> str:
        return f"{self.kind} {self.name}"


def prefix(text: str) -> str:
    """A prefix as OVN stores it: a network keeps its length; a host address has none (a /32).
    Text that is no network (a live row's `""` or `garbage`) stays as it is, matching nothing
    fabricgen renders."""
    try:
        network = ip_network(text, strict=False)
    except ValueError:
        return text
    return str(network.network_address) if network.prefixlen == network.max_prefixlen else str(network)


def intents(build: Build) -> list[AzIntent]:
    plan = build.plan
    fabric = plan.fabric
    ic = fabric.interconnection
    if ic is None:
        return []
    ts = ic.transit_switch.name
    via = {str(z.zone.transit_address): z.name for z in plan.zones if z.zone.transit_address}
    via.update({str(j.network.ip): j.az for j in plan.joins})
    out = []
    for zone in plan.zones:
        vpc = next((o for o in build.objects_within(zone.name)
                    if o.get("kind") == "Vpc" and o.get("metadata", {}).get("name") == DEFAULT_VPC), {})
        spec: dict[str, Any] = vpc.get("spec", {}) if vpc else {}
        routes = tuple(StaticRoute(prefix(r["cidr"]), str(r["nextHopIP"]),
                                   ROUTE_POLICY.get(r.get("policy", "policyDst"), "dst-ip"),
                                   str(r.get("routeTable", "")), via.get(str(r["nextHopIP"])))
                       for r in spec.get("staticRoutes", []))
        policies = tuple(Policy(int(p["priority"]), str(p["match"]), str(p["action"]), str(p.get("nextHopIP", "")))
                         for p in spec.get("policyRoutes", []))
        out.append(AzIntent(zone.name, "zone", zone.name, DEFAULT_VPC, f"{zone.name}-{ts}", zone.zone.transit_address,
                            tuple(zone.zone.gateway_nodes), routes, policies, (zone.zone.backbone.cidr,),
                            ic.auto_route))
    for join in plan.joins:
        routes = tuple(StaticRoute(prefix(str(r.cidr)), str(r.next_hop), "dst-ip", "", r.via_zone)
                       for r in join.routes)
        advertise = join.deployment.interconnect.advertise if join.deployment.interconnect else []
        out.append(AzIntent(join.az, "deployment", join.deployment.name, join.router, join.router_port,
                            join.network.ip, tuple(name for name, _priority in join.gateway_chassis), routes, (),
                            tuple(advertise), join.auto_route,
                            (OWNER_KEY, owner_marker("ic", join.deployment))))
    return out
