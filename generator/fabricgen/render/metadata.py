"""Annotations and labels shared by the Kubernetes renderers.

Sync order, the handling of partial (operator-owned) objects and of objects that
must be replaced rather than patched are policies; they are spelled once here.
"""

from __future__ import annotations

from typing import Any

MANAGED_BY = {"app.kubernetes.io/managed-by": "fabricgen"}

# Waves: operator configuration, then the IC settings, then networks, then routes, then
# tenant VPCs; last the VPC NAT gateways: their external network, the gateways, their
# elastic IPs, then the NAT rules on those.
WAVE_IC_SERVER = -1
WAVE_CONFIGURATION = 0
WAVE_IC_CONFIG = 1
WAVE_NETWORKS = 2
WAVE_ROUTES = 3
WAVE_TENANTS = 4
WAVE_NAT_NETWORK = 5
WAVE_NAT_GATEWAYS = 6
WAVE_NAT_EIPS = 7
WAVE_NAT_RULES = 8


def source_annotation(source: str) -> dict[str, str]:
    return {"fabricgen.io/source": source}


def wave(n: int) -> dict[str, str]:
    return {"argocd.argoproj.io/sync-wave": str(n)}


# A partial object owned by another controller: merge our fields server-side,
# never prune or delete the live object (argo-cd #15005, Flux prune opt-out).
PARTIAL = {
    "argocd.argoproj.io/sync-options": "ServerSideApply=true,Validate=false,Prune=false,Delete=false",
    "argocd.argoproj.io/compare-options": "ServerSideDiff=true",
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
    order: int,
    *extra: dict[str, str],
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    annotations: dict[str, str] = {}
    for part in (source_annotation(source), wave(order), *extra):
        annotations.update(part)
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {**MANAGED_BY, **(labels or {})}
    meta["annotations"] = annotations
    return meta
