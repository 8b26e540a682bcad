"""The Argo CD and Flux objects fabricgen writes to `rendered/<site>/_delivery/`.

- Against the upstream CRD schemas vendored in tests/crds/ (argoproj/argo-cd
  `manifests/crds/application-crd.yaml`, fluxcd/kustomize-controller and
  fluxcd/source-controller `config/crd/bases/`), strict as in test_k8s_schemas.py.
- Structure: every Kustomization path exists in rendered/ with a kustomization.yaml, every
  stage directory of every cluster has exactly one, every `dependsOn` names one of them and
  they form no cycle; every Application names an existing cluster directory through the
  plugin; the GitRepository's ignore rules, read by the real `git check-ignore`, keep the
  stage directories and the Flux directory and drop host files and the rest of the repository.
- Delivery follows the fabric: a removed zone loses its Application and Kustomizations.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fabricgen.errors import InvalidFabricError
from fabricgen.pipeline import load_text, render
from support.crds import crd_validator
from support.fabrics import REPO
from support.gitops_tree import load_stream

SITES = ("lab", "nat", "openstack-k8s")


def delivery(site: str) -> dict[str, list[dict[str, Any]]]:
    base = REPO / "rendered" / site / "_delivery"
    return {
        "argocd": [*load_stream((base / "argocd" / "bootstrap" / "root.yaml").read_text(encoding="utf-8")),
                   *load_stream((base / "argocd" / "applications" / "applications.yaml").read_text(encoding="utf-8"))],
        "flux": [*load_stream((base / "flux" / "gitrepository.yaml").read_text(encoding="utf-8")),
                 *load_stream((base / "flux" / "kustomizations.yaml").read_text(encoding="utf-8"))],
    }


def cluster_dirs(site: str) -> list[Path]:
    return sorted(p.parent for p in (REPO / "rendered" / site).glob("*/kustomization.yaml")
                  if not p.parent.name.startswith("_"))


@pytest.mark.parametrize("site", SITES)
def test_objects_match_the_upstream_crds(site: str) -> None:
    objects = [o for group in delivery(site).values() for o in group]
    assert {o["kind"] for o in objects} == {"Application", "GitRepository", "Kustomization"}
    for obj in objects:
        try:
            crd_validator(obj["apiVersion"], obj["kind"]).validate(obj)
        except jsonschema.ValidationError as exc:
            pytest.fail(f"{obj['kind']} {obj['metadata']['name']}: {exc.message} at {list(exc.absolute_path)}")


def test_schema_check_can_fail() -> None:
    kustomization = next(o for o in delivery("lab")["flux"] if o["kind"] == "Kustomization")
    broken = {**kustomization, "spec": {**kustomization["spec"], "dependsOn": [{"nmae": "x"}]}}
    with pytest.raises(jsonschema.ValidationError):
        crd_validator(broken["apiVersion"], broken["kind"]).validate(broken)


@pytest.mark.parametrize("site", SITES)
def test_flux_kustomizations_cover_every_stage_once(site: str) -> None:
    objects = delivery(site)["flux"]
    [repository] = [o for o in objects if o["kind"] == "GitRepository"]
    kustomizations = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Kustomization"}
    paths = []
    for name, k in kustomizations.items():
        spec = k["spec"]
        assert spec["sourceRef"] == {"kind": "GitRepository", "name": repository["metadata"]["name"]}
        assert spec["path"].startswith(f"./rendered/{site}/")
        assert (REPO / spec["path"] / "kustomization.yaml").is_file(), name
        assert "_host" not in spec["path"]
        assert spec["prune"] is True and spec["wait"] is True
        for dep in spec.get("dependsOn", []):
            assert dep["name"] in kustomizations, f"{name} depends on unknown {dep['name']}"
        paths.append(spec["path"])
    stages = [f"./rendered/{site}/{d.name}/{s.name}" for d in cluster_dirs(site)
              for s in sorted(d.iterdir()) if s.is_dir() and s.name.startswith("stage-")]
    assert sorted(paths) == sorted([*stages, f"./rendered/{site}/_delivery/flux"])
    # No cycle: repeatedly take what depends only on what was taken.
    taken: set[str] = set()
    while len(taken) < len(kustomizations):
        ready = {n for n, k in kustomizations.items() if n not in taken
                 and all(d["name"] in taken for d in k["spec"].get("dependsOn", []))}
        assert ready, f"dependsOn cycle among {sorted(set(kustomizations) - taken)}"
        taken |= ready


def test_each_stage_waits_for_the_one_below_and_zones_for_the_ic_server() -> None:
    kustomizations = {o["metadata"]["name"]: o["spec"] for o in delivery("lab")["flux"]
                      if o["kind"] == "Kustomization"}
    deps = {name: [d["name"] for d in spec.get("dependsOn", [])] for name, spec in kustomizations.items()}
    assert deps["fabric-lab-hq-stage-0"] == []
    assert deps["fabric-lab-hq-stage-1"] == ["fabric-lab-hq-stage-0"]
    assert deps["fabric-lab-hq-stage-2"] == ["fabric-lab-hq-stage-1"]
    # ovn-ic-config (stage 1) of the other zones needs the IC database of hq.
    for zone in ("ai", "edge", "dr"):
        assert deps[f"fabric-lab-{zone}-stage-1"] == [f"fabric-lab-{zone}-stage-0", "fabric-lab-hq-stage-0"]
    assert kustomizations["fabric-lab-hq-stage-0"]["kubeConfig"] == {"secretRef": {"name": "cluster-hq-kubeconfig"}}
    assert kustomizations["fabric-lab-dr-stage-0"]["kubeConfig"] == {"secretRef": {"name": "dr-kubeconfig"}}
    assert "kubeConfig" not in kustomizations["fabric-lab"]  # the delivery itself, on Flux's cluster


@pytest.mark.parametrize("site", SITES)
def test_argocd_applications_name_every_cluster(site: str) -> None:
    """By default each Application syncs the committed zone directory as plain kustomize (what
    reviewers saw and CI compared is what is applied) and says it reads exactly that."""
    apps = {o["metadata"]["name"]: o for o in delivery(site)["argocd"]}
    root = apps.pop(f"fabric-{site}")["spec"]
    assert root["source"]["path"] == f"rendered/{site}/_delivery/argocd/applications"
    assert (REPO / root["source"]["path"] / "kustomization.yaml").is_file()
    zones = {}
    for app in apps.values():
        spec, notes = app["spec"], app["metadata"]["annotations"]
        source = spec["source"]
        assert "plugin" not in source
        assert (REPO / source["path"] / "kustomization.yaml").is_file()
        assert notes["argocd.argoproj.io/manifest-generate-paths"] == f"/{source['path']}"
        zones[Path(source["path"]).name] = spec["destination"]
    assert sorted(zones) == sorted(d.name for d in cluster_dirs(site))
    if site == "lab":
        assert zones["hq"] == {"name": "hq", "namespace": "kube-system"}
        assert zones["dr"] == {"server": "https://dr-api.lab.example:6443", "namespace": "kube-system"}


def test_the_plugin_is_an_option() -> None:
    text = (REPO / "sites" / "lab" / "fabric.yaml").read_text(encoding="utf-8")
    fabric, _s, _w = load_text(text.replace("\ndelivery:\n", "\ndelivery:\n  argocdSource: plugin\n", 1),
                               "sites/lab/fabric.yaml")
    build = render(fabric, "sites/lab/fabric.yaml")
    apps = load_stream(next(f.text for p, f in build.files.items() if p.name == "applications.yaml"))
    hq = next(a for a in apps if a["metadata"]["name"] == "fabric-lab-hq")
    assert hq["spec"]["source"]["path"] == "sites/lab"
    assert hq["spec"]["source"]["plugin"] == {"name": "fabricgen-v1", "env": [{"name": "ZONE", "value": "hq"}]}
    # The plugin reads the fabric and nothing else of the checkout.
    assert hq["metadata"]["annotations"]["argocd.argoproj.io/manifest-generate-paths"] == "/sites/lab"


@pytest.mark.parametrize("site", SITES)
def test_every_application_retries_and_diffs_server_side(site: str) -> None:
    """argo-cd controller/appcontroller.go autoSync does not retry a failed automated sync
    without syncPolicy.retry; controller/state.go reads ServerSideDiff from the Application only."""
    for app in delivery(site)["argocd"]:
        retry = app["spec"]["syncPolicy"]["retry"]
        assert retry["limit"] > 0 and retry["backoff"]["factor"] > 1
        assert app["metadata"]["annotations"]["argocd.argoproj.io/compare-options"] == "ServerSideDiff=true"
    for directory in cluster_dirs(site):
        for obj in built_objects(directory):
            assert "argocd.argoproj.io/compare-options" not in obj["metadata"].get("annotations", {})


def built_objects(directory: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for stage in sorted(directory.glob("stage-*")):
        for path in sorted(stage.glob("*.yaml")):
            if path.name != "kustomization.yaml":
                out += load_stream(path.read_text(encoding="utf-8"))
    return out


def test_applications_wait_for_the_ic_database_zone() -> None:
    """The root syncs hq (IC database) in wave 0 and the zones that join in wave 1, after the
    health checks in argocd-cm (wave -1) that let it wait for an Application's health."""
    apps = {o["metadata"]["name"]: o["metadata"]["annotations"].get("argocd.argoproj.io/sync-wave")
            for o in delivery("lab")["argocd"]}
    assert apps == {"fabric-lab": None, "fabric-lab-hq": "0", "fabric-lab-ai": "1", "fabric-lab-edge": "1",
                    "fabric-lab-dr": "1"}
    [config] = load_stream((REPO / "rendered" / "lab" / "_delivery" / "argocd" / "bootstrap" / "argocd-cm.yaml")
                           .read_text())
    assert config["metadata"]["name"] == "argocd-cm"
    assert config["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "-1"
    assert config["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == \
        "ServerSideApply=true,Prune=false,Delete=false"
    assert "resource.customizations.health.argoproj.io_Application" in config["data"]
    assert "resource.customizations.health.kubeovn.io_Subnet" in config["data"]



@pytest.mark.lab
def test_the_bootstrap_creates_the_root_alone() -> None:
    """What a person applies once (`kubectl apply -k _delivery/argocd/bootstrap`) is the health
    checks and the root Application: waves order only what one sync creates, so zone
    Applications applied beside the root would all start syncing at once. The root's own sync
    (`applications/`) then holds the bootstrap too, so the root and argocd-cm follow the fabric."""
    for site in SITES:
        base = REPO / "rendered" / site / "_delivery" / "argocd"
        assert not (base / "kustomization.yaml").exists()
        bootstrap = kustomized(base / "bootstrap")
        assert [(o["kind"], o["metadata"]["name"]) for o in bootstrap] == [
            ("ConfigMap", "argocd-cm"), ("Application", f"fabric-{site}")]
        synced = kustomized(base / "applications")
        assert synced[:2] == bootstrap
        assert {o["metadata"]["name"] for o in synced[2:]} == {
            f"fabric-{site}-{d.name}" for d in cluster_dirs(site)}


def kustomized(directory: Path) -> list[dict[str, Any]]:
    """What `kubectl kustomize DIR` prints (kustomize resolves `../bootstrap` as Argo CD's does)."""
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl not installed")
    out = subprocess.run(["kubectl", "kustomize", str(directory)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return load_stream(out.stdout)


def test_applications_carry_no_resources_finalizer() -> None:
    """Deleting an Application (a zone removed from the fabric) must leave the cluster's objects."""
    for site in SITES:
        for app in delivery(site)["argocd"]:
            assert "finalizers" not in app["metadata"]


@pytest.mark.lab
def test_git_repository_ignore_rules(tmp_path: Path) -> None:
    """The ignore rules as git itself reads them (.gitignore syntax, which Flux follows)."""
    [repository] = [o for o in delivery("lab")["flux"] if o["kind"] == "GitRepository"]
    (tmp_path / ".gitignore").write_text(repository["spec"]["ignore"], encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    kept = ["rendered/lab/hq/stage-0/backbone.yaml", "rendered/lab/hq/stage-0/kustomization.yaml",
            "rendered/lab/_delivery/flux/kustomizations.yaml"]
    dropped = ["rendered/lab/_host/x/configure-ovn-host.sh", "rendered/nat/hq/stage-0/backbone.yaml",
               "sites/lab/fabric.yaml", "README.md", "rendered/lab/_delivery/argocd/applications/applications.yaml"]
    for path in kept + dropped:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x\n", encoding="utf-8")
    result = subprocess.run(["git", "check-ignore", "--no-index", *kept, *dropped], cwd=tmp_path,
                            capture_output=True, text=True, check=False)
    assert sorted(result.stdout.split()) == sorted(dropped)


def test_removed_zone_removes_its_delivery() -> None:
    text = (REPO / "sites" / "lab" / "fabric.yaml").read_text(encoding="utf-8")
    start = text.index("  - name: edge")
    end = text.index("  - name: ", start + 1)
    fabric, _source, _warnings = load_text(text[:start] + text[end:], "sites/lab/fabric.yaml")
    build = render(fabric, "sites/lab/fabric.yaml")
    before = "".join(f.text for p, f in build.files.items() if "_delivery" in p.parts)
    assert "fabric-lab-edge" not in before
    assert "fabric-lab-ai-stage-0" in before
    full = (REPO / "rendered" / "lab" / "_delivery" / "flux" / "kustomizations.yaml").read_text(encoding="utf-8")
    assert "fabric-lab-edge-stage-0" in full


def test_no_delivery_section_writes_no_delivery() -> None:
    text = (REPO / "sites" / "lab" / "fabric.yaml").read_text(encoding="utf-8")
    start = text.index("\ndelivery:\n")
    end = text.find("\n\n", start + 1)
    rest = "" if end < 0 else text[end:]
    fabric, _source, _warnings = load_text(text[:start] + "\n" + rest, "sites/lab/fabric.yaml")
    build = render(fabric, "sites/lab/fabric.yaml")
    assert not [p for p in build.files if "_delivery" in p.parts]


def test_names_too_long_for_a_label_are_refused() -> None:
    text = (REPO / "sites" / "lab" / "fabric.yaml").read_text(encoding="utf-8")
    long_site = "a-site-name-of-forty-five-characters-xxxxxxxx"
    assert len(long_site) == 45  # fabric-<site>-edge-stage-5 is 65 characters, -hq- 63
    with pytest.raises(InvalidFabricError) as exc:
        load_text(text.replace("  name: lab ", f"  name: {long_site} ", 1), "sites/lab/fabric.yaml")
    found = [d for d in exc.value.diagnostics if d.code == "FG801"]
    assert [d.path for d in found] == ["zones[2].name"]
    # Without delivery objects the names do not matter.
    start = text.index("\ndelivery:\n")
    load_text(text[:start].replace("  name: lab ", f"  name: {long_site} ", 1) + "\n", "sites/lab/fabric.yaml")


@pytest.mark.parametrize(("old", "new", "message"), [
    ("  repoURL: https://git.example/network/fabric.git\n",
     "  repoURL: https://deploy:glpat-0123456789abcdef@git.example/network/fabric.git\n",
     "the URL holds a credential (user:password@)"),
    ("  repoURL: https://git.example/network/fabric.git\n",
     "  repoURL: https://oauth2@git.example/network/fabric.git\n", "the URL holds a credential (user@)"),
    ("  repoURL: https://git.example/network/fabric.git\n",
     "  repoURL: \"https://git.example/network/\\u202efabric.git\"\n", "is not printable ASCII"),
    ("  runbookUrl: https://git.example/network/fabric/blob/main/docs/watching.md\n",
     "  runbookUrl: \"https://git.example/\\u2066watching.md\"\n", "is not printable ASCII"),
])
def test_a_url_with_a_credential_or_a_hidden_character_is_refused(old: str, new: str, message: str) -> None:
    """A token in repoURL was accepted and copied into four rendered files and printed by `diff`;
    U+202E and U+2066 reached the terminal through `diff`. Every URL the fabric holds is printable
    ASCII without a credential (an ssh:// user such as git@ is not one)."""
    text = (REPO / "sites" / "lab" / "fabric.yaml").read_text()
    assert text.count(old) == 1
    with pytest.raises(InvalidFabricError) as caught:
        load_text(text.replace(old, new), "sites/lab/fabric.yaml")
    assert message in "\n".join(d.message for d in caught.value.diagnostics)
    ssh = text.replace(old, "  repoURL: ssh://git@git.example/network/fabric.git\n") if "repoURL" in old else text
    render(*load_text(ssh, "sites/lab/fabric.yaml")[::2][:1], "sites/lab/fabric.yaml")
