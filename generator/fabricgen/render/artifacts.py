"""What renderers return: Kubernetes manifests (as data) and text files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Protocol

from fabricgen.plan.zones import Plan
from fabricgen.serialise.manifest_yaml import KubeObject as KubeObject


@dataclass(frozen=True)
class Manifest:
    """Kubernetes objects for one output directory (a zone), in one file.

    Renderers name the file for its family; the pipeline splits it by apply stage
    (`fabricgen.plan.apply_order`) into `stage-<n>/<filename>`.
    """

    directory: str
    filename: str
    objects: tuple[KubeObject, ...]


@dataclass(frozen=True)
class TextFile:
    """A file that is not a Kubernetes manifest (script, JSON patch, INI, netplan).

    `path` is relative to the site's output directory. Text files are never
    listed in a kustomization, so no GitOps tool applies them.
    """

    path: PurePosixPath
    text: str
    executable: bool = field(default=False)


Artifact = Manifest | TextFile


class Renderer(Protocol):
    """A pure function from the plan to artifacts: no I/O of any kind."""

    def __call__(self, plan: Plan) -> list[Artifact]: ...
