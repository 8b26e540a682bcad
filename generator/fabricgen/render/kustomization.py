"""Per Kubernetes output directory: `kustomization.yaml` files that list it in apply order.

A zone directory lists its stage directories (`stage-0`, `stage-1`, ...) in order, and
each stage directory lists its manifests; with `sortOptions: fifo` kustomize keeps that
order, so `kubectl apply -k <zone>` applies every dependency before what needs it. Flux
applies each stage directory as a Kustomization of its own (`fabricgen.render.delivery`).
"""

from __future__ import annotations

from collections.abc import Sequence

from fabricgen.serialise.manifest_yaml import dump


def kustomization(resources: Sequence[str]) -> dict[str, object]:
    """`resources` come in apply order (`fabricgen.pipeline` sorts them once)."""
    return {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "sortOptions": {"order": "fifo"},
        "resources": list(resources),
    }


def text(resources: Sequence[str], header: str) -> str:
    return header + dump(kustomization(resources))
