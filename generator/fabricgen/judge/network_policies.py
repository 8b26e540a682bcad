"""NetworkPolicies of other owners beside the policy's, in the namespaces of a Kubernetes cluster
where fabricgen renders one.

NetworkPolicies add up: a pod that two of them select is admitted what either admits
(networking.k8s.io/v1). So a NetworkPolicy fabricgen does not render, in a namespace holding a
protected group's pods, that admits anything and selects those pods, widens the policy unseen: it
is named (`policy.network-policy`), with the group and whether it selects every pod of it (its
podSelector asks for no label the group's does not, or for none) or may select some (it asks for
other labels, or uses matchExpressions). One whose matchLabels contradict the group's selects none
of its pods; one that admits nothing (no ingress rule) widens nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fabricgen.judge.checks import DRIFT, Check
from fabricgen.observe import kube_objects
from fabricgen.observe.live_fabric import AzLive
from fabricgen.pipeline import Build

NAME = "policy.network-policy"


def selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> str | None:
    """"every", "some" or None: which of the pods a group selects by `labels` a podSelector selects."""
    wanted = dict(selector.get("matchLabels") or {})
    if any(key in labels and labels[key] != value for key, value in wanted.items()):
        return None
    return "every" if wanted.items() <= labels.items() and not selector.get("matchExpressions") else "some"


def _admits(spec: Mapping[str, Any]) -> bool:
    types = spec.get("policyTypes") or ["Ingress"]
    return "Ingress" in types and bool(spec.get("ingress"))


def check(build: Build, live: AzLive, rendered: Sequence[dict[str, Any]]) -> list[Check]:
    if live.objects is None:
        return []
    cluster = live.source.name
    ours = {kube_objects.identify(o) for o in rendered}
    groups = [(e.group, e.namespace, dict(e.pod_selector)) for g in sorted(build.plan.policy.protected)
              for e in build.plan.policy.groups[g] if e.cluster == cluster and e.namespace is not None]
    out = []
    for oid, found in sorted(live.objects.items(), key=lambda item: str(item[0])):
        if oid.kind != "NetworkPolicy" or oid in ours:
            continue
        spec = found.body.get("spec") or {}
        if not _admits(spec):
            continue
        for group, namespace, labels in groups:
            reach = selects(spec.get("podSelector") or {}, labels) if namespace == oid.namespace else None
            if reach is None:
                continue
            selector = spec.get("podSelector") or {}
            out.append(Check(live.source.subject, NAME, DRIFT,
                             f"NetworkPolicy {oid.namespace}/{oid.name}, which the fabric does not render, selects "
                             f"{reach} pod of group {group} (podSelector {_words(selector)}): NetworkPolicies add up, "
                             "so what it admits reaches them beside the fabric's policy",
                             "remove it, or say what it admits in the fabric's policy"))
    return out


def _words(selector: Mapping[str, Any]) -> str:
    labels = selector.get("matchLabels") or {}
    shown = ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
    more = " and matchExpressions" if selector.get("matchExpressions") else ""
    return f"{{{shown}}}{more}" if shown or more else "{} (every pod of the namespace)"
