"""Every delivery path yields the objects `fabricgen render` writes for a zone.

render (files listed by kustomization.yaml, stage directory by stage directory) = kustomize
build of the rendered zone (what `kubectl apply -k` applies, and Flux applies stage by
stage) = the Argo CD plugin's stdout = the KRM function's output under kpt, less kpt's path
bookkeeping and the generator marker.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from support.gitops_tree import (
    LAB,
    REPO,
    ZONES,
    copy_sources,
    identity,
    load_stream,
    render_lab,
    rendered_objects,
    run,
    tool_env,
    without_bookkeeping,
)

pytestmark = pytest.mark.lab  # starts real programs: fabricgen, kpt, kubectl


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_lab(tmp_path_factory.mktemp("rendered"))


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("checkout")
    return copy_sources(root)  # as the cmp-server unpacks it: no .git


def via_argocd(checkout: Path, zone: str) -> list[dict[str, Any]]:
    result = run(["fabricgen", "argocd-generate"], checkout / "sites" / "lab",
                 tool_env(ARGOCD_APP_SOURCE_PATH="sites/lab", ARGOCD_ENV_ZONE=zone))
    assert result.returncode == 0, result.stderr
    return load_stream(result.stdout)


def via_kpt(checkout: Path, zone: str, tmp_path: Path) -> list[dict[str, Any]]:
    (tmp_path / ".git").mkdir(exist_ok=True)  # the repository root names the fabric
    package = tmp_path / f"pkg-{zone}"
    package.mkdir()
    (package / "Kptfile").write_text(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n  annotations:\n"
        "    config.kubernetes.io/local-config: \"true\"\npipeline:\n  mutators:\n"
        "    - exec: fabricgen krm\n      configPath: fabricgen.yaml\n")
    (package / "fabricgen.yaml").write_text(
        "apiVersion: fabricgen.io/v1alpha1\nkind: FabricGenerator\nmetadata:\n  name: gen\n  annotations:\n"
        f"    config.kubernetes.io/local-config: \"true\"\nspec:\n  path: ../{LAB}\n  zone: {zone}\n")
    (tmp_path / "sites" / "lab").mkdir(parents=True, exist_ok=True)
    shutil.copy(checkout / LAB, tmp_path / LAB)
    result = run(["kpt", "fn", "render", package.name, "--allow-exec", "-o", "stdout"], tmp_path)
    assert result.returncode == 0, result.stderr
    [resource_list] = load_stream(result.stdout)
    return [without_bookkeeping(o) for o in resource_list["items"]
            if o["kind"] not in ("Kptfile", "FabricGenerator")]


def via_kustomize(rendered: Path, zone: str) -> list[dict[str, Any]]:
    result = run(["kubectl", "kustomize", str(rendered / "lab" / zone)], rendered)
    assert result.returncode == 0, result.stderr
    return load_stream(result.stdout)


@pytest.mark.skipif(shutil.which("kpt") is None or shutil.which("kubectl") is None,
                    reason="needs kpt and kubectl")
@pytest.mark.parametrize("zone", ZONES)
def test_same_objects_on_every_path(rendered: Path, checkout: Path, zone: str, tmp_path: Path) -> None:
    expected = rendered_objects(rendered / "lab" / zone)
    assert expected, "a zone with no objects proves nothing"
    assert via_argocd(checkout, zone) == expected
    assert via_kustomize(rendered, zone) == expected
    # kpt lists items file by file; the objects, not their order, are what it writes
    from_kpt = via_kpt(checkout, zone, tmp_path)
    assert len(from_kpt) == len(expected)
    assert sorted(from_kpt, key=identity) == sorted(expected, key=identity)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")
@pytest.mark.parametrize("zone", ZONES)
def test_flux_stages_together_apply_the_zone(zone: str) -> None:
    """The generated Flux Kustomizations of a zone, built by kustomize one by one in their
    order, yield exactly the zone's objects: each object in one Kustomization, none left out."""
    flux = load_stream((REPO / "rendered" / "lab" / "_delivery" / "flux" / "kustomizations.yaml").read_text())
    paths = [k["spec"]["path"] for k in flux if k["spec"]["path"].startswith(f"./rendered/lab/{zone}/")]
    assert len(paths) > 1, "a zone in one Kustomization is dry-run as a whole"
    staged = []
    for path in paths:
        result = run(["kubectl", "kustomize", path], REPO)
        assert result.returncode == 0, result.stderr
        staged += load_stream(result.stdout)
    assert staged == via_kustomize(REPO / "rendered", zone)


def test_committed_output_is_what_render_writes(rendered: Path) -> None:
    """Flux applies the committed rendered/ directly; it must be current."""
    for zone in ZONES:
        assert rendered_objects(REPO / "rendered" / "lab" / zone) == rendered_objects(rendered / "lab" / zone)


def test_partial_and_shell_objects_carry_flux_annotations(rendered: Path) -> None:
    objects = [o for zone in ZONES for o in rendered_objects(rendered / "lab" / zone)]
    partial = [o for o in objects if "ServerSideApply=true" in
               o["metadata"]["annotations"].get("argocd.argoproj.io/sync-options", "")]
    assert partial
    for obj in partial:
        notes = obj["metadata"]["annotations"]
        assert notes["kustomize.toolkit.fluxcd.io/ssa"] == "Merge"
        assert notes["kustomize.toolkit.fluxcd.io/prune"] == "disabled"
    for obj in objects:
        if obj["kind"] == "ConfigMap" and any("${" in str(v) for v in obj.get("data", {}).values()):
            assert obj["metadata"]["annotations"]["kustomize.toolkit.fluxcd.io/substitute"] == "disabled"
