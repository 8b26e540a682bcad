"""A zone: one cluster, one OVN availability zone."""


from typing import Literal

from pydantic import Field

from fabricgen.model.common import Address, Label, Network, NodeName, Section, Subdomain, SubnetCIDR
from fabricgen.model.delivery import Destination
from fabricgen.model.nat_gateway import ExternalNetwork
from fabricgen.model.tenancy import Peering, Vpc


class ClusterNetworks(Section):
    """The cluster's own address ranges, which no backbone may overlap."""

    pod_cidr: Network = Field(default=Network("10.54.0.0/16"), alias="podCIDR")
    """Kube-OVN default subnet (`ovn-default`)."""
    join_cidr: Network = Field(default=Network("100.64.0.0/16"), alias="joinCIDR")
    """Kube-OVN join subnet (node to pod)."""
    service_cidr: Network = Field(default=Network("10.55.0.0/16"), alias="serviceCIDR")
    """Kubernetes service range."""
    primary_pod_cidr: Network | None = Field(default=None, alias="primaryPodCIDR")
    """Pod range of the primary CNI (Canal on SUSE Virtualization, usually 10.52.0.0/16)
    when Kube-OVN runs as a secondary network. Kube-OVN's pod CIDR must differ from it."""


class OverlayNetwork(Section):
    """The NetworkAttachmentDefinition that attaches VMs to a Kube-OVN subnet."""

    name: Subdomain
    """NAD name. No dots: the provider is `<name>.<namespace>.ovn`."""
    namespace: Label = "default"
    cluster_network: Label | None = None
    """SUSE Virtualization cluster network (the NAD's `network.harvesterhci.io/clusternetwork`
    label); default and only value: the zone's `overlayClusterNetwork` (FG403)."""


class Backbone(Section):
    """The zone's subnet in the default VPC that carries cross-zone traffic."""

    cidr: SubnetCIDR
    gateway: Address | None = None
    """Defaults to the first address of the CIDR."""
    subnet_name: Label | None = None
    """Name of the Subnet object; defaults to `backbone-<zone>`."""
    dhcp: bool = True
    """`enableDHCP` on the Subnet (VMs on SUSE Virtualization need it)."""
    nat_outgoing: bool = False
    """Must stay false: SNAT on a backbone breaks the return path across zones."""
    network: OverlayNetwork = OverlayNetwork.model_construct(name="vsw-backbone")


class StaticRoute(Section):
    """An extra static route on the default VPC `ovn-cluster`."""

    cidr: Network
    next_hop_ip: Address = Field(alias="nextHopIP")
    policy: Literal["policyDst", "policySrc"] = "policyDst"


class PolicyRoute(Section):
    """An extra policy route on the default VPC `ovn-cluster`."""

    priority: int = Field(ge=0, le=32767)
    match: str = Field(min_length=1, pattern=r"^[^\n\r]+$")
    action: Literal["allow", "drop", "reroute"]
    next_hop_ip: Address | None = Field(default=None, alias="nextHopIP")
    """Only with `reroute`."""


class DefaultVpc(Section):
    """Routes the operator adds to `ovn-cluster` besides the generated ones."""

    static_routes: list[StaticRoute] = []
    policy_routes: list[PolicyRoute] = []


class Zone(Section):
    """One cluster joined to the interconnection as an OVN availability zone."""

    name: Label
    """Unique zone name: the OVN AZ name (`az-name`) and the output directory."""
    platform: Literal["harvester", "kube-ovn"] = "harvester"
    """`harvester`: Kube-OVN on SUSE Virtualization; `kube-ovn`: Kube-OVN on plain Kubernetes."""
    overlay_cluster_network: Label = "mgmt"
    """SUSE Virtualization: the cluster network whose bridge carries Kube-OVN's tunnel (the
    nodes' `ovn.kubernetes.io/tunnel_interface` is `<name>-br`). Its NAD mutator labels every
    kube-ovn NAD with it (harvester/network-controller-harvester `pkg/webhook/nad/mutator.go`
    `ensureLabels`), so fabricgen writes the same label; default `mgmt`."""
    gateway_nodes: list[NodeName] = []
    """Nodes carrying traffic to the transit switch (`gw-nodes`), in priority order."""
    transit_address: Address | None = None
    """This zone's address on the transit switch, as `ovn-ic-sbctl show` lists it. Kube-OVN
    picks it at random when the zone joins; update it after every IC rebuild. Until it is
    known, the other zones get no route to this zone's backbone."""
    cluster: ClusterNetworks = ClusterNetworks.model_construct()
    backbone: Backbone
    default_vpc: DefaultVpc = DefaultVpc.model_construct()
    vpcs: list[Vpc] = []
    """Tenant VPCs: local to this zone, never interconnected."""
    peerings: list[Peering] = []
    """Peerings between two tenant VPCs of this zone."""
    external_network: ExternalNetwork | None = None
    """The external network of the tenant VPCs' NAT gateways (a dedicated NIC or VLAN)."""
    destination: Destination = Destination.model_construct()
    """The zone's cluster for Argo CD and Flux (with `delivery`)."""
