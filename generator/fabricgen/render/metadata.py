"""Annotations and labels shared by the Kubernetes renderers.

The handling of partial (operator-owned) objects and of objects that must be
replaced rather than patched are policies; they are spelled once here. The sync wave
is not: `fabricgen.plan.apply_order` derives it from what each object needs.
"""

from __future__ import annotations

from typing import Any

MANAGED_BY = {"app.kubernetes.io/managed-by": "fabricgen"}

def source_annotation(source: str) -> dict[str, str]:
    return {"fabricgen.io/source": source}


# A partial object owned by another controller: merge our fields server-side,
# never prune or delete the live object (argo-cd #15005, Flux prune opt-out). Server-side
# diff is set on the Applications: Argo CD reads it there only (argo-cd controller/state.go).
PARTIAL = {
    "argocd.argoproj.io/sync-options": "ServerSideApply=true,Validate=false,Prune=false,Delete=false",
    "kustomize.toolkit.fluxcd.io/ssa": "Merge",
    "kustomize.toolkit.fluxcd.io/prune": "disabled",
}

# An object that is sent whole, never merged (ovn-ic-config: Kube-OVN reads the set
# of keys as one configuration). Replace=true without Force: an unchanged object is
# a no-op, where Force would delete and re-create it on every sync and tear the
# interconnection down each time.
REPLACE = {
    "argocd.argoproj.io/sync-options": "Replace=true",
    "kustomize.toolkit.fluxcd.io/force": "enabled",
}

# Objects whose text contains shell `${...}` that Flux post-build must not touch.
NO_SUBSTITUTE = {"kustomize.toolkit.fluxcd.io/substitute": "disabled"}


def metadata(
    name: str,
    namespace: str | None,
    source: str,
    *extra: dict[str, str],
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    annotations: dict[str, str] = {}
    for part in (source_annotation(source), *extra):
        annotations.update(part)
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {**MANAGED_BY, **(labels or {})}
    meta["annotations"] = annotations
    return meta
