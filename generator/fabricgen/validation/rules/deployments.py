"""Rules on OVN deployments and their hosts (FG5xx): databases, tunnel endpoints, VLANs, bridges,
provider networks."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from fabricgen.diagnostics import Finding, Path
from fabricgen.model import Fabric
from fabricgen.model.hosts import Bridge, Ethernet, Host, Vlan
from fabricgen.model.ovn import RAFT_PORTS, DatabaseMember, OvnDeployment
from fabricgen.plan.deployments import tunnel_address
from fabricgen.validation.registry import rule


def _hosts(fabric: Fabric) -> Iterator[tuple[Path, Host]]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        for h, host in enumerate(deployment.hosts):
            yield ("ovnDeployments", d, "hosts", h), host


@rule("FG500", "empty-fabric", "The fabric declares neither zones nor OVN deployments.")
def empty_fabric(fabric: Fabric) -> Iterator[Finding]:
    if not fabric.zones and not fabric.ovn_deployments:
        yield Finding("FG500", ("metadata",),
                      "the fabric declares nothing to render; add zones (Kube-OVN interconnection) "
                      "or ovnDeployments (an OVN with its hosts and platforms)")


@rule("FG501", "duplicate-deployment", "Two OVN deployments share a name (their output directory).")
def duplicate_deployment(fabric: Fabric) -> Iterator[Finding]:
    seen: dict[str, int] = {}
    for d, deployment in enumerate(fabric.ovn_deployments):
        if deployment.name in seen:
            yield Finding("FG501", ("ovnDeployments", d, "name"),
                          f"deployment name {deployment.name!r} is already used by "
                          f"ovnDeployments[{seen[deployment.name]}]; give every deployment its own name")
        seen.setdefault(deployment.name, d)


@rule("FG502", "tunnel-endpoint", "A host's tunnel endpoint is missing, doubled or names an undeclared interface.")
def tunnel_endpoint(fabric: Fabric) -> Iterator[Finding]:
    for path, host in _hosts(fabric):
        tep = host.tunnel_endpoint
        where = (*path, "tunnelEndpoint")
        if (tep.interface is None) == (tep.loopback is None):
            yield Finding("FG502", where, "give exactly one of interface (a routed interface such as "
                          "eth1.2000) or loopback (a /32 announced by BGP)")
        elif tep.interface is not None and host.interface_addresses(tep.interface) is None:
            yield Finding("FG502", (*where, "interface"),
                          f"interface {tep.interface!r} is not declared on host {host.name!r}; declare it "
                          "under ethernets or vlans (with its address)")
        elif tep.loopback is not None and tep.loopback.network.prefixlen != 32:
            yield Finding("FG502", (*where, "loopback"),
                          f"loopback tunnel endpoint {tep.loopback} must be a /32 host route, e.g. "
                          f"{tep.loopback.ip}/32, so BGP announces exactly this address")


@rule("FG503", "tunnel-endpoint-on-bridge", "The tunnel endpoint is a bridge or a bridge port, which must not hold it.")
def tunnel_on_bridge(fabric: Fabric) -> Iterator[Finding]:
    for path, host in _hosts(fabric):
        name = host.tunnel_endpoint.interface
        if name is None:
            continue
        where = (*path, "tunnelEndpoint", "interface")
        if any(b.name == name for b in host.bridges):
            yield Finding("FG503", where,
                          f"{name!r} is an OVS bridge: it switches guest and provider traffic and is no "
                          "routed host interface; put the tunnel endpoint on a VLAN sub-interface "
                          "(e.g. eth1.2000 with link eth1) or a loopback")
        elif name in host.bridge_ports():
            yield Finding("FG503", where,
                          f"{name!r} is a port of bridge {host.bridge_ports()[name]!r}, so its address "
                          "is unusable; put the tunnel endpoint on a VLAN sub-interface of it instead")


@rule("FG504", "tunnel-endpoint-no-address", "The tunnel endpoint interface has no address to encapsulate from.")
def tunnel_no_address(fabric: Fabric) -> Iterator[Finding]:
    for path, host in _hosts(fabric):
        name = host.tunnel_endpoint.interface
        if name is None:
            continue
        if name in host.bridge_ports() or any(b.name == name for b in host.bridges):
            continue  # FG503 says why
        addresses = host.interface_addresses(name)
        if addresses == []:
            yield Finding("FG504", (*path, "tunnelEndpoint", "interface"),
                          f"interface {name!r} has no address, so ovn-encap-ip would be empty; add the "
                          "routed tunnel address (e.g. 10.250.0.11/20) to its addresses")


@rule("FG505", "vlan-id-range", "A VLAN id is outside 1-4094.")
def vlan_range(fabric: Fabric) -> Iterator[Finding]:
    for path, host in _hosts(fabric):
        for v, vlan in enumerate(host.vlans):
            if not 1 <= vlan.id <= 4094:
                yield Finding("FG505", (*path, "vlans", v, "id"),
                              f"VLAN id {vlan.id} is outside 1-4094 (0 means untagged, 4095 is "
                              "reserved); use the tag the switch trunks")


@rule("FG506", "vlan-link-undeclared", "A VLAN's link is not a declared ethernet of the host.")
def vlan_link(fabric: Fabric) -> Iterator[Finding]:
    for path, host in _hosts(fabric):
        names = [e.name for e in host.ethernets]
        for v, vlan in enumerate(host.vlans):
            if vlan.link not in names:
                yield Finding("FG506", (*path, "vlans", v, "link"),
                              f"link {vlan.link!r} is not a declared ethernet of host {host.name!r}; "
                              f"declare it under ethernets (declared: {', '.join(names) or 'none'})")


@rule("FG507", "duplicate-system-id", "Two chassis share a system-id (or two hosts a name).")
def duplicate_system_id(fabric: Fabric) -> Iterator[Finding]:
    names: dict[str, Path] = {}
    for path, host in _hosts(fabric):
        if host.name in names:
            yield Finding("FG507", (*path, "name"),
                          f"host name {host.name!r} is used twice; each host has its own output "
                          "directory and chassis")
        names.setdefault(host.name, path)
    for d, deployment in enumerate(fabric.ovn_deployments):
        ids: dict[str, str] = {}
        for h, host in enumerate(deployment.hosts):
            chassis_id = host.chassis_name
            if chassis_id in ids and ids[chassis_id] != host.name:
                field = "systemId" if host.system_id else "name"
                yield Finding("FG507", ("ovnDeployments", d, "hosts", h, field),
                              f"system-id {chassis_id!r} is also the system-id of host {ids[chassis_id]!r}; the two "
                              "chassis would replace each other in the southbound database; make it unique")
            ids.setdefault(chassis_id, host.name)


@rule("FG508", "duplicate-tunnel-address", "Two chassis of one deployment share a tunnel address.")
def duplicate_tunnel(fabric: Fabric) -> Iterator[Finding]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        seen: dict[str, str] = {}
        for h, host in enumerate(deployment.hosts):
            address = tunnel_address(host)
            if address is None:
                continue
            if str(address) in seen:
                tep = host.tunnel_endpoint
                field = "loopback" if tep.loopback is not None else "interface"
                yield Finding("FG508", ("ovnDeployments", d, "hosts", h, "tunnelEndpoint", field),
                              f"tunnel address {address} is also the tunnel address of host "
                              f"{seen[str(address)]!r}; tunnels to both would end at one of them; give "
                              "every chassis its own address")
            seen.setdefault(str(address), host.name)


@rule("FG509", "bridge-mapping-undeclared", "A bridge mapping names a bridge the host does not declare.")
def bridge_mapping(fabric: Fabric) -> Iterator[Finding]:
    for path, host in _hosts(fabric):
        bridges = [b.name for b in host.bridges]
        for m, mapping in enumerate(host.bridge_mappings):
            if mapping.bridge not in bridges:
                yield Finding("FG509", (*path, "bridgeMappings", m, "bridge"),
                              f"bridge {mapping.bridge!r} is not declared on host {host.name!r}; "
                              f"ovn-controller would map {mapping.physical_network} to nothing; declare "
                              f"it under bridges (declared: {', '.join(bridges) or 'none'})")


@rule("FG510", "bridge-port-address", "A NIC that is a bridge port carries addresses; only the bridge or a VLAN may.")
def bridge_port_address(fabric: Fabric) -> Iterator[Finding]:
    for path, host in _hosts(fabric):
        ports = host.bridge_ports()
        for e, ethernet in enumerate(host.ethernets):
            if ethernet.addresses and ethernet.name in ports:
                yield Finding("FG510", (*path, "ethernets", e, "addresses"),
                              f"{ethernet.name!r} is a port of bridge {ports[ethernet.name]!r}; an address "
                              "on it is unreachable; move it to the bridge or a VLAN sub-interface")
        for b, bridge in enumerate(host.bridges):
            for p, port in enumerate(bridge.interfaces):
                if port not in [e.name for e in host.ethernets]:
                    yield Finding("FG510", (*path, "bridges", b, "interfaces", p),
                                  f"bridge port {port!r} is not a declared ethernet of host {host.name!r}; "
                                  "netplan refuses undeclared interfaces; declare it under ethernets")


@rule("FG511", "loopback-without-bgp", "A loopback tunnel endpoint is not announced by BGP.")
def loopback_bgp(fabric: Fabric) -> Iterator[Finding]:
    for path, host in _hosts(fabric):
        if host.tunnel_endpoint.loopback is None:
            continue
        if host.bgp is None:
            yield Finding("FG511", (*path, "tunnelEndpoint", "loopback"),
                          f"loopback {host.tunnel_endpoint.loopback} is only reachable if BGP announces "
                          "it; add bgp (asn, uplinks) to the host")
        elif not host.bgp.announce_tunnel_endpoint:
            yield Finding("FG511", (*path, "bgp", "announceTunnelEndpoint"),
                          "the loopback tunnel endpoint is not announced, so no chassis can reach it; "
                          "set announceTunnelEndpoint: true")
        else:
            names = [e.name for e in host.ethernets]
            for u, uplink in enumerate(host.bgp.uplinks):
                if uplink not in names:
                    yield Finding("FG511", (*path, "bgp", "uplinks", u),
                                  f"uplink {uplink!r} is not a declared ethernet of host {host.name!r}; "
                                  "BGP unnumbered peers over declared NICs")


@rule("FG512", "database-members", "An OVN deployment's raft members are even in number or repeat an address.")
def database_members(fabric: Fabric) -> Iterator[Finding]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        members = deployment.databases.members
        path = ("ovnDeployments", d, "databases", "members")
        if len(members) % 2 == 0:
            yield Finding("FG512", path, f"{len(members)} raft members survive no more failures than "
                          f"{len(members) - 1}; use 1 member or an odd number of at least 3")
        seen: set[str] = set()
        for m, member in enumerate(members):
            if str(member.address) in seen:
                yield Finding("FG512", (*path, m, "address"),
                              f"address {member.address} is already a member's; each member needs its own")
            seen.add(str(member.address))


@rule("FG513", "ssl-certificates", "An ssl deployment has no certificate paths, or tcp has some.")
def ssl_certificates(fabric: Fabric) -> Iterator[Finding]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        db = deployment.databases
        path = ("ovnDeployments", d, "databases")
        if db.protocol == "ssl" and db.ssl is None:
            yield Finding("FG513", (*path, "protocol"),
                          "protocol ssl needs the ssl section (privateKey, certificate, caCertificate); "
                          "every client and server must present a certificate")
        if db.protocol == "tcp" and db.ssl is not None:
            yield Finding("FG513", (*path, "ssl"),
                          "certificates are ignored with protocol tcp; set protocol: ssl or remove ssl")


@rule("FG514", "provider-network-unmapped", "No host maps a provider network's physical network to a bridge.")
def provider_unmapped(fabric: Fabric) -> Iterator[Finding]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        mapped = {m.physical_network for h in deployment.hosts for m in h.bridge_mappings}
        for p, network in enumerate(deployment.provider_networks):
            if network.physical_network not in mapped:
                yield Finding("FG514", ("ovnDeployments", d, "providerNetworks", p, "physicalNetwork"),
                              f"no host maps {network.physical_network!r} to a bridge, so "
                              f"{network.name!r} reaches nothing; add a bridgeMappings entry on the "
                              "hosts with the uplink")


def _interfaces(host: Host) -> Iterator[tuple[Path, str, str]]:
    """Every interface a host declares: (path to its name, kind, name), in file order per kind."""
    kinds: tuple[tuple[str, str, Sequence[Ethernet | Bridge | Vlan]], ...] = (
        ("ethernet", "ethernets", host.ethernets), ("bridge", "bridges", host.bridges), ("VLAN", "vlans", host.vlans))
    for kind, key, items in kinds:
        for n, item in enumerate(items):
            yield (key, n, "name"), kind, item.name


@rule("FG515", "duplicate-interface", "A host declares one name twice among its ethernets, bridges and VLANs.")
def duplicate_interface(fabric: Fabric) -> Iterator[Finding]:
    for path, host in _hosts(fabric):
        seen: dict[str, str] = {}
        for where, kind, name in _interfaces(host):
            if name in seen:
                yield Finding("FG515", (*path, *where),
                              f"{name!r} is already declared on host {host.name!r} as {seen[name]}; netplan "
                              "keeps one definition per interface name (two ethernets merge, an ethernet "
                              "and a bridge or VLAN of one name fail netplan generate); declare it once or "
                              "rename it")
            else:
                seen[name] = f"an {kind}" if kind == "ethernet" else f"a {kind}"


# Interfaces that exist without netplan: the kernel's loopback, and what Open vSwitch and
# ovn-controller create (the integration bridge `ovn-bridge`, default br-int; the datapath
# port; the tunnel devices of the OVS kernel datapath).
RESERVED_INTERFACES = {
    "lo": "the loopback interface; a loopback tunnel endpoint (tunnelEndpoint.loopback) is written on it "
          "by fabricgen itself",
    "br-int": "the integration bridge ovn-controller creates and owns: it sets its ports, flows and "
              "fail-mode, and netplan's OVS units would fight it",
    "ovs-system": "the Open vSwitch kernel datapath device, created by ovs-vswitchd",
    "genev_sys_6081": "the Geneve tunnel device Open vSwitch creates",
    "vxlan_sys_4789": "the VXLAN tunnel device Open vSwitch creates",
}


@rule("FG516", "reserved-interface",
      "A host declares lo, or an interface Open vSwitch or ovn-controller creates (br-int, ovs-system, tunnels).")
def reserved_interface(fabric: Fabric) -> Iterator[Finding]:
    for path, host in _hosts(fabric):
        for where, kind, name in _interfaces(host):
            if name in RESERVED_INTERFACES:
                yield Finding("FG516", (*path, *where),
                              f"{kind} {name!r} is {RESERVED_INTERFACES[name]}; do not declare it; "
                              "remove it or use another name")


def _listeners(deployment: OvnDeployment) -> tuple[tuple[str, str, int], ...]:
    """(field, database, port) of a deployment's two client listeners."""
    db = deployment.databases
    return ("nbPort", "northbound", db.nb_port), ("sbPort", "southbound", db.sb_port)


@rule("FG517", "database-ports",
      "An OVN deployment's NB and SB share a port, take a raft port, or take another deployment's port on a "
      "shared controller.")
def database_ports(fabric: Fabric) -> Iterator[Finding]:
    earlier: list[tuple[OvnDeployment, DatabaseMember]] = []
    for d, deployment in enumerate(fabric.ovn_deployments):
        db = deployment.databases
        path = ("ovnDeployments", d, "databases")
        if db.sb_port == db.nb_port:
            yield Finding("FG517", (*path, "sbPort"),
                          f"port {db.sb_port} is also nbPort: the northbound and southbound ovsdb-servers of a "
                          "controller cannot both listen on it; give each its own port (defaults 6641 and 6642)")
        raft = {port: name for name, port in RAFT_PORTS.items()}
        for field, _database, port in _listeners(deployment):
            if len(db.members) > 1 and port in raft:
                yield Finding("FG517", (*path, field),
                              f"port {port} is a raft port: the {len(db.members)} members connect to each other on "
                              f"{RAFT_PORTS['northbound']} (northbound) and {RAFT_PORTS['southbound']} (southbound), "
                              "which ovn-central.nft opens to the members alone; use another port")
        clashes = _shared_controller_ports(deployment, earlier)
        for field, (other, member, database) in clashes.items():
            port = db.nb_port if field == "nbPort" else db.sb_port
            yield Finding("FG517", (*path, field),
                          f"port {port} is also the {database} port of deployment {other.name!r} on controller "
                          f"{member.host} ({member.address}): two ovsdb-servers on one host cannot both listen "
                          "on it; give this deployment other ports")
        earlier += [(deployment, m) for m in db.members]


def _beside(member: DatabaseMember, earlier: list[tuple[OvnDeployment, DatabaseMember]],
            ) -> list[tuple[OvnDeployment, DatabaseMember]]:
    """The earlier deployments' members on the same controller as `member` (host name or address)."""
    return [(other, theirs) for other, theirs in earlier
            if theirs.host == member.host or theirs.address == member.address]


def _shared_controller_ports(deployment: OvnDeployment, earlier: list[tuple[OvnDeployment, DatabaseMember]],
                             ) -> dict[str, tuple[OvnDeployment, DatabaseMember, str]]:
    """This deployment's port fields that an earlier deployment listens on at one of its controllers
    (a member of the same host name or address): the first such deployment and member each."""
    out: dict[str, tuple[OvnDeployment, DatabaseMember, str]] = {}
    for member in deployment.databases.members:
        for other, theirs in _beside(member, earlier):
            for field, _database, port in _listeners(deployment):
                for _field, database, their_port in _listeners(other):
                    if port == their_port:
                        out.setdefault(field, (other, theirs, database))
    return out


@rule("FG519", "shared-controller",
      "Two OVN deployments on one controller both run raft (6643/6644 are fixed) or both join the "
      "interconnection (one ovn-ic service per host).")
def shared_controller(fabric: Fabric) -> Iterator[Finding]:
    earlier: list[tuple[OvnDeployment, DatabaseMember]] = []
    for d, deployment in enumerate(fabric.ovn_deployments):
        raft = len(deployment.databases.members) > 1
        for m, member in enumerate(deployment.databases.members):
            path = ("ovnDeployments", d, "databases", "members", m, "host")
            for other, _theirs in _beside(member, earlier)[:1]:
                where = f"controller {member.host} ({member.address}) is also a member of deployment {other.name!r}"
                if raft and len(other.databases.members) > 1:
                    yield Finding("FG519", path,
                                  f"{where}, and both run a raft cluster: raft takes ports {RAFT_PORTS['northbound']}"
                                  f" and {RAFT_PORTS['southbound']} on every member, which ovn-ctl gives no "
                                  "field to change; put this deployment's members on other hosts")
                elif deployment.interconnect is not None and other.interconnect is not None:
                    yield Finding("FG519", path,
                                  f"{where}, and both join the interconnection: each needs its own ovn-ic, and a "
                                  "host has one ovn-ic.service (its drop-in, ovn-ic.service.d/10-fabricgen.conf, "
                                  "would name one deployment's databases); put this deployment's members on other "
                                  "hosts")
        earlier += [(deployment, m) for m in deployment.databases.members]


@rule("FG518", "provider-network-name",
      "Two provider networks of a deployment share a switch or port name, or one takes the transit switch's.")
def provider_network_names(fabric: Fabric) -> Iterator[Finding]:
    transit = fabric.interconnection.transit_switch.name if fabric.interconnection is not None else None
    for d, deployment in enumerate(fabric.ovn_deployments):
        switches: set[str] = set()
        ports: dict[str, str] = {}
        for p, network in enumerate(deployment.provider_networks):
            path = ("ovnDeployments", d, "providerNetworks", p)
            if network.name in switches:
                yield Finding("FG518", (*path, "name"),
                              f"provider network {network.name!r} is already declared; configure-ovn-central.sh "
                              "makes one logical switch per name: rename it or merge the two")
            elif deployment.interconnect is not None and network.name == transit:
                yield Finding("FG518", (*path, "name"),
                              f"provider network {network.name!r} is named like the transit switch, which ovn-ic "
                              "copies into this deployment's northbound database; rename it")
            elif network.port_name in ports:
                yield Finding("FG518", (*path, "port" if network.port is not None else "name"),
                              f"port {network.port_name!r} is already the port of provider network "
                              f"{ports[network.port_name]!r}; a logical switch port sits on one switch: give this "
                              "network another port name")
            switches.add(network.name)
            ports.setdefault(network.port_name, network.name)
