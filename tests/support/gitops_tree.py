"""Helpers for the GitOps delivery tests: repository copies, YAML streams, object identity."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from fabricgen.cli import main

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # the venv's bin: fabricgen, pre-commit
LAB = "sites/lab/fabric.yaml"
ZONES = ("hq", "ai", "edge", "dr")

# Annotations kpt and the FabricGenerator add for bookkeeping; they never reach a cluster
# through kpt's written files except GENERATED_BY, which marks the function's own output.
BOOKKEEPING_PREFIXES = ("config.kubernetes.io/", "internal.config.kubernetes.io/", "config.k8s.io/")
GENERATED_BY = "fabricgen.io/generated-by"


def copy_sources(dst: Path) -> Path:
    """The files a checkout of a fabric repository holds: sites/ and deploy/, no .git."""
    for part in ("sites", "deploy"):
        shutil.copytree(REPO / part, dst / part)
    return dst


def render_lab(out: Path) -> Path:
    """Render the lab sample into `out` as `fabricgen render` run from the repository root does."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        assert main(["render", LAB, "-o", str(out), "-q"]) == 3
    return out


def break_nb_port(fabric: Path) -> int:
    """Make the IC database's nbPort of a copied lab fabric invalid; returns the 1-based line changed."""
    lines = fabric.read_text().splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if "nbPort: 6645" in line)
    lines[index] = lines[index].replace("6645", "notaport")
    fabric.write_text("".join(lines))
    return index + 1


def tool_env(**extra: str) -> dict[str, str]:
    """A small environment with the venv's fabricgen first on PATH."""
    env = {"PATH": f"{BIN}{os.pathsep}/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"),
           "LANG": "C.UTF-8"}
    if "FABRICGEN_CACHE_DIR" in os.environ:  # the test's own private cache (conftest)
        env["FABRICGEN_CACHE_DIR"] = os.environ["FABRICGEN_CACHE_DIR"]
    env.update(extra)
    return env


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env or tool_env(), input=stdin, capture_output=True,
                          text=True, check=False)


def load_stream(text: str) -> list[dict[str, Any]]:
    return [doc for doc in YAML(typ="safe").load_all(text) if doc is not None]


def load_file(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def rendered_objects(zone_dir: Path) -> list[dict[str, Any]]:
    """A zone's objects as `fabricgen render` wrote them, in kustomization order."""
    kustomization = load_file(zone_dir / "kustomization.yaml")
    out: list[dict[str, Any]] = []
    for name in kustomization["resources"]:
        if (zone_dir / name).is_dir():  # a stage directory
            out.extend(rendered_objects(zone_dir / name))
            continue
        out.extend(load_stream((zone_dir / name).read_text(encoding="utf-8")))
    return out


def without_bookkeeping(obj: dict[str, Any], *, marker: bool = True) -> dict[str, Any]:
    """The object less kpt's path/index annotations (and the generator marker)."""
    meta = dict(obj["metadata"])
    notes = {k: v for k, v in meta.get("annotations", {}).items()
             if not k.startswith(BOOKKEEPING_PREFIXES) and not (marker and k == GENERATED_BY)}
    meta["annotations"] = notes
    return {**obj, "metadata": meta}


def identity(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = obj["metadata"]
    return obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"]
