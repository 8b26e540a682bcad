"""VPC NAT gateways: a zone's external network and, per tenant VPC, a gateway with elastic IPs.

Kube-OVN runs a VPC NAT gateway as a pod (StatefulSet `vpc-nat-gw-<name>`) with one leg in
a VPC subnet (`lanIp`) and one on the external network on a dedicated NIC (an underlay
ProviderNetwork and Vlan on SUSE Virtualization, a macvlan on plain Kube-OVN); its
elastic IPs (IptablesEIP) come from the external Subnet and carry SNAT and DNAT rules.
"""


import re
from ipaddress import IPv4Address
from typing import Annotated, Literal, Self

from pydantic import AfterValidator, Field, model_validator

from fabricgen.model.common import Address, Label, Network, Port, Section, SubnetCIDR

# Kubernetes label syntax (apimachinery validation.IsQualifiedName / IsValidLabelValue). Kube-OVN
# writes each selector entry as "key: value" and reads it back by splitting at ':' and trimming
# spaces, dropping any entry that does not split in two (kube-ovn pkg/util/vpc_nat_gateway.go,
# GenNatGwSelectors); the result becomes the gateway pod's nodeSelector.
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_RULE = ("letters, digits, '-', '_' and '.', at most 63, starting and ending with a letter or digit; "
               "Kube-OVN splits each selector entry at ':' and drops what does not fit")


def _label_key(key: str) -> str:
    prefix, slash, name = key.rpartition("/")
    if (slash and (not _LABEL_PREFIX.fullmatch(prefix) or len(prefix) > 253)) or len(name) > 63 \
            or not _LABEL_NAME.fullmatch(name):
        raise ValueError(f"{key!r} is not a node label key: a name of {_LABEL_RULE}; a prefix, if any, is a "
                         "DNS subdomain followed by '/', e.g. kubernetes.io/hostname")
    return key


def _label_value(value: str) -> str:
    if value and (len(value) > 63 or not _LABEL_NAME.fullmatch(value)):
        raise ValueError(f"{value!r} is not a node label value: empty, or {_LABEL_RULE}")
    return value


LabelKey = Annotated[str, AfterValidator(_label_key)]
LabelValue = Annotated[str, AfterValidator(_label_value)]


def _address_range(value: str) -> str:
    parts = value.split("..")
    if len(parts) > 2:
        raise ValueError(f"{value!r} is not an address or a range FIRST..LAST")
    try:
        first, last = (IPv4Address(p) for p in (parts[0], parts[-1]))
    except ValueError as exc:
        raise ValueError(f"{value!r} is not an IPv4 address or a range FIRST..LAST") from exc
    if first > last:
        raise ValueError(f"{value!r} ends before it starts; write FIRST..LAST")
    return value


AddressRange = Annotated[str, AfterValidator(_address_range)]
"""One IPv4 address, or a range `FIRST..LAST` as Kube-OVN's `excludeIps` writes it."""

InterfaceName = Annotated[
    str,
    Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$", max_length=15,
          description="Linux interface name (at most 15 characters, no dot: the VLAN goes in vlanId)."),
]


class ExternalNetwork(Section):
    """The external network of the zone's VPC NAT gateways (`ovn-vpc-external-network`).

    On `platform: harvester`: a ProviderNetwork on a dedicated NIC, a Vlan, a kube-ovn
    NetworkAttachmentDefinition in `kube-system` and the Subnet from which Kube-OVN hands
    out elastic IPs, as SUSE Virtualization documents it. On `platform: kube-ovn`: a macvlan
    NetworkAttachmentDefinition on that NIC with Kube-OVN IPAM, and that Subnet.
    """

    interface: InterfaceName
    """The dedicated NIC on the nodes that run NAT gateways: the ProviderNetwork's
    `defaultInterface` (harvester), or the macvlan `master` (kube-ovn)."""
    vlan_id: int | None = Field(default=None, ge=1, le=4094)
    """A tagged VLAN on that NIC: the Vlan's id (harvester; untagged: 0), or the macvlan
    master `<interface>.<vlanId>`, a VLAN sub-interface that must exist on those nodes
    (kube-ovn; macvlan does not create it)."""
    cidr: SubnetCIDR
    """The external range; elastic IPs come from it."""
    gateway: Address
    """The physical router of the external network (the NAT gateways' default route)."""
    exclude_ips: list[AddressRange] = []
    """Addresses Kube-OVN must not hand out (routers, hosts already on the network)."""

    @model_validator(mode="after")
    def _vlan_interface_fits(self) -> Self:
        if self.vlan_id is not None and len(f"{self.interface}.{self.vlan_id}") > 15:
            raise ValueError(f"the VLAN sub-interface {self.interface}.{self.vlan_id} is longer than the 15 "
                             "characters Linux allows in an interface name; use a NIC with a shorter name")
        return self


class Eip(Section):
    """An elastic IP of the gateway (IptablesEIP)."""

    name: Label
    """IptablesEIP name; cluster-scoped."""
    address: Address | None = None
    """A fixed address in the external network (`v4ip`); Kube-OVN picks a free one if omitted."""


class SnatRule(Section):
    """Source NAT of a VPC range to an elastic IP (IptablesSnatRule)."""

    name: Label
    """IptablesSnatRule name; cluster-scoped."""
    eip: Label
    """One of the gateway's `eips`."""
    internal_cidr: Network = Field(alias="internalCIDR")
    """The VPC range whose traffic leaves from the elastic IP; inside one of the VPC's subnets."""


class DnatRule(Section):
    """Destination NAT of an elastic IP's port to a VPC address (IptablesDnatRule)."""

    name: Label
    """IptablesDnatRule name; cluster-scoped."""
    eip: Label
    """One of the gateway's `eips`."""
    protocol: Literal["tcp", "udp"] = "tcp"
    external_port: Port
    """Port on the elastic IP; one rule per elastic IP, protocol and port (FG416)."""
    internal_ip: Address
    """The VPC address that receives the traffic; inside one of the VPC's subnets."""
    internal_port: Port
    """Port on `internalIp`."""


class NatGateway(Section):
    """The VPC's NAT gateway (VpcNatGateway). fabricgen adds the VPC's default route
    `0.0.0.0/0` through `lanIp`."""

    name: Annotated[Label, Field(max_length=48)]
    """VpcNatGateway name; cluster-scoped. The pod is `vpc-nat-gw-<name>-0`, so at most 48 characters."""
    subnet: Label
    """The VPC subnet the gateway's LAN leg sits on."""
    lan_ip: Address
    """The gateway's address in `subnet`; it must not be used by anything else."""
    selector: dict[LabelKey, LabelValue] = {}
    """Node selector of the gateway pod: only nodes that have the external NIC. Each entry a
    valid Kubernetes label (`key: value`): Kube-OVN splits entries at `:`."""
    eips: list[Eip] = []
    """Elastic IPs on the external network (IptablesEIP)."""
    snat: list[SnatRule] = []
    """Source NAT rules (IptablesSnatRule)."""
    dnat: list[DnatRule] = []
    """Destination NAT rules (IptablesDnatRule)."""
