"""Derived values of OVN deployments joined to the interconnection (`interconnect:`).

The router and switch port names follow Kube-OVN's (`<az>-<ts>` on the router,
`<ts>-<az>` of type router on the transit switch), so `ovn-ic-sbctl show` reads the
same for every AZ. The MAC is derived from the AZ name: stable across renders and
machines, locally administered, never random.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from ipaddress import IPv4Interface

from fabricgen.model import Fabric
from fabricgen.model.deployment_interconnect import GATEWAY_PRIORITY_TOP
from fabricgen.model.interconnect import Database, Interconnection
from fabricgen.model.ovn import OvnDeployment
from fabricgen.plan.routes import Destination, Route, routes_from

LOCALLY_ADMINISTERED = 0x0E  # unicast, locally administered; Kube-OVN's random MACs start 00:00:00


def transit_mac(az: str) -> str:
    """The router port MAC of AZ `az` on the transit switch."""
    digest = hashlib.sha256(b"fabricgen/ovn-ic/" + az.encode()).digest()
    return ":".join(f"{b:02x}" for b in (LOCALLY_ADMINISTERED, *digest[:5]))


def ic_remote(db: Database, port: int) -> str:
    """`tcp:HOST:PORT,...` over what the zones reach the IC database at (`Database.remote`)."""
    return db.remote(port)


@dataclass(frozen=True)
class DeploymentJoin:
    """One interconnected deployment, as its controller script and ovn-ic see it."""

    deployment: OvnDeployment
    az: str
    router: str
    create_router: bool
    transit_switch: str
    router_port: str  # <az>-<ts>
    switch_port: str  # <ts>-<az>
    mac: str
    network: IPv4Interface  # transit address with the transit subnet's prefix
    gateway_chassis: tuple[tuple[str, int], ...]  # chassis name (system-id), priority
    routes: tuple[Route, ...]  # empty with autoRoute
    auto_route: bool
    ic_nb_remote: str
    ic_sb_remote: str


def build_joins(fabric: Fabric, targets: tuple[Destination, ...]) -> tuple[DeploymentJoin, ...]:
    """Every interconnected deployment; the fabric must have passed validation."""
    ic: Interconnection | None = fabric.interconnection
    out = []
    for deployment in fabric.ovn_deployments:
        spec = deployment.interconnect
        if spec is None:
            continue
        if ic is None:
            raise ValueError(f"deployment {deployment.name} interconnects without an interconnection section")
        az, ts = spec.az(deployment.name), ic.transit_switch
        chassis = []
        for i, name in enumerate(spec.gateway_chassis):
            host = deployment.host(name)
            # 100, 99, 98, ... in list order, as Kube-OVN numbers gw-nodes
            chassis.append((host.chassis_name if host is not None else name, GATEWAY_PRIORITY_TOP - i))
        out.append(DeploymentJoin(
            deployment=deployment,
            az=az,
            router=spec.router,
            create_router=spec.create_router,
            transit_switch=ts.name,
            router_port=f"{az}-{ts.name}",
            switch_port=f"{ts.name}-{az}",
            mac=transit_mac(az),
            network=IPv4Interface(f"{spec.transit_address}/{ts.subnet.prefixlen}"),
            gateway_chassis=tuple(chassis),
            routes=() if ic.auto_route else routes_from(az, targets),
            auto_route=ic.auto_route,
            ic_nb_remote=ic_remote(ic.database, ic.database.nb_port),
            ic_sb_remote=ic_remote(ic.database, ic.database.sb_port),
        ))
    return tuple(out)
