"""Per Kubernetes output directory: `kustomization.yaml` listing its manifests.

Files are listed by sync order and applied in that order (`sortOptions: fifo`), so
`kubectl apply -k`, Flux and Argo CD apply the Configuration before the
ConfigMap, networks before routes.
"""

from __future__ import annotations

from collections.abc import Sequence

from fabricgen.manifest_yaml import dump
from fabricgen.render.artifacts import Manifest


def kustomization(manifests: Sequence[Manifest]) -> dict[str, object]:
    """`manifests` come in apply order (`fabricgen.pipeline` sorts them once)."""
    return {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "sortOptions": {"order": "fifo"},
        "resources": [m.filename for m in manifests],
    }


def text(manifests: Sequence[Manifest], header: str) -> str:
    return header + dump(kustomization(manifests))
