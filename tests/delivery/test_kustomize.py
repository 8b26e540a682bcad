"""Every zone directory builds with the real `kubectl kustomize`, in sync order.

The build must be exactly the listed files' objects, in kustomization order
(`sortOptions: fifo`), which is the order Argo CD waves and Flux apply them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.fabrics import REPO

KUBECTL = shutil.which("kubectl")
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (needed for `kubectl kustomize`)"),
]


def zone_dirs() -> list[Path]:
    roots = [REPO / "rendered", *sorted((REPO / "tests" / "golden").glob("*/expected"))]
    return sorted(p.parent for root in roots for p in root.glob("*/*/kustomization.yaml"))


ZONE_DIRS = zone_dirs()


def kustomize(directory: Path) -> list[dict[str, Any]]:
    assert KUBECTL is not None
    result = subprocess.run([KUBECTL, "kustomize", str(directory)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"kubectl kustomize {directory} failed:\n{result.stderr}"
    return [d for d in yaml.load_all(result.stdout, Loader=LOADER) if d is not None]


def listed(directory: Path) -> list[dict[str, Any]]:
    kustomization = yaml.load((directory / "kustomization.yaml").read_text(encoding="utf-8"), Loader=LOADER)
    out: list[dict[str, Any]] = []
    for name in kustomization["resources"]:
        if (directory / name).is_dir():  # a stage directory
            out += listed(directory / name)
            continue
        out += [d for d in yaml.load_all((directory / name).read_text(encoding="utf-8"), Loader=LOADER) if d]
    return out


def key(obj: dict[str, Any]) -> tuple[str, str]:
    return obj["kind"], obj["metadata"]["name"]


def wave(obj: dict[str, Any]) -> int:
    return int(obj["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"])


def test_zone_dirs_found() -> None:
    assert len(ZONE_DIRS) >= 10


@pytest.mark.parametrize("directory", ZONE_DIRS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_kustomize_build_equals_listed_files_in_order(directory: Path) -> None:
    built = kustomize(directory)
    assert built == listed(directory)
    # Waves never go down along the apply order.
    waves = [wave(o) for o in built]
    assert waves == sorted(waves)
    position = {key(o): i for i, o in enumerate(built)}
    if ("ConfigMap", "ovn-ic-config") not in position:
        return  # not a Kube-OVN interconnection zone (other platforms have their own order)

    configuration = built[position[("Configuration", "kubeovn")]]
    ic_config = built[position[("ConfigMap", "ovn-ic-config")]]
    routes = built[position[("Vpc", "ovn-cluster")]]
    subnets = {o["spec"]["provider"]: o for o in built if o["kind"] == "Subnet"}
    nads = [o for o in built if o["kind"] == "NetworkAttachmentDefinition"]
    assert nads, "no backbone NAD"
    for nad in nads:  # SUSE Virtualization's subnet webhook wants the NAD first
        provider = f"{nad['metadata']['name']}.{nad['metadata']['namespace']}"
        subnet = subnets.get(f"{provider}.ovn") or subnets[provider]
        assert wave(nad) < wave(subnet)
    assert wave(configuration) < wave(ic_config) < wave(routes)


@pytest.mark.parametrize("directory", ZONE_DIRS[:1], ids=lambda p: p.relative_to(REPO).as_posix())
def test_kustomize_rejects_a_broken_directory(directory: Path, tmp_path: Path) -> None:
    """The check can fail: a listed file that is missing breaks the build."""
    copy = tmp_path / directory.name
    shutil.copytree(directory, copy)
    (copy / "stage-0" / "backbone.yaml").unlink()
    result = subprocess.run([str(KUBECTL), "kustomize", str(copy)], capture_output=True, text=True, check=False)
    assert result.returncode != 0
