"""Derived values of OVN deployments: connection strings, tunnel addresses, consumer MTUs.

Renderers of host, controller and platform files read these, so a value such as
the southbound remote or a chassis's `ovn-encap-ip` has one definition.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address
from typing import Literal

from fabricgen.model.consumers import ConsumerBase
from fabricgen.model.hosts import Host
from fabricgen.model.ovn import TUNNEL_OVERHEAD, TUNNEL_PORT, OvnDeployment

INTEGRATION_BRIDGE = "br-int"
LOOPBACK_DEVICE = "lo"
OWNER_KEY = "fabricgen-owner"
"""`external_ids` key on every NB row a controller script creates; only rows carrying
its marker are ever deleted by a script, and only by the script that set it."""


def remote(deployment: OvnDeployment, port: int) -> str:
    """`tcp:IP:PORT[,tcp:IP:PORT]` (or ssl:) over the database members, in member order."""
    proto = deployment.databases.protocol
    return ",".join(f"{proto}:{m.address}:{port}" for m in deployment.databases.members)


def nb_remote(deployment: OvnDeployment) -> str:
    return remote(deployment, deployment.databases.nb_port)


def sb_remote(deployment: OvnDeployment) -> str:
    return remote(deployment, deployment.databases.sb_port)


def listen_target(deployment: OvnDeployment, port: int) -> str:
    """The `set-connection` target: the member's address, or every address for raft.

    A raft cluster shares one Connection table, so one row must suit every member;
    the firewall limits who reaches the port.
    """
    passive = "p" + deployment.databases.protocol
    members = deployment.databases.members
    if len(members) == 1:
        return f"{passive}:{port}:{members[0].address}"
    return f"{passive}:{port}"


def owner_marker(script: Literal["central", "ic"], deployment: OvnDeployment) -> str:
    """The `OWNER_KEY` value of one deployment's script: `central/<deployment>` or `ic/<deployment>`."""
    return f"{script}/{deployment.name}"


def tunnel_device(host: Host) -> str | None:
    """The interface that holds `ovn-encap-ip`."""
    tep = host.tunnel_endpoint
    if tep.loopback is not None:
        return LOOPBACK_DEVICE
    return tep.interface


def tunnel_address(host: Host) -> IPv4Address | None:
    """The chassis's `ovn-encap-ip`: the loopback, or the tunnel interface's first address."""
    tep = host.tunnel_endpoint
    if tep.loopback is not None:
        return tep.loopback.ip
    if tep.interface is None:
        return None
    addresses = host.interface_addresses(tep.interface)
    return addresses[0].ip if addresses else None


def consumer_encapsulation(deployment: OvnDeployment, consumer: ConsumerBase) -> str:
    return consumer.encapsulation or deployment.encapsulation


def consumer_mtu(deployment: OvnDeployment, consumer: ConsumerBase) -> int:
    return consumer.overlay_mtu or deployment.overlay_mtu


def tunnel_port(deployment: OvnDeployment) -> int:
    return TUNNEL_PORT[deployment.encapsulation]


def owner(deployment: OvnDeployment, host: Host) -> ConsumerBase | None:
    """The consumer that lists the host, if any."""
    return next((c for c in deployment.consumers if host.name in c.hosts), None)


@dataclass(frozen=True)
class Chassis:
    """A host as its deployment sees it."""

    deployment: OvnDeployment
    host: Host
    device: str
    address: IPv4Address
    consumer: ConsumerBase | None

    @property
    def peers(self) -> tuple[IPv4Address, ...]:
        """Tunnel addresses of the deployment's other chassis."""
        return tuple(a for h in self.deployment.hosts
                     if h.name != self.host.name and (a := tunnel_address(h)) is not None)


def remote_gateways(deployments: Sequence[OvnDeployment], item: Chassis) -> tuple[IPv4Address, ...]:
    """The tunnel addresses an IC gateway chassis exchanges transit traffic with: every other
    interconnected deployment's IC gateway chassis (ovn-ic binds the remote AZs' gateways as
    remote chassis, and the gateways tunnel to each other). Empty for any other chassis."""
    mine = item.deployment.interconnect
    if mine is None or item.host.name not in mine.gateway_chassis:
        return ()
    out: list[IPv4Address] = []
    for other in deployments:
        if other.name == item.deployment.name or other.interconnect is None:
            continue
        out += [a for h in other.hosts
                if h.name in other.interconnect.gateway_chassis and (a := tunnel_address(h)) is not None]
    return tuple(dict.fromkeys(out))


def chassis(deployment: OvnDeployment) -> list[Chassis]:
    """Every host of a validated deployment with its tunnel device and address."""
    out = []
    for host in deployment.hosts:
        device, address = tunnel_device(host), tunnel_address(host)
        if device is None or address is None:
            raise ValueError(f"host {host.name} has no tunnel address; validation should have said so")
        out.append(Chassis(deployment, host, device, address, owner(deployment, host)))
    return out


__all__ = ["INTEGRATION_BRIDGE", "OWNER_KEY", "TUNNEL_OVERHEAD", "Chassis", "chassis", "consumer_encapsulation",
           "consumer_mtu", "listen_target", "nb_remote", "owner", "owner_marker", "remote_gateways",
           "sb_remote", "tunnel_address", "tunnel_device", "tunnel_port"]
