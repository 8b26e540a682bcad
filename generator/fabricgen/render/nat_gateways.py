"""Per zone with VPC NAT gateways: `nat-gateways.yaml`.

Kube-OVN v1.16 iptables NAT gateways, in apply order:
- ConfigMap `kube-system/ovn-vpc-nat-gw-config`, partial: `enable-vpc-nat-gw: "true"`. The
  installer owns it (the Harvester kubeovn-operator templates it from the Configuration's
  `enableNATGateway`, which `kubeovn_ic.configuration` sets), as it owns
  `ovn-vpc-nat-config`, whose `image` must match the installed version; fabricgen leaves that one alone.
- The external network `ovn-vpc-external-network` (the name Kube-OVN defaults to), in one of
  two forms:
  - `platform: harvester`: an underlay network as SUSE Virtualization documents it
    (harvester/docs `networking/kubeovn-vpcnatgateway.md`, `kubeovn-pureunderlay.md`): a
    ProviderNetwork on the dedicated NIC, a Vlan on it (id 0 when untagged), a `kube-ovn` NAD
    in `kube-system` with provider `<nad>.kube-system.ovn` and the OverlayNetwork label, and a
    Subnet in `ovn-cluster` on that Vlan. Its network webhooks deny anything else
    (harvester/network-controller-harvester `pkg/webhook/nad/validator.go`: a NAD that is
    not `kube-ovn` needs a bridge; `pkg/webhook/subnet/validator.go`: a Subnet's provider names
    an existing NAD labelled OverlayNetwork, in three dot-separated parts).
  - `platform: kube-ovn`: a macvlan NAD in `kube-system` on the dedicated NIC, whose IPAM is
    Kube-OVN with the provider `<nad>.<namespace>` (no `.ovn`: the Subnet is IPAM only, not a
    logical switch), and that Subnet. No ProviderNetwork or Vlan: those take the NIC into an
    OVS bridge, where it can no longer be a macvlan master.
- Per VPC gateway: VpcNatGateway, its IptablesEIPs, then IptablesSnatRules and IptablesDnatRules
  (ports are strings in both the CRD and the controller). The VPC's default route through
  `lanIp` is on the Vpc in `tenant-vpcs.yaml`.
"""

from __future__ import annotations

import json

from fabricgen.model.names import EXTERNAL_NETWORK
from fabricgen.model.nat_gateway import ExternalNetwork, NatGateway
from fabricgen.model.tenancy import Vpc
from fabricgen.plan.zones import DEFAULT_VPC, Plan, ZonePlan, provider
from fabricgen.render import metadata as md
from fabricgen.render.artifacts import Artifact, KubeObject, Manifest
from fabricgen.render.overlay import SERVER_SOCKET, nad

NAMESPACE = "kube-system"
EXTERNAL_PROVIDER = f"{EXTERNAL_NETWORK}.{NAMESPACE}"
# The bridge is `br-<provider network>`, and Linux allows 15 characters: at most 12 here.
UNDERLAY = "vpc-external"
# Kube-OVN NADs on SUSE Virtualization sit on the management cluster network (see FG403).


def gw_config(plan: Plan) -> KubeObject:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": md.metadata("ovn-vpc-nat-gw-config", NAMESPACE, plan.source_name,
                                md.PARTIAL),
        "data": {"enable-vpc-nat-gw": "true"},
    }


def macvlan_master(ext: ExternalNetwork) -> str:
    return ext.interface if ext.vlan_id is None else f"{ext.interface}.{ext.vlan_id}"


def external_nad(plan: Plan, ext: ExternalNetwork) -> KubeObject:
    config = {
        "cniVersion": "0.3.1",
        "name": EXTERNAL_NETWORK,
        "type": "macvlan",
        "master": macvlan_master(ext),
        "mode": "bridge",
        "ipam": {"type": "kube-ovn", "server_socket": SERVER_SOCKET, "provider": EXTERNAL_PROVIDER},
    }
    return {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": md.metadata(EXTERNAL_NETWORK, NAMESPACE, plan.source_name),
        "spec": {"config": json.dumps(config, separators=(",", ":"))},
    }


def external_subnet(plan: Plan, ext: ExternalNetwork, harvester: bool) -> KubeObject:
    gateway = str(ext.gateway)
    spec: dict[str, object] = {"protocol": "IPv4"}
    if harvester:
        spec.update(vpc=DEFAULT_VPC, provider=provider(EXTERNAL_NETWORK, NAMESPACE), vlan=UNDERLAY)
    else:
        spec["provider"] = EXTERNAL_PROVIDER
    spec.update({
        "cidrBlock": str(ext.cidr),
        "gateway": gateway,
        "excludeIps": [gateway, *(r for r in ext.exclude_ips if r != gateway)],
    })
    return {
        "apiVersion": "kubeovn.io/v1",
        "kind": "Subnet",
        "metadata": md.metadata(EXTERNAL_NETWORK, None, plan.source_name),
        "spec": spec,
    }


def underlay(plan: Plan, ext: ExternalNetwork) -> list[KubeObject]:
    """SUSE Virtualization: the ProviderNetwork on the dedicated NIC and its Vlan."""
    return [
        {
            "apiVersion": "kubeovn.io/v1",
            "kind": "ProviderNetwork",
            "metadata": md.metadata(UNDERLAY, None, plan.source_name),
            "spec": {"defaultInterface": ext.interface},
        },
        {
            "apiVersion": "kubeovn.io/v1",
            "kind": "Vlan",
            "metadata": md.metadata(UNDERLAY, None, plan.source_name),
            "spec": {"id": ext.vlan_id or 0, "provider": UNDERLAY},
        },
    ]


def external_network(plan: Plan, ext: ExternalNetwork, harvester: bool, cluster_network: str) -> list[KubeObject]:
    if harvester:
        return [*underlay(plan, ext), nad(plan, EXTERNAL_NETWORK, NAMESPACE, cluster_network, harvester=True),
                external_subnet(plan, ext, harvester=True)]
    return [external_nad(plan, ext), external_subnet(plan, ext, harvester=False)]


def _cr(plan: Plan, kind: str, name: str, spec: dict[str, object]) -> KubeObject:
    return {
        "apiVersion": "kubeovn.io/v1",
        "kind": kind,
        "metadata": md.metadata(name, None, plan.source_name),
        "spec": spec,
    }


def gateway(plan: Plan, vpc: Vpc, gw: NatGateway) -> KubeObject:
    spec: dict[str, object] = {
        "vpc": vpc.name,
        "subnet": gw.subnet,
        "lanIp": str(gw.lan_ip),
        "externalSubnets": [EXTERNAL_NETWORK],
    }
    if gw.selector:
        spec["selector"] = [f"{key}: {value}" for key, value in gw.selector.items()]
    return _cr(plan, "VpcNatGateway", gw.name, spec)


def eips(plan: Plan, gw: NatGateway) -> list[KubeObject]:
    out = []
    for eip in gw.eips:
        spec: dict[str, object] = {"natGwDp": gw.name, "externalSubnet": EXTERNAL_NETWORK}
        if eip.address is not None:
            spec["v4ip"] = str(eip.address)
        out.append(_cr(plan, "IptablesEIP", eip.name, spec))
    return out


def nat_rules(plan: Plan, gw: NatGateway) -> list[KubeObject]:
    """SNAT then DNAT rules; ports are strings in the CRD and in the controller."""
    out = [
        _cr(plan, "IptablesSnatRule", r.name, {"eip": r.eip, "internalCIDR": str(r.internal_cidr)})
        for r in gw.snat
    ]
    out += [
        _cr(plan, "IptablesDnatRule", r.name, {
            "eip": r.eip,
            "protocol": r.protocol,
            "externalPort": str(r.external_port),
            "internalIp": str(r.internal_ip),
            "internalPort": str(r.internal_port),
        })
        for r in gw.dnat
    ]
    return out


def zone_objects(plan: Plan, zone: ZonePlan) -> list[KubeObject]:
    """The external network, every gateway, every elastic IP, every NAT rule."""
    ext = zone.zone.external_network
    gateways = [(vpc, vpc.nat_gateway) for vpc in zone.zone.vpcs if vpc.nat_gateway is not None]
    if ext is None or not gateways:
        return []
    harvester = zone.zone.platform == "harvester"
    objects = [gw_config(plan), *external_network(plan, ext, harvester, zone.zone.overlay_cluster_network)]
    objects += [gateway(plan, vpc, gw) for vpc, gw in gateways]
    objects += [obj for _vpc, gw in gateways for obj in eips(plan, gw)]
    objects += [obj for _vpc, gw in gateways for obj in nat_rules(plan, gw)]
    return objects


def render(plan: Plan) -> list[Artifact]:
    out: list[Artifact] = []
    for zone in plan.zones:
        objects = zone_objects(plan, zone)
        if objects:
            out.append(Manifest(zone.name, "nat-gateways.yaml", tuple(objects)))
    return out
