"""The clusters that are zones, their AZs on the transit switch of `ovn-ic-sbctl show`, and the
interconnection (`mapping` has the rules)."""

from __future__ import annotations

import re
from functools import cached_property
from ipaddress import IPv4Address, IPv4Network, IPv6Address

from fabricgen.adopt import ic_server
from fabricgen.adopt import live_values as lv
from fabricgen.adopt.inputs import ClusterInput
from fabricgen.adopt.ledger import AzUse, Ledger, MappedZone, NothingToImport
from fabricgen.adopt.live_values import (
    CONFIGURATION,
    IC_CONFIG,
    shown,
)
from fabricgen.model.interconnect import MAX_TRANSIT_SWITCHES, default_image, transit_switch_name
from fabricgen.model.names import DEFAULT_VPC, EXTERNAL_NETWORK
from fabricgen.observe import icnb_options
from fabricgen.serialise import commented_yaml as cy


class InterconnectMapping(Ledger):
    """The zones, the IC southbound's transit switch and AZs, and the interconnection."""

    # -------------------------------------------------------------- zones
    def find_zones(self) -> None:
        by_name: dict[str, MappedZone] = {}
        for cluster in self.live.clusters:
            config = cluster.objects.get(IC_CONFIG)
            if config is None:
                for ident in cluster.objects:
                    self.use(cluster, ident, "unmapped", f"cluster {shown(cluster.name)} has no ConfigMap "
                             "kube-system/ovn-ic-config: it is not joined to the interconnection, so it is no "
                             "zone of the fabric; add it to fabric.yaml as a zone to join it")
                self.notes.append(f"cluster {shown(cluster.name)}: no ovn-ic-config, not joined; left out")
                continue
            data = {str(k): v for k, v in lv.data(config).items()}
            if str(data.get("enable-ic", "")).strip() != "true":
                for ident in cluster.objects:
                    self.use(cluster, ident, "unmapped", f"cluster {shown(cluster.name)}: ovn-ic-config has "
                             f"enable-ic {shown(data.get('enable-ic'))!s}, not \"true\": not joined, so no zone")
                self.notes.append(f"cluster {shown(cluster.name)}: interconnection disabled (enable-ic); left out")
                continue
            az = str(data.get("az-name", "")).strip()
            if lv.label(az) is None:
                self.conflict(cluster, IC_CONFIG, f"az-name {shown(az)!r} is not a DNS-1123 label, which fabricgen "
                              "needs for a zone's name (and its output directory)")
                self._left_out(cluster, "its az-name cannot be a zone's name")
                continue
            if az in by_name:
                other = by_name[az]
                self.conflict(cluster, IC_CONFIG, f"az-name {az} is also cluster {shown(other.cluster.name)}'s: "
                              "Kube-OVN registers one availability zone per name, so the two clusters overwrite "
                              f"each other in the IC database; give each its own az-name (the fabric has cluster "
                              f"{shown(other.cluster.name)} as zone {az})")
                self._left_out(cluster, f"its az-name {az} is another cluster's")
                continue
            zone = MappedZone(cluster, az, data, len(self.zones))
            if not self.find_backbone(zone):
                self._left_out(cluster, "it has no backbone fabricgen can render")
                continue
            by_name[az] = zone
            self.zones.append(zone)
        if not self.zones:
            raise NothingToImport("no cluster of the input is joined to the interconnection (none has "
                                  "kube-system/ovn-ic-config with enable-ic \"true\"); nothing to import, "
                                  "nothing written")

    def find_backbone(self, zone: MappedZone) -> bool:
        """The zone's backbone Subnet (see the module docstring); False, with a conflict, if it has none."""
        cluster = zone.cluster
        config = cluster.objects.get(CONFIGURATION)
        networking = lv.as_dict(lv.spec(config).get("networking")) if config is not None else {}
        own = {str(networking.get("nodeSubnet") or "join"), EXTERNAL_NETWORK}
        candidates = []
        for subnet in self.of_kind(cluster, "kubeovn.io", "Subnet"):
            spec = lv.spec(subnet)
            vpc = spec.get("vpc") or DEFAULT_VPC
            if vpc != DEFAULT_VPC or spec.get("default") is True or subnet.id.name in own or spec.get("vlan"):
                continue
            if lv.ovn_provider(spec.get("provider")) is None:
                continue
            candidates.append(subnet)
        preferred = next((s for s in candidates if s.id.name == f"backbone-{zone.name}"), None)
        chosen = preferred or next((s for s in candidates if lv.network(lv.spec(s).get("cidrBlock"))), None)
        if chosen is None:
            self.conflict(cluster, IC_CONFIG, "no backbone: no Subnet of ovn-cluster with one IPv4 CIDR on an overlay "
                          "network (provider <nad>.<namespace>.ovn); every zone needs one to carry cross-zone "
                          "traffic, so the cluster is left out of the fabric", zone.name)
            return False
        for other in candidates:
            if other is not chosen:
                self.use(cluster, other.id, "unmapped", "another Subnet of ovn-cluster on an overlay network: "
                         f"fabricgen renders one backbone per zone ({shown(chosen.id.name)})", zone.name)
        zone.backbone_subnet = chosen
        zone.backbone_cidr = lv.network(lv.spec(chosen).get("cidrBlock"))
        return zone.backbone_cidr is not None

    def _left_out(self, cluster: ClusterInput, why: str) -> None:
        for ident, use in self.uses.items():
            if ident[0] == cluster.name and use.status == "unmapped":
                use.reason = f"cluster {shown(cluster.name)} is not imported: {why}"

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
                    f"{self.live.show_name}: ports on the transit switches {', '.join(map(shown, switches))}; "
                    "Kube-OVN's "
                    f"IC server keeps {', '.join(map(shown, kept))} (TS_NUM={count}, named as `getTSName` in "
                    "pkg/ovn_leader_checker/ovn.go names them) and the fabric cannot name "
                    f"{', '.join(map(shown, odd))}, so applying it could delete live switches (`updateTS` runs "
                    "`ovn-ic-nbctl ts-del`); nothing written")
            self.notes.append(f"{self.live.show_name}: ports on {count} transit switches "
                              f"({', '.join(map(shown, switches))}): transitSwitch.count {count} keeps them all "
                              f"(the IC server's TS_NUM); fabricgen routes over {name}")
        server = self.live_ic_server
        ts_num = lv.integer(server[1].env.get("TS_NUM")) if server is not None else None
        if ts_num is not None and count < ts_num <= MAX_TRANSIT_SWITCHES:
            self.notes.append(f"the IC server keeps {ts_num} transit switches (TS_NUM in its Deployment), "
                              f"{count} of them with ports in {self.live.show_name}: transitSwitch.count {ts_num} "
                              "keeps them all")
            count = ts_num
        subnets = {p.ipv4.network for p in self.live.show.ports if p.transit_switch == name and p.ipv4}
        return name, (next(iter(subnets)) if len(subnets) == 1 else None), count

    def match_azs(self, ts: str) -> list[AzUse]:
        ports = self.live.show.ports_on(ts)
        zones = {z.name: z for z in self.zones}
        if not set(self.live.show.zones) & set(zones):
            raise NothingToImport(
                f"{self.live.show_name} lists the availability zones {', '.join(map(shown, self.live.show.zones))}, "
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
                azs.append(AzUse(name, "unmapped", f"availability zone {shown(name)} is in the IC database, but no "
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
                azs.append(AzUse(name, "conflict", f"zone {name}'s port {shown(port.name)} has {port.ipv4.ip}, "
                                 f"the address of zone {', '.join(sharing)} as well: two ports cannot share one "
                                 "address on the transit switch; rebuild the interconnection and read the "
                                 "addresses again", address, port.name, line))
            else:
                azs.append(AzUse(name, "imported", f"zone {name}: transitAddress, from port {shown(port.name)}",
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
                values = "; ".join(f"{k}: {shown(zone.data.get(k))} here, {shown(first.data.get(k))} there"
                                   for k in differ)
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
                tunnel = lv.as_dict(lv.spec(config).get("networking")).get("tunnelType")
            if tunnel is None:
                encaps = {t for g in self.live.show.gateways if g.zone == zone.name for t, _ip in g.encaps}
                tunnel = next(iter(encaps)) if len(encaps) == 1 else None
            if tunnel in ("geneve", "vxlan"):
                seen[zone.name] = str(tunnel)
            elif tunnel is not None:
                self.notes.append(f"zone {zone.name}: tunnel type {shown(tunnel)} is not one fabricgen interconnects "
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

    @cached_property
    def live_ic_server(self) -> tuple[ClusterInput, ic_server.LiveIcServer] | None:
        """The live IC server Deployment (install-ic-server.sh's, or fabricgen's), the first
        cluster's where several have one: one IC database serves the interconnection."""
        found = [(c, ic_server.read(c.objects[ic_server.IC_SERVER])) for c in self.live.clusters
                 if ic_server.IC_SERVER in c.objects]
        for cluster, _server in found[1:]:
            self.conflict(cluster, ic_server.IC_SERVER, f"a second IC server: cluster {shown(found[0][0].name)} "
                          "runs one too, and the zones of one interconnection share one IC database; the fabric "
                          f"has {shown(found[0][0].name)}'s")
        return found[0] if found else None

    def database(self, encapsulation: str) -> cy.Map:
        first = self.zones[0]
        db = cy.Map()
        hosts = [h.strip() for h in str(first.data.get("ic-db-host", "")).split(",") if h.strip()]
        server = self.live_ic_server
        running = ic_server.running_members(server[1] if server else None, self.live.ic_raft, self.live.ic_raft_name)
        addresses = self.members_of(hosts, running)
        members = cy.Seq()
        db_clusters: list[str] = []
        for address in addresses:
            node, cluster = self.node_at(address)
            entry = cy.Map(flow=True)
            if node is None:
                name = f"ic-db-{str(address).replace('.', '-').replace(':', '-').strip('-')}"
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
        if server is not None and server[0].name in zone_of:
            hosted = {zone_of[server[0].name]}
        complete = len(db_clusters) == len(addresses) and bool(addresses)
        unknown: tuple[str, ...] = ()
        if running is None:
            if len(hosted) == 1 and None not in hosted and complete:
                self.notes.append(
                    "the IC database: neither the IC server's Deployment (kube-system/ovn-ic-server) nor a member's "
                    "raft server list was captured, so how many members run is not known (install-ic-server.sh runs "
                    "one per kube-ovn/role=master node, ic-db-host often names one): database.zone is left out, so "
                    "the fabric does not render the IC server and cannot scale it down; capture them (docs/"
                    "status-and-import.md) and import again to let fabricgen run it")
                unknown = ("database.zone is left out: the IC server's Deployment and raft server list were not",
                           "captured, so the members that run are not known; no IC server is rendered until they are")
        elif len(hosted) == 1 and None not in hosted and (complete or server is not None):
            db.add("zone", next(iter(hosted)), comment="it runs the IC server (ovn-ic-server)")
        db.add("nbPort", lv.port(first.data.get("ic-nb-port"), 6645), comment="ic-nb-port")
        db.add("sbPort", lv.port(first.data.get("ic-sb-port"), 6646), comment="ic-sb-port")
        options = self.live.ic_nb_options
        if options is not None:
            mode = icnb_options.vxlan_mode(options)
            if mode != (encapsulation == "vxlan"):
                db.add("vxlanMode", mode, comment=f"options:vxlan_mode of the IC northbound ({self.live.ic_nb_name})")
        else:
            self.notes.append("vxlan_mode was not captured (`ovn-ic-nbctl get IC_NB_Global . options`): the fabric "
                              "leaves vxlanMode to its default, on with vxlan")
        if server is not None:
            self.server_settings(db, server[0], server[1])
        self.client_hosts(db, hosts, addresses)
        told = running.sources if running is not None else "ic-db-host"
        db.add("members", members, comment=f"from {told}, in its order (the first bootstraps the raft)", above=unknown)
        return db

    def members_of(self, hosts: list[str], running: ic_server.Running | None) -> list[IPv4Address | IPv6Address]:
        """The members to declare: those that run where that is known, else ic-db-host's."""
        first = self.zones[0]
        if running is None:
            addresses = []
            for host in hosts:
                address = lv.ip(host)
                if address is None:
                    self.conflict(first.cluster, IC_CONFIG, f"ic-db-host {shown(host)!r} is no IP address, and "
                                  "nothing else names the members (capture the IC server's Deployment or a member's "
                                  "raft server list)", first.name)
                else:
                    addresses.append(address)
            return list(dict.fromkeys(addresses))
        server = self.live_ic_server
        for entry in running.unreadable:
            where = (server[0], ic_server.IC_SERVER) if server is not None else (first.cluster, IC_CONFIG)
            self.conflict(*where, f"the IC database member {shown(entry)!r} ({running.sources}) is no IP address, "
                          "and fabricgen declares members by address: the fabric cannot hold this member, and an IC "
                          "server rendered without it would stop it", first.name)
        if server is not None:
            cluster, live_server = server
            nodes = live_server.node_ips
            if live_server.replicas is not None and live_server.replicas != len(nodes):
                self.conflict(cluster, ic_server.IC_SERVER, f"replicas {live_server.replicas} where NODE_IPS names "
                              f"{len(nodes)} members ({', '.join(map(shown, nodes))}): start-ic-db.sh joins every "
                              f"NODE_IPS address, so the raft cluster counts {len(nodes)} and "
                              f"{live_server.replicas} pods run of them; the fabric declares {len(nodes)}")
            if running.from_raft is not None and set(running.from_raft) != set(nodes):
                self.conflict(cluster, ic_server.IC_SERVER, "the raft server list "
                              f"({', '.join(map(shown, running.from_raft))}) and NODE_IPS "
                              f"({', '.join(map(shown, nodes))}) name other members: the fabric declares every one "
                              "of both, so none is stopped; remove a member from the cluster (cluster/leave on it) "
                              "before you remove it from the fabric")
        return list(running.addresses)

    def client_hosts(self, db: cy.Map, hosts: list[str], members: list[IPv4Address | IPv6Address]) -> None:
        """ic-db-host kept as every zone's ovn-ic-config has it, where it is not the members'
        addresses: changing it would rebuild every zone's interconnection."""
        first = self.zones[0]
        written = [str(lv.ip(h) or h) for h in hosts]
        if written == [str(m) for m in members] or not hosts:
            return
        bad = [h for h in hosts if lv.ip(h) is None and lv.node_name(h) is None]
        if bad:
            self.conflict(first.cluster, IC_CONFIG, f"ic-db-host {', '.join(map(shown, bad))}: neither an IP "
                          "address nor a DNS name, which the fabric cannot hold", first.name)
            return
        strangers = [h for h in written if lv.ip(h) not in members]
        why = "ic-db-host, as every zone's ovn-ic-config has it"
        if strangers:
            self.notes.append(f"ic-db-host names {', '.join(map(shown, strangers))}, no member's address (a VIP, a "
                              "load balancer or a name in front of the members): kept in database.hosts")
        elif len(written) < len(members):
            why += f": {len(written)} of the {len(members)} members"
            self.notes.append(f"ic-db-host names {len(written)} of the {len(members)} IC database members that run: "
                              "kept in database.hosts, so no zone's ovn-ic-config changes (a change would rebuild "
                              "every zone's interconnection); FG115 says what it costs")
        db.add("hosts", _seq(written), comment=why)

    def server_settings(self, db: cy.Map, cluster: ClusterInput, server: ic_server.LiveIcServer) -> None:
        """The live IC server's image and leader probe interval, where the fabric's defaults differ."""
        self.use(cluster, ic_server.IC_SERVER, "rendered", "the IC server: fabricgen renders it in its place "
                 "(members, TS_NUM, image and leader probe compared; the rest is fabricgen's form: its sidecar "
                 "keeps vxlan_mode set, members are pinned by hostname); applying it restarts the pods one by one")
        probe = lv.integer(server.env.get("OVN_LEADER_PROBE_INTERVAL"))
        if probe is not None and probe != 5 and 1 <= probe <= 3600:
            db.add("leaderProbeInterval", probe, comment="OVN_LEADER_PROBE_INTERVAL of the IC server")
        if server.image is not None and not ic_server.same_image(server.image, default_image(self.kube_ovn_version())):
            if lv.image(server.image) is not None:
                db.add("image", server.image, comment="the IC server's image")
            else:
                self.unexpressed(cluster, ic_server.IC_SERVER, f"image {shown(server.image)!r}: not an image "
                                 "reference the fabric can hold")
        if server.env.get("ENABLE_SSL", "false").strip() != "false":
            self.unexpressed(cluster, ic_server.IC_SERVER, f"ENABLE_SSL {shown(server.env['ENABLE_SSL'])}: fabricgen "
                             "renders the IC server without SSL")

    def node_at(self, address: IPv4Address | IPv6Address) -> tuple[str | None, str | None]:
        for cluster in self.live.clusters:
            for node in self.of_kind(cluster, "", "Node"):
                addresses = lv.as_list(lv.as_dict(node.body.get("status")).get("addresses"))
                if any(isinstance(a, dict) and a.get("type") == "InternalIP" and lv.ip(a.get("address")) == address
                       for a in addresses):
                    name = lv.node_name(node.id.name)
                    if name is None:
                        continue
                    self.use(cluster, node.id, "read", f"read: IC database member {address} (its InternalIP)")
                    return name, cluster.name
        return None, None

    def kube_ovn_version(self) -> str | None:
        versions: list[tuple[tuple[int, ...], str]] = []
        for zone in self.zones:
            config = zone.cluster.objects.get(CONFIGURATION)
            images = lv.as_dict(lv.as_dict(lv.spec(config).get("global")).get("images")) if config is not None else {}
            tag = lv.as_dict(images.get("kubeovn")).get("tag") if config is not None else None
            match = re.fullmatch(r"v?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?", str(tag or ""))
            if match:
                versions.append((tuple(int(g or 0) for g in match.groups()), str(tag)))
        return min(versions)[1] if versions else None


def _seq(values: list[str]) -> cy.Seq:
    seq = cy.Seq(flow=True)
    for value in values:
        seq.add(value)
    return seq
