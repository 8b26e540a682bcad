"""A zone's tenant VPCs with their subnets and peerings, and its NAT gateways with their elastic IPs,
rules and external network (`mapping` has the rules)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from ipaddress import IPv4Interface, IPv4Network

from fabricgen.adopt import live_values as lv
from fabricgen.adopt.ledger import MappedZone
from fabricgen.adopt.live_values import (
    NAT_GW_CONFIG,
    shown,
)
from fabricgen.adopt.zone_mapping import ZoneMapping
from fabricgen.model.names import DEFAULT_VPC, EXTERNAL_NETWORK, KUBE_SYSTEM
from fabricgen.observe import kube_objects as ko
from fabricgen.serialise import commented_yaml as cy


class TenantMapping(ZoneMapping):
    """A zone's tenant VPCs, their peerings and NAT gateways."""

    # -------------------------------------------------------------- tenant VPCs
    def tenants(self, zone: MappedZone) -> None:
        cluster = zone.cluster
        vpcs = [v for v in self.of_kind(cluster, "kubeovn.io", "Vpc") if v.id.name != DEFAULT_VPC]
        subnets: dict[str, list[ko.LiveObject]] = {}  # by VPC: one pass, however many VPCs
        for subnet in self.of_kind(cluster, "kubeovn.io", "Subnet"):
            subnets.setdefault(str(lv.spec(subnet).get("vpc")), []).append(subnet)
        gateways: dict[str, list[ko.LiveObject]] = {}
        for gateway in self.of_kind(cluster, "kubeovn.io", "VpcNatGateway"):
            gateways.setdefault(str(lv.spec(gateway).get("vpc")), []).append(gateway)
        docs = cy.Seq()
        imported: dict[str, tuple[ko.LiveObject, list[IPv4Network]]] = {}
        nat: list[tuple[str, ko.LiveObject]] = []
        for vpc in vpcs:
            name = vpc.id.name
            if "ovn.kubernetes.io/vpc_external" in lv.labels(vpc):
                self.use(cluster, vpc.id, "unmapped", "Kube-OVN's external VPC", zone.name)
                continue
            if lv.label(name) is None or name == DEFAULT_VPC:
                self.use(cluster, vpc.id, "unmapped", f"VPC name {shown(name)!r} is not a DNS-1123 label; fabricgen "
                         "cannot render it", zone.name)
                continue
            self.use(cluster, vpc.id, "rendered", f"zone {zone.name}: tenant VPC", zone.name)
            spec = lv.spec(vpc)
            doc = cy.Map().add("name", name)
            namespaces = [n for n in lv.as_list(spec.get("namespaces")) if lv.label(n)]
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

    def tenant_subnet(self, zone: MappedZone, subnet: ko.LiveObject) -> tuple[cy.Map, IPv4Network] | None:
        cluster, spec = zone.cluster, lv.spec(subnet)
        name = subnet.id.name
        provider = lv.ovn_provider(spec.get("provider"))
        cidr = lv.network(spec.get("cidrBlock"))
        if provider is None:
            self.use(cluster, subnet.id, "unmapped", f"Subnet of VPC {shown(spec.get('vpc'))} with provider "
                     f"{shown(spec.get('provider') or 'ovn')}, no overlay network: fabricgen's tenant subnets are VM "
                     "networks with a NetworkAttachmentDefinition", zone.name)
            return None
        if lv.label(name) is None or cidr is None:
            self.use(cluster, subnet.id, "unmapped", f"Subnet {shown(name)}: " + ("its name is not a DNS-1123 label"
                     if cidr is not None else f"cidrBlock {shown(spec.get('cidrBlock'))!r} is not one IPv4 network"),
                     zone.name)
            return None
        self.use(cluster, subnet.id, "rendered", f"zone {zone.name}: a subnet of VPC {shown(spec.get('vpc'))}",
                 zone.name)
        doc = cy.Map(flow=True).add("name", name).add("cidr", str(cidr))
        gateway = lv.address(spec.get("gateway"))
        if gateway is not None and gateway != cidr.network_address + 1:
            doc.add("gateway", str(gateway))
        if spec.get("enableDHCP") is not True:
            doc.add("dhcp", False)
        if spec.get("natOutgoing") is True:
            doc.add("natOutgoing", True)
        namespaces = [n for n in lv.as_list(spec.get("namespaces")) if lv.label(n)]
        if namespaces:
            doc.add("namespaces", cy.Seq([cy.Item(n) for n in namespaces], flow=True))
        self.subnet_filters(zone, subnet, doc)
        options = spec.get("dhcpV4Options")
        if options:
            match = lv.DNS_OPTION.fullmatch(str(options))
            servers = [s for s in match.group(1).split(";") if lv.address(s)] if match else []
            if servers:
                doc.add("dnsServers", cy.Seq([cy.Item(s) for s in servers], flow=True))
            else:
                self.unexpressed(cluster, subnet.id, f"dhcpV4Options {shown(options)!r}: fabricgen writes only "
                                 "dns_server={...}")
        network, _harvester = self.network(cluster, provider, zone, f"the network of subnet {name}", default_name=name)
        if network.entries:
            doc.add("network", network)
        doc.flow = len(doc.entries) <= 4 and not any(isinstance(e.value, cy.Map) and e.value.entries
                                                     for e in doc.entries)
        return doc, cidr

    def subnet_filters(self, zone: MappedZone, subnet: ko.LiveObject, doc: cy.Map) -> None:
        """A tenant Subnet's `private`, `allowSubnets`, `acls` and `allowEWTraffic`, as written; an
        ACL the fabric cannot hold (a direction, action or priority outside OVN's, a match OVN's
        grammar refuses) is left out and named."""
        spec = lv.spec(subnet)
        if spec.get("private") is True:
            doc.add("private", True)
        allowed = [c for c in lv.as_list(spec.get("allowSubnets")) if lv.network(c) is not None]
        for c in lv.as_list(spec.get("allowSubnets")):
            if lv.network(c) is None:
                self.unexpressed(zone.cluster, subnet.id, f"allowSubnets entry {shown(c)!r}: not one IPv4 network")
        if allowed:
            doc.add("allowSubnets", cy.Seq([cy.Item(str(c)) for c in allowed], flow=True))
        acls = cy.Seq()
        for entry in lv.as_list(spec.get("acls")):
            acl = lv.subnet_acl(entry)
            if acl is None:
                self.unexpressed(zone.cluster, subnet.id, f"ACL {shown(json.dumps(entry, sort_keys=True))}: not a "
                                 "direction, priority (0-32767), OVN match and action OVN accepts")
                continue
            acls.add(cy.Map(flow=True).add("direction", acl[0]).add("priority", acl[1]).add("match", acl[2])
                     .add("action", acl[3]))
        if acls.items:
            doc.add("acls", acls)
        if spec.get("allowEWTraffic") is True:
            doc.add("allowEWTraffic", True)

    def peerings(self, zone: MappedZone, imported: Mapping[str, tuple[ko.LiveObject, list[IPv4Network]]]
                 ) -> dict[tuple[str, str], IPv4Network]:
        cluster = zone.cluster
        sides: dict[tuple[str, str], IPv4Interface | None] = {}
        for name, (vpc, _cidrs) in imported.items():
            for peering in lv.as_list(lv.spec(vpc).get("vpcPeerings")):
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

    def tenant_routes(self, zone: MappedZone, imported: Mapping[str, tuple[ko.LiveObject, list[IPv4Network]]],
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
            spec = lv.spec(vpc)
            for route in lv.as_list(spec.get("staticRoutes")):
                if not isinstance(route, dict):
                    continue
                key = (str(route.get("cidr", "")), str(route.get("nextHopIP", "")))
                plain = not any(route.get(k) for k in ("routeTable", "ecmpMode", "bfdId"))
                if key not in derived[name] or not plain or (route.get("policy") or "policyDst") != "policyDst":
                    self.unexpressed(zone.cluster, vpc.id, f"static route {shown(json.dumps(route, sort_keys=True))}: "
                                     "a tenant VPC's routes are its peerings' and its NAT gateway's only")
            if spec.get("policyRoutes"):
                self.unexpressed(zone.cluster, vpc.id, "policy routes: fabricgen writes none on tenant VPCs")

    # -------------------------------------------------------------- NAT gateways
    def nat_gateways(self, zone: MappedZone, gateways: list[tuple[str, ko.LiveObject]],
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
            spec = lv.spec(gw)
            lan_ip = lv.address(spec.get("lanIp"))
            subnet = lv.label(spec.get("subnet"))
            if lv.label(gw.id.name) is None or len(gw.id.name) > 48 or lan_ip is None or subnet is None:
                self.use(cluster, gw.id, "unmapped", "a NAT gateway fabricgen cannot render (its name, subnet or "
                         "lanIp)", zone.name)
                continue
            self.use(cluster, gw.id, "rendered", f"zone {zone.name}: VPC {vpc_name}'s NAT gateway", zone.name)
            lan_ips[vpc_name] = str(lan_ip)
            doc = cy.Map().add("name", gw.id.name).add("subnet", subnet).add("lanIp", str(lan_ip))
            selector = cy.Map()
            for entry in lv.as_list(spec.get("selector")):
                key, sep, value = str(entry).partition(":")
                if sep:
                    selector.add(key.strip(), value.strip())
            if selector.entries:
                doc.add("selector", selector)
            if lv.as_list(spec.get("externalSubnets")) != [EXTERNAL_NETWORK]:
                self.unexpressed(cluster, gw.id, f"externalSubnets other than [{EXTERNAL_NETWORK}]")
            eip_docs, names = cy.Seq(), set()
            for eip in eips:
                if lv.spec(eip).get("natGwDp") != gw.id.name or lv.label(eip.id.name) is None:
                    continue
                self.use(cluster, eip.id, "rendered", f"zone {zone.name}: an elastic IP of {gw.id.name}", zone.name)
                names.add(eip.id.name)
                item = cy.Map(flow=True).add("name", eip.id.name)
                address = lv.address(lv.spec(eip).get("v4ip"))
                if address is not None:
                    item.add("address", str(address))
                eip_docs.add(item)
            snat_docs, dnat_docs = cy.Seq(), cy.Seq()
            for rule in snats:
                rspec = lv.spec(rule)
                internal = lv.network(rspec.get("internalCIDR"))
                if rspec.get("eip") not in names or internal is None or lv.label(rule.id.name) is None:
                    continue
                self.use(cluster, rule.id, "rendered", f"zone {zone.name}: a SNAT rule of {gw.id.name}", zone.name)
                snat_docs.add(cy.Map(flow=True).add("name", rule.id.name).add("eip", str(rspec["eip"]))
                              .add("internalCIDR", str(internal)))
            for rule in dnats:
                rspec = lv.spec(rule)
                ports = [lv.integer(rspec.get(k)) for k in ("externalPort", "internalPort")]
                internal_ip = lv.address(rspec.get("internalIp"))
                protocol = str(rspec.get("protocol") or "tcp").lower()
                if rspec.get("eip") not in names or internal_ip is None or None in ports or \
                        protocol not in ("tcp", "udp") or lv.label(rule.id.name) is None:
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

    def external_network(self, zone: MappedZone) -> cy.Map | None:
        cluster = zone.cluster
        subnet = cluster.objects.get(ko.ObjectId("kubeovn.io", "Subnet", "", EXTERNAL_NETWORK))
        if subnet is None:
            self.notes.append(f"zone {zone.name}: NAT gateways without Subnet {EXTERNAL_NETWORK} in the captures: "
                              "no externalNetwork")
            return None
        spec = lv.spec(subnet)
        cidr, gateway = lv.network(spec.get("cidrBlock")), lv.address(spec.get("gateway"))
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
                vlan_id = lv.integer(lv.spec(vlan).get("id")) or None
                provider = cluster.objects.get(ko.ObjectId("kubeovn.io", "ProviderNetwork", "",
                                                           str(lv.spec(vlan).get("provider", ""))))
                if provider is not None:
                    self.use(cluster, provider.id, "rendered", f"zone {zone.name}: the external network's NIC",
                             zone.name)
                    interface = str(lv.spec(provider).get("defaultInterface") or "") or None
            nad = cluster.objects.get(ko.ObjectId("k8s.cni.cncf.io", "NetworkAttachmentDefinition", KUBE_SYSTEM,
                                                  EXTERNAL_NETWORK))
            if nad is not None:
                self.use(cluster, nad.id, "rendered", f"zone {zone.name}: the external network's NAD", zone.name)
        else:
            nad = cluster.objects.get(ko.ObjectId("k8s.cni.cncf.io", "NetworkAttachmentDefinition", KUBE_SYSTEM,
                                                  EXTERNAL_NETWORK))
            if nad is not None:
                self.use(cluster, nad.id, "rendered", f"zone {zone.name}: the external network (macvlan)", zone.name)
                master = str(lv.nad_config(nad).get("master") or "")
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
        for entry in lv.as_list(spec.get("excludeIps")):
            low, _sep, high = str(entry).partition("..")
            first = lv.address(low)
            last = lv.address(high) if high else first
            if first is None or last is None or last < first:
                self.unexpressed(cluster, subnet.id,
                                 f"excludeIps entry {shown(entry)!r}: not an address or FIRST..LAST")
            elif str(entry) != str(gateway):
                excluded.append(str(entry))
        if excluded:
            out.add("excludeIps", cy.Seq([cy.Item(e) for e in excluded], flow=True))
        return out
