"""Per zone: tenant VPCs with their subnets, overlay networks and peerings.

Tenant VPCs stay local to their zone. A peering becomes `vpcPeerings` on both
VPCs (connect addresses .1 and .2 of `connectCIDR`) plus static routes to the
other VPC's subnets through the peer's connect address. A VPC with a NAT gateway gets
its default route `0.0.0.0/0` through the gateway's `lanIp` (the gateway itself is in
`nat-gateways.yaml`).
"""

from __future__ import annotations

from fabricgen.plan.zones import Plan, ZonePlan, first_host, provider, tenant_network
from fabricgen.render import metadata as md
from fabricgen.render.artifacts import Artifact, KubeObject, Manifest
from fabricgen.render.default_vpc import static_route
from fabricgen.render.overlay import nad, subnet
from fabricgen.render.policy_kubeovn import subnet_acls

DEFAULT_ROUTE = "0.0.0.0/0"


def tenant_objects(plan: Plan, zone: ZonePlan) -> list[KubeObject]:
    objects: list[KubeObject] = []
    harvester = zone.zone.platform == "harvester"
    for vpc in zone.zone.vpcs:
        spec: dict[str, object] = {}
        if vpc.namespaces:
            spec["namespaces"] = list(vpc.namespaces)
        sides = zone.peerings.get(vpc.name, ())
        if sides:
            spec["vpcPeerings"] = [
                {"remoteVpc": s.remote_vpc, "localConnectIP": s.local_connect_ip} for s in sides
            ]
        routes = [static_route(str(cidr), str(s.remote_ip)) for s in sides for cidr in s.remote_cidrs]
        if vpc.nat_gateway is not None:
            routes.append(static_route(DEFAULT_ROUTE, str(vpc.nat_gateway.lan_ip)))
        if sides or routes:  # a peering always writes the list, even empty
            spec["staticRoutes"] = routes
        objects.append(
            {
                "apiVersion": "kubeovn.io/v1",
                "kind": "Vpc",
                "metadata": md.metadata(vpc.name, None, plan.source_name),
                "spec": spec,
            }
        )
        for sub in vpc.subnets:
            net_name, net_ns, cluster_network = tenant_network(sub)
            objects.append(nad(plan, net_name, net_ns, cluster_network or zone.zone.overlay_cluster_network,
                               harvester))
            objects.append(
                subnet(
                    plan,
                    name=sub.name,
                    vpc=vpc.name,
                    nad_provider=provider(net_name, net_ns),
                    cidr=sub.cidr,
                    gateway=sub.gateway or first_host(sub.cidr),
                    dhcp=sub.dhcp,
                    nat_outgoing=sub.nat_outgoing,
                    dns_servers=[str(d) for d in sub.dns_servers],
                    namespaces=list(sub.namespaces),
                    acls=[a.model_dump(by_alias=True) for a in sub.acls] + subnet_acls(plan, zone, sub.name),
                    private=sub.private,
                    allow_subnets=[str(c) for c in sub.allow_subnets],
                    allow_ew_traffic=sub.allow_ew_traffic,
                )
            )
    return objects


def render(plan: Plan) -> list[Artifact]:
    out: list[Artifact] = []
    for zone in plan.zones:
        objects = tenant_objects(plan, zone)
        if objects:
            out.append(Manifest(zone.name, "tenant-vpcs.yaml", tuple(objects)))
    return out
