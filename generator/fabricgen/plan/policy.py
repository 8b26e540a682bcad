"""The fabric's policy resolved: each group's endpoints with their addresses and the platform that
filters traffic into them, and each rule with its ports; what the renderers of every platform
share. The fabric must have passed validation (every name a rule or member uses exists)."""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv4Network

from fabricgen.model import Fabric
from fabricgen.model.policy import Member, Rule

KUBE_OVN, OVN_KUBERNETES, NEUTRON, OUTSIDE = "kube-ovn", "ovn-kubernetes", "neutron", "outside"
OBJECT_PREFIX = "fabricgen-"  # a group's object on a platform: its security group, its NetworkPolicies


def object_name(group: str) -> str:
    """The name of a group's object on every platform (`fabricgen-<group>`)."""
    return OBJECT_PREFIX + group


@dataclass(frozen=True)
class Endpoint:
    """One member of a group, where it is and who filters traffic into it."""

    group: str
    kind: str  # the member's field: tenantSubnet, backbone, cidr, namespace or openstack
    cidr: IPv4Network | None  # None: pods without a declared range
    zone: str | None = None  # tenantSubnet and backbone: the zone; tenantSubnet: the subnet's name
    subnet: str | None = None
    cluster: str | None = None  # OVN_KUBERNETES: the cluster, namespace and pod labels
    namespace: str | None = None
    pod_selector: tuple[tuple[str, str], ...] = ()
    cloud: str | None = None  # NEUTRON: the cloud

    @property
    def platform(self) -> str:
        """Who filters traffic into it: KUBE_OVN, OVN_KUBERNETES, NEUTRON, or OUTSIDE (nothing of
        the fabric)."""
        return {"tenantSubnet": KUBE_OVN, "backbone": KUBE_OVN, "namespace": OVN_KUBERNETES,
                "openstack": NEUTRON}.get(self.kind, OUTSIDE)


@dataclass(frozen=True)
class Allowed:
    """A rule, resolved: traffic from `source` to `target` on `protocol` to `ports` (inclusive
    ranges; empty: every port)."""

    name: str
    source: str
    target: str
    protocol: str
    ports: tuple[tuple[int, int], ...]

    def describe(self) -> str:
        """`prod-app → prod-db tcp/5432`, as a reviewer reads it."""
        what = self.protocol if self.protocol in ("any", "icmp") else \
            f"{self.protocol}/" + (",".join(str(a) if a == b else f"{a}-{b}" for a, b in self.ports) or "any")
        return f"{self.source} → {self.target} {what}"


@dataclass(frozen=True)
class PolicyPlan:
    groups: dict[str, tuple[Endpoint, ...]] = field(default_factory=dict)
    protected: frozenset[str] = frozenset()  # the groups with defaultDeny
    rules: tuple[Allowed, ...] = ()

    def into(self, group: str) -> tuple[Allowed, ...]:
        return tuple(r for r in self.rules if r.target == group)

    def cidrs(self, group: str) -> tuple[IPv4Network, ...]:
        """The addresses of the group's members that have one, in order, once each."""
        return tuple(dict.fromkeys(e.cidr for e in self.groups[group] if e.cidr is not None))

    def enforced_by(self, platform: str) -> list[Endpoint]:
        """The members of protected groups that `platform` filters traffic into."""
        return [e for g in sorted(self.protected) for e in self.groups[g] if e.platform == platform]


def port_range(value: int | str) -> tuple[int, int]:
    """`5432` or `"8000-8080"` as (first, last)."""
    first, _, last = str(value).partition("-")
    return int(first), int(last or first)


def merged_ports(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Inclusive port ranges sorted, with those that overlap or touch joined."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def rule_name(rule: Rule) -> str:
    return rule.name or f"{rule.from_}-to-{rule.to}"


def endpoint(fabric: Fabric, group: str, member: Member) -> Endpoint:
    if member.tenant_subnet is not None:
        ref = member.tenant_subnet
        zone = next(z for z in fabric.zones if z.name == ref.zone)
        sub = next(s for v in zone.vpcs for s in v.subnets if s.name == ref.name)
        return Endpoint(group, "tenantSubnet", sub.cidr, zone=zone.name, subnet=sub.name)
    if member.backbone is not None:
        zone = next(z for z in fabric.zones if z.name == member.backbone)
        return Endpoint(group, "backbone", zone.backbone.cidr, zone=zone.name)
    if member.namespace is not None:
        ns = member.namespace
        return Endpoint(group, "namespace", ns.cidr, cluster=ns.cluster, namespace=ns.name,
                        pod_selector=tuple(sorted(ns.pod_selector.items())))
    if member.openstack is not None:
        return Endpoint(group, "openstack", member.openstack.cidr, cloud=member.openstack.cloud)
    return Endpoint(group, "cidr", member.cidr)


def build_policy(fabric: Fabric) -> PolicyPlan:
    policy = fabric.policy
    groups = {g.name: tuple(endpoint(fabric, g.name, m) for m in g.members) for g in policy.groups}
    rules = tuple(Allowed(rule_name(r), r.from_, r.to, r.protocol, tuple(port_range(p) for p in r.ports))
                  for r in policy.rules)
    return PolicyPlan(groups, frozenset(g.name for g in policy.groups if g.default_deny), rules)
