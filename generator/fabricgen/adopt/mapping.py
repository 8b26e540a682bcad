"""Live objects to a fabric: what `fabricgen import` writes, and what became of each object.

The mapping reads each cluster's objects the way Kube-OVN and SUSE Virtualization use them, and
writes the fabric that renders them back:

- a cluster is a zone when it has `kube-system/ovn-ic-config` with `enable-ic: "true"`; its
  `az-name` is the zone's name, `gw-nodes` its gateway nodes; `ic-db-host`, the ports and
  `auto-route` are the interconnection's (the first zone's; another zone that says otherwise is a
  conflict). A cluster without it is not joined: its objects are unmapped. Two clusters with one
  `az-name` are a conflict: the first is the zone.
- the zone's transit address is its port on the transit switch in `ovn-ic-sbctl show`; two AZs
  with one address are a conflict. The encapsulation is the Configuration's
  `networking.tunnelType` (else the show's gateway encaps); `vxlan_mode` comes from the IC
  northbound options when captured. The IC database members are `ic-db-host`'s addresses, named
  by the Nodes whose InternalIP they are; the cluster of those Nodes runs the database.
- the cluster networks: the pod CIDR of the default Subnet (`spec.default`, else the
  Configuration's `ipv4.podCIDR`), the join Subnet's CIDR, the Configuration's service CIDR, and
  Canal's range from the `rke2-canal` HelmChart (`spec.set` `global.clusterCIDRv4`, which RKE2
  sets on every packaged chart: rancher/rke2 `pkg/bootstrap/bootstrap.go` `setChartValues`).
- the backbone: the Subnet of `ovn-cluster` on an overlay network (provider `<nad>.<ns>.ovn`),
  other than the default and join Subnets and the NAT gateways' external network, named
  `backbone-<zone>` if there are several. The platform is `harvester` when its NAD carries SUSE
  Virtualization's `network.harvesterhci.io/type` label (its NAD controller sets it on every
  kube-ovn NAD).
- `ovn-cluster`'s routes: a static route to another zone's backbone through that zone's transit
  address, and its 31000 allow policy, are what fabricgen derives: left out. Every other route and
  policy the schema can express is kept in `defaultVpc`; one it cannot (a route table, an ECMP
  mode, BFD, several next hops) stays out, so the Vpc is partial. A route to another zone's
  backbone through any other next hop is stale: a conflict.
- tenant VPCs with their subnets (on overlay networks) and their peerings (both sides naming
  each other, `.1` and `.2` of one network); the peering routes and the NAT default route are
  derived. NAT gateways with their elastic IPs and rules, and the external network they use.

Every live object ends up `rendered` (the fabric renders it; the proof compares them), `read`
(used for a value, not rendered: Nodes, Kube-OVN's own Subnets, Canal's HelmChart), `unmapped`
(fabricgen does not manage it) or `conflict`, each with its reason. Values that cannot be
expressed (a name that is not a DNS-1123 label, a CIDR that is not IPv4) are left out with the
reason, never guessed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from typing import Any

from fabricgen.adopt.inputs import ClusterInput, LiveInput
from fabricgen.errors import FabricgenError
from fabricgen.live_state import icnb_options
from fabricgen.live_state import kube_objects as ko
from fabricgen.model.common import DNS_LABEL, DNS_SUBDOMAIN
from fabricgen.model.interconnect import transit_switch_name
from fabricgen.serialise import commented_yaml as cy
from fabricgen.source.provenance import printable

KUBE_SYSTEM = "kube-system"
IC_CONFIG = ko.ObjectId("", "ConfigMap", KUBE_SYSTEM, "ovn-ic-config")
NAT_GW_CONFIG = ko.ObjectId("", "ConfigMap", KUBE_SYSTEM, "ovn-vpc-nat-gw-config")
CONFIGURATION = ko.ObjectId("kubeovn.io", "Configuration", KUBE_SYSTEM, "kubeovn")
DEFAULT_VPC = "ovn-cluster"
CANAL = ko.ObjectId("helm.cattle.io", "HelmChart", KUBE_SYSTEM, "rke2-canal")
EXTERNAL_NETWORK = "ovn-vpc-external-network"
HARVESTER_TYPE = "network.harvesterhci.io/type"
HARVESTER_CLUSTER_NETWORK = "network.harvesterhci.io/clusternetwork"
ALLOW_PRIORITY = 31000
DEFAULTS = {"podCIDR": "10.54.0.0/16", "joinCIDR": "100.64.0.0/16", "serviceCIDR": "10.55.0.0/16"}
_LABEL = re.compile(DNS_LABEL)
_SUBDOMAIN = re.compile(DNS_SUBDOMAIN)
_DNS_OPTION = re.compile(r"dns_server=\{([0-9.;]+)\}")  # matched whole (fullmatch)


class NothingToImport(FabricgenError):
    """No cluster of the input is an interconnected zone."""


@dataclass
class Use:
    """What became of one live object."""

    cluster: str
    obj: ko.LiveObject
    status: str  # rendered | read | unmapped | conflict
    reason: str
    zone: str | None = None
    unexpressed: list[str] = field(default_factory=list)  # what the fabric cannot say of it

    @property
    def id(self) -> ko.ObjectId:
        return self.obj.id


@dataclass
class AzUse:
    """One availability zone of `ovn-ic-sbctl show`."""

    name: str
    status: str  # imported | unmapped | conflict
    reason: str
    address: str | None
    port: str | None
    line: int


@dataclass
class Imported:
    site: str
    document: cy.Map
    header: list[str]
    uses: list[Use]
    azs: list[AzUse]
    zone_clusters: dict[str, str]  # zone -> cluster
    notes: list[str]

    def uses_of(self, cluster: str) -> dict[ko.ObjectId, Use]:
        return {u.id: u for u in self.uses if u.cluster == cluster}


def _label(value: Any) -> str | None:
    return value if isinstance(value, str) and len(value) <= 63 and _LABEL.fullmatch(value) else None


def _node_name(value: Any) -> str | None:
    return value if isinstance(value, str) and len(value) <= 253 and _SUBDOMAIN.fullmatch(value) else None


def _network(value: Any) -> IPv4Network | None:
    """One IPv4 network in CIDR form without host bits, or None."""
    if not isinstance(value, str):
        return None
    try:
        return IPv4Network(value.strip(), strict=True)
    except ValueError:
        return None


def _address(value: Any) -> IPv4Address | None:
    if not isinstance(value, str):
        return None
    try:
        return IPv4Address(value.strip())
    except ValueError:
        return None


def _first_ipv4_network(value: Any) -> IPv4Network | None:
    """The IPv4 network of a comma-separated dual-stack value such as `10.52.0.0/16,fd00::/56`."""
    if not isinstance(value, str):
        return None
    return next((n for n in map(_network, value.split(",")) if n is not None), None)


def _dict(value: Any) -> dict[str, Any]:
    """A mapping of the live object, or {} when it holds anything else there."""
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _spec(obj: ko.LiveObject) -> dict[str, Any]:
    return _dict(obj.body.get("spec"))


def _data(obj: ko.LiveObject) -> dict[str, Any]:
    data = obj.body.get("data")
    return data if isinstance(data, dict) else {}


def _labels(obj: ko.LiveObject) -> dict[str, Any]:
    return _dict(_dict(obj.body.get("metadata")).get("labels"))


def _nad_config(nad: ko.LiveObject) -> dict[str, Any]:
    try:
        config = json.loads(str(_spec(nad).get("config", "")))
    except ValueError:
        return {}
    return config if isinstance(config, dict) else {}


def _ovn_provider(provider: Any) -> tuple[str, str] | None:
    """`<nad>.<namespace>.ovn` -> (nad, namespace): an attachment's provider (kube-ovn pkg/util IsOvnProvider)."""
    if not isinstance(provider, str):
        return None
    parts = provider.split(".")
    if len(parts) != 3 or parts[2] != "ovn" or not parts[0] or not parts[1]:
        return None
    return parts[0], parts[1]


def _p(text: object) -> str:
    """A live value as a comment shows it: one printable line."""
    return printable(str(text))


@dataclass
class _Zone:
    cluster: ClusterInput
    name: str
    data: dict[str, Any]
    index: int
    doc: cy.Map = field(default_factory=cy.Map)
    backbone_subnet: ko.LiveObject | None = None
    backbone_cidr: IPv4Network | None = None
    transit: IPv4Address | None = None
    harvester: bool = False


class _Mapper:
    def __init__(self, live: LiveInput, site: str) -> None:
        self.live = live
        self.site = site
        self.uses: dict[tuple[str, ko.ObjectId], Use] = {}
        self.notes: list[str] = []
        self.zones: list[_Zone] = []
        for cluster in live.clusters:
            for ident, obj in cluster.objects.items():
                self.uses[(cluster.name, ident)] = Use(cluster.name, obj, "unmapped", _default_reason(ident))

    # -------------------------------------------------------------- bookkeeping
    def use(self, cluster: ClusterInput, ident: ko.ObjectId, status: str, reason: str,
            zone: str | None = None) -> Use | None:
        found = self.uses.get((cluster.name, ident))
        if found is None:
            return None
        if found.status == "conflict" and status != "conflict":
            found.zone = found.zone or zone
            return found
        found.status, found.reason, found.zone = status, reason, zone
        return found

    def conflict(self, cluster: ClusterInput, ident: ko.ObjectId, reason: str, zone: str | None = None) -> None:
        found = self.uses.get((cluster.name, ident))
        if found is None:
            return
        if found.status == "conflict":
            found.reason += f"; {reason}"
        else:
            found.status, found.reason = "conflict", reason
        found.zone = found.zone or zone

    def unexpressed(self, cluster: ClusterInput, ident: ko.ObjectId, what: str) -> None:
        found = self.uses.get((cluster.name, ident))
        if found is not None:
            found.unexpressed.append(what)

    def of_kind(self, cluster: ClusterInput, group: str, kind: str) -> list[ko.LiveObject]:
        return [o for i, o in cluster.objects.items() if (i.group, i.kind) == (group, kind)]

    # -------------------------------------------------------------- zones
    def find_zones(self) -> None:
        by_name: dict[str, _Zone] = {}
        for cluster in self.live.clusters:
            config = cluster.objects.get(IC_CONFIG)
            if config is None:
                for ident in cluster.objects:
                    self.use(cluster, ident, "unmapped", f"cluster {_p(cluster.name)} has no ConfigMap "
                             "kube-system/ovn-ic-config: it is not joined to the interconnection, so it is no "
                             "zone of the fabric; add it to fabric.yaml as a zone to join it")
                self.notes.append(f"cluster {_p(cluster.name)}: no ovn-ic-config, not joined; left out")
                continue
            data = {str(k): v for k, v in _data(config).items()}
            if str(data.get("enable-ic", "")).strip() != "true":
                for ident in cluster.objects:
                    self.use(cluster, ident, "unmapped", f"cluster {_p(cluster.name)}: ovn-ic-config has "
                             f"enable-ic {_p(data.get('enable-ic'))!s}, not \"true\": not joined, so no zone")
                self.notes.append(f"cluster {_p(cluster.name)}: interconnection disabled (enable-ic); left out")
                continue
            az = str(data.get("az-name", "")).strip()
            if _label(az) is None:
                self.conflict(cluster, IC_CONFIG, f"az-name {_p(az)!r} is not a DNS-1123 label, which fabricgen "
                              "needs for a zone's name (and its output directory)")
                self._left_out(cluster, "its az-name cannot be a zone's name")
                continue
            if az in by_name:
                other = by_name[az]
                self.conflict(cluster, IC_CONFIG, f"az-name {az} is also cluster {_p(other.cluster.name)}'s: "
                              "Kube-OVN registers one availability zone per name, so the two clusters overwrite "
                              f"each other in the IC database; give each its own az-name (the fabric has cluster "
                              f"{_p(other.cluster.name)} as zone {az})")
                self._left_out(cluster, f"its az-name {az} is another cluster's")
                continue
            zone = _Zone(cluster, az, data, len(self.zones))
            if not self.find_backbone(zone):
                self._left_out(cluster, "it has no backbone fabricgen can render")
                continue
            by_name[az] = zone
            self.zones.append(zone)
        if not self.zones:
            raise NothingToImport("no cluster of the input is joined to the interconnection (none has "
                                  "kube-system/ovn-ic-config with enable-ic \"true\"); nothing to import, "
                                  "nothing written")

    def _left_out(self, cluster: ClusterInput, why: str) -> None:
        for ident, use in self.uses.items():
            if ident[0] == cluster.name and use.status == "unmapped":
                use.reason = f"cluster {_p(cluster.name)} is not imported: {why}"

    # -------------------------------------------------------------- the IC southbound
    def transit_switch(self) -> tuple[str, IPv4Network | None, int]:
        """The first transit switch, its subnet, and how many the IC server keeps (`TS_NUM`).

        Kube-OVN's IC server keeps `ts`, `ts1`, ... up to `TS_NUM` and deletes every switch beyond
        it (kubeovn/kube-ovn `pkg/ovn_leader_checker/ovn.go` `updateTS`: `ovn-ic-nbctl ts-del`),
        and its default install has three (`dist/images/install-ic-server.sh` `TS_NUM=3`): the
        fabric keeps as many as run, so applying it deletes none."""
        switches = sorted({p.transit_switch for p in self.live.show.ports})
        name = "ts" if "ts" in switches or not switches else switches[0]
        count = max(len(switches), 1)
        if len(switches) > 1:
            kept = [transit_switch_name(name, index) for index in range(count)]
            odd = sorted(set(switches) - set(kept))
            if odd:
                raise NothingToImport(
                    f"{self.live.show_name}: ports on the transit switches {', '.join(map(_p, switches))}; Kube-OVN's "
                    f"IC server keeps {', '.join(map(_p, kept))} (TS_NUM={count}, named as `getTSName` in "
                    "pkg/ovn_leader_checker/ovn.go names them) and the fabric cannot name "
                    f"{', '.join(map(_p, odd))}, so applying it could delete live switches (`updateTS` runs "
                    "`ovn-ic-nbctl ts-del`); nothing written")
            self.notes.append(f"{self.live.show_name}: ports on {count} transit switches "
                              f"({', '.join(map(_p, switches))}): transitSwitch.count {count} keeps them all "
                              f"(the IC server's TS_NUM); fabricgen routes over {name}")
        subnets = {p.ipv4.network for p in self.live.show.ports if p.transit_switch == name and p.ipv4}
        return name, (next(iter(subnets)) if len(subnets) == 1 else None), count

    def match_azs(self, ts: str) -> list[AzUse]:
        ports = self.live.show.ports_on(ts)
        zones = {z.name: z for z in self.zones}
        if not set(self.live.show.zones) & set(zones):
            raise NothingToImport(
                f"{self.live.show_name} lists the availability zones {', '.join(map(_p, self.live.show.zones))}, "
                f"and the clusters are {', '.join(zones)}: none in common, so the capture is of another "
                "interconnection (another fabric's IC database); capture `ovn-ic-sbctl show` of this one; "
                "nothing written")
        by_address: dict[IPv4Address, list[str]] = {}
        for name, listed in ports.items():
            if name in zones and listed.ipv4 is not None:
                by_address.setdefault(listed.ipv4.ip, []).append(name)
        azs: list[AzUse] = []
        for name in dict.fromkeys(self.live.show.zones):
            port = ports.get(name)
            address = str(port.ipv4.ip) if port is not None and port.ipv4 is not None else None
            line = port.line if port is not None else 0
            if name not in zones:
                azs.append(AzUse(name, "unmapped", f"availability zone {_p(name)} is in the IC database, but no "
                                 "cluster given has it as az-name: another cluster (capture it too) or an OVN "
                                 "deployment (declare it under ovnDeployments)", address,
                                 port.name if port else None, line))
                continue
            zone = zones[name]
            if port is None or port.ipv4 is None:
                azs.append(AzUse(name, "imported", f"zone {name}: no port on {ts} yet, so no transitAddress "
                                 "(its gateway has not claimed it); no zone routes to it until it has one",
                                 None, None, line))
                continue
            zone.transit = port.ipv4.ip
            sharing = [z for z in by_address[port.ipv4.ip] if z != name]
            if sharing:
                azs.append(AzUse(name, "conflict", f"zone {name}'s port {_p(port.name)} has {port.ipv4.ip}, "
                                 f"the address of zone {', '.join(sharing)} as well: two ports cannot share one "
                                 "address on the transit switch; rebuild the interconnection and read the "
                                 "addresses again", address, port.name, line))
            else:
                azs.append(AzUse(name, "imported", f"zone {name}: transitAddress, from port {_p(port.name)}",
                                 address, port.name, line))
        for zone in self.zones:
            if zone.name not in self.live.show.zones:
                self.notes.append(f"zone {zone.name} is not in {self.live.show_name}: its az-name is not "
                                  "registered in this IC database; no transitAddress, no zone routes to it")
        return azs

    # -------------------------------------------------------------- the interconnection
    def interconnection(self, ts: str, ts_subnet: IPv4Network | None, ts_count: int = 1) -> cy.Map:
        first = self.zones[0]
        keys = ("ic-db-host", "ic-nb-port", "ic-sb-port", "auto-route")
        for zone in self.zones[1:]:
            differ = [k for k in keys if str(zone.data.get(k, "")).strip() != str(first.data.get(k, "")).strip()]
            if differ:
                values = "; ".join(f"{k}: {_p(zone.data.get(k))} here, {_p(first.data.get(k))} there" for k in differ)
                self.conflict(zone.cluster, IC_CONFIG, f"{', '.join(differ)} differ from zone {first.name}'s "
                              f"({values}): the zones of one interconnection share one IC database; the fabric "
                              f"has {first.name}'s", zone.name)
        ic = cy.Map()
        encapsulation = self.encapsulation()
        ic.add("encapsulation", encapsulation, comment="the zones' tunnel type (Configuration networking.tunnelType)"
               if any(z.cluster.objects.get(CONFIGURATION) for z in self.zones) else "from the gateways' encaps")
        auto = str(first.data.get("auto-route", "false")).strip() == "true"
        ic.add("autoRoute", auto, comment="auto-route in ovn-ic-config" + ("" if auto else
               ": fabricgen writes the routes between zones"))
        switch = cy.Map().add("name", ts)
        if ts_subnet is not None:
            switch.add("subnet", str(ts_subnet))
        if ts_count > 1:
            switch.add("count", ts_count, comment="the IC server's TS_NUM: as many as run, so none is deleted")
        ic.add("transitSwitch", switch, above=("The transit switch, as `ovn-ic-sbctl show` lists its ports.",))
        ic.add("database", self.database(encapsulation))
        version = self.kube_ovn_version()
        if version is not None:
            ic.add("kubeOvnVersion", version, comment="the oldest zone's, from its Configuration")
        return ic

    def encapsulation(self) -> str:
        seen: dict[str, str] = {}
        for zone in self.zones:
            config = zone.cluster.objects.get(CONFIGURATION)
            tunnel = None
            if config is not None:
                tunnel = _dict(_spec(config).get("networking")).get("tunnelType")
            if tunnel is None:
                encaps = {t for g in self.live.show.gateways if g.zone == zone.name for t, _ip in g.encaps}
                tunnel = next(iter(encaps)) if len(encaps) == 1 else None
            if tunnel in ("geneve", "vxlan"):
                seen[zone.name] = str(tunnel)
            elif tunnel is not None:
                self.notes.append(f"zone {zone.name}: tunnel type {_p(tunnel)} is not one fabricgen interconnects "
                                  "(geneve or vxlan)")
        kinds = list(dict.fromkeys(seen.values()))
        if len(kinds) > 1:
            first = kinds[0]
            for zone in self.zones:
                if seen.get(zone.name, first) != first:
                    ident = CONFIGURATION if zone.cluster.objects.get(CONFIGURATION) else IC_CONFIG
                    self.conflict(zone.cluster, ident, f"the tunnel type is {seen[zone.name]} here and {first} in "
                                  "another zone: the gateways of one interconnection use one encapsulation",
                                  zone.name)
        if not kinds:
            self.notes.append("the encapsulation was not seen (no Configuration, no encap in the show): geneve, "
                              "fabricgen's default, is assumed")
        return kinds[0] if kinds else "geneve"

    def database(self, encapsulation: str) -> cy.Map:
        first = self.zones[0]
        db = cy.Map()
        hosts = [h.strip() for h in str(first.data.get("ic-db-host", "")).split(",") if h.strip()]
        members = cy.Seq()
        db_clusters: list[str] = []
        for host in hosts:
            address = _address(host)
            if address is None:
                self.conflict(first.cluster, IC_CONFIG, f"ic-db-host {_p(host)!r} is not an IPv4 address; fabricgen "
                              "names IC database members by address", first.name)
                continue
            node, cluster = self.node_at(address)
            entry = cy.Map(flow=True)
            if node is None:
                name = f"ic-db-{str(address).replace('.', '-')}"
                entry.add("node", name).add("address", str(address))
                members.add(entry, comment="no Node captured has this InternalIP: write its node's name")
                self.notes.append(f"IC database member {address}: no Node with this InternalIP among the captures; "
                                  f"named {name} in the fabric: write its node's name there")
            else:
                entry.add("node", node).add("address", str(address))
                members.add(entry)
                db_clusters.append(cluster or "")
        zone_of = {z.cluster.name: z.name for z in self.zones}
        hosted = {zone_of.get(c) for c in db_clusters}
        if len(hosted) == 1 and None not in hosted and len(db_clusters) == len(hosts) and hosts:
            db.add("zone", next(iter(hosted)), comment="its Nodes hold the members' addresses: the IC server runs here")
        db.add("nbPort", _port(first.data.get("ic-nb-port"), 6645), comment="ic-nb-port")
        db.add("sbPort", _port(first.data.get("ic-sb-port"), 6646), comment="ic-sb-port")
        options = self.live.ic_nb_options
        if options is not None:
            mode = icnb_options.vxlan_mode(options)
            if mode != (encapsulation == "vxlan"):
                db.add("vxlanMode", mode, comment=f"options:vxlan_mode of the IC northbound ({self.live.ic_nb_name})")
        else:
            self.notes.append("vxlan_mode was not captured (`ovn-ic-nbctl get IC_NB_Global . options`): the fabric "
                              "leaves vxlanMode to its default, on with vxlan")
        db.add("members", members, comment="ic-db-host, in its order (the first bootstraps the raft)")
        return db

    def node_at(self, address: IPv4Address) -> tuple[str | None, str | None]:
        for cluster in self.live.clusters:
            for node in self.of_kind(cluster, "", "Node"):
                addresses = _list(_dict(node.body.get("status")).get("addresses"))
                if any(isinstance(a, dict) and a.get("type") == "InternalIP" and _address(a.get("address")) == address
                       for a in addresses):
                    name = _node_name(node.id.name)
                    if name is None:
                        continue
                    self.use(cluster, node.id, "read", f"read: IC database member {address} (its InternalIP)")
                    return name, cluster.name
        return None, None

    def kube_ovn_version(self) -> str | None:
        versions: list[tuple[tuple[int, ...], str]] = []
        for zone in self.zones:
            config = zone.cluster.objects.get(CONFIGURATION)
            tag = _dict(_dict(_dict(_spec(config).get("global")).get("images")).get("kubeovn")).get("tag") \
                if config is not None else None
            match = re.fullmatch(r"v?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?", str(tag or ""))
            if match:
                versions.append((tuple(int(g or 0) for g in match.groups()), str(tag)))
        return min(versions)[1] if versions else None

    # -------------------------------------------------------------- one zone
    def zone(self, zone: _Zone) -> None:
        cluster, doc = zone.cluster, zone.doc
        self.use(cluster, IC_CONFIG, "rendered", f"zone {zone.name}: its ovn-ic-config", zone.name)
        config = cluster.objects.get(CONFIGURATION)
        if config is not None:
            self.use(cluster, CONFIGURATION, "rendered",
                     f"zone {zone.name}: enableIC (fabricgen sets only its own fields)", zone.name)
            components = _dict(_spec(config).get("components"))
            if components.get("enableIC") is not True:
                self.conflict(cluster, CONFIGURATION, "enableIC is not true, but ovn-ic-config enables the "
                              "interconnection: Kube-OVN runs no ovn-ic controller without it", zone.name)
        gateways = [g.strip() for g in str(zone.data.get("gw-nodes", "")).strip(",").split(",") if g.strip()]
        names = [g for g in gateways if _node_name(g)]
        if len(names) != len(gateways):
            self.unexpressed(cluster, IC_CONFIG, "gw-nodes that are not node names")
        backbone = self.backbone(zone)
        doc.add("name", zone.name, comment=f"az-name of cluster {_p(cluster.name)}")
        doc.add("platform", "harvester" if zone.harvester else "kube-ovn",
                comment="SUSE Virtualization: its NADs carry network.harvesterhci.io labels" if zone.harvester
                else "no SUSE Virtualization labels on its NADs")
        doc.add("gatewayNodes", cy.Seq([cy.Item(g) for g in names], flow=True), comment="gw-nodes, in priority order")
        if zone.transit is not None:
            doc.add("transitAddress", str(zone.transit), comment="its port on the transit switch (ovn-ic-sbctl show)")
        doc.add("cluster", self.cluster_networks(zone))
        doc.add("backbone", backbone)

    def cluster_networks(self, zone: _Zone) -> cy.Map:
        cluster = zone.cluster
        config = cluster.objects.get(CONFIGURATION)
        ipv4 = _dict(_spec(config).get("ipv4")) if config is not None else {}
        networking = _dict(_spec(config).get("networking")) if config is not None else {}
        out = cy.Map()
        subnets = self.of_kind(cluster, "kubeovn.io", "Subnet")
        default = next((s for s in subnets if _spec(s).get("default") is True), None)
        join_name = str(networking.get("nodeSubnet") or "join")
        join = next((s for s in subnets if s.id.name == join_name), None)
        values: list[tuple[str, IPv4Network | None, str]] = []
        pod = _first_ipv4_network(_spec(default).get("cidrBlock")) if default is not None else None
        if default is not None:
            self.use(cluster, default.id, "read", f"read: Kube-OVN's default Subnet, zones[{zone.index}].cluster."
                     "podCIDR (fabricgen does not render it)", zone.name)
            configured = _first_ipv4_network(ipv4.get("podCIDR"))
            if configured is not None and pod is not None and configured != pod:
                self.notes.append(f"zone {zone.name}: the default Subnet has {pod}, the Configuration ipv4.podCIDR "
                                  f"{configured}: the fabric has the Subnet's, which pods use")
        pod_from = f"Subnet {_p(default.id.name)}" if default is not None and pod else "Configuration ipv4.podCIDR"
        values.append(("podCIDR", pod or _first_ipv4_network(ipv4.get("podCIDR")), pod_from))
        join_cidr = _first_ipv4_network(_spec(join).get("cidrBlock")) if join is not None else None
        if join is not None:
            self.use(cluster, join.id, "read", f"read: Kube-OVN's join Subnet, zones[{zone.index}].cluster.joinCIDR "
                     "(fabricgen does not render it)", zone.name)
        values.append(("joinCIDR", join_cidr or _first_ipv4_network(ipv4.get("joinCIDR")),
                       f"Subnet {_p(join_name)}" if join_cidr else "Configuration ipv4.joinCIDR"))
        values.append(("serviceCIDR", _first_ipv4_network(ipv4.get("serviceCIDR")), "Configuration ipv4.serviceCIDR"))
        for key, value, where in values:
            if value is not None:
                out.add(key, str(value), comment=where)
            else:
                self.notes.append(f"zone {zone.name}: {key} not seen (capture the Configuration and Subnets); "
                                  f"fabricgen assumes {DEFAULTS[key]}")
        canal = cluster.objects.get(CANAL)
        primary = None
        if canal is not None:
            values_set = _dict(_spec(canal).get("set"))
            primary = _first_ipv4_network(values_set.get("global.clusterCIDRv4")) or \
                _first_ipv4_network(values_set.get("global.clusterCIDR"))
            self.use(cluster, CANAL, "read", f"read: Canal's pod range, zones[{zone.index}].cluster.primaryPodCIDR",
                     zone.name)
        if primary is not None:
            out.add("primaryPodCIDR", str(primary), comment="Canal's (HelmChart rke2-canal global.clusterCIDRv4)")
        elif zone.harvester:
            self.notes.append(f"zone {zone.name}: Canal's pod range not seen (HelmChart kube-system/rke2-canal): "
                              "primaryPodCIDR left out, so no check that Kube-OVN's pod CIDR stays clear of it")
        return out

    def find_backbone(self, zone: _Zone) -> bool:
        """The zone's backbone Subnet (see the module docstring); False, with a conflict, if it has none."""
        cluster = zone.cluster
        config = cluster.objects.get(CONFIGURATION)
        networking = _dict(_spec(config).get("networking")) if config is not None else {}
        own = {str(networking.get("nodeSubnet") or "join"), EXTERNAL_NETWORK}
        candidates = []
        for subnet in self.of_kind(cluster, "kubeovn.io", "Subnet"):
            spec = _spec(subnet)
            vpc = spec.get("vpc") or DEFAULT_VPC
            if vpc != DEFAULT_VPC or spec.get("default") is True or subnet.id.name in own or spec.get("vlan"):
                continue
            if _ovn_provider(spec.get("provider")) is None:
                continue
            candidates.append(subnet)
        preferred = next((s for s in candidates if s.id.name == f"backbone-{zone.name}"), None)
        chosen = preferred or next((s for s in candidates if _network(_spec(s).get("cidrBlock"))), None)
        if chosen is None:
            self.conflict(cluster, IC_CONFIG, "no backbone: no Subnet of ovn-cluster with one IPv4 CIDR on an overlay "
                          "network (provider <nad>.<namespace>.ovn); every zone needs one to carry cross-zone "
                          "traffic, so the cluster is left out of the fabric", zone.name)
            return False
        for other in candidates:
            if other is not chosen:
                self.use(cluster, other.id, "unmapped", "another Subnet of ovn-cluster on an overlay network: "
                         f"fabricgen renders one backbone per zone ({_p(chosen.id.name)})", zone.name)
        zone.backbone_subnet = chosen
        zone.backbone_cidr = _network(_spec(chosen).get("cidrBlock"))
        return zone.backbone_cidr is not None

    def backbone(self, zone: _Zone) -> cy.Map:
        cluster, chosen, cidr = zone.cluster, zone.backbone_subnet, zone.backbone_cidr
        assert chosen is not None and cidr is not None
        spec = _spec(chosen)
        self.use(cluster, chosen.id, "rendered", f"zone {zone.name}: the backbone Subnet", zone.name)
        out = cy.Map()
        out.add("cidr", str(cidr), comment=f"Subnet {_p(chosen.id.name)}")
        gateway = _address(spec.get("gateway"))
        if gateway is not None and gateway != cidr.network_address + 1:
            out.add("gateway", str(gateway))
        if chosen.id.name != f"backbone-{zone.name}" and _label(chosen.id.name):
            out.add("subnetName", chosen.id.name)
        if spec.get("enableDHCP") is not True:
            out.add("dhcp", False)
        if spec.get("natOutgoing") is True:
            out.add("natOutgoing", True, comment="as it runs; SNAT breaks the return path across zones")
        provider = _ovn_provider(spec.get("provider"))
        assert provider is not None
        network, zone.harvester = self.network(cluster, provider, zone, f"the backbone's network ({chosen.id.name})")
        out.add("network", network)
        return out

    def network(self, cluster: ClusterInput, provider: tuple[str, str], zone: _Zone, what: str,
                default_name: str | None = None) -> tuple[cy.Map, bool]:
        """The `network` section for a Subnet's NAD; whether the NAD carries SUSE Virtualization's labels."""
        name, namespace = provider
        ident = ko.ObjectId("k8s.cni.cncf.io", "NetworkAttachmentDefinition", namespace, name)
        nad = cluster.objects.get(ident)
        out = cy.Map(flow=True)
        harvester = False
        cluster_network = "mgmt"
        if nad is None:
            self.notes.append(f"zone {zone.name}: NetworkAttachmentDefinition {namespace}/{name} ({what}) is not in "
                              "the captures; the fabric names it, the proof cannot compare it")
        else:
            self.use(cluster, ident, "rendered", f"zone {zone.name}: {what}", zone.name)
            labels = _labels(nad)
            harvester = HARVESTER_TYPE in labels
            cluster_network = str(labels.get(HARVESTER_CLUSTER_NETWORK) or "mgmt")
            if _nad_config(nad).get("type") != "kube-ovn":
                self.unexpressed(cluster, ident, "a CNI type other than kube-ovn")
        if default_name is None or name != default_name or namespace != "default":
            out.add("name", name)
            if namespace != "default":
                out.add("namespace", namespace)
        if cluster_network != "mgmt" and _label(cluster_network):
            out.add("clusterNetwork", cluster_network)
        return out, harvester

    # -------------------------------------------------------------- ovn-cluster's routes
    def default_vpc(self, zone: _Zone) -> None:
        cluster = zone.cluster
        ident = ko.ObjectId("kubeovn.io", "Vpc", "", DEFAULT_VPC)
        vpc = cluster.objects.get(ident)
        if vpc is None:
            self.notes.append(f"zone {zone.name}: Vpc ovn-cluster is not in the captures; its routes were not read")
            return
        self.use(cluster, ident, "rendered",
                 f"zone {zone.name}: ovn-cluster's routes and policies (fabricgen sets only these)", zone.name)
        others = {z.backbone_cidr: z for z in self.zones if z is not zone and z.backbone_cidr is not None}
        derived = {(str(c), str(z.transit)) for c, z in others.items() if z.transit is not None}
        derived_cidrs = {c for c, _h in derived}
        spec = _spec(vpc)
        statics, policies = cy.Seq(), cy.Seq()
        for route in _list(spec.get("staticRoutes")):
            if not isinstance(route, dict):
                continue
            cidr, hop = str(route.get("cidr", "")), str(route.get("nextHopIP", ""))
            policy = route.get("policy") or "policyDst"
            plain = not any(route.get(k) for k in ("routeTable", "ecmpMode", "bfdId"))
            if (cidr, hop) in derived and policy == "policyDst" and plain:
                continue
            destination = _network(cidr)
            target = others.get(destination) if destination is not None else None
            if target is not None:
                if target.transit is None:
                    reason = (f"a static route to zone {target.name}'s backbone {cidr} through {_p(hop)}, but "
                              f"{target.name} has no port on the transit switch in {self.live.show_name}; fabricgen "
                              "routes to it once it has a transitAddress")
                else:
                    reason = (f"a stale static route: to zone {target.name}'s backbone {cidr} through {_p(hop)}, "
                              f"but {target.name}'s transit address is {target.transit} ({self.live.show_name}); "
                              "the imported fabric routes through it (regenerate the routes after every IC change)")
                self.conflict(cluster, ident, reason, zone.name)
                continue
            net, address = _network(cidr) or _interface_network(cidr), _address(hop)
            if net is None or address is None or not plain or policy not in ("policyDst", "policySrc"):
                self.unexpressed(cluster, ident, f"static route {_p(json.dumps(route, sort_keys=True))}: fabricgen's "
                                 "defaultVpc routes are IPv4, one next hop, without a route table, ECMP or BFD")
                continue
            entry = cy.Map(flow=True).add("cidr", str(net)).add("nextHopIP", str(address))
            if policy == "policySrc":
                entry.add("policy", policy)
            statics.add(entry)
        for rule in _list(spec.get("policyRoutes")):
            if not isinstance(rule, dict):
                continue
            priority, match, action = rule.get("priority"), rule.get("match"), rule.get("action")
            if priority == ALLOW_PRIORITY and action == "allow" and isinstance(match, str) and \
                    match.startswith("ip4.dst == ") and match[len("ip4.dst == "):] in derived_cidrs:
                continue
            next_hop = rule.get("nextHopIP") or None
            fits = (isinstance(priority, int) and not isinstance(priority, bool) and 0 <= priority <= 32767
                    and isinstance(match, str) and match.strip() and match.isprintable()
                    and action in ("allow", "drop", "reroute")
                    and (next_hop is None or _address(next_hop) is not None))
            if not fits:
                self.unexpressed(cluster, ident, f"policy route {_p(json.dumps(rule, sort_keys=True))}: fabricgen's "
                                 "policy routes have a priority 0-32767, a match, allow/drop/reroute and at most one "
                                 "IPv4 next hop")
                continue
            entry = cy.Map(flow=True).add("priority", priority).add("match", match).add("action", action)
            if next_hop is not None:
                entry.add("nextHopIP", str(next_hop))
            policies.add(entry)
        if statics.items or policies.items:
            extra = cy.Map()
            if statics.items:
                extra.add("staticRoutes", statics)
            if policies.items:
                extra.add("policyRoutes", policies)
            zone.doc.add("defaultVpc", extra, above=(
                "On ovn-cluster besides the routes fabricgen derives to the other zones' backbones:",
                "kept as they run."))

    # -------------------------------------------------------------- tenant VPCs
    def tenants(self, zone: _Zone) -> None:
        cluster = zone.cluster
        vpcs = [v for v in self.of_kind(cluster, "kubeovn.io", "Vpc") if v.id.name != DEFAULT_VPC]
        subnets: dict[str, list[ko.LiveObject]] = {}  # by VPC: one pass, however many VPCs
        for subnet in self.of_kind(cluster, "kubeovn.io", "Subnet"):
            subnets.setdefault(str(_spec(subnet).get("vpc")), []).append(subnet)
        gateways: dict[str, list[ko.LiveObject]] = {}
        for gateway in self.of_kind(cluster, "kubeovn.io", "VpcNatGateway"):
            gateways.setdefault(str(_spec(gateway).get("vpc")), []).append(gateway)
        docs = cy.Seq()
        imported: dict[str, tuple[ko.LiveObject, list[IPv4Network]]] = {}
        nat: list[tuple[str, ko.LiveObject]] = []
        for vpc in vpcs:
            name = vpc.id.name
            if "ovn.kubernetes.io/vpc_external" in _labels(vpc):
                self.use(cluster, vpc.id, "unmapped", "Kube-OVN's external VPC", zone.name)
                continue
            if _label(name) is None or name == DEFAULT_VPC:
                self.use(cluster, vpc.id, "unmapped", f"VPC name {_p(name)!r} is not a DNS-1123 label; fabricgen "
                         "cannot render it", zone.name)
                continue
            self.use(cluster, vpc.id, "rendered", f"zone {zone.name}: tenant VPC", zone.name)
            spec = _spec(vpc)
            doc = cy.Map().add("name", name)
            namespaces = [n for n in _list(spec.get("namespaces")) if _label(n)]
            if namespaces:
                doc.add("namespaces", cy.Seq([cy.Item(n) for n in namespaces], flow=True))
            subnet_docs = cy.Seq()
            cidrs: list[IPv4Network] = []
            for subnet in subnets.get(name, ()):
                item = self.tenant_subnet(zone, subnet)
                if item is not None:
                    subnet_docs.add(item[0])
                    cidrs.append(item[1])
            if subnet_docs.items:
                doc.add("subnets", subnet_docs)
            gws = sorted(gateways.get(name, ()), key=lambda g: g.id.name)
            if gws:
                nat.append((name, gws[0]))
                for extra_gw in gws[1:]:
                    self.use(cluster, extra_gw.id, "unmapped", f"a second NAT gateway of VPC {name}: fabricgen "
                             "renders one per VPC", zone.name)
            imported[name] = (vpc, cidrs)
            docs.add(doc)
        if not docs.items:
            return
        gateway_docs = self.nat_gateways(zone, nat, {i.value.plain()["name"]: i.value for i in docs.items
                                                     if isinstance(i.value, cy.Map)})
        peerings = self.peerings(zone, imported)
        self.tenant_routes(zone, imported, peerings, gateway_docs)
        zone.doc.add("vpcs", docs, above=("Tenant VPCs stay local to their zone.",))
        if peerings:
            seq = cy.Seq()
            for (a, b), network in peerings.items():
                seq.add(cy.Map().add("vpcs", cy.Seq([cy.Item(a), cy.Item(b)], flow=True))
                        .add("connectCIDR", str(network), comment=f"{a} takes .1, {b} .2"))
            zone.doc.add("peerings", seq)

    def tenant_subnet(self, zone: _Zone, subnet: ko.LiveObject) -> tuple[cy.Map, IPv4Network] | None:
        cluster, spec = zone.cluster, _spec(subnet)
        name = subnet.id.name
        provider = _ovn_provider(spec.get("provider"))
        cidr = _network(spec.get("cidrBlock"))
        if provider is None:
            self.use(cluster, subnet.id, "unmapped", f"Subnet of VPC {_p(spec.get('vpc'))} with provider "
                     f"{_p(spec.get('provider') or 'ovn')}, no overlay network: fabricgen's tenant subnets are VM "
                     "networks with a NetworkAttachmentDefinition", zone.name)
            return None
        if _label(name) is None or cidr is None:
            self.use(cluster, subnet.id, "unmapped", f"Subnet {_p(name)}: " + ("its name is not a DNS-1123 label"
                     if cidr is not None else f"cidrBlock {_p(spec.get('cidrBlock'))!r} is not one IPv4 network"),
                     zone.name)
            return None
        self.use(cluster, subnet.id, "rendered", f"zone {zone.name}: a subnet of VPC {_p(spec.get('vpc'))}", zone.name)
        doc = cy.Map(flow=True).add("name", name).add("cidr", str(cidr))
        gateway = _address(spec.get("gateway"))
        if gateway is not None and gateway != cidr.network_address + 1:
            doc.add("gateway", str(gateway))
        if spec.get("enableDHCP") is not True:
            doc.add("dhcp", False)
        if spec.get("natOutgoing") is True:
            doc.add("natOutgoing", True)
        namespaces = [n for n in _list(spec.get("namespaces")) if _label(n)]
        if namespaces:
            doc.add("namespaces", cy.Seq([cy.Item(n) for n in namespaces], flow=True))
        options = spec.get("dhcpV4Options")
        if options:
            match = _DNS_OPTION.fullmatch(str(options))
            servers = [s for s in match.group(1).split(";") if _address(s)] if match else []
            if servers:
                doc.add("dnsServers", cy.Seq([cy.Item(s) for s in servers], flow=True))
            else:
                self.unexpressed(cluster, subnet.id, f"dhcpV4Options {_p(options)!r}: fabricgen writes only "
                                 "dns_server={...}")
        network, _harvester = self.network(cluster, provider, zone, f"the network of subnet {name}", default_name=name)
        if network.entries:
            doc.add("network", network)
        doc.flow = len(doc.entries) <= 4 and not any(isinstance(e.value, cy.Map) and e.value.entries
                                                     for e in doc.entries)
        return doc, cidr

    def peerings(self, zone: _Zone, imported: Mapping[str, tuple[ko.LiveObject, list[IPv4Network]]]
                 ) -> dict[tuple[str, str], IPv4Network]:
        cluster = zone.cluster
        sides: dict[tuple[str, str], IPv4Interface | None] = {}
        for name, (vpc, _cidrs) in imported.items():
            for peering in _list(_spec(vpc).get("vpcPeerings")):
                if not isinstance(peering, dict):
                    continue
                remote = str(peering.get("remoteVpc", ""))
                try:
                    local = IPv4Interface(str(peering.get("localConnectIP", "")))
                except ValueError:
                    local = None
                sides[(name, remote)] = local
        out: dict[tuple[str, str], IPv4Network] = {}
        done: set[frozenset[str]] = set()
        for (a, b), ip_a in sides.items():
            if frozenset((a, b)) in done:
                continue
            done.add(frozenset((a, b)))
            ip_b = sides.get((b, a))
            ok = ip_a is not None and ip_b is not None and ip_a.network == ip_b.network and \
                {ip_a.ip, ip_b.ip} == {ip_a.network.network_address + 1, ip_a.network.network_address + 2}
            if not ok or b not in imported:
                for vpc_name in (a, b):
                    if vpc_name in imported:
                        self.unexpressed(cluster, imported[vpc_name][0].id, f"the peering of {a} and {b}: fabricgen's "
                                         "peerings name each other on both VPCs, with .1 and .2 of one network")
                continue
            assert ip_a is not None
            first, second = (a, b) if ip_a.ip == ip_a.network.network_address + 1 else (b, a)
            out[(first, second)] = ip_a.network
        return out

    def tenant_routes(self, zone: _Zone, imported: Mapping[str, tuple[ko.LiveObject, list[IPv4Network]]],
                      peerings: Mapping[tuple[str, str], IPv4Network], gateways: Mapping[str, str]) -> None:
        """A tenant VPC's routes are derived: to peered VPCs' subnets, and 0.0.0.0/0 to its NAT gateway."""
        derived: dict[str, set[tuple[str, str]]] = {name: set() for name in imported}
        for (a, b), network in peerings.items():
            ip_a, ip_b = str(network.network_address + 1), str(network.network_address + 2)
            derived[a] |= {(str(c), ip_b) for c in imported[b][1]}
            derived[b] |= {(str(c), ip_a) for c in imported[a][1]}
        for name, lan_ip in gateways.items():
            derived[name].add(("0.0.0.0/0", lan_ip))
        for name, (vpc, _cidrs) in imported.items():
            spec = _spec(vpc)
            for route in _list(spec.get("staticRoutes")):
                if not isinstance(route, dict):
                    continue
                key = (str(route.get("cidr", "")), str(route.get("nextHopIP", "")))
                plain = not any(route.get(k) for k in ("routeTable", "ecmpMode", "bfdId"))
                if key not in derived[name] or not plain or (route.get("policy") or "policyDst") != "policyDst":
                    self.unexpressed(zone.cluster, vpc.id, f"static route {_p(json.dumps(route, sort_keys=True))}: "
                                     "a tenant VPC's routes are its peerings' and its NAT gateway's only")
            if spec.get("policyRoutes"):
                self.unexpressed(zone.cluster, vpc.id, "policy routes: fabricgen writes none on tenant VPCs")

    # -------------------------------------------------------------- NAT gateways
    def nat_gateways(self, zone: _Zone, gateways: list[tuple[str, ko.LiveObject]],
                     vpc_docs: Mapping[str, cy.Map]) -> dict[str, str]:
        """Each VPC's NAT gateway into its VPC section; the zone's external network. VPC -> lanIp."""
        cluster = zone.cluster
        lan_ips: dict[str, str] = {}
        if not gateways:
            return lan_ips
        external = self.external_network(zone)
        eips = self.of_kind(cluster, "kubeovn.io", "IptablesEIP")
        snats = self.of_kind(cluster, "kubeovn.io", "IptablesSnatRule")
        dnats = self.of_kind(cluster, "kubeovn.io", "IptablesDnatRule")
        for vpc_name, gw in gateways:
            spec = _spec(gw)
            lan_ip = _address(spec.get("lanIp"))
            subnet = _label(spec.get("subnet"))
            if _label(gw.id.name) is None or len(gw.id.name) > 48 or lan_ip is None or subnet is None:
                self.use(cluster, gw.id, "unmapped", "a NAT gateway fabricgen cannot render (its name, subnet or "
                         "lanIp)", zone.name)
                continue
            self.use(cluster, gw.id, "rendered", f"zone {zone.name}: VPC {vpc_name}'s NAT gateway", zone.name)
            lan_ips[vpc_name] = str(lan_ip)
            doc = cy.Map().add("name", gw.id.name).add("subnet", subnet).add("lanIp", str(lan_ip))
            selector = cy.Map()
            for entry in _list(spec.get("selector")):
                key, sep, value = str(entry).partition(":")
                if sep:
                    selector.add(key.strip(), value.strip())
            if selector.entries:
                doc.add("selector", selector)
            if _list(spec.get("externalSubnets")) != [EXTERNAL_NETWORK]:
                self.unexpressed(cluster, gw.id, f"externalSubnets other than [{EXTERNAL_NETWORK}]")
            eip_docs, names = cy.Seq(), set()
            for eip in eips:
                if _spec(eip).get("natGwDp") != gw.id.name or _label(eip.id.name) is None:
                    continue
                self.use(cluster, eip.id, "rendered", f"zone {zone.name}: an elastic IP of {gw.id.name}", zone.name)
                names.add(eip.id.name)
                item = cy.Map(flow=True).add("name", eip.id.name)
                address = _address(_spec(eip).get("v4ip"))
                if address is not None:
                    item.add("address", str(address))
                eip_docs.add(item)
            snat_docs, dnat_docs = cy.Seq(), cy.Seq()
            for rule in snats:
                rspec = _spec(rule)
                internal = _network(rspec.get("internalCIDR"))
                if rspec.get("eip") not in names or internal is None or _label(rule.id.name) is None:
                    continue
                self.use(cluster, rule.id, "rendered", f"zone {zone.name}: a SNAT rule of {gw.id.name}", zone.name)
                snat_docs.add(cy.Map(flow=True).add("name", rule.id.name).add("eip", str(rspec["eip"]))
                              .add("internalCIDR", str(internal)))
            for rule in dnats:
                rspec = _spec(rule)
                ports = [_int(rspec.get(k)) for k in ("externalPort", "internalPort")]
                internal_ip = _address(rspec.get("internalIp"))
                protocol = str(rspec.get("protocol") or "tcp").lower()
                if rspec.get("eip") not in names or internal_ip is None or None in ports or \
                        protocol not in ("tcp", "udp") or _label(rule.id.name) is None:
                    continue
                self.use(cluster, rule.id, "rendered", f"zone {zone.name}: a DNAT rule of {gw.id.name}", zone.name)
                dnat_docs.add(cy.Map(flow=True).add("name", rule.id.name).add("eip", str(rspec["eip"]))
                              .add("protocol", protocol).add("externalPort", ports[0])
                              .add("internalIp", str(internal_ip)).add("internalPort", ports[1]))
            for key, seq in (("eips", eip_docs), ("snat", snat_docs), ("dnat", dnat_docs)):
                if seq.items:
                    doc.add(key, seq)
            vpc_docs[vpc_name].add("natGateway", doc)
        if lan_ips:
            config = cluster.objects.get(NAT_GW_CONFIG)
            if config is not None:
                self.use(cluster, NAT_GW_CONFIG, "rendered",
                         f"zone {zone.name}: enable-vpc-nat-gw (fabricgen sets only this key)", zone.name)
            if external is not None:
                zone.doc.add("externalNetwork", external, above=("The external network of the NAT gateways.",))
        return lan_ips

    def external_network(self, zone: _Zone) -> cy.Map | None:
        cluster = zone.cluster
        subnet = cluster.objects.get(ko.ObjectId("kubeovn.io", "Subnet", "", EXTERNAL_NETWORK))
        if subnet is None:
            self.notes.append(f"zone {zone.name}: NAT gateways without Subnet {EXTERNAL_NETWORK} in the captures: "
                              "no externalNetwork")
            return None
        spec = _spec(subnet)
        cidr, gateway = _network(spec.get("cidrBlock")), _address(spec.get("gateway"))
        if cidr is None or gateway is None:
            self.use(cluster, subnet.id, "unmapped", "the external network is not one IPv4 network", zone.name)
            return None
        self.use(cluster, subnet.id, "rendered", f"zone {zone.name}: the NAT gateways' external network", zone.name)
        out = cy.Map()
        interface: str | None = None
        vlan_id: int | None = None
        vlan_name = spec.get("vlan")
        if vlan_name:
            vlan = cluster.objects.get(ko.ObjectId("kubeovn.io", "Vlan", "", str(vlan_name)))
            if vlan is not None:
                self.use(cluster, vlan.id, "rendered", f"zone {zone.name}: the external network's VLAN", zone.name)
                vlan_id = _int(_spec(vlan).get("id")) or None
                provider = cluster.objects.get(ko.ObjectId("kubeovn.io", "ProviderNetwork", "",
                                                           str(_spec(vlan).get("provider", ""))))
                if provider is not None:
                    self.use(cluster, provider.id, "rendered", f"zone {zone.name}: the external network's NIC",
                             zone.name)
                    interface = str(_spec(provider).get("defaultInterface") or "") or None
            nad = cluster.objects.get(ko.ObjectId("k8s.cni.cncf.io", "NetworkAttachmentDefinition", KUBE_SYSTEM,
                                                  EXTERNAL_NETWORK))
            if nad is not None:
                self.use(cluster, nad.id, "rendered", f"zone {zone.name}: the external network's NAD", zone.name)
        else:
            nad = cluster.objects.get(ko.ObjectId("k8s.cni.cncf.io", "NetworkAttachmentDefinition", KUBE_SYSTEM,
                                                  EXTERNAL_NETWORK))
            if nad is not None:
                self.use(cluster, nad.id, "rendered", f"zone {zone.name}: the external network (macvlan)", zone.name)
                master = str(_nad_config(nad).get("master") or "")
                base, dot, tag = master.rpartition(".")
                if dot and tag.isdigit():
                    interface, vlan_id = base, int(tag)
                else:
                    interface = master or None
        if interface is None or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,14}", interface):
            self.notes.append(f"zone {zone.name}: the external network's NIC was not seen (ProviderNetwork and Vlan, "
                              "or the macvlan NAD): no externalNetwork, so its NAT gateways do not render")
            return None
        out.add("interface", interface)
        if vlan_id:
            out.add("vlanId", vlan_id)
        out.add("cidr", str(cidr)).add("gateway", str(gateway))
        excluded = []
        for entry in _list(spec.get("excludeIps")):
            low, _sep, high = str(entry).partition("..")
            first = _address(low)
            last = _address(high) if high else first
            if first is None or last is None or last < first:
                self.unexpressed(cluster, subnet.id, f"excludeIps entry {_p(entry)!r}: not an address or FIRST..LAST")
            elif str(entry) != str(gateway):
                excluded.append(str(entry))
        if excluded:
            out.add("excludeIps", cy.Seq([cy.Item(e) for e in excluded], flow=True))
        return out

    # -------------------------------------------------------------- the whole fabric
    def build(self) -> Imported:
        self.find_zones()
        ts, ts_subnet, ts_count = self.transit_switch()
        azs = self.match_azs(ts)
        ic = self.interconnection(ts, ts_subnet, ts_count)
        for zone in self.zones:
            self.zone(zone)
        for zone in self.zones:
            self.default_vpc(zone)
            self.tenants(zone)
        document = cy.Map()
        document.add("apiVersion", "fabricgen.io/v1alpha1").add("kind", "Fabric")
        document.add("metadata", cy.Map().add("name", self.site, comment=f"output goes to rendered/{self.site}/"))
        document.add("interconnection", ic, above=("",))
        zones = cy.Seq()
        for zone in self.zones:
            sources = ", ".join(zone.cluster.sources)
            zones.add(zone.doc, above=("", f"cluster {_p(zone.cluster.name)}: {sources}"))
        document.add("zones", zones, above=("",))
        self.finish_reasons()
        return Imported(self.site, document, [], list(self.uses.values()), azs,
                        {z.name: z.cluster.name for z in self.zones}, self.notes)

    def finish_reasons(self) -> None:
        for use in self.uses.values():
            if use.status == "unmapped" and use.id.kind == "NetworkAttachmentDefinition" and \
                    "not imported" not in use.reason and "not joined" not in use.reason:
                use.reason = "no Subnet the fabric renders uses this network"


def _default_reason(ident: ko.ObjectId) -> str:
    reasons = {
        ("", "ConfigMap"): "a ConfigMap fabricgen does not render (it renders ovn-ic-config and ovn-vpc-nat-gw-config)",
        ("", "Node"): "a node: fabricgen renders none (nodes name the IC database members)",
        ("kubeovn.io", "Configuration"): "fabricgen renders only the Configuration kube-system/kubeovn",
        ("kubeovn.io", "Subnet"): "neither the backbone nor in a tenant VPC of the fabric",
        ("kubeovn.io", "Vpc"): "not a VPC fabricgen renders",
        ("kubeovn.io", "ProviderNetwork"): "not the external network of an imported NAT gateway",
        ("kubeovn.io", "Vlan"): "not the external network of an imported NAT gateway",
        ("kubeovn.io", "VpcNatGateway"): "not the NAT gateway of an imported tenant VPC",
        ("kubeovn.io", "IptablesEIP"): "not an elastic IP of an imported NAT gateway",
        ("kubeovn.io", "IptablesSnatRule"): "not a rule of an imported NAT gateway's elastic IP",
        ("kubeovn.io", "IptablesDnatRule"): "not a rule of an imported NAT gateway's elastic IP",
        ("helm.cattle.io", "HelmChart"): "a HelmChart: only rke2-canal is read (Canal's pod range)",
    }
    return reasons.get((ident.group, ident.kind), "fabricgen does not render this kind")


def _port(value: Any, default: int) -> int:
    number = _int(value)
    return number if number is not None and 1 <= number <= 65535 else default


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _interface_network(value: str) -> IPv4Network | None:
    """A route's destination written as one address (Kube-OVN accepts an IP without a prefix)."""
    address = _address(value)
    return IPv4Network(f"{address}/32") if address is not None else None


def build(live: LiveInput, site: str) -> Imported:
    """The fabric for `live`, named `site`; raises NothingToImport when no cluster is a zone."""
    return _Mapper(live, site).build()


def statuses(uses: Iterable[Use]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for use in uses:
        counts[use.status] = counts.get(use.status, 0) + 1
    return counts
