"""AdminNetworkPolicies of other owners in a Kubernetes cluster where fabricgen renders the policy.

An AdminNetworkPolicy is decided before every NetworkPolicy, the lowest priority number first
(network-policy-api v0.1.5; OVN-Kubernetes: tier 1, `30000 - 100 x priority - index`). One that
fabricgen does not render, whose subject selects a protected group's pods, and that is decided
before fabricgen's own for that group (a lower priority number, or the same: then the order is
chance), or at all where the cluster has none of fabricgen's, changes the policy unseen:

- an `Allow` admits its peers whatever the policy says;
- a `Pass` (where fabricgen renders an AdminNetworkPolicy for the group) skips fabricgen's `Deny`
  and leaves its peers to the NetworkPolicies, every owner's;
- a `Deny` drops its peers, even those the policy admits.

Each is named (`policy.admin-network-policy`) with the group, the rule and whether the subject
selects every pod of the group or may select some (as `network_policies` says it of a
NetworkPolicy's podSelector). A `Pass` where fabricgen renders none for the group changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fabricgen.judge.checks import DRIFT, Check
from fabricgen.judge.network_policies import selects
from fabricgen.model.names import NAMESPACE_NAME_LABEL
from fabricgen.observe import kube_objects
from fabricgen.observe.live_fabric import AzLive
from fabricgen.pipeline import Build
from fabricgen.plan.policy import object_name

NAME = "policy.admin-network-policy"
KIND = "AdminNetworkPolicy"
EFFECT = {"Allow": "admits its peers whatever the fabric's policy says",
          "Pass": "skips the fabric's AdminNetworkPolicy and leaves its peers to every owner's NetworkPolicies",
          "Deny": "drops its peers, also those the fabric's policy admits"}


def _subject_reach(subject: Mapping[str, Any], namespace: str, labels: Mapping[str, str]) -> str | None:
    """"every", "some" or None: which of a group's pods (in `namespace`, with `labels`) a subject selects."""
    if "pods" in subject:
        spaces, pods = subject["pods"].get("namespaceSelector") or {}, subject["pods"].get("podSelector") or {}
    else:
        spaces, pods = subject.get("namespaces") or {}, {}
    space = selects(spaces, {NAMESPACE_NAME_LABEL: namespace})
    if space is None:
        return None
    reach = selects(pods, labels)
    if reach is None:
        return None
    return "every" if space == "every" and reach == "every" else "some"


def check(build: Build, live: AzLive, rendered: Sequence[dict[str, Any]]) -> list[Check]:
    if live.objects is None:
        return []
    cluster = live.source.name
    ours = {kube_objects.identify(o) for o in rendered if o.get("kind") == KIND}
    priority = {str(o["metadata"]["name"]): int(o["spec"]["priority"]) for o in rendered if o.get("kind") == KIND}
    # each protected member of the cluster, with the priority of the fabric's own for it (None: none)
    groups = [(e.group, e.namespace, dict(e.pod_selector), priority.get(f"{object_name(e.group)}-{e.namespace}"))
              for g in sorted(build.plan.policy.protected)
              for e in build.plan.policy.groups[g] if e.cluster == cluster and e.namespace is not None]
    out = []
    for oid, found in sorted(live.objects.items(), key=lambda item: str(item[0])):
        if oid.kind != KIND or oid in ours:
            continue
        spec = found.body.get("spec") or {}
        theirs = spec.get("priority")
        for group, namespace, labels, mine in groups:
            reach = _subject_reach(spec.get("subject") or {}, namespace, labels)
            if reach is None or (mine is not None and isinstance(theirs, int) and theirs > mine):
                continue
            for index, rule in enumerate(spec.get("ingress") or []):
                action = str(rule.get("action"))
                if action not in EFFECT or (action == "Pass" and mine is None):
                    continue
                before = (f"at priority {theirs}, decided before the fabric's at {mine}" if mine is not None else
                          f"at priority {theirs}, and the fabric renders none for the group")
                out.append(Check(live.source.subject, NAME, DRIFT,
                                 f"AdminNetworkPolicy {oid.name}, which the fabric does not render, selects {reach} "
                                 f"pod of group {group} ({before}): its ingress rule {index} "
                                 f"({rule.get('name', '')!r}, {action}) {EFFECT[action]}",
                                 "remove it, give it a priority after the fabric's, or say what it does in the "
                                 "fabric's policy"))
    return out
