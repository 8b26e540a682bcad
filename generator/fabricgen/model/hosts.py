"""Hosts that run ovn-controller (OVN chassis): NICs, OVS bridges, VLANs, the tunnel endpoint."""


from ipaddress import IPv4Interface
from typing import Annotated

from pydantic import AfterValidator, Field

from fabricgen.model.common import Address, Label, Section, Subdomain, written_as_text

# Linux interface names: at most 15 bytes, no '/', no whitespace. Dots are allowed
# (`eth1.2000`), so are '-' and '_'.
IFNAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,14}$"


def _netplan_prefix(address: IPv4Interface) -> IPv4Interface:
    # netplan.io src/parse.c, where it reads `addresses`: "invalid prefix length" for an IPv4 prefix of 0 or
    # above 32.
    if address.network.prefixlen == 0:
        raise ValueError(f"{address} has prefix /0, which netplan refuses (an address takes a prefix of 1 to 32); "
                         f"give the prefix of its network, e.g. {address.ip}/24")
    return address


HostAddress = Annotated[IPv4Interface, written_as_text("192.0.2.10/24"), AfterValidator(_netplan_prefix)]
"""An address with prefix as netplan `addresses` takes it: prefix /1 to /32."""


class Ethernet(Section):
    """A physical NIC as netplan `ethernets` declares it."""

    name: str = Field(pattern=IFNAME)
    """Kernel interface name, e.g. `eth1`."""
    mtu: int | None = Field(default=None, ge=576, le=9216)
    """Link MTU. Leave out to keep the kernel default (1500)."""
    addresses: list[HostAddress] = []
    """Addresses on the NIC itself, each with a prefix of /1 to /32, as netplan takes it. A NIC
    that is a bridge port must have none (FG510)."""


class Bridge(Section):
    """An Open vSwitch bridge created by netplan (`openvswitch: {}`)."""

    name: str = Field(pattern=IFNAME)
    """Bridge name, e.g. `cloudbr1`. `br-int` belongs to ovn-controller; do not declare it."""
    interfaces: list[str] = []
    """Ports of the bridge: names of declared ethernets."""
    addresses: list[HostAddress] = []
    """Host addresses on the bridge's internal port (e.g. management on `cloudbr0`)."""
    gateway: Address | None = None
    """Default route via this address, through this bridge."""
    fail_mode: str = Field(default="standalone", pattern=r"^(standalone|secure)$")
    """OVS fail mode; netplan's default is standalone."""


class Vlan(Section):
    """A tagged sub-interface, e.g. `eth1.2000` on `eth1`, VLAN 2000."""

    name: str = Field(pattern=IFNAME)
    """Kernel interface name, e.g. `eth1.2000`."""
    id: int = Field(json_schema_extra={"minimum": 1, "maximum": 4094})
    """802.1Q VLAN id, 1 to 4094 (checked by rule FG505)."""
    link: str
    """The declared ethernet that carries the tagged frames."""
    addresses: list[HostAddress] = []
    """Addresses on the sub-interface: the routed tunnel network, e.g. 10.250.0.11/20."""
    gateway: Address | None = None
    """Default route via this address (only if this VLAN carries the default route)."""


class TunnelEndpoint(Section):
    """Where Geneve/VXLAN tunnels start: exactly one of `interface` or `loopback`."""

    interface: str | None = None
    """A routed interface holding the tunnel address, e.g. the VLAN `eth1.2000`.
    Never a bridge, and never a NIC that is a bridge port."""
    loopback: Annotated[IPv4Interface, written_as_text("192.0.2.1/32")] | None = None
    """A /32 on `lo`, reachable through BGP with ECMP; the host needs `bgp`."""


class BgpPeering(Section):
    """BGP (FRR) on the host, announcing the loopback tunnel endpoint over every uplink."""

    asn: int = Field(ge=1, le=4294967295)
    """The host's own AS number."""
    uplinks: list[str] = Field(min_length=1)
    """Interfaces with a BGP unnumbered session each (declared ethernets)."""
    announce_tunnel_endpoint: bool = True
    """Announce the loopback /32. Without it no other chassis can reach this one."""
    maximum_paths: int = Field(default=64, ge=1, le=128)
    """ECMP paths installed (`maximum-paths`)."""


class BridgeMapping(Section):
    """One `ovn-bridge-mappings` entry: a physical network on a local bridge."""

    physical_network: Label
    """The physical network name of provider networks, e.g. `physnet1`."""
    bridge: str
    """A declared bridge, e.g. `cloudbr1`."""


class Host(Section):
    """A chassis: one host running ovn-controller against its deployment's southbound DB."""

    name: Subdomain
    """Host name; also its output directory."""
    system_id: Subdomain | None = None
    """`external_ids:system-id`, the SB chassis name. Defaults to `name`."""
    ethernets: list[Ethernet] = []
    """NICs, as a list of named items (`- name: eth0`), not netplan's mapping keyed by name. A
    name appears once across ethernets, bridges and VLANs (FG515), and is never `lo`, `br-int`
    or another interface Open vSwitch creates (FG516)."""
    bridges: list[Bridge] = []
    """Open vSwitch bridges; names as for `ethernets`."""
    vlans: list[Vlan] = []
    """VLAN sub-interfaces; names as for `ethernets`."""
    tunnel_endpoint: TunnelEndpoint
    """The interface (or loopback /32 announced by `bgp`) whose address becomes `ovn-encap-ip`."""
    bgp: BgpPeering | None = None
    """Required with a loopback tunnel endpoint."""
    bridge_mappings: list[BridgeMapping] = []
    """`ovn-bridge-mappings`, e.g. physnet1 on cloudbr1."""
    gateway_chassis: bool = False
    """Eligible for router gateways (`ovn-cms-options=enable-chassis-as-gw`). Only Neutron
    reads it, so only hosts of an OpenStack consumer may set it."""

    @property
    def chassis_name(self) -> str:
        return self.system_id or self.name

    def interface_addresses(self, name: str) -> list[IPv4Interface] | None:
        """Addresses of a declared ethernet, bridge or VLAN; None if not declared."""
        items: list[Ethernet | Bridge | Vlan] = [*self.ethernets, *self.bridges, *self.vlans]
        for item in items:
            if item.name == name:
                return list(item.addresses)
        return None

    def bridge_ports(self) -> dict[str, str]:
        """Ethernet name -> the bridge it is a port of."""
        return {port: b.name for b in self.bridges for port in b.interfaces}
