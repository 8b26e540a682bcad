"""Rules on what a policy group's members select: the same endpoints protected twice, a
protected range that holds every address, a protected kube-system, and the priorities of a
cluster's AdminNetworkPolicies.

A member is compared with another by what it selects, not by how it is written: NetworkPolicies
add up and a pod both of two protected groups' selectors pick is in both; two OpenStack ranges of
one cloud that overlap hold the same VMs."""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import IPv4Network

from fabricgen.diagnostics import Finding, Severity
from fabricgen.model import Fabric
from fabricgen.model.consumers import ANP_PRIORITY_MAX, KubernetesCluster
from fabricgen.model.names import KUBE_SYSTEM
from fabricgen.model.policy import Member
from fabricgen.validation.registry import rule


def _scope(member: Member) -> tuple[str, ...] | None:
    """Where a member's endpoints live: two members can select the same endpoints only in one scope."""
    if member.tenant_subnet is not None:
        return ("subnet", member.tenant_subnet.zone, member.tenant_subnet.name)
    if member.backbone is not None:
        return ("backbone", member.backbone)
    if member.namespace is not None:
        return ("namespace", member.namespace.cluster, member.namespace.name)
    if member.openstack is not None:
        return ("cloud", member.openstack.cloud)
    return None  # outside addresses: never protected (FG904)


def _shared(a: Member, b: Member) -> str | None:
    """What two members of one scope both select, in words; None where they are disjoint."""
    if a.namespace is not None and b.namespace is not None:
        left, right = a.namespace.pod_selector, b.namespace.pod_selector
        if any(left[k] != right[k] for k in left.keys() & right.keys()):
            return None  # one label, two values: no pod carries both
        both = {**left, **right}
        labels = ", ".join(f"{k}={v}" for k, v in sorted(both.items()))
        return (f"pods of namespace {a.namespace.name} in cluster {a.namespace.cluster}"
                + (f" labelled {labels}" if labels else ""))
    if a.openstack is not None and b.openstack is not None:
        if not a.openstack.cidr.overlaps(b.openstack.cidr):
            return None
        inner = max(a.openstack.cidr, b.openstack.cidr, key=lambda n: n.prefixlen)
        return f"VMs of cloud {a.openstack.cloud} in {inner}"
    if a.tenant_subnet is not None:
        return f"tenant subnet {a.tenant_subnet.name} of zone {a.tenant_subnet.zone}"
    return f"zone {a.backbone}'s backbone"


@rule("FG907", "policy-member-protected-twice",
      "Endpoints that two groups with defaultDeny both select, whose default denies would each drop the other's "
      "way in.")
def protected_twice(fabric: Fabric) -> Iterator[Finding]:
    seen: dict[tuple[str, ...], list[tuple[str, Member]]] = {}
    for g, group in enumerate(fabric.policy.groups):
        if not group.default_deny:
            continue
        for m, member in enumerate(group.members):
            scope = _scope(member)
            if scope is None:
                continue
            earlier = seen.setdefault(scope, [])
            for other_group, other in earlier:
                shared = _shared(member, other) if other_group != group.name else None
                if shared is not None:
                    yield Finding("FG907", ("policy", "groups", g, "members", m),
                                  f"{shared} are selected by group {other_group} too, which has defaultDeny: "
                                  "the platforms add both groups' rules up, so a rule into either opens both; "
                                  "make the selections disjoint (put the endpoints in one protected group, and let "
                                  "rules name it)")
                    break
            earlier.append((group.name, member))


def _range(member: Member) -> IPv4Network | None:
    if member.openstack is not None:
        return member.openstack.cidr
    if member.namespace is not None:
        return member.namespace.cidr
    return None


@rule("FG913", "policy-member-every-address",
      "A protected group's member holds every address (0.0.0.0/0): its default deny admits everything.")
def every_address(fabric: Fabric) -> Iterator[Finding]:
    """A protected group lets its own members in, by their addresses (Neutron's remote_ip_prefix, an
    ipBlock): a member of 0.0.0.0/0 lets every address in, so the group denies nothing."""
    for g, group in enumerate(fabric.policy.groups):
        if not group.default_deny:
            continue
        for m, member in enumerate(group.members):
            held = _range(member)
            if held is not None and held.prefixlen == 0:
                field = "openstack" if member.openstack is not None else "namespace"
                yield Finding("FG913", ("policy", "groups", g, "members", m, field, "cidr"),
                              f"group {group.name} lets its own members in by their addresses, and {held} is "
                              "every address: its defaultDeny would admit everything; give the range of the "
                              "members' subnet")


@rule("FG914", "policy-protects-kube-system",
      "A group with defaultDeny selects pods of kube-system, which the cluster itself needs to reach.")
def protects_kube_system(fabric: Fabric) -> Iterator[Finding]:
    for g, group in enumerate(fabric.policy.groups):
        if not group.default_deny:
            continue
        for m, member in enumerate(group.members):
            ns = member.namespace
            if ns is not None and ns.name == KUBE_SYSTEM:
                which = "every pod" if not ns.pod_selector else "the pods it selects"
                yield Finding("FG914", ("policy", "groups", g, "members", m, "namespace", "name"),
                              f"group {group.name} denies by default into {which} of {KUBE_SYSTEM} in cluster "
                              f"{ns.cluster} (DNS, the network's own agents, the API server's webhooks): every "
                              "client the policy does not name is cut off; protect your own namespaces, or name "
                              "each client in a rule", Severity.WARNING)


@rule("FG916", "policy-admin-network-policy-priority",
      "A cluster's AdminNetworkPolicies would take priorities OVN-Kubernetes ignores (above 99).")
def admin_network_policy_priority(fabric: Fabric) -> Iterator[Finding]:
    """One AdminNetworkPolicy per protected member of the cluster, priorities counting up from
    `adminNetworkPolicies.priority` (render/policy_admin): OVN-Kubernetes refuses one above 99
    (`ovnkSupportedPriorityUpperBound`, event ANPWithUnsupportedPriority), and that member's pods
    would be left to their NetworkPolicies alone."""
    protected = [m.namespace for g in fabric.policy.groups if g.default_deny for m in g.members
                 if m.namespace is not None]
    for d, deployment in enumerate(fabric.ovn_deployments):
        for c, consumer in enumerate(deployment.consumers):
            settings = consumer.admin_network_policies if isinstance(consumer, KubernetesCluster) else None
            if settings is None:
                continue
            count = sum(1 for n in protected if n.cluster == consumer.name)
            last = settings.priority + count - 1
            if last > ANP_PRIORITY_MAX:
                yield Finding("FG916", ("ovnDeployments", d, "consumers", c, "adminNetworkPolicies", "priority"),
                              f"{count} protected member(s) of cluster {consumer.name} take priorities "
                              f"{settings.priority} to {last}, and OVN-Kubernetes ignores an AdminNetworkPolicy above "
                              f"{ANP_PRIORITY_MAX}; start at {ANP_PRIORITY_MAX + 1 - count} or lower")
