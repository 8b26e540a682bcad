"""What became of every live object (`Use`, `AzUse`, `Imported`), and the mapper's ledger of it:
each object starts `unmapped` with the reason its kind gives, and ends `rendered`, `read`, `unmapped`
or `conflict`."""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network
from typing import Any

from fabricgen.adopt.inputs import ClusterInput, LiveInput
from fabricgen.errors import FabricgenError
from fabricgen.observe import kube_objects as ko
from fabricgen.serialise import commented_yaml as cy


class NothingToImport(FabricgenError):
    """No cluster of the input is an interconnected zone."""


@dataclass
class Use:
    """What became of one live object."""

    cluster: str
    obj: ko.LiveObject
    status: str  # rendered | read | unmapped | conflict
    reason: str
    zone: str | None = None
    unexpressed: list[str] = field(default_factory=list)  # what the fabric cannot say of it

    @property
    def id(self) -> ko.ObjectId:
        return self.obj.id


@dataclass
class AzUse:
    """One availability zone of `ovn-ic-sbctl show`."""

    name: str
    status: str  # imported | unmapped | conflict
    reason: str
    address: str | None
    port: str | None
    line: int


@dataclass
class Imported:
    site: str
    document: cy.Map
    header: list[str]
    uses: list[Use]
    azs: list[AzUse]
    zone_clusters: dict[str, str]  # zone -> cluster
    notes: list[str]

    def uses_of(self, cluster: str) -> dict[ko.ObjectId, Use]:
        return {u.id: u for u in self.uses if u.cluster == cluster}


@dataclass
class MappedZone:
    cluster: ClusterInput
    name: str
    data: dict[str, Any]
    index: int
    doc: cy.Map = field(default_factory=cy.Map)
    backbone_subnet: ko.LiveObject | None = None
    backbone_cidr: IPv4Network | None = None
    transit: IPv4Address | None = None
    harvester: bool = False


class Ledger:
    """The mapper's state: the live input, the zones found, and what became of every live object."""

    def __init__(self, live: LiveInput, site: str) -> None:
        self.live = live
        self.site = site
        self.uses: dict[tuple[str, ko.ObjectId], Use] = {}
        self.notes: list[str] = []
        self.zones: list[MappedZone] = []
        for cluster in live.clusters:
            for ident, obj in cluster.objects.items():
                self.uses[(cluster.name, ident)] = Use(cluster.name, obj, "unmapped", default_reason(ident))

    # -------------------------------------------------------------- bookkeeping
    def use(self, cluster: ClusterInput, ident: ko.ObjectId, status: str, reason: str,
            zone: str | None = None) -> Use | None:
        found = self.uses.get((cluster.name, ident))
        if found is None:
            return None
        if found.status == "conflict" and status != "conflict":
            found.zone = found.zone or zone
            return found
        found.status, found.reason, found.zone = status, reason, zone
        return found

    def conflict(self, cluster: ClusterInput, ident: ko.ObjectId, reason: str, zone: str | None = None) -> None:
        found = self.uses.get((cluster.name, ident))
        if found is None:
            return
        if found.status == "conflict":
            found.reason += f"; {reason}"
        else:
            found.status, found.reason = "conflict", reason
        found.zone = found.zone or zone

    def unexpressed(self, cluster: ClusterInput, ident: ko.ObjectId, what: str) -> None:
        found = self.uses.get((cluster.name, ident))
        if found is not None:
            found.unexpressed.append(what)

    def of_kind(self, cluster: ClusterInput, group: str, kind: str) -> list[ko.LiveObject]:
        return [o for i, o in cluster.objects.items() if (i.group, i.kind) == (group, kind)]


def default_reason(ident: ko.ObjectId) -> str:
    reasons = {
        ("", "ConfigMap"): "a ConfigMap fabricgen does not render (it renders ovn-ic-config and ovn-vpc-nat-gw-config)",
        ("", "Node"): "a node: fabricgen renders none (nodes name the IC database members)",
        ("kubeovn.io", "Configuration"): "fabricgen renders only the Configuration kube-system/kubeovn",
        ("kubeovn.io", "Subnet"): "neither the backbone nor in a tenant VPC of the fabric",
        ("kubeovn.io", "Vpc"): "not a VPC fabricgen renders",
        ("kubeovn.io", "ProviderNetwork"): "not the external network of an imported NAT gateway",
        ("kubeovn.io", "Vlan"): "not the external network of an imported NAT gateway",
        ("kubeovn.io", "VpcNatGateway"): "not the NAT gateway of an imported tenant VPC",
        ("kubeovn.io", "IptablesEIP"): "not an elastic IP of an imported NAT gateway",
        ("kubeovn.io", "IptablesSnatRule"): "not a rule of an imported NAT gateway's elastic IP",
        ("kubeovn.io", "IptablesDnatRule"): "not a rule of an imported NAT gateway's elastic IP",
        ("helm.cattle.io", "HelmChart"): "a HelmChart: only rke2-canal is read (Canal's pod range)",
        # Kube-OVN's own policy objects: the policy cannot express them exactly, and fabricgen
        # neither renders nor prunes them, so they stay on the cluster as they are.
        ("kubeovn.io", "SecurityGroup"): (
            "a Kube-OVN SecurityGroup, kept on the cluster as it is: its members are the pods that name it in their "
            "ovn.kubernetes.io/security_groups annotation, which no policy group can name (a group names subnets, "
            "backbones, OVN-Kubernetes namespaces, OpenStack networks and CIDRs); where those pods fill a tenant "
            "subnet, say it as a group of that subnet with defaultDeny and rules"),
        ("networking.k8s.io", "NetworkPolicy"): (
            "a NetworkPolicy, kept on the cluster as it is: in a Kube-OVN zone fabricgen renders the policy as "
            "Subnet ACLs, never as NetworkPolicies, and its selected pods are not a subnet; its ACLs (tier 2, allow "
            "2001, drop 2000) decide before a policy group's on the same pods (1200, 1100)"),
    }
    return reasons.get((ident.group, ident.kind), "fabricgen does not render this kind")
