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

from collections.abc import Iterable

from fabricgen.adopt.inputs import LiveInput
from fabricgen.adopt.ledger import AzUse, Imported, NothingToImport, Use
from fabricgen.adopt.live_values import shown
from fabricgen.adopt.tenant_mapping import TenantMapping
from fabricgen.serialise import commented_yaml as cy


class _Mapper(TenantMapping):
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
            zones.add(zone.doc, above=("", f"cluster {shown(zone.cluster.name)}: {sources}"))
        document.add("zones", zones, above=("",))
        self.finish_reasons()
        return Imported(self.site, document, [], list(self.uses.values()), azs,
                        {z.name: z.cluster.name for z in self.zones}, self.notes)

    def finish_reasons(self) -> None:
        for use in self.uses.values():
            if use.status == "unmapped" and use.id.kind == "NetworkAttachmentDefinition" and \
                    "not imported" not in use.reason and "not joined" not in use.reason:
                use.reason = "no Subnet the fabric renders uses this network"


def build(live: LiveInput, site: str) -> Imported:
    """The fabric for `live`, named `site`; raises NothingToImport when no cluster is a zone."""
    return _Mapper(live, site).build()


def statuses(uses: Iterable[Use]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for use in uses:
        counts[use.status] = counts.get(use.status, 0) + 1
    return counts

__all__ = ["AzUse", "Imported", "NothingToImport", "Use", "build", "statuses"]
