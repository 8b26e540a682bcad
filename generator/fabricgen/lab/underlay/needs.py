"""The flows OVN needs between the hosts of a fabric, each from one host's address to another's:

- tunnels (UDP 6081 Geneve, 4789 VXLAN) from each chassis to every other chassis of its
  deployment, and from each IC gateway chassis to every other interconnected deployment's IC
  gateways, at the source deployment's underlay MTU;
- OVSDB: each chassis to its deployment's southbound on every member, each controller to the
  northbound and southbound on every member (ovn-northd, ovn-ic, a raft leader elsewhere);
- raft: each member to every other member on 6643 and 6644;
- the IC database: each controller of an interconnected deployment to every IC database address.

These are worked out from the fabric here, on purpose not from what the renderers admit
(`plan.deployments.Chassis.peers`, `remote_gateways`): a flow the renderer forgets must still be
sent, or the firewall that forgets it would pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address, ip_address

from fabricgen.model.ovn import RAFT_PORTS, OvnDeployment
from fabricgen.pipeline import Build
from fabricgen.plan.deployments import tunnel_address, tunnel_port

SMALL = 64  # bytes of a datagram that fits any MTU


@dataclass(frozen=True)
class Need:
    """One flow: `source` host to `target` host's `address`, `protocol`/`port`; `size`: the IP
    packet's size for a tunnel (the source deployment's underlay MTU), 0 for a connection."""

    what: str  # "geneve tunnel", "southbound", "raft", ...
    source: str
    source_address: IPv4Address | None  # None: the kernel picks it, as a client's connect does
    target: str
    address: IPv4Address
    protocol: str  # "udp" or "tcp"
    port: int
    size: int = 0

    @property
    def label(self) -> str:
        src = f" ({self.source_address})" if self.source_address is not None else ""
        return f"{self.what}: {self.source}{src} -> {self.target} ({self.address}) {self.protocol}/{self.port}"


def _tunnels(deployment: OvnDeployment, others: list[OvnDeployment]) -> list[Need]:
    out = []
    what = f"{deployment.encapsulation} tunnel"
    port = tunnel_port(deployment)
    teps = [(h.name, a) for h in deployment.hosts if (a := tunnel_address(h)) is not None]
    for name, address in teps:
        out += [Need(what, name, address, peer, peer_address, "udp", port, deployment.underlay_mtu)
                for peer, peer_address in teps if peer != name]
    if deployment.interconnect is None:
        return out
    gateways = [(n, a) for n, a in teps if n in deployment.interconnect.gateway_chassis]
    for other in others:
        if other is deployment or other.interconnect is None:
            continue
        theirs = [(h.name, a) for h in other.hosts if h.name in other.interconnect.gateway_chassis
                  and (a := tunnel_address(h)) is not None]
        out += [Need(f"{what} between AZs", name, address, peer, peer_address, "udp", tunnel_port(other),
                     deployment.underlay_mtu) for name, address in gateways for peer, peer_address in theirs]
    return out


def _databases(deployment: OvnDeployment, ic: list[tuple[str, IPv4Address]], ic_ports: tuple[int, int]) -> list[Need]:
    db = deployment.databases
    members = [(m.host, m.address) for m in db.members]
    out = [Need("southbound", h.name, None, host, address, "tcp", db.sb_port)
           for h in deployment.hosts for host, address in members if h.name != host]
    for name, _ in members:
        out += [Need(what, name, None, host, address, "tcp", port)
                for host, address in members for what, port in (("northbound", db.nb_port), ("southbound", db.sb_port))]
        if len(members) > 1:
            out += [Need(f"raft {database}", name, None, host, address, "tcp", port)
                    for host, address in members if host != name for database, port in RAFT_PORTS.items()]
        if deployment.interconnect is not None:
            out += [Need(what, name, None, host, address, "tcp", port)
                    for host, address in ic for what, port in (("IC northbound", ic_ports[0]),
                                                               ("IC southbound", ic_ports[1]))]
    return out


def needs_of(build: Build) -> list[Need]:
    fabric = build.plan.fabric
    ic: list[tuple[str, IPv4Address]] = []
    ic_ports = (0, 0)
    if fabric.interconnection is not None:
        database = fabric.interconnection.database
        ic_ports = (database.nb_port, database.sb_port)
        ic = [(m.node, a) for m in database.members if isinstance(a := ip_address(m.address), IPv4Address)]
    out: list[Need] = []
    for deployment in fabric.ovn_deployments:
        out += _tunnels(deployment, fabric.ovn_deployments)
        out += _databases(deployment, ic, ic_ports)
    return list(dict.fromkeys(out))
