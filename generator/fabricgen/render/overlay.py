"""Per zone: the backbone overlay network and Subnet in the default VPC.

The NAD's CNI `provider`, the Subnet's `spec.provider` and `<nad>.<namespace>.ovn`
are one string (Kube-OVN matches on it); it comes from `plan.provider`.
"""

from __future__ import annotations

import json
from ipaddress import IPv4Address, IPv4Network

from fabricgen.plan.zones import DEFAULT_VPC, Plan, provider
from fabricgen.render import metadata as md
from fabricgen.render.artifacts import Artifact, KubeObject, Manifest
from fabricgen.render.policy_kubeovn import subnet_acls

SERVER_SOCKET = "/run/openvswitch/kube-ovn-daemon.sock"


def nad(
    plan: Plan, name: str, namespace: str, cluster_network: str, harvester: bool
) -> KubeObject:
    config = {
        "cniVersion": "0.3.1",
        "name": name,
        "type": "kube-ovn",
        "provider": provider(name, namespace),
        "server_socket": SERVER_SOCKET,
    }
    labels = (
        {
            "network.harvesterhci.io/type": "OverlayNetwork",
            "network.harvesterhci.io/clusternetwork": cluster_network,
        }
        if harvester
        else {}
    )
    return {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": md.metadata(name, namespace, plan.source_name, labels=labels),
        "spec": {"config": json.dumps(config, separators=(",", ":"))},
    }


def subnet(
    plan: Plan,
    *,
    name: str,
    vpc: str,
    nad_provider: str,
    cidr: IPv4Network,
    gateway: IPv4Address,
    dhcp: bool,
    nat_outgoing: bool,
    namespaces: list[str] | None = None,
    dns_servers: list[str] | None = None,
    acls: list[dict[str, object]] | None = None,
    private: bool = False,
    allow_subnets: list[str] | None = None,
    allow_ew_traffic: bool = False,
) -> KubeObject:
    spec: dict[str, object] = {
        "vpc": vpc,
        "protocol": "IPv4",
        "provider": nad_provider,
        "cidrBlock": str(cidr),
        "gateway": str(gateway),
        "enableDHCP": dhcp,
        "natOutgoing": nat_outgoing,
    }
    if dns_servers:
        # Kube-OVN adds router, lease_time, server_id, server_mac and mtu itself
        # (pkg/ovs/util.go buildDHCPv4Options) and reads `;` between servers (parseDHCPOptions).
        spec["dhcpV4Options"] = f"dns_server={{{';'.join(dns_servers)}}}"
    if namespaces:
        spec["namespaces"] = namespaces
    if private:
        spec["private"] = True
    if allow_subnets:
        spec["allowSubnets"] = allow_subnets
    if acls:
        spec["acls"] = acls
    if allow_ew_traffic:
        spec["allowEWTraffic"] = True
    return {
        "apiVersion": "kubeovn.io/v1",
        "kind": "Subnet",
        "metadata": md.metadata(name, None, plan.source_name),
        "spec": spec,
    }


def render(plan: Plan) -> list[Artifact]:
    out: list[Artifact] = []
    for zone in plan.zones:
        backbone = zone.zone.backbone
        net = backbone.network
        objects = (
            nad(plan, net.name, net.namespace, net.cluster_network or zone.zone.overlay_cluster_network,
                zone.zone.platform == "harvester"),
            subnet(
                plan,
                name=zone.backbone_subnet,
                vpc=DEFAULT_VPC,
                nad_provider=zone.backbone_provider,
                cidr=backbone.cidr,
                gateway=zone.backbone_gateway,
                dhcp=backbone.dhcp,
                nat_outgoing=backbone.nat_outgoing,
                acls=subnet_acls(plan, zone, None),
            ),
        )
        out.append(Manifest(zone.name, "backbone.yaml", objects))
    return out
