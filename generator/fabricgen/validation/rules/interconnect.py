"""Rules on the interconnection: zones, gateways, the IC database, the transit switch."""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import IPv4Network

from fabricgen.diagnostics import Finding, Severity
from fabricgen.model import Fabric
from fabricgen.validation.registry import rule

KUBE_OVN_TS_NAME = "ts"
KUBE_OVN_TS_SUBNET = IPv4Network("169.254.100.0/24")


@rule("FG101", "duplicate-zone", "Two zones share a name; az-name must be unique per OVN availability zone.")
def duplicate_zone(fabric: Fabric) -> Iterator[Finding]:
    seen: dict[str, int] = {}
    for i, zone in enumerate(fabric.zones):
        if zone.name in seen:
            yield Finding("FG101", ("zones", i, "name"),
                          f"zone name {zone.name!r} is already used by zones[{seen[zone.name]}]; "
                          "give every zone a unique name (it becomes the OVN az-name)")
        else:
            seen[zone.name] = i


@rule("FG102", "no-gateway-nodes",
      "A zone lists no gateway nodes, so nothing carries its traffic to the transit switch.")
def no_gateway_nodes(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        if not zone.gateway_nodes:
            yield Finding("FG102", ("zones", i, "gatewayNodes"),
                          "no gateway nodes: list at least one node (gw-nodes) that carries traffic "
                          "to the transit switch, two or more for failover")


@rule("FG103", "raft-members", "The IC database has an even number of raft members; use 1 or an odd number >= 3.")
def raft_members(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None:
        return
    members = fabric.interconnection.database.members
    if len(members) % 2 == 0:
        yield Finding("FG103", ("interconnection", "database", "members"),
                      f"{len(members)} raft members: a raft cluster of {len(members)} needs "
                      f"{len(members) // 2 + 1} to elect a leader, so it survives no more failures "
                      f"than {len(members) - 1} would; use 1 member or an odd number of at least 3")


@rule("FG104", "vxlan-mode", "VXLAN encapsulation without vxlan_mode on the IC database drops cross-zone traffic.")
def vxlan_mode(fabric: Fabric) -> Iterator[Finding]:
    ic = fabric.interconnection
    if ic is None:
        return
    if ic.encapsulation == "vxlan" and ic.database.vxlan_mode is False:
        yield Finding("FG104", ("interconnection", "database", "vxlanMode"),
                      "vxlanMode is false with vxlan encapsulation: transit switches then get tunnel "
                      "key 16711682, which VXLAN's 12 bits cannot carry, and packets vanish; "
                      "set vxlanMode: true (or leave it out)")
    if ic.encapsulation == "geneve" and ic.database.vxlan_mode is True:
        yield Finding("FG104", ("interconnection", "database", "vxlanMode"),
                      "vxlanMode has no effect with geneve encapsulation and caps local datapath keys "
                      "at 1023 once a vxlan gateway registers; remove it or switch to vxlan",
                      Severity.WARNING)


@rule("FG105", "database-zone", "The IC database names a zone that the fabric does not declare.")
def database_zone(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None:
        return
    db_zone = fabric.interconnection.database.zone
    names = [z.name for z in fabric.zones]
    if db_zone is not None and db_zone not in names:
        yield Finding("FG105", ("interconnection", "database", "zone"),
                      f"zone {db_zone!r} is not declared; use one of: {', '.join(names)}, "
                      "or leave zone out for an IC database outside the fabric's clusters")


@rule("FG106", "transit-address-unknown", "A zone has no transit address yet; no zone gets a route to it.")
def transit_unknown(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None or fabric.interconnection.auto_route:
        return
    for i, zone in enumerate(fabric.zones):
        if zone.transit_address is None:
            yield Finding("FG106", ("zones", i, "name"),
                          f"zone {zone.name!r} has no transitAddress, so no other zone routes to its "
                          "backbone; after it joins, read its address from `ovn-ic-sbctl show` "
                          "(or run `fabricgen transit`) and set transitAddress",
                          Severity.WARNING)


@rule("FG107", "transit-switch", "Kube-OVN's IC server always creates transit switch `ts` on 169.254.100.0/24.")
def transit_switch(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None:
        return
    ts = fabric.interconnection.transit_switch
    if ts.name != KUBE_OVN_TS_NAME:
        yield Finding("FG107", ("interconnection", "transitSwitch", "name"),
                      f"Kube-OVN's IC server names its first transit switch {KUBE_OVN_TS_NAME!r}; "
                      f"{ts.name!r} would never exist; use {KUBE_OVN_TS_NAME!r}")
    if ts.subnet != KUBE_OVN_TS_SUBNET:
        yield Finding("FG107", ("interconnection", "transitSwitch", "subnet"),
                      f"Kube-OVN's IC server gives {KUBE_OVN_TS_NAME!r} the subnet {KUBE_OVN_TS_SUBNET}; "
                      f"{ts.subnet} cannot take effect; use {KUBE_OVN_TS_SUBNET}")


@rule("FG108", "duplicate-gateway-node", "A gateway node is listed twice in one zone; Kube-OVN fails to establish.")
def duplicate_gateway(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        seen: set[str] = set()
        for j, node in enumerate(zone.gateway_nodes):
            if node in seen:
                yield Finding("FG108", ("zones", i, "gatewayNodes", j),
                              f"gateway node {node!r} is listed twice; list each node once")
            seen.add(node)


@rule("FG109", "duplicate-database-member", "Two IC database members share a node or an address.")
def duplicate_member(fabric: Fabric) -> Iterator[Finding]:
    nodes: set[str] = set()
    addresses: set[str] = set()
    if fabric.interconnection is None:
        return
    for j, member in enumerate(fabric.interconnection.database.members):
        path = ("interconnection", "database", "members", j)
        if member.node in nodes:
            yield Finding("FG109", (*path, "node"), f"node {member.node!r} is already a member; "
                          "each raft member needs its own node")
        if str(member.address) in addresses:
            yield Finding("FG109", (*path, "address"), f"address {member.address} is already a member's; "
                          "each raft member needs its own address")
        nodes.add(member.node)
        addresses.add(str(member.address))


@rule("FG110", "interconnection-missing", "The fabric declares zones but no interconnection section.")
def interconnection_missing(fabric: Fabric) -> Iterator[Finding]:
    if fabric.zones and fabric.interconnection is None:
        yield Finding("FG110", ("zones",),
                      "zones are joined by OVN interconnection, but there is no interconnection "
                      "section; add interconnection (with its database), or remove zones for a "
                      "platform-only fabric")


# vxlan_mode on the IC northbound database came with OVN 25.03; Kube-OVN builds its images on
# OVN branch-24.03 up to v1.14 and on branch-25.03 from v1.15.0 (kube-ovn
# dist/images/Dockerfile.base at v1.14.0 and v1.15.0).
VXLAN_MODE_KUBE_OVN = (1, 15)


@rule("FG111", "vxlan-kube-ovn-version",
      "VXLAN interconnection on a Kube-OVN older than 1.15, whose OVN (24.03) has no vxlan_mode.")
def vxlan_kube_ovn_version(fabric: Fabric) -> Iterator[Finding]:
    ic = fabric.interconnection
    if ic is None or ic.encapsulation != "vxlan" or not fabric.zones:
        return
    release = ic.kube_ovn_release
    where = ("interconnection", "kubeOvnVersion") if ic.kube_ovn_version is not None \
        else ("interconnection", "database", "image") if ic.database.image is not None \
        else ("interconnection", "database")
    if release is None:
        yield Finding("FG111", where,
                      f"cannot tell the zones' Kube-OVN version from image {ic.ic_image!r}; VXLAN "
                      "interconnection needs Kube-OVN 1.15 or later (OVN 25.03, vxlan_mode); state it as "
                      "interconnection.kubeOvnVersion, e.g. v1.15.0", Severity.WARNING)
    elif release < VXLAN_MODE_KUBE_OVN:
        shown = f"{release[0]}.{release[1]}"
        yield Finding("FG111", where,
                      f"Kube-OVN {shown} runs OVN 24.03, which has no vxlan_mode: its ovn-ic ignores the "
                      "setting and gives transit switches tunnel keys VXLAN cannot carry, so cross-zone "
                      "traffic is dropped; run Kube-OVN 1.15 or later (and say so in kubeOvnVersion) or "
                      "use geneve")


@rule("FG112", "ic-image-version",
      "The IC server's image is of another Kube-OVN release than interconnection.kubeOvnVersion.")
def ic_image_version(fabric: Fabric) -> Iterator[Finding]:
    ic = fabric.interconnection
    if ic is None or ic.kube_ovn_version is None or ic.database.zone is None:
        return
    wanted, image = ic.kube_ovn_full_version, ic.image_version
    if wanted is None or image is None or (wanted[0], wanted[1]) == (image[0], image[1]):
        return
    if ic.database.image is not None:
        yield Finding("FG112", ("interconnection", "database", "image"),
                      f"the IC server runs {ic.ic_image!r}, a Kube-OVN {image[0]}.{image[1]} image, while "
                      f"kubeOvnVersion says the zones run {ic.kube_ovn_version}; use the zones' release "
                      "(or leave image out: it follows kubeOvnVersion)", Severity.WARNING)
    else:
        yield Finding("FG112", ("interconnection", "kubeOvnVersion"),
                      f"kubeOvnVersion {ic.kube_ovn_version} names no patch release, so the IC server runs "
                      f"the default {ic.ic_image!r}; give the full version (e.g. v{wanted[0]}.{wanted[1]}.0) "
                      "or set interconnection.database.image", Severity.WARNING)


@rule("FG113", "external-ic-database-vxlan-mode",
      "The IC database runs outside every zone, so the rollout cannot wait for its vxlan_mode.")
def external_ic_database_vxlan_mode(fabric: Fabric) -> Iterator[Finding]:
    ic = fabric.interconnection
    if ic is None or ic.database.zone is not None or not ic.vxlan_mode or not fabric.zones:
        return
    rendered = fabric.delivery.rendered_path if fabric.delivery is not None else "rendered"
    yield Finding("FG113", ("interconnection", "database"),
                  "the IC database runs outside every zone, so nothing in the zones' rollout sets "
                  "vxlan_mode or waits for it, and a zone that joins first gets a transit switch keyed "
                  f"outside VXLAN's range; before the first zone joins (and after every rebuild of the "
                  f"database), run {rendered}/{fabric.metadata.name}/_host/_ic-db/configure-ic-db.sh where it "
                  "reaches the IC northbound database, or run the database in a zone (database.zone); "
                  "`fabricgen status` reports a database without it", Severity.WARNING)


# start-ic-db.sh passes ovn-ctl no client port, so the IC server listens on ovn-ctl's defaults
# (kubeovn/kube-ovn dist/images/start-ic-db.sh; ovn `utilities/ovn-ctl` DB_IC_NB_PORT, DB_IC_SB_PORT).
KUBE_OVN_IC_PORTS = {"nbPort": 6645, "sbPort": 6646}


@rule("FG114", "ic-server-ports",
      "The IC database runs in a zone on other ports than 6645/6646, where Kube-OVN's IC server never listens.")
def ic_server_ports(fabric: Fabric) -> Iterator[Finding]:
    ic = fabric.interconnection
    if ic is None or ic.database.zone is None:
        return
    given = {"nbPort": ic.database.nb_port, "sbPort": ic.database.sb_port}
    for field, port in given.items():
        wanted = KUBE_OVN_IC_PORTS[field]
        if port != wanted:
            yield Finding("FG114", ("interconnection", "database", field),
                          f"{field} {port}: the IC server fabricgen runs in zone {ic.database.zone} is Kube-OVN's "
                          f"start-ic-db.sh, which always listens on {wanted}, while every zone's ovn-ic-config "
                          f"would send its ovn-ic to {port}, so no zone joins; use {wanted}, or leave "
                          "database.zone out and run the IC database yourself on the ports you choose")


@rule("FG115", "ic-db-host-subset",
      "ic-db-host names fewer IC database members than run: the zones lose the database when those are down.")
def ic_db_host_subset(fabric: Fabric) -> Iterator[Finding]:
    ic = fabric.interconnection
    if ic is None or ic.database.hosts is None:
        return
    members = {str(m.address) for m in ic.database.members}
    hosts = set(ic.database.hosts)
    if hosts <= members and len(hosts) < len(members):
        left = sorted(members - hosts)
        yield Finding("FG115", ("interconnection", "database", "hosts"),
                      f"ic-db-host names {len(hosts)} of the {len(members)} members ({', '.join(sorted(hosts))}): "
                      f"every zone's ovn-ic reaches the IC database only there, so it loses it while those are down, "
                      f"though {', '.join(left)} still run it; list every member (or leave hosts out), and know "
                      "that changing ic-db-host rebuilds every zone's interconnection (fabricgen diff says so)",
                      Severity.WARNING)
