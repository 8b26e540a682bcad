"""Rules on the policy (who may talk to whom) and on the raw ACL fields of tenant subnets."""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Iterable, Iterator
from ipaddress import IPv4Network

from fabricgen.diagnostics import Finding, Severity
from fabricgen.model import Fabric, acl_match
from fabricgen.model.consumers import KubernetesCluster, OpenStackCloud
from fabricgen.model.policy import Member
from fabricgen.plan.policy import KUBE_OVN, NEUTRON, OUTSIDE, OVN_KUBERNETES, merged_ports, port_range, rule_name
from fabricgen.validation.registry import rule


def _where(member: Member) -> tuple[str, str | None]:
    """(platform, the cluster or zone it lives in) of a member, in `plan.policy`'s platform names."""
    if member.tenant_subnet is not None:
        return KUBE_OVN, member.tenant_subnet.zone
    if member.backbone is not None:
        return KUBE_OVN, member.backbone
    if member.namespace is not None:
        return OVN_KUBERNETES, member.namespace.cluster
    if member.openstack is not None:
        return NEUTRON, member.openstack.cloud
    return OUTSIDE, None


def _consumers(fabric: Fabric) -> dict[str, object]:
    return {c.name: c for d in fabric.ovn_deployments for c in d.consumers}


NEAR_MAX = 2000  # names compared for one suggestion: past it, none (each comparison is a string matcher)


def _near(name: str, names: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the nearest of `names`, else nothing; names of about the same
    length only, so that many misspellings among many names stay linear in practice."""
    near = sorted(n for n in names if abs(len(n) - len(name)) <= 2 and n[:1] == name[:1])[:NEAR_MAX]
    close = difflib.get_close_matches(name, near, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _listed(names: Iterable[str], most: int = 12) -> str:
    """The names, or as many as `most` and how many more: a message stays one short line."""
    shown = sorted(names)
    if not shown:
        return "none"
    return ", ".join(shown[:most]) + (f" and {len(shown) - most} more" if len(shown) > most else "")


@rule("FG901", "policy-unknown-name",
      "A policy group or rule names a group, zone, subnet, cluster or cloud the fabric does not have.")
def unknown_names(fabric: Fabric) -> Iterator[Finding]:
    policy = fabric.policy
    zones = {z.name: z for z in fabric.zones}
    consumers = _consumers(fabric)
    seen: set[str] = set()
    for g, group in enumerate(policy.groups):
        if group.name in seen:
            yield Finding("FG901", ("policy", "groups", g, "name"),
                          f"group {group.name!r} is declared twice; give each group one entry")
        seen.add(group.name)
        for m, member in enumerate(group.members):
            at = ("policy", "groups", g, "members", m)
            if member.tenant_subnet is not None:
                ref = member.tenant_subnet
                zone = zones.get(ref.zone)
                if zone is None:
                    yield Finding("FG901", (*at, "tenantSubnet", "zone"),
                                  f"no zone {ref.zone!r} in the fabric{_near(ref.zone, zones)}")
                elif not any(s.name == ref.name for v in zone.vpcs for s in v.subnets):
                    subnets = [s.name for v in zone.vpcs for s in v.subnets]
                    yield Finding("FG901", (*at, "tenantSubnet", "name"),
                                  f"zone {ref.zone} has no tenant subnet {ref.name!r}{_near(ref.name, subnets)}")
            elif member.backbone is not None and member.backbone not in zones:
                yield Finding("FG901", (*at, "backbone"),
                              f"no zone {member.backbone!r} in the fabric{_near(member.backbone, zones)}")
            elif member.namespace is not None and \
                    not isinstance(consumers.get(member.namespace.cluster), KubernetesCluster):
                yield Finding("FG901", (*at, "namespace", "cluster"),
                              f"no Kubernetes consumer {member.namespace.cluster!r} in the fabric's OVN deployments")
            elif member.openstack is not None and not isinstance(consumers.get(member.openstack.cloud), OpenStackCloud):
                yield Finding("FG901", (*at, "openstack", "cloud"),
                              f"no OpenStack consumer {member.openstack.cloud!r} in the fabric's OVN deployments")
    for r, item in enumerate(policy.rules):
        for key, name in (("from", item.from_), ("to", item.to)):
            if name not in seen:
                yield Finding("FG901", ("policy", "rules", r, key),
                              f"no group {name!r}{_near(name, seen)}; the groups are: {_listed(seen)}")


@rule("FG902", "policy-rule-changes-nothing",
      "A rule leads into a group that is open (no defaultDeny) or stays inside one group: it allows nothing new.")
def rule_changes_nothing(fabric: Fabric) -> Iterator[Finding]:
    groups = {g.name: g for g in fabric.policy.groups}
    for r, item in enumerate(fabric.policy.rules):
        target = groups.get(item.to)
        if item.from_ == item.to:
            yield Finding("FG902", ("policy", "rules", r, "to"),
                          f"a group's own members always reach each other; drop the rule {rule_name(item)}")
        elif target is not None and not target.default_deny:
            yield Finding("FG902", ("policy", "rules", r, "to"),
                          f"group {item.to} has no defaultDeny, so everything already reaches it; set "
                          f"defaultDeny: true on group {item.to} to make this rule the only way in, or drop the rule")


@rule("FG903", "policy-ports", "A rule's ports are out of range, reversed, or given for a protocol without ports.")
def rule_ports(fabric: Fabric) -> Iterator[Finding]:
    for r, item in enumerate(fabric.policy.rules):
        if item.ports and item.protocol in ("icmp", "any"):
            yield Finding("FG903", ("policy", "rules", r, "ports"),
                          f"protocol {item.protocol} has no ports; drop ports, or name tcp, udp or sctp")
            continue
        for p, text in enumerate(item.ports):
            first, last = port_range(text)
            if first > last:
                yield Finding("FG903", ("policy", "rules", r, "ports", p),
                              f"{text!r} is backwards: write the lower port first, {last}-{first}")
            elif not 1 <= first <= last <= 65535:
                yield Finding("FG903", ("policy", "rules", r, "ports", p),
                              f"{text!r} is not a port or a range FIRST-LAST of ports 1-65535")


@rule("FG904", "policy-unenforceable",
      "A protected group has a member nothing of the fabric filters traffic into, or a rule a platform cannot say.")
def unenforceable(fabric: Fabric) -> Iterator[Finding]:
    groups = {g.name: g for g in fabric.policy.groups}
    for g, group in enumerate(fabric.policy.groups):
        if not group.default_deny:
            continue
        for m, member in enumerate(group.members):
            if member.cidr is not None:
                yield Finding("FG904", ("policy", "groups", g, "members", m, "cidr"),
                              f"nothing of the fabric filters traffic into {member.cidr}, so group {group.name}'s "
                              "defaultDeny cannot hold for it; move the range to a group without defaultDeny, "
                              "used as a source")
    for r, item in enumerate(fabric.policy.rules):
        target = groups.get(item.to)
        if target is None or item.protocol != "icmp":
            continue
        if any(m.namespace is not None for m in target.members):
            yield Finding("FG904", ("policy", "rules", r, "protocol"),
                          f"group {item.to} has pods of OVN-Kubernetes, and neither a NetworkPolicy nor an "
                          "AdminNetworkPolicy names ICMP (their ports are TCP, UDP or SCTP; network-policy-api "
                          "issue #187): ICMP alone cannot be allowed into pods; drop the rule (pods then answer no "
                          "ping: check them over TCP), or use protocol any if the source may reach every port")


@rule("FG905", "policy-source-without-address",
      "Pods that another platform or cluster must name by address have no cidr.")
def source_without_address(fabric: Fabric) -> Iterator[Finding]:
    groups = {g.name: (g_index, g) for g_index, g in enumerate(fabric.policy.groups)}

    def check(source: str, target: str) -> Iterator[Finding]:
        if source not in groups or target not in groups:
            return
        s_index, s_group = groups[source]
        targets = {_where(m) for m in groups[target][1].members}
        for m, member in enumerate(s_group.members):
            ns = member.namespace
            if ns is None or ns.cidr is not None:
                continue
            if any(where != (OVN_KUBERNETES, ns.cluster) for where in targets):
                yield Finding("FG905", ("policy", "groups", s_index, "members", m, "namespace"),
                              f"namespace {ns.name} of cluster {ns.cluster} reaches group {target}, which other "
                              "platforms or clusters filter by address, and pods have none fixed; give cidr: "
                              "the range this namespace's pods take their addresses from")

    for g in fabric.policy.groups:
        if g.default_deny:
            yield from check(g.name, g.name)
    for item in fabric.policy.rules:
        if item.from_ != item.to:
            yield from check(item.from_, item.to)


@rule("FG906", "policy-shadowed-rule",
      "A rule allows nothing the rules before it do not already allow, or a later rule allows all it does.")
def shadowed(fabric: Fabric) -> Iterator[Finding]:
    # per (from, to, protocol): whether every port is allowed already, and the allowed port ranges
    # merged and sorted, so that 10,000 rules take one pass (a containment test is a bisection);
    # per (from, to) the earlier rules a later rule of every port (or `any`) makes redundant
    every: set[tuple[str, str, str]] = set()
    ranges: dict[tuple[str, str, str], list[tuple[int, int]]] = {}
    earlier: dict[tuple[str, str], list[int]] = {}
    rules = fabric.policy.rules
    for r, item in enumerate(rules):
        key = (item.from_, item.to, item.protocol)
        wanted = [port_range(p) for p in item.ports]
        if any(not 1 <= a <= b <= 65535 for a, b in wanted):
            continue  # FG903's
        if (item.from_, item.to, "any") in every or key in every or \
                (wanted and all(_within(ranges.get(key, []), a, b) for a, b in wanted)):
            yield Finding("FG906", ("policy", "rules", r),
                          f"the rules before it already allow all of {rule_name(item)}; drop this one",
                          Severity.WARNING)
            continue
        pair = (item.from_, item.to)
        if not wanted:  # every port of a protocol, or `any`: what came before of it is redundant
            covered = [e for e in earlier.get(pair, []) if item.protocol in ("any", rules[e].protocol)]
            for e in covered:
                yield Finding("FG906", ("policy", "rules", e),
                              f"rules[{r}] ({rule_name(item)}, {item.protocol}, every port) allows all of "
                              f"{rule_name(rules[e])} too; drop this one (the security group's rules would also "
                              "overlap)", Severity.WARNING)
            earlier[pair] = [e for e in earlier.get(pair, []) if e not in covered]
            every.add(key)
        else:
            ranges[key] = merged_ports(ranges.get(key, []) + wanted)
        earlier.setdefault(pair, []).append(r)


def _within(ranges: list[tuple[int, int]], a: int, b: int) -> bool:
    i = bisect.bisect_right(ranges, (a, 65536)) - 1
    return i >= 0 and ranges[i][0] <= a and b <= ranges[i][1]


@rule("FG908", "subnet-acls-and-policy",
      "A tenant subnet both carries its own acls or private and belongs to a protected policy group.")
def acls_and_policy(fabric: Fabric) -> Iterator[Finding]:
    protected = {(m.tenant_subnet.zone, m.tenant_subnet.name): g.name for g in fabric.policy.groups
                 if g.default_deny for m in g.members if m.tenant_subnet is not None}
    for i, zone in enumerate(fabric.zones):
        for v, vpc in enumerate(zone.vpcs):
            for s, sub in enumerate(vpc.subnets):
                group = protected.get((zone.name, sub.name))
                if group is not None and (sub.acls or sub.private):
                    field = "acls" if sub.acls else "private"
                    yield Finding("FG908", ("zones", i, "vpcs", v, "subnets", s, field),
                                  f"subnet {sub.name} is in group {group}, whose policy fabricgen renders as this "
                                  f"Subnet's acls; Kube-OVN keeps one set per subnet: drop {field} here and say it "
                                  "in the policy's rules")


@rule("FG909", "subnet-acl-fields",
      "A tenant subnet's raw ACL fields repeat an ACL, name a field OVN does not know, or do nothing.")
def acl_fields(fabric: Fabric) -> Iterator[Finding]:
    for i, zone in enumerate(fabric.zones):
        for v, vpc in enumerate(zone.vpcs):
            for s, sub in enumerate(vpc.subnets):
                at = ("zones", i, "vpcs", v, "subnets", s)
                seen: set[tuple[str, int, str]] = set()
                for a, acl in enumerate(sub.acls):
                    key = (acl.direction, acl.priority, acl.match)
                    if key in seen:
                        yield Finding("FG909", (*at, "acls", a),
                                      "the same direction, priority and match as an earlier ACL: Kube-OVN writes "
                                      "one of them (pkg/ovs/ovn-nb-acl.go newACL); drop one")
                    seen.add(key)
                    unknown = acl_match.unknown_fields(acl_match.parse(acl.match))
                    if unknown:
                        yield Finding("FG909", (*at, "acls", a, "match"),
                                      f"{', '.join(unknown)}: not a field of OVN 25.03 (lib/logical-fields.c); "
                                      "ovn-controller drops a flow it cannot parse, so this ACL would do nothing",
                                      Severity.WARNING)
                if sub.allow_subnets and not sub.private:
                    yield Finding("FG909", (*at, "allowSubnets"),
                                  "Kube-OVN reads allowSubnets only on a private subnet (pkg/controller/subnet.go); "
                                  "set private: true or drop allowSubnets", Severity.WARNING)
                if sub.allow_ew_traffic and not sub.acls:
                    yield Finding("FG909", (*at, "allowEWTraffic"),
                                  "Kube-OVN adds the allowEWTraffic ACLs only beside acls (pkg/ovs/ovn-nb-acl.go "
                                  "UpdateLogicalSwitchACL returns early without them); add acls or drop it",
                                  Severity.WARNING)


@rule("FG910", "policy-acl-owners",
      "A policy platform shares its northbound database with a controller that deletes or moves the other's ACLs.")
def acl_owners(fabric: Fabric) -> Iterator[Finding]:
    if not fabric.policy.groups:
        return
    for d, deployment in enumerate(fabric.ovn_deployments):
        kinds = {c.platform for c in deployment.consumers}
        for c, consumer in enumerate(deployment.consumers):
            if isinstance(consumer, KubernetesCluster) and "openstack" in kinds and consumer.release < (1, 1, 0):
                yield Finding("FG910", ("ovnDeployments", d, "consumers", c, "version"),
                              f"OVN-Kubernetes {consumer.version} shares this northbound database with Neutron and "
                              "at every start removes each ACL without its owner tag and moves tier-0 ACLs to tier "
                              "2 (go-controller ACLSyncer, removed in v1.1.0 by commit 7c75baeaf): Neutron's "
                              "security groups would be emptied; run v1.1.0 or later, or give each platform its "
                              "own deployment joined by OVN-IC")


Place = tuple[str, str | None]  # (zone, VPC) of a Kube-OVN workload; VPC None: the zone's backbone


def _places(fabric: Fabric) -> list[tuple[str, IPv4Network, Place]]:
    """Every Kube-OVN workload range the fabric declares, named, with where it is."""
    out: list[tuple[str, IPv4Network, Place]] = []
    for zone in fabric.zones:
        out.append((f"zone {zone.name}'s backbone", zone.backbone.cidr, (zone.name, None)))
        for vpc in zone.vpcs:
            out += [(f"subnet {sub.name} (zone {zone.name}, VPC {vpc.name})", sub.cidr, (zone.name, vpc.name))
                    for sub in vpc.subnets]
    return out


def _place(fabric: Fabric, member: Member) -> tuple[Place, IPv4Network] | None:
    if member.tenant_subnet is not None:
        ref = member.tenant_subnet
        zone = next((z for z in fabric.zones if z.name == ref.zone), None)
        found = [(v.name, s.cidr) for v in (zone.vpcs if zone else ()) for s in v.subnets if s.name == ref.name]
        return ((ref.zone, found[0][0]), found[0][1]) if found else None
    if member.backbone is not None:
        zone = next((z for z in fabric.zones if z.name == member.backbone), None)
        return ((zone.name, None), zone.backbone.cidr) if zone is not None else None
    return None


def _reaches(fabric: Fabric, a: Place, b: Place) -> bool:
    """Whether Kube-OVN routes between two places: one VPC of one zone, two peered VPCs of one
    zone, or two zones' backbones (joined by the interconnection); a tenant VPC stays in its zone."""
    if a[1] is None or b[1] is None:
        return a[1] is None and b[1] is None
    if a[0] != b[0]:
        return False
    zone = next(z for z in fabric.zones if z.name == a[0])
    return a[1] == b[1] or any(set(p.vpcs) == {a[1], b[1]} for p in zone.peerings)


@rule("FG911", "policy-source-shared",
      "A rule admits its source by a range another workload holds too, or its source cannot reach its target.")
def source_shared(fabric: Fabric) -> Iterator[Finding]:
    """Kube-OVN enforces a rule into a subnet by the source's addresses (`ip4.src`): a subnet of
    another VPC that reuses the source's range and can reach the target is admitted as well, and
    no platform tells them apart; a source whose VPC has no route to the target's (not peered) is
    opened nothing. Both are named, so that the ranges are made distinct or the VPCs peered."""
    groups = {g.name: g for g in fabric.policy.groups}
    places = _places(fabric)
    for r, item in enumerate(fabric.policy.rules):
        source, target = groups.get(item.from_), groups.get(item.to)
        if source is None or target is None:
            continue
        targets = [p for m in target.members if (p := _place(fabric, m)) is not None]
        if not targets:
            continue
        sources = [p for m in source.members if (p := _place(fabric, m)) is not None]
        own = {place for place, _cidr in sources}
        ranges = [cidr for _place_, cidr in sources] + [c for m in source.members if _place(fabric, m) is None
                                                         and (c := _cidr(m)) is not None]
        others = [name for name, held, place in places if place not in own and any(held.overlaps(c) for c in ranges)
                  and any(_reaches(fabric, place, t) for t, _c in targets)
                  and not any(held == c for (pl, c) in sources + targets if pl == place)]
        if others:
            yield Finding("FG911", ("policy", "rules", r, "from"),
                          f"rule {rule_name(item)} admits group {item.from_} by its addresses, which "
                          f"{', '.join(dict.fromkeys(others))} hold{'s' if len(others) == 1 else ''} too, and "
                          f"{'it reaches' if len(others) == 1 else 'they reach'} group {item.to}: admitted as well, "
                          "as no platform tells them apart; give the workloads distinct ranges", Severity.WARNING)
        cut = [place for place, _cidr in sources if not any(_reaches(fabric, place, t) for t, _c in targets)]
        if cut:
            where = ", ".join(f"VPC {v} of zone {z}" if v else f"zone {z}'s backbone" for z, v in cut)
            yield Finding("FG911", ("policy", "rules", r, "from"),
                          f"rule {rule_name(item)}: group {item.from_} in {where} has no route to group "
                          f"{item.to} (another VPC, not peered; a tenant VPC stays in its zone), so the rule opens "
                          "nothing for it; peer the VPCs (zones[].peerings) or drop the rule", Severity.WARNING)


def _cidr(member: Member) -> IPv4Network | None:
    if member.namespace is not None:
        return member.namespace.cidr
    if member.openstack is not None:
        return member.openstack.cidr
    return member.cidr


@rule("FG912", "ovn-kubernetes-acl-tiers",
      "OVN-Kubernetes v1.3.0 or later on an OVN older than 23.06, whose ACLs have no tier column it needs.")
def ovn_kubernetes_tiers(fabric: Fabric) -> Iterator[Finding]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        if deployment.version >= (23, 6):
            continue
        for c, consumer in enumerate(deployment.consumers):
            if isinstance(consumer, KubernetesCluster) and consumer.release >= (1, 3, 0):
                yield Finding("FG912", ("ovnDeployments", d, "consumers", c, "version"),
                              f"OVN-Kubernetes {consumer.version} writes every ACL with a tier (its northbound "
                              f"model has the ACL `tier` column, which OVN has from 23.06), and this deployment runs "
                              f"OVN {deployment.ovn_version}: its client refuses a database without the column; "
                              "run OVN 23.06 or later (ovnVersion) or an OVN-Kubernetes release before v1.3.0")


NEUTRON_RULE_QUOTA = 100  # Neutron's default `quota_security_group_rule`, per project
SECURITY_GROUP_MAX = 10_000  # rules of one security group fabricgen renders at most


def _ranges(fabric: Fabric, member: Member) -> IPv4Network | None:
    placed = _place(fabric, member)
    return placed[1] if placed is not None else _cidr(member)


@rule("FG915", "policy-security-group-size",
      "A protected group's Neutron security group holds more rules than Neutron's default quota, or more than "
      "fabricgen renders.")
def security_group_size(fabric: Fabric) -> Iterator[Finding]:
    """Neutron takes one security group rule per source range and port range (render/policy_neutron):
    a rule from many ranges to many ports multiplies. Past Neutron's default quota of 100 rules per
    project the playbook fails half-way unless the quota was raised (a warning); past 10,000 the
    group is refused before anything is rendered."""
    held = {g.name: list(dict.fromkeys(c for m in g.members if (c := _ranges(fabric, m)) is not None))
            for g in fabric.policy.groups}
    for g, group in enumerate(fabric.policy.groups):
        if not group.default_deny or not any(m.openstack is not None for m in group.members):
            continue
        parts = [(item, len(held.get(item.from_, ())) * max(1, len(item.ports)))
                 for item in fabric.policy.rules if item.to == group.name]
        total = 2 + len(held[group.name]) + sum(n for _item, n in parts)  # its own members, and egress
        if total <= NEUTRON_RULE_QUOTA:
            continue
        largest, most = max(parts, key=lambda part: part[1], default=(None, 0))
        why = (f" ({most} from rule {rule_name(largest)}: {len(held.get(largest.from_, ()))} source range(s) x "
               f"{max(1, len(largest.ports))} port range(s))" if largest is not None else "")
        if total > SECURITY_GROUP_MAX:
            yield Finding("FG915", ("policy", "groups", g, "name"),
                          f"group {group.name}'s security group would hold {total} rules{why}, more than the "
                          f"{SECURITY_GROUP_MAX} fabricgen renders; give wider source ranges or port ranges, or "
                          "split the group")
        else:
            yield Finding("FG915", ("policy", "groups", g, "name"),
                          f"group {group.name}'s security group holds {total} rules{why}; Neutron's default quota "
                          f"is {NEUTRON_RULE_QUOTA} per project (quota_security_group_rule), past which the "
                          "playbook stops half-way: raise the project's quota, or use fewer, wider ranges",
                          Severity.WARNING)
