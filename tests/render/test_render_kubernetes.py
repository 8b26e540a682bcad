"""`pipeline.render_kubernetes`: the Kubernetes objects alone, for the Argo CD plugin and the KRM function.

It must build exactly the objects `render` builds (the same directories, files, objects and
order) while leaving out the renderers whose output is text only (`render.TEXT_ONLY`: host
scripts, netplan, INI), so that a zone whose objects need no template does not even import
jinja2. Which libraries a run imported is read from a real `fabricgen` process's
`sys.modules`, not from timing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from fabricgen.delivery.zone_selection import ZoneError, zone_build
from fabricgen.pipeline import load_text, render, render_kubernetes
from fabricgen.plan.zones import Plan
from fabricgen.render import RENDERERS, TEXT_ONLY
from fabricgen.render.artifacts import Artifact, Manifest, TextFile
from support.fabrics import REPO, SITES
from support.gitops_tree import load_stream, without_bookkeeping

GOLDEN = sorted((REPO / "tests" / "golden").glob("*/fabric.yaml"))


def hosts_without_ic_database() -> str:
    """The nat sample (one zone, its IC database outside every zone) with the cloudstack
    sample's OVN deployment: host scripts and properties from templates, while zone hq's
    Kubernetes objects need none."""
    nat = (REPO / "sites" / "nat" / "fabric.yaml").read_text()
    cloudstack = (REPO / "sites" / "cloudstack" / "fabric.yaml").read_text()
    return nat + cloudstack[cloudstack.index("ovnDeployments:"):]


FABRICS = {
    **{path.relative_to(REPO).as_posix(): path.read_text() for path in [*SITES, *GOLDEN]},
    "hosts-without-ic-database": hosts_without_ic_database(),
}


@pytest.mark.parametrize("name", sorted(FABRICS))
def test_the_same_objects_as_render(name: str) -> None:
    fabric, _source, _warnings = load_text(FABRICS[name], name)
    full, kubernetes = render(fabric, name), render_kubernetes(fabric, name)
    assert list(kubernetes.manifests) == list(full.manifests)
    for directory, manifests in full.manifests.items():
        assert kubernetes.manifests[directory] == manifests
        assert kubernetes.objects(directory) == full.objects(directory)


@pytest.mark.parametrize("name", sorted(FABRICS))
def test_one_zone_built_alone_has_the_objects_of_the_whole_build(name: str) -> None:
    """The plugin and the KRM function build a zone of the fabric alone (`zone_build`)."""
    fabric, _source, _warnings = load_text(FABRICS[name], name)
    full = render_kubernetes(fabric, name)
    zones = [zone.name for zone in fabric.zones]
    for zone in zones:
        alone, chosen = zone_build(fabric, name, zone, hint="")
        assert chosen == zone
        assert alone.manifests[zone] == full.manifests[zone]
        assert not set(alone.manifests) & (set(zones) - {zone})  # the other zones were not built
        assert set(alone.manifests) - {zone} == set(full.manifests) - set(zones)
    for directory in set(full.manifests) - set(zones):  # an OVN-Kubernetes cluster's directory
        whole, chosen = zone_build(fabric, name, directory, hint="")
        assert chosen == directory and whole.manifests == full.manifests


def test_a_name_that_is_no_zone_gets_the_whole_build_and_its_explanation() -> None:
    fabric, _source, _warnings = load_text(FABRICS["sites/lab/fabric.yaml"], "sites/lab/fabric.yaml")
    with pytest.raises(ZoneError, match=r"no zone 'hqq' in site 'lab' .*did you mean 'hq'"):
        zone_build(fabric, "sites/lab/fabric.yaml", "hqq", hint="set it")
    with pytest.raises(ZoneError, match="no zone chosen; set it"):
        zone_build(fabric, "sites/lab/fabric.yaml", None, hint="set it")


def test_the_mixed_fabric_has_text_only_output() -> None:
    """The fabric the import tests use really has files only the text renderers write."""
    fabric, _source, _warnings = load_text(FABRICS["hosts-without-ic-database"], "fabric.yaml")
    plan = render(fabric, "fabric.yaml").plan
    assert {name for name in TEXT_ONLY if RENDERERS[name](plan)} >= {"cloudstack-agent", "ovn-controller"}


def test_a_text_only_renderer_that_yields_objects_fails_render(monkeypatch: pytest.MonkeyPatch) -> None:
    def objects_too(plan: Plan) -> list[Artifact]:
        return [TextFile(PurePosixPath("_host", "x"), "x\n"),
                Manifest("hq", "x.yaml", ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}},))]

    monkeypatch.setitem(RENDERERS, "host-bgp", objects_too)
    fabric, _source, _warnings = load_text(FABRICS["sites/nat/fabric.yaml"], "fabric.yaml")
    with pytest.raises(ValueError, match="host-bgp produced Kubernetes objects but is listed in TEXT_ONLY"):
        render(fabric, "fabric.yaml")


# Runs the CLI and reports on stderr's last line whether the process imported jinja2.
RUNNER = (
    "import sys\n"
    "from fabricgen.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    "sys.stderr.write('\\nJINJA2 %s\\n' % ('jinja2' in sys.modules))\n"
    "sys.exit(code)\n"
)


def fabricgen(cwd: Path, *args: str, stdin: str = "", code: int = 0, **env: str) -> tuple[str, bool]:
    """Stdout and whether jinja2 was imported, of one full-pipeline run that exits `code`."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "PARAM_", "FABRICGEN_"))}
    done = subprocess.run([sys.executable, "-c", RUNNER, *args], cwd=cwd, input=stdin, text=True,
                          env={**base, "FABRICGEN_FAST_PATH": "0", **env}, capture_output=True, check=False)
    at = done.stderr.rfind("\nJINJA2 ")
    assert at >= 0, done.stderr
    assert done.returncode == code, done.stderr
    return done.stdout, done.stderr[at:].split()[-1] == "True"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    (root / ".git").mkdir()
    (root / "sites" / "mixed").mkdir(parents=True)
    (root / "sites" / "mixed" / "fabric.yaml").write_text(FABRICS["hosts-without-ic-database"])
    return root


def expected_hq() -> list[dict[str, Any]]:
    fabric, _source, _warnings = load_text(FABRICS["hosts-without-ic-database"], "sites/mixed/fabric.yaml")
    return render(fabric, "sites/mixed/fabric.yaml").objects("hq")


@pytest.mark.lab
def test_render_of_the_mixed_fabric_imports_jinja2(repo: Path, tmp_path: Path) -> None:
    """The control for the two tests below: the whole output needs the templates."""
    _out, jinja2 = fabricgen(repo, "render", "-q", "sites/mixed/fabric.yaml", "-o", str(tmp_path / "out"), code=3)
    assert jinja2


@pytest.mark.lab
def test_the_plugin_prints_the_zone_without_importing_jinja2(repo: Path) -> None:
    out, jinja2 = fabricgen(repo, "argocd-generate", ARGOCD_ENV_ZONE="hq",
                            ARGOCD_ENV_FABRIC="sites/mixed/fabric.yaml")
    assert load_stream(out) == expected_hq()
    assert not jinja2


@pytest.mark.lab
def test_the_krm_function_returns_the_zone_without_importing_jinja2(repo: Path) -> None:
    resource_list = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n"
                     "  apiVersion: fabricgen.io/v1alpha1\n  kind: FabricGenerator\n  metadata: {name: gen}\n"
                     "  spec: {path: sites/mixed/fabric.yaml, zone: hq}\n")
    out, jinja2 = fabricgen(repo, "krm", stdin=resource_list)
    [result] = load_stream(out)
    assert [without_bookkeeping(item) for item in result["items"]] == expected_hq()
    assert not jinja2
