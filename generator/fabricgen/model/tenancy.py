"""Tenant VPCs: local to their zone, with subnets, overlay networks and peerings."""

from typing import Self

from pydantic import Field, model_validator

from fabricgen.model.common import Address, Label, Network, Section, Subdomain, SubnetCIDR
from fabricgen.model.nat_gateway import NatGateway
from fabricgen.model.policy import SubnetAcl


class TenantNetwork(Section):
    """The NAD for a tenant subnet."""

    name: Subdomain
    """NAD name. No dots: the provider is `<name>.<namespace>.ovn`."""
    namespace: Label = "default"
    cluster_network: Label | None = None
    """SUSE Virtualization cluster network; default and only value: the zone's
    `overlayClusterNetwork` (FG403)."""


class TenantSubnet(Section):
    """A subnet of a tenant VPC: a Kube-OVN Subnet with its NAD."""

    cidr: SubnetCIDR
    """The subnet's range, /30 or larger; subnets of one VPC or of peered VPCs must not overlap
    (FG405)."""
    name: Label
    """Subnet name; Subnets are cluster-scoped, so unique in the zone (FG408)."""
    gateway: Address | None = None
    """Defaults to the first address of the CIDR."""
    dhcp: bool = True
    """`enableDHCP` on the Subnet. The default route comes from DHCP itself (Kube-OVN adds
    `router=<gateway>`)."""
    nat_outgoing: bool = False
    """`natOutgoing` on the Subnet. It does nothing in a custom VPC: Kube-OVN SNATs only subnets
    of `ovn-cluster`, and a NAT gateway's SNAT rules translate a tenant VPC's traffic."""
    network: TenantNetwork | None = None
    """Defaults to a NAD named like the subnet in namespace `default`."""
    dns_servers: list[Address] = Field(default=[], max_length=8)
    """DNS servers DHCP hands out (`dhcpV4Options: dns_server={a;b}`), for VMs behind a NAT
    gateway, as SUSE Virtualization's NAT guide asks. Needs `dhcp: true`."""
    acls: list[SubnetAcl] = Field(default=[], max_length=1000)
    """`acls` on the Subnet, as written in a running cluster: OVN ACLs Kube-OVN puts on the subnet's
    switch. Prefer the fabric's `policy`, which renders these for you and proves them with packets."""
    private: bool = False
    """`private` on the Subnet: traffic into it from other subnets is dropped (Kube-OVN's drop at
    1000), but from `allowSubnets`, its own range and the nodes."""
    allow_subnets: list[Network] = Field(default=[], max_length=100)
    """`allowSubnets` on the Subnet: the ranges a private subnet accepts traffic from."""
    allow_ew_traffic: bool = Field(default=False, alias="allowEWTraffic")
    """`allowEWTraffic` on the Subnet: with `acls`, traffic inside the subnet is allowed at 1900."""
    namespaces: list[Label] = []
    """`namespaces` on the Subnet: the namespaces whose pods take their addresses from it. Each
    must be one of its VPC's `namespaces`: Kube-OVN refuses the Subnet otherwise ("namespace ...
    is out of range to custom vpc", kubeovn/kube-ovn `pkg/controller/subnet.go`
    `validateVpcBySubnet`; FG420)."""

    @model_validator(mode="after")
    def _dns_needs_dhcp(self) -> Self:
        if self.dns_servers and not self.dhcp:
            raise ValueError("dnsServers are handed out by DHCP; set dhcp: true or drop dnsServers")
        return self


class Vpc(Section):
    """A tenant VPC."""

    name: Label
    """VPC name; not `ovn-cluster` nor another VPC's name (FG409)."""
    namespaces: list[Label] = []
    """Namespaces bound to the VPC (`spec.namespaces`)."""
    interconnect: bool = False
    """Tenant VPCs cannot join OVN-IC: Kube-OVN attaches only `ovn-cluster` to the transit
    switch. Kept as a field so that asking for it gets a clear error."""
    subnets: list[TenantSubnet] = []
    """The VPC's subnets."""
    nat_gateway: NatGateway | None = None
    """Egress and published ports through a VPC NAT gateway on the zone's `externalNetwork`."""


class Peering(Section):
    """A peering between two tenant VPCs of the same zone: both VPCs get `vpcPeerings` and
    routes to each other's subnets."""

    vpcs: tuple[Label, Label]
    """The two VPCs. Neither may be the default VPC `ovn-cluster`."""
    connect_cidr: Network = Field(alias="connectCIDR")
    """A /30 (or larger) from which both sides take their `localConnectIP` (.1 and .2)."""
