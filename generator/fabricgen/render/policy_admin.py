"""The policy on OVN-Kubernetes as AdminNetworkPolicies, where a cluster asks for them
(`adminNetworkPolicies`): one per protected namespace member, beside its NetworkPolicy.

A NetworkPolicy is the namespace owner's object, and NetworkPolicies add up: another one in the
namespace opens the protected pods to whatever it admits. An AdminNetworkPolicy is cluster-scoped
and decided before every NetworkPolicy (kubernetes-sigs/network-policy-api v0.1.5,
`apis/v1alpha1/adminnetworkpolicy_types.go`; OVN-Kubernetes writes it in ACL tier 1, the
NetworkPolicies in tier 2, `go-controller/pkg/types/const.go`). Each one here

- selects the member's pods (`subject.pods`: its namespace by name, its pod selector);
- `Pass`es, rule by rule, what the policy admits from the cluster's own pods: the group's own
  members, and each rule's source pods on the rule's ports, which the NetworkPolicy then decides;
- `Deny`s every other pod of the cluster (`namespaces: {}`), last.

It never admits anything itself (no `Allow`), so a stale one can only deny. Its ingress peers are
pods only: an AdminNetworkPolicy names no address ranges in ingress, so a source outside the
cluster (a VM, another cluster's pods) stays the NetworkPolicy's alone, and a host-network pod is
no peer of `namespaces`. ICMP is not a port it can name (TCP, UDP, SCTP); `any` passes every
protocol.
"""

from __future__ import annotations

from typing import Any

from fabricgen.model.consumers import KubernetesCluster
from fabricgen.model.names import NAMESPACE_NAME_LABEL
from fabricgen.plan.policy import OVN_KUBERNETES, Allowed, Endpoint, object_name
from fabricgen.plan.zones import Plan
from fabricgen.render import metadata as md
from fabricgen.render.artifacts import KubeObject

API_VERSION = "policy.networking.k8s.io/v1alpha1"
RULE_NAME_MAX = 100  # `AdminNetworkPolicyIngressRule.name`: MaxLength=100


def first_priorities(plan: Plan) -> dict[str, int]:
    """The fabric's OVN-Kubernetes clusters that ask for AdminNetworkPolicies, by name: the priority
    their first one takes."""
    return {c.name: c.admin_network_policies.priority for d in plan.fabric.ovn_deployments for c in d.consumers
            if isinstance(c, KubernetesCluster) and c.admin_network_policies is not None}


def _pods(member: Endpoint) -> dict[str, Any]:
    assert member.namespace is not None
    return {"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: member.namespace}},
            "podSelector": {"matchLabels": dict(member.pod_selector)} if member.pod_selector else {}}


def _peers(plan: Plan, group: str, cluster: str) -> list[dict[str, Any]]:
    """The group's pods in `cluster`, as AdminNetworkPolicy peers (once each)."""
    out: list[dict[str, Any]] = []
    for member in plan.policy.groups[group]:
        if member.platform == OVN_KUBERNETES and member.cluster == cluster:
            peer = {"pods": _pods(member)}
            if peer not in out:
                out.append(peer)
    return out


def _ports(rule: Allowed) -> list[dict[str, Any]]:
    """The rule's ports; every port of a protocol as its whole range (an AdminNetworkPolicy port
    names a number or a range, never a protocol alone). `any`: no ports, every protocol."""
    if rule.protocol == "any":
        return []
    protocol = rule.protocol.upper()
    ranges = rule.ports or ((1, 65535),)
    return [{"portNumber": {"protocol": protocol, "port": a}} if a == b else
            {"portRange": {"protocol": protocol, "start": a, "end": b}} for a, b in ranges]


def _rule_name(text: str) -> str:
    return text[:RULE_NAME_MAX]


def admin_network_policy(plan: Plan, member: Endpoint, priority: int) -> KubeObject:
    assert member.cluster is not None and member.namespace is not None
    ingress: list[dict[str, Any]] = []
    own = _peers(plan, member.group, member.cluster)
    if own:
        ingress.append({"name": _rule_name(f"{object_name(member.group)}: its own members"), "action": "Pass",
                        "from": own})
    for rule in plan.policy.into(member.group):
        peers = _peers(plan, rule.source, member.cluster)
        if not peers:
            continue  # a source outside the cluster: the NetworkPolicy's alone
        entry: dict[str, Any] = {"name": _rule_name(f"fabricgen {rule.name}"), "action": "Pass", "from": peers}
        ports = _ports(rule)
        if ports:
            entry["ports"] = ports
        ingress.append(entry)
    ingress.append({"name": _rule_name(f"{object_name(member.group)}: every other pod"), "action": "Deny",
                    "from": [{"namespaces": {}}]})
    return {
        "apiVersion": API_VERSION,
        "kind": "AdminNetworkPolicy",
        "metadata": md.metadata(f"{object_name(member.group)}-{member.namespace}", None, plan.source_name),
        "spec": {"priority": priority, "subject": {"pods": _pods(member)}, "ingress": ingress},
    }


def render(plan: Plan) -> dict[str, list[KubeObject]]:
    """Per cluster that asks for them, its AdminNetworkPolicies, one per protected member in the
    order `enforced_by` gives (by group name), priorities counting up from the cluster's first."""
    first = first_priorities(plan)
    out: dict[str, list[KubeObject]] = {}
    for member in plan.policy.enforced_by(OVN_KUBERNETES):
        if member.cluster not in first:
            continue
        objects = out.setdefault(member.cluster, [])
        objects.append(admin_network_policy(plan, member, first[member.cluster] + len(objects)))
    return out
