"""The policy on OVN-Kubernetes: one NetworkPolicy per protected group and namespace.

OVN-Kubernetes turns a NetworkPolicy into port groups and tier-2 ACLs of its own (allow 1001,
the default deny of selected pods 1000: ovn-org/ovn-kubernetes `go-controller/pkg/types/const.go`),
which its controller owns; fabricgen renders the object, never the rows. Once a NetworkPolicy of
type Ingress selects a pod, everything into it is denied but what one allows (Kubernetes
NetworkPolicy semantics), so the group's default deny is the policy itself, present even when no
rule leads into the group. Peers: the group's own namespaces by selector, and every other range
(other platforms, other clusters) as `ipBlock`, since pods elsewhere are known here by address only.
"""

from __future__ import annotations

from typing import Any

from fabricgen.model.names import NAMESPACE_NAME_LABEL
from fabricgen.plan.policy import OVN_KUBERNETES, Allowed, Endpoint, object_name
from fabricgen.plan.zones import Plan
from fabricgen.render import metadata as md
from fabricgen.render.artifacts import Artifact, KubeObject, Manifest
from fabricgen.render.namespaces import PREINSTALLED, namespace
from fabricgen.render.policy_admin import render as admin_network_policies

MANIFEST = "network-policies.yaml"


def _pods(member: Endpoint) -> dict[str, Any]:
    return {"matchLabels": dict(member.pod_selector)} if member.pod_selector else {}


def _peers(plan: Plan, group: str, cluster: str | None) -> list[dict[str, Any]]:
    """The group's members as peers seen from `cluster`: its namespaces by selector, the rest by
    address. Never empty for a valid fabric: an empty `from` would admit every source."""
    peers: list[dict[str, Any]] = []
    for other in plan.policy.groups[group]:
        if other.platform == OVN_KUBERNETES and other.cluster == cluster:
            peer: dict[str, Any] = {"namespaceSelector": {"matchLabels": {
                NAMESPACE_NAME_LABEL: other.namespace}}}
            if other.pod_selector:
                peer["podSelector"] = _pods(other)
            peers.append(peer)
        elif other.cidr is not None:
            peers.append({"ipBlock": {"cidr": str(other.cidr)}})
    return peers


def _ports(rule: Allowed) -> list[dict[str, Any]]:
    """NetworkPolicy ports are TCP, UDP or SCTP: `icmp` into a namespace is refused (FG906)."""
    if rule.protocol == "any":
        return []
    if not rule.ports:
        return [{"protocol": rule.protocol.upper()}]
    return [{"protocol": rule.protocol.upper(), "port": a, **({"endPort": b} if b != a else {})}
            for a, b in rule.ports]


def network_policy(plan: Plan, member: Endpoint) -> KubeObject:
    ingress: list[dict[str, Any]] = [{"from": _peers(plan, member.group, member.cluster)}]
    for rule in plan.policy.into(member.group):
        peers = _peers(plan, rule.source, member.cluster)
        if not peers:
            continue  # FG905 refuses a source without addresses; never `from: []`, which admits all
        entry: dict[str, Any] = {"from": peers}
        ports = _ports(rule)
        if ports:
            entry["ports"] = ports
        ingress.append(entry)
    assert member.namespace is not None
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": md.metadata(object_name(member.group), member.namespace, plan.source_name),
        "spec": {"podSelector": _pods(member), "policyTypes": ["Ingress"], "ingress": ingress},
    }


def render(plan: Plan) -> list[Artifact]:
    """Per cluster the NetworkPolicies, with the Namespaces they live in (merged, never pruned,
    as `render.namespaces` writes a zone's: the API server admits nothing into a namespace that
    does not exist), and the AdminNetworkPolicies where the cluster asks for them
    (`render.policy_admin`)."""
    policies: dict[str, list[KubeObject]] = {}
    spaces: dict[str, list[str]] = {}
    for member in plan.policy.enforced_by(OVN_KUBERNETES):
        assert member.cluster is not None and member.namespace is not None
        policies.setdefault(member.cluster, []).append(network_policy(plan, member))
        if member.namespace not in PREINSTALLED:
            spaces.setdefault(member.cluster, [])
            if member.namespace not in spaces[member.cluster]:
                spaces[member.cluster].append(member.namespace)
    admin = admin_network_policies(plan)
    return [Manifest(cluster, MANIFEST, (*(namespace(plan, n) for n in spaces.get(cluster, [])), *objects,
                                         *admin.get(cluster, [])))
            for cluster, objects in sorted(policies.items())]
