"""One zone's part of the fabric: its cluster networks, its backbone and the routes of
`ovn-cluster` fabricgen would not derive (`mapping` has the rules)."""

from __future__ import annotations

import json
from ipaddress import IPv4Network

from fabricgen.adopt import live_values as lv
from fabricgen.adopt.inputs import ClusterInput
from fabricgen.adopt.interconnect_mapping import InterconnectMapping
from fabricgen.adopt.ledger import MappedZone
from fabricgen.adopt.live_values import (
    CANAL,
    CONFIGURATION,
    DEFAULTS,
    HARVESTER_CLUSTER_NETWORK,
    HARVESTER_TYPE,
    IC_CONFIG,
    shown,
)
from fabricgen.model.names import DEFAULT_VPC
from fabricgen.observe import kube_objects as ko
from fabricgen.plan.zones import ROUTE_ALLOW_PRIORITY
from fabricgen.serialise import commented_yaml as cy


class ZoneMapping(InterconnectMapping):
    """One zone: its cluster networks, backbone, and the routes of `ovn-cluster`."""

    # -------------------------------------------------------------- one zone
    def zone(self, zone: MappedZone) -> None:
        cluster, doc = zone.cluster, zone.doc
        self.use(cluster, IC_CONFIG, "rendered", f"zone {zone.name}: its ovn-ic-config", zone.name)
        config = cluster.objects.get(CONFIGURATION)
        if config is not None:
            self.use(cluster, CONFIGURATION, "rendered",
                     f"zone {zone.name}: enableIC (fabricgen sets only its own fields)", zone.name)
            components = lv.as_dict(lv.spec(config).get("components"))
            if components.get("enableIC") is not True:
                self.conflict(cluster, CONFIGURATION, "enableIC is not true, but ovn-ic-config enables the "
                              "interconnection: Kube-OVN runs no ovn-ic controller without it", zone.name)
        gateways = [g.strip() for g in str(zone.data.get("gw-nodes", "")).strip(",").split(",") if g.strip()]
        names = [g for g in gateways if lv.node_name(g)]
        if len(names) != len(gateways):
            self.unexpressed(cluster, IC_CONFIG, "gw-nodes that are not node names")
        backbone = self.backbone(zone)
        doc.add("name", zone.name, comment=f"az-name of cluster {shown(cluster.name)}")
        doc.add("platform", "harvester" if zone.harvester else "kube-ovn",
                comment="SUSE Virtualization: its NADs carry network.harvesterhci.io labels" if zone.harvester
                else "no SUSE Virtualization labels on its NADs")
        doc.add("gatewayNodes", cy.Seq([cy.Item(g) for g in names], flow=True), comment="gw-nodes, in priority order")
        if zone.transit is not None:
            doc.add("transitAddress", str(zone.transit), comment="its port on the transit switch (ovn-ic-sbctl show)")
        doc.add("cluster", self.cluster_networks(zone))
        doc.add("backbone", backbone)

    def cluster_networks(self, zone: MappedZone) -> cy.Map:
        cluster = zone.cluster
        config = cluster.objects.get(CONFIGURATION)
        ipv4 = lv.as_dict(lv.spec(config).get("ipv4")) if config is not None else {}
        networking = lv.as_dict(lv.spec(config).get("networking")) if config is not None else {}
        out = cy.Map()
        subnets = self.of_kind(cluster, "kubeovn.io", "Subnet")
        default = next((s for s in subnets if lv.spec(s).get("default") is True), None)
        join_name = str(networking.get("nodeSubnet") or "join")
        join = next((s for s in subnets if s.id.name == join_name), None)
        values: list[tuple[str, IPv4Network | None, str]] = []
        pod = lv.first_ipv4_network(lv.spec(default).get("cidrBlock")) if default is not None else None
        if default is not None:
            self.use(cluster, default.id, "read", f"read: Kube-OVN's default Subnet, zones[{zone.index}].cluster."
                     "podCIDR (fabricgen does not render it)", zone.name)
            configured = lv.first_ipv4_network(ipv4.get("podCIDR"))
            if configured is not None and pod is not None and configured != pod:
                self.notes.append(f"zone {zone.name}: the default Subnet has {pod}, the Configuration ipv4.podCIDR "
                                  f"{configured}: the fabric has the Subnet's, which pods use")
        pod_from = f"Subnet {shown(default.id.name)}" if default is not None and pod else "Configuration ipv4.podCIDR"
        values.append(("podCIDR", pod or lv.first_ipv4_network(ipv4.get("podCIDR")), pod_from))
        join_cidr = lv.first_ipv4_network(lv.spec(join).get("cidrBlock")) if join is not None else None
        if join is not None:
            self.use(cluster, join.id, "read", f"read: Kube-OVN's join Subnet, zones[{zone.index}].cluster.joinCIDR "
                     "(fabricgen does not render it)", zone.name)
        values.append(("joinCIDR", join_cidr or lv.first_ipv4_network(ipv4.get("joinCIDR")),
                       f"Subnet {shown(join_name)}" if join_cidr else "Configuration ipv4.joinCIDR"))
        values.append(("serviceCIDR", lv.first_ipv4_network(ipv4.get("serviceCIDR")), "Configuration ipv4.serviceCIDR"))
        for key, value, where in values:
            if value is not None:
                out.add(key, str(value), comment=where)
            else:
                self.notes.append(f"zone {zone.name}: {key} not seen (capture the Configuration and Subnets); "
                                  f"fabricgen assumes {DEFAULTS[key]}")
        canal = cluster.objects.get(CANAL)
        primary = None
        if canal is not None:
            values_set = lv.as_dict(lv.spec(canal).get("set"))
            primary = lv.first_ipv4_network(values_set.get("global.clusterCIDRv4")) or \
                lv.first_ipv4_network(values_set.get("global.clusterCIDR"))
            self.use(cluster, CANAL, "read", f"read: Canal's pod range, zones[{zone.index}].cluster.primaryPodCIDR",
                     zone.name)
        if primary is not None:
            out.add("primaryPodCIDR", str(primary), comment="Canal's (HelmChart rke2-canal global.clusterCIDRv4)")
        elif zone.harvester:
            self.notes.append(f"zone {zone.name}: Canal's pod range not seen (HelmChart kube-system/rke2-canal): "
                              "primaryPodCIDR left out, so no check that Kube-OVN's pod CIDR stays clear of it")
        return out

    def backbone(self, zone: MappedZone) -> cy.Map:
        cluster, chosen, cidr = zone.cluster, zone.backbone_subnet, zone.backbone_cidr
        assert chosen is not None and cidr is not None
        spec = lv.spec(chosen)
        self.use(cluster, chosen.id, "rendered", f"zone {zone.name}: the backbone Subnet", zone.name)
        out = cy.Map()
        out.add("cidr", str(cidr), comment=f"Subnet {shown(chosen.id.name)}")
        gateway = lv.address(spec.get("gateway"))
        if gateway is not None and gateway != cidr.network_address + 1:
            out.add("gateway", str(gateway))
        if chosen.id.name != f"backbone-{zone.name}" and lv.label(chosen.id.name):
            out.add("subnetName", chosen.id.name)
        if spec.get("enableDHCP") is not True:
            out.add("dhcp", False)
        if spec.get("natOutgoing") is True:
            out.add("natOutgoing", True, comment="as it runs; SNAT breaks the return path across zones")
        provider = lv.ovn_provider(spec.get("provider"))
        assert provider is not None
        network, zone.harvester = self.network(cluster, provider, zone, f"the backbone's network ({chosen.id.name})")
        out.add("network", network)
        return out

    def network(self, cluster: ClusterInput, provider: tuple[str, str], zone: MappedZone, what: str,
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
            labels = lv.labels(nad)
            harvester = HARVESTER_TYPE in labels
            cluster_network = str(labels.get(HARVESTER_CLUSTER_NETWORK) or "mgmt")
            if lv.nad_config(nad).get("type") != "kube-ovn":
                self.unexpressed(cluster, ident, "a CNI type other than kube-ovn")
        if default_name is None or name != default_name or namespace != "default":
            out.add("name", name)
            if namespace != "default":
                out.add("namespace", namespace)
        if cluster_network != "mgmt" and lv.label(cluster_network):
            out.add("clusterNetwork", cluster_network)
        return out, harvester

    # -------------------------------------------------------------- ovn-cluster's routes
    def default_vpc(self, zone: MappedZone) -> None:
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
        spec = lv.spec(vpc)
        statics, policies = cy.Seq(), cy.Seq()
        for route in lv.as_list(spec.get("staticRoutes")):
            if not isinstance(route, dict):
                continue
            cidr, hop = str(route.get("cidr", "")), str(route.get("nextHopIP", ""))
            policy = route.get("policy") or "policyDst"
            plain = not any(route.get(k) for k in ("routeTable", "ecmpMode", "bfdId"))
            if (cidr, hop) in derived and policy == "policyDst" and plain:
                continue
            destination = lv.network(cidr)
            target = others.get(destination) if destination is not None else None
            if target is not None:
                if target.transit is None:
                    reason = (f"a static route to zone {target.name}'s backbone {cidr} through {shown(hop)}, but "
                              f"{target.name} has no port on the transit switch in {self.live.show_name}; fabricgen "
                              "routes to it once it has a transitAddress")
                else:
                    reason = (f"a stale static route: to zone {target.name}'s backbone {cidr} through {shown(hop)}, "
                              f"but {target.name}'s transit address is {target.transit} ({self.live.show_name}); "
                              "the imported fabric routes through it (regenerate the routes after every IC change)")
                self.conflict(cluster, ident, reason, zone.name)
                continue
            net, address = lv.network(cidr) or lv.interface_network(cidr), lv.address(hop)
            if net is None or address is None or not plain or policy not in ("policyDst", "policySrc"):
                self.unexpressed(cluster, ident, f"static route {shown(json.dumps(route, sort_keys=True))}: "
                                 "fabricgen's "
                                 "defaultVpc routes are IPv4, one next hop, without a route table, ECMP or BFD")
                continue
            entry = cy.Map(flow=True).add("cidr", str(net)).add("nextHopIP", str(address))
            if policy == "policySrc":
                entry.add("policy", policy)
            statics.add(entry)
        for rule in lv.as_list(spec.get("policyRoutes")):
            if not isinstance(rule, dict):
                continue
            priority, match, action = rule.get("priority"), rule.get("match"), rule.get("action")
            if priority == ROUTE_ALLOW_PRIORITY and action == "allow" and isinstance(match, str) and \
                    match.startswith("ip4.dst == ") and match[len("ip4.dst == "):] in derived_cidrs:
                continue
            next_hop = rule.get("nextHopIP") or None
            fits = (isinstance(priority, int) and not isinstance(priority, bool) and 0 <= priority <= 32767
                    and isinstance(match, str) and match.strip() and match.isprintable()
                    and action in ("allow", "drop", "reroute")
                    and (next_hop is None or lv.address(next_hop) is not None))
            if not fits:
                self.unexpressed(cluster, ident, f"policy route {shown(json.dumps(rule, sort_keys=True))}: fabricgen's "
                                 "policy routes have a priority 0-32767, a match, allow/drop/reroute and at most one "
                                 "IPv4 next hop")
                continue
            refused = lv.match_refusal(str(match))
            if refused is not None:
                self.unexpressed(cluster, ident, f"policy route {shown(json.dumps(rule, sort_keys=True))}: OVN's "
                                 f"parser refuses its match ({refused}), so ovn-northd skips it and it routes "
                                 "nothing; fix or remove it on the cluster")
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
