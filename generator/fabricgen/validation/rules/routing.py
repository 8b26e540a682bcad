"""Rules on routing: NAT on backbones, auto-route, policy priorities."""

from __future__ import annotations

import re
from collections.abc import Iterator
from ipaddress import IPv4Network

from fabricgen.diagnostics import Finding
from fabricgen.model import Fabric
from fabricgen.model.zone import Zone
from fabricgen.plan.zones import ROUTE_ALLOW_PRIORITY
from fabricgen.validation.network_index import NetworkIndex
from fabricgen.validation.registry import rule

IC_POLICY_PRIORITY = 29500
_DST_MATCH = re.compile(r"^\s*ip4\.dst\s*==\s*([0-9./]+)\s*$")


@rule("FG301", "backbone-nat", "natOutgoing on a backbone SNATs cross-zone traffic and breaks the return path.")
def backbone_nat(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        if zone.backbone.nat_outgoing:
            yield Finding("FG301", ("zones", i, "backbone", "natOutgoing"),
                          "natOutgoing: true on a backbone masquerades traffic to other zones, whose "
                          "replies then never find the way back; set natOutgoing: false")


@rule("FG302", "auto-route-explicit", "auto-route is on while the fabric also has explicit routes.")
def auto_route_explicit(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None or not fabric.interconnection.auto_route:
        return
    for i, zone in enumerate(fabric.zones):
        if zone.default_vpc.static_routes:
            yield Finding("FG302", ("zones", i, "defaultVpc", "staticRoutes"),
                          "explicit static routes with autoRoute: true: ovn-ic re-advertises them with "
                          "this zone's transit address as next hop; turn autoRoute off or drop the routes")


@rule("FG303", "auto-route-overlap", "auto-route is on while zones' pod CIDRs overlap.")
def auto_route_overlap(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None or not fabric.interconnection.auto_route:
        return
    for i, j in NetworkIndex([zone.cluster.pod_cidr for zone in fabric.zones]).overlapping_earlier():
        zone, other = fabric.zones[i], fabric.zones[j]
        yield Finding("FG303", ("zones", i, "cluster", "podCIDR"),
                      f"podCIDR {zone.cluster.pod_cidr} overlaps the podCIDR {other.cluster.pod_cidr} "
                      f"of zone {other.name!r}: with autoRoute: true both are learned as "
                      "equal-cost routes; renumber, or set autoRoute: false (explicit routes)")


@rule("FG304", "policy-29500", "A policy route uses priority 29500, which Kube-OVN deletes every 5 seconds.")
def policy_29500(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        for p, policy in enumerate(zone.default_vpc.policy_routes):
            if policy.priority == IC_POLICY_PRIORITY:
                yield Finding("FG304", ("zones", i, "defaultVpc", "policyRoutes", p, "priority"),
                              "priority 29500 is Kube-OVN's IC policy priority; ovn-ic-controller deletes "
                              "such policies without an origin every 5 s; use 31000 for allow rules")


def local_subnets(zone: Zone) -> list[IPv4Network]:
    """Subnets Kube-OVN itself installs a 31000 allow policy for on ovn-cluster."""
    return [zone.backbone.cidr, zone.cluster.pod_cidr, zone.cluster.join_cidr]


@rule("FG305", "policy-31000-local", "A 31000 policy matches a local subnet and would be shared with Kube-OVN's own.")
def policy_local(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        locals_ = local_subnets(zone)
        for p, policy in enumerate(zone.default_vpc.policy_routes):
            m = _DST_MATCH.match(policy.match)
            if policy.priority != ROUTE_ALLOW_PRIORITY or not m:
                continue
            try:
                cidr = IPv4Network(m.group(1), strict=False)
            except ValueError:
                continue
            if cidr in locals_:
                yield Finding("FG305", ("zones", i, "defaultVpc", "policyRoutes", p, "match"),
                              f"`{policy.match}` at 31000 is the policy Kube-OVN installs for its own "
                              "subnet; both would be deleted together; drop it (Kube-OVN adds it) "
                              "or use another priority")


@rule("FG306", "policy-next-hop", "A reroute policy lacks nextHopIP, or another action has one.")
def policy_next_hop(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        for p, policy in enumerate(zone.default_vpc.policy_routes):
            path = ("zones", i, "defaultVpc", "policyRoutes", p)
            if policy.action == "reroute" and policy.next_hop_ip is None:
                yield Finding("FG306", (*path, "action"), "reroute needs nextHopIP; add it")
            if policy.action != "reroute" and policy.next_hop_ip is not None:
                yield Finding("FG306", (*path, "nextHopIP"),
                              f"nextHopIP only applies to reroute; Kube-OVN clears it for {policy.action}; "
                              "remove it")


@rule("FG307", "static-route-conflict",
      "An explicit route on ovn-cluster has the same CIDR as a generated route (backbone or advertised range).")
def static_conflict(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None or fabric.interconnection.auto_route:
        return
    owners: dict[IPv4Network, str] = {}
    for deployment in reversed(fabric.ovn_deployments):  # the first owner wins, a backbone over all
        if deployment.interconnect is not None:
            name = deployment.name
            owners.update({c: f"advertised by deployment {name!r}" for c in deployment.interconnect.advertise})
    owners.update({z.backbone.cidr: f"the backbone of zone {z.name!r}" for z in reversed(fabric.zones)})
    for i, zone in enumerate(fabric.zones):
        for r, route in enumerate(zone.default_vpc.static_routes):
            owner = owners.get(route.cidr)
            if owner is not None:
                yield Finding("FG307", ("zones", i, "defaultVpc", "staticRoutes", r, "cidr"),
                              f"{route.cidr} is {owner}, which fabricgen already routes; "
                              "Kube-OVN keeps one next hop per prefix, so the two would replace each "
                              "other; remove this route")
