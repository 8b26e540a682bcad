"""Per chassis: the netplan file `60-fabricgen-ovn.yaml`.

NICs as `ethernets`, the OVS bridges (`openvswitch:`) with their ports, the VLAN
sub-interfaces, and for a loopback tunnel endpoint its /32 on `lo`. Only the
bridges, VLANs and `lo` carry addresses, never a bridge port. Install it as
/etc/netplan/60-fabricgen-ovn.yaml with mode 0600.

The interfaces tunnel packets cross (`underlay_interfaces`: the tunnel endpoint's interface and
what lies under it, or a loopback endpoint's BGP uplinks) get the deployment's `underlayMTU`
where it is not 1500 and a NIC does not set its own: without it they keep the kernel's 1500 while
every chassis sizes its overlay for the larger MTU, and encapsulated packets above 1500 are lost.
An OVS bridge needs none: its internal port takes the smallest MTU of its other ports
(`ovs-vswitchd.conf.db(5)`, Interface `mtu_request`).
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


DEFAULT_MTU = 1500


def underlay_interfaces(host: Host) -> set[str]:
    """The host's interfaces that tunnel packets cross: the tunnel endpoint's interface and
    every one under it (a bridge's ports, a VLAN's link), or a loopback endpoint's BGP uplinks."""
    endpoint = host.tunnel_endpoint.interface
    stack = [endpoint] if endpoint is not None else list(host.bgp.uplinks if host.bgp is not None else [])
    bridges = {b.name: b for b in host.bridges}
    vlans = {v.name: v for v in host.vlans}
    found: set[str] = set()
    while stack:
        name = stack.pop()
        if name in found:
            continue
        found.add(name)
        if name in bridges:
            stack += bridges[name].interfaces
        if name in vlans:
            stack.append(vlans[name].link)
    return found


def network(host: Host, underlay_mtu: int = DEFAULT_MTU) -> dict[str, Any]:
    underlay = underlay_interfaces(host) if underlay_mtu != DEFAULT_MTU else set()
    ethernets: dict[str, Any] = {}
    for nic in host.ethernets:
        item: dict[str, Any] = {}
        if nic.mtu is not None:
            item["mtu"] = nic.mtu
        elif nic.name in underlay:
            item["mtu"] = underlay_mtu
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
            v.name: _addressed({"id": v.id, "link": v.link} | ({"mtu": underlay_mtu} if v.name in underlay else {}),
                               v.addresses, v.gateway)
            for v in host.vlans
        }
    return {"network": doc}


def render(plan: Plan) -> list[Artifact]:
    return [
        TextFile(chassis_dir(deployment.name, host.name) / FILENAME,
                 header(plan) + dump(network(host, deployment.underlay_mtu)))
        for deployment in plan.fabric.ovn_deployments
        for host in deployment.hosts
    ]
