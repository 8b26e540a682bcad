"""Per chassis: the netplan file `60-fabricgen-ovn.yaml`.

NICs as `ethernets`, the OVS bridges (`openvswitch:`) with their ports, the VLAN
sub-interfaces, and for a loopback tunnel endpoint its /32 on `lo`. Only the
bridges, VLANs and `lo` carry addresses, never a bridge port. Install it as
/etc/netplan/60-fabricgen-ovn.yaml with mode 0600.
"""

from __future__ import annotations

from typing import Any

from fabricgen.model.hosts import Host
from fabricgen.plan.zones import Plan
from fabricgen.render.artifacts import Artifact, TextFile
from fabricgen.render.header import header
from fabricgen.render.host_tree import chassis_dir
from fabricgen.serialise.manifest_yaml import dump

FILENAME = "60-fabricgen-ovn.yaml"


def _addressed(item: dict[str, Any], addresses: list[Any], gateway: Any) -> dict[str, Any]:
    if addresses:
        item["addresses"] = [str(a) for a in addresses]
    if gateway is not None:
        item["routes"] = [{"to": "default", "via": str(gateway)}]
    return item


def network(host: Host) -> dict[str, Any]:
    ethernets: dict[str, Any] = {}
    for nic in host.ethernets:
        item: dict[str, Any] = {}
        if nic.mtu is not None:
            item["mtu"] = nic.mtu
        ethernets[nic.name] = _addressed(item, nic.addresses, None)
    loopback = host.tunnel_endpoint.loopback
    if loopback is not None:
        ethernets["lo"] = {"match": {"name": "lo"}, "addresses": [str(loopback)]}
    doc: dict[str, Any] = {"version": 2, "renderer": "networkd", "ethernets": ethernets}
    if host.bridges:
        doc["bridges"] = {
            b.name: _addressed({"interfaces": list(b.interfaces)}, b.addresses, b.gateway)
            | {"openvswitch": {"fail-mode": b.fail_mode}}
            for b in host.bridges
        }
    if host.vlans:
        doc["vlans"] = {
            v.name: _addressed({"id": v.id, "link": v.link}, v.addresses, v.gateway) for v in host.vlans
        }
    return {"network": doc}


def render(plan: Plan) -> list[Artifact]:
    return [
        TextFile(chassis_dir(deployment.name, host.name) / FILENAME, header(plan) + dump(network(host)))
        for deployment in plan.fabric.ovn_deployments
        for host in deployment.hosts
    ]
