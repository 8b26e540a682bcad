"""Renderers, one module per output family, and the registry the pipeline runs.

Each renderer is a pure function `render(plan) -> list[Artifact]`; only
`fabricgen.emit` touches the filesystem.
"""

from __future__ import annotations

from fabricgen.render import default_vpc, icdb, kubeovn_ic, overlay, tenants
from fabricgen.render.artifacts import Renderer

RENDERERS: dict[str, Renderer] = {
    "kubeovn-ic": kubeovn_ic.render,
    "ic-database": icdb.render,
    "backbone": overlay.render,
    "default-vpc-routes": default_vpc.render,
    "tenant-vpcs": tenants.render,
}

__all__ = ["RENDERERS"]
