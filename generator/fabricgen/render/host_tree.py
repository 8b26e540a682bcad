"""Where host, controller and platform files go: `<site>/_host/<deployment>/...`, and the
script of an IC database that runs outside every zone: `<site>/_host/_ic-db/`.

A zone, Kubernetes directory or deployment is a DNS label, so it never starts with `_`; no
kustomization lists anything under `_host/`, and Flux and Argo CD never see these
files as manifests.
"""

from __future__ import annotations

from pathlib import PurePosixPath

HOST_ROOT = "_host"


def controller_dir(deployment: str, host: str) -> PurePosixPath:
    return PurePosixPath(HOST_ROOT, deployment, "controllers", host)


def chassis_dir(deployment: str, host: str) -> PurePosixPath:
    return PurePosixPath(HOST_ROOT, deployment, "chassis", host)


def platform_dir(deployment: str, platform: str, name: str) -> PurePosixPath:
    return PurePosixPath(HOST_ROOT, deployment, platform, name)


def ic_database_dir() -> PurePosixPath:
    """The external IC database's script (a deployment, a DNS label, is never named `_ic-db`)."""
    return PurePosixPath(HOST_ROOT, "_ic-db")
