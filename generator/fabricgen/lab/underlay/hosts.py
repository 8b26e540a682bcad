"""The hosts of the kernel underlay, read from a build: each deployment's chassis (its tunnel
endpoint, BGP uplinks), controllers (database addresses) and the IC database's members, with
the files fabricgen rendered for each (`*.nft`, `frr.conf`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Interface, ip_address
from pathlib import PurePosixPath

from fabricgen.model.hosts import BgpPeering, Bridge, Ethernet, Vlan
from fabricgen.pipeline import Build
from fabricgen.plan.deployments import tunnel_address

HOST_ROOT = "_host"
ROLES = ("chassis", "controllers")
FRR_FILE = "frr.conf"
DEFAULT_MTU = 1500  # a host of no deployment (an IC database member)


@dataclass
class Host:
    """One host of the underlay, under the name the fabric gives it."""

    name: str
    mtu: int = DEFAULT_MTU
    loopbacks: list[IPv4Address] = field(default_factory=list)  # announced by BGP (the rendered frr.conf)
    addresses: list[IPv4Interface] = field(default_factory=list)  # declared (with their prefix) or a /32
    bgp: BgpPeering | None = None
    nft: list[tuple[PurePosixPath, str]] = field(default_factory=list)  # rendered nft files, in path order
    frr: tuple[PurePosixPath, str] | None = None
    roles: list[str] = field(default_factory=list)  # "chassis of openstack", "controller of openstack", ...

    @property
    def uplinks(self) -> list[str]:
        """The interfaces that join the lab's router: the BGP uplinks, else one link of the lab's."""
        return list(self.bgp.uplinks) if self.bgp is not None else ["ul0"]

    def holds(self, address: IPv4Address) -> bool:
        return address in self.loopbacks or any(a.ip == address for a in self.addresses)

    def add(self, address: IPv4Interface) -> None:
        if not self.holds(address.ip):
            self.addresses.append(address)


def _files(build: Build, hosts: dict[str, Host]) -> None:
    """Each host's rendered nft files and frr.conf, wherever in `_host/<deployment>/` they are."""
    for path in sorted(build.files):
        parts = path.parts
        if len(parts) != 6 or parts[1] != HOST_ROOT or parts[3] not in ROLES or parts[4] not in hosts:
            continue
        host = hosts[parts[4]]
        if path.suffix == ".nft":
            host.nft.append((path, build.files[path].text))
        elif path.name == FRR_FILE:
            host.frr = (path, build.files[path].text)


def hosts_of(build: Build) -> list[Host]:
    """Every host the fabric names that runs OVN's control or data plane, in the fabric's order."""
    fabric = build.plan.fabric
    out: dict[str, Host] = {}

    def host(name: str) -> Host:
        return out.setdefault(name, Host(name))

    for deployment in fabric.ovn_deployments:
        for h in deployment.hosts:
            item = host(h.name)
            item.mtu = max(item.mtu, deployment.underlay_mtu) if item.roles else deployment.underlay_mtu
            item.roles.append(f"chassis of {deployment.name}")
            tep = tunnel_address(h)
            if h.tunnel_endpoint.loopback is not None and h.bgp is not None:
                item.bgp = h.bgp
                if tep is not None and tep not in item.loopbacks:
                    item.loopbacks.append(tep)
            elif h.tunnel_endpoint.loopback is not None:
                item.add(h.tunnel_endpoint.loopback)
            interfaces: list[Ethernet | Bridge | Vlan] = [*h.ethernets, *h.bridges, *h.vlans]
            for interface in interfaces:
                for address in interface.addresses:
                    item.add(address)
        for member in deployment.databases.members:
            item = host(member.host)
            if not item.roles:
                item.mtu = deployment.underlay_mtu
            item.roles.append(f"controller of {deployment.name}")
            item.add(IPv4Interface(member.address))
    if fabric.interconnection is not None and any(d.interconnect for d in fabric.ovn_deployments):
        for ic in fabric.interconnection.database.members:
            ic_address = ip_address(ic.address)
            if isinstance(ic_address, IPv4Address):
                item = host(ic.node)
                item.roles.append("IC database member")
                item.add(IPv4Interface(ic_address))
    _files(build, out)
    return list(out.values())
