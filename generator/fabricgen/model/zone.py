"""A zone: one cluster, one OVN availability zone."""


from ipaddress import IPv4Network
from typing import Literal

from pydantic import Field

from fabricgen.model.acl_match import OvnMatch
from fabricgen.model.common import (
    Address,
    Label,
    Network,
    NodeName,
    Section,
    Subdomain,
    SubnetCIDR,
)
from fabricgen.model.delivery import Destination
from fabricgen.model.nat_gateway import ExternalNetwork
from fabricgen.model.tenancy import Peering, Vpc


class ClusterNetworks(Section):
    """The cluster's own address ranges, which no backbone may overlap."""

    pod_cidr: Network = Field(default=IPv4Network("10.54.0.0/16"), alias="podCIDR")
    """Kube-OVN default subnet (`ovn-default`)."""
    join_cidr: Network = Field(default=IPv4Network("100.64.0.0/16"), alias="joinCIDR")
    """Kube-OVN join subnet (node to pod)."""
    service_cidr: Network = Field(default=IPv4Network("10.55.0.0/16"), alias="serviceCIDR")
    """Kubernetes service range."""
    primary_pod_cidr: Network | None = Field(default=None, alias="primaryPodCIDR")
    """Pod range of the primary CNI (Canal on SUSE Virtualization, usually 10.52.0.0/16)
    when Kube-OVN runs as a secondary network. Kube-OVN's pod CIDR must differ from it (FG209)."""


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
    """The cross-zone subnet in `ovn-cluster`; the other zones route to it through this zone's
    transit address."""
    gateway: Address | None = None
    """Defaults to the first address of the CIDR."""
    subnet_name: Label | None = None
    """Name of the Subnet object; defaults to `backbone-<zone>`. Not a name Kube-OVN uses itself,
    such as `ovn-default`, `join` or `external` (FG419)."""
    dhcp: bool = True
    """`enableDHCP` on the Subnet (VMs on SUSE Virtualization need it)."""
    nat_outgoing: bool = False
    """Must stay false: SNAT on a backbone breaks the return path across zones (FG301)."""
    network: OverlayNetwork = OverlayNetwork.model_construct(name="vsw-backbone")
    """The backbone's NetworkAttachmentDefinition; default `vsw-backbone` in `default`."""


class StaticRoute(Section):
    """An extra static route on the default VPC `ovn-cluster`."""

    cidr: Network
    """Destination range; not the CIDR of a generated route (backbone or advertised range, FG307)."""
    next_hop_ip: Address = Field(alias="nextHopIP")
    """Next hop address."""
    policy: Literal["policyDst", "policySrc"] = "policyDst"
    """Match the destination (`policyDst`) or the source (`policySrc`)."""


class PolicyRoute(Section):
    """An extra policy route on the default VPC `ovn-cluster`."""

    priority: int = Field(ge=0, le=32767)
    """Not 29500, which Kube-OVN deletes every 5 seconds (FG304); a 31000 policy must not match a
    local subnet (FG305)."""
    match: OvnMatch
    """OVN match expression, e.g. `ip4.dst == 10.0.0.0/8`, refused where OVN's own parser refuses
    it (a policy route whose match does not parse is one ovn-northd skips)."""
    action: Literal["allow", "drop", "reroute"]
    """`reroute` needs `nextHopIP`; the others take none (FG306)."""
    next_hop_ip: Address | None = Field(default=None, alias="nextHopIP")
    """Only with `reroute`."""


class DefaultVpc(Section):
    """Routes the operator adds to `ovn-cluster` besides the generated ones."""

    static_routes: list[StaticRoute] = []
    """Extra static routes of `ovn-cluster`. Its route lists are fabricgen's alone: Argo CD and
    Flux replace each list whole, so a route added any other way is removed at the next sync."""
    policy_routes: list[PolicyRoute] = []
    """Extra policy routes of `ovn-cluster` (not priority 29500, which Kube-OVN deletes: FG304)."""


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
    `ensureLabels`), so fabricgen writes the same label; default `mgmt`. A network's own
    `clusterNetwork` may only repeat it (FG403)."""
    gateway_nodes: list[NodeName] = []
    """Nodes carrying traffic to the transit switch (`gw-nodes`), in priority order. Node names
    are the OVN chassis host names."""
    transit_address: Address | None = None
    """This zone's address on the transit switch, as `ovn-ic-sbctl show` lists it. Kube-OVN
    picks it at random when the zone joins; update it after every IC rebuild. Until it is
    known, the other zones get no route to this zone's backbone (warning FG106)."""
    cluster: ClusterNetworks = ClusterNetworks.model_construct()
    """The cluster's pod, join and service ranges (and the primary CNI's pod range)."""
    backbone: Backbone
    """The cross-zone subnet in `ovn-cluster`, with its NAD."""
    default_vpc: DefaultVpc = DefaultVpc.model_construct()
    """Extra `staticRoutes` and `policyRoutes` for `ovn-cluster`, beside the generated ones."""
    vpcs: list[Vpc] = []
    """Tenant VPCs: local to this zone, never on the transit switch."""
    peerings: list[Peering] = []
    """Peerings between two tenant VPCs of this zone."""
    external_network: ExternalNetwork | None = None
    """The external network of the tenant VPCs' NAT gateways (a dedicated NIC or VLAN): an
    underlay (ProviderNetwork, Vlan) on `harvester`, a macvlan on `kube-ovn`."""
    destination: Destination = Destination.model_construct()
    """The zone's cluster for Argo CD and Flux (with `delivery`), and the kubeconfig context
    `fabricgen status` reads it with."""
