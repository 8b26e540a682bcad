"""The FabricGenerator KRM function under real kpt (eval and render) and as kustomize calls it."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from support.gitops_tree import (
    GENERATED_BY,
    LAB,
    REPO,
    break_nb_port,
    copy_sources,
    identity,
    load_file,
    load_stream,
    render_lab,
    rendered_objects,
    run,
    tool_env,
    without_bookkeeping,
)

pytestmark = pytest.mark.lab  # starts real programs: fabricgen-krm, git, kpt, kubectl

needs_kpt = pytest.mark.skipif(shutil.which("kpt") is None, reason="kpt is not installed")
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")


@pytest.fixture(scope="module")
def expected_hq(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return rendered_objects(render_lab(tmp_path_factory.mktemp("rendered")) / "lab" / "hq")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fabric repository with the shipped kpt package; `.git` marks its root."""
    copy_sources(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def package_objects(package: Path) -> list[dict[str, Any]]:
    return [obj for path in sorted((package / "generated").glob("**/*.yaml"))
            for obj in load_stream(path.read_text())]


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@needs_kpt
def test_kpt_render_twice_is_idempotent(repo: Path, expected_hq: list[dict[str, Any]]) -> None:
    package = repo / "deploy" / "kpt" / "lab-hq"
    (package / "keep.yaml").write_text(
        "# the user's own object\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: keep  # mine\n")
    first = run(["kpt", "fn", "render", "deploy/kpt/lab-hq", "--allow-exec"], repo)
    assert first.returncode == 0, first.stderr
    after_first = tree(package)
    second = run(["kpt", "fn", "render", "deploy/kpt/lab-hq", "--allow-exec"], repo)
    assert second.returncode == 0, second.stderr
    assert tree(package) == after_first
    objects = package_objects(package)
    assert len(objects) == len(expected_hq)
    assert {identity(o) for o in objects} == {identity(o) for o in expected_hq}
    assert all(o["metadata"]["annotations"][GENERATED_BY] == "FabricGenerator/lab-hq" for o in objects)
    by_id = {identity(o): without_bookkeeping(o) for o in objects}
    assert [by_id[identity(o)] for o in expected_hq] == expected_hq
    # the user's file, its comments and the config are kept
    assert (package / "keep.yaml").read_text().startswith("# the user's own object\n")
    assert "# mine" in (package / "keep.yaml").read_text()
    assert load_file(package / "fabricgen.yaml")["spec"]["zone"] == "hq"


@needs_kpt
def test_kpt_render_replaces_output_when_the_fabric_changes(repo: Path) -> None:
    package = repo / "deploy" / "kpt" / "lab-hq"
    assert run(["kpt", "fn", "render", "deploy/kpt/lab-hq", "--allow-exec"], repo).returncode == 0
    assert (package / "generated" / "stage-0" / "tenant-vpcs.yaml").exists()
    fabric = repo / LAB
    text = fabric.read_text()
    start = text.index("    vpcs:\n")
    end = text.index("    peerings:\n")
    # the policy names the tiers removed here
    text = text[:text.index("# Who may talk to whom")] + text[text.index("# How Argo CD and Flux deliver"):]
    fabric.write_text(text[:start] + text[end:].replace(
        "    peerings:\n      - vpcs: [vpc-prod, vpc-shared]\n        connectCIDR: 169.254.0.0/30   "
        "# vpc-prod takes .1, vpc-shared .2\n", ""))
    result = run(["kpt", "fn", "render", "deploy/kpt/lab-hq", "--allow-exec"], repo)
    assert result.returncode == 0, result.stderr
    assert not (package / "generated" / "stage-0" / "tenant-vpcs.yaml").exists()
    assert "vpc-prod" not in [o["metadata"]["name"] for o in package_objects(package)]
    names = [identity(o) for o in package_objects(package)]
    assert len(names) == len(set(names))


@needs_kpt
def test_kpt_eval_exec_twice(repo: Path, expected_hq: list[dict[str, Any]]) -> None:
    package = repo / "deploy" / "kpt" / "lab-hq"
    config = repo / "hq.yaml"
    config.write_text(
        "apiVersion: fabricgen.io/v1alpha1\nkind: FabricGenerator\nmetadata:\n  name: lab-hq\n"
        f"spec:\n  path: {LAB}\n  zone: hq\n")
    cmd = ["kpt", "fn", "eval", "deploy/kpt/lab-hq", "--exec", "fabricgen krm", "--fn-config", "hq.yaml"]
    for _ in range(2):
        result = run(cmd, repo)
        assert result.returncode == 0, result.stderr
    objects = package_objects(package)
    assert sorted(map(identity, objects)) == sorted(map(identity, expected_hq))


@needs_kpt
def test_kpt_instructions_leave_committed_files_as_they_are(repo: Path) -> None:
    """kpt rewrites every package file it reads in its own YAML formatting: the committed Kptfile
    and fabricgen.yaml are already in it, and the package's .gitignore names what kpt adds."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "fabric repository"], cwd=repo, check=True)
    (repo / "hq.yaml").write_text(  # docs/delivery.md's --fn-config, written outside the package
        "apiVersion: fabricgen.io/v1alpha1\nkind: FabricGenerator\nmetadata:\n  name: lab-hq\n"
        f"spec:\n  path: {LAB}\n  zone: hq\n")
    for cmd in (["kpt", "fn", "render", "deploy/kpt/lab-hq", "--allow-exec"],
                ["kpt", "fn", "eval", "deploy/kpt/lab-hq", "--exec", "fabricgen krm", "--fn-config", "hq.yaml"]):
        result = run(cmd, repo)
        assert result.returncode == 0, result.stderr
        status = subprocess.run(["git", "status", "--porcelain", "--", "deploy"], cwd=repo, check=True,
                                capture_output=True, text=True).stdout
        assert status == "", f"{' '.join(cmd)} left:\n{status}"
    assert package_objects(repo / "deploy" / "kpt" / "lab-hq")
    ignored = subprocess.run(["git", "check-ignore", "deploy/kpt/lab-hq/generated/"], cwd=repo,
                             capture_output=True, text=True)
    assert ignored.returncode == 0


@needs_kpt
def test_kpt_eval_with_key_value_arguments_to_stdout(repo: Path, expected_hq: list[dict[str, Any]]) -> None:
    """`-- key=value` arguments arrive as a ConfigMap functionConfig; `-` streams the result."""
    result = run(["kpt", "fn", "eval", "-", "--exec", str(REPO / "deploy" / "krm" / "fabricgen-krm"),
                  "--", f"path={LAB}", "zone=hq"], repo, stdin="")
    assert result.returncode == 0, result.stderr
    out = load_file_text(result.stdout)  # with nothing on stdin kpt answers in ResourceList form
    assert out["kind"] == "ResourceList"
    objects = [without_bookkeeping(o) for o in out["items"]]
    assert objects == expected_hq
    assert {o["metadata"]["annotations"][GENERATED_BY] for o in out["items"]} == {
        "FabricGenerator/function-input"}


@needs_kpt
def test_kpt_reports_located_errors_and_fails(repo: Path) -> None:
    package = repo / "deploy" / "kpt" / "lab-hq"
    line = break_nb_port(repo / LAB)
    before = tree(package)
    results = repo / "results"
    result = run(["kpt", "fn", "render", "deploy/kpt/lab-hq", "--allow-exec", "--results-dir", str(results)],
                 repo)
    assert result.returncode != 0
    assert tree(package) == before
    assert f"sites/lab/fabric.yaml:{line}:" in result.stderr
    fn_results = load_file(results / "results.yaml")["items"][0]
    assert fn_results["exitCode"] == 1
    [problem] = [r for r in fn_results["results"] if r["severity"] == "error"]
    assert problem["file"]["path"] == LAB
    assert problem["message"].startswith(f"{LAB}:{line}:")
    assert "interconnection.database.nbPort" in problem["message"]


def krm(stdin: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run([str(REPO / "deploy" / "krm" / "fabricgen-krm")], cwd, tool_env(), stdin=stdin)


def generator_resource_list(config_path: Path) -> str:
    """What kustomize's fnplugin sends a generator: the config alone, marked local-config."""
    config = load_file(config_path)
    config["metadata"].setdefault("annotations", {})["config.kubernetes.io/local-config"] = "true"
    out = io.StringIO()
    YAML(typ="safe", pure=True).dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                                      "items": [config], "functionConfig": config}, out)
    return out.getvalue()


def test_kustomize_generator_call(repo: Path, expected_hq: list[dict[str, Any]]) -> None:
    """Run as kustomize runs it: cwd = the kustomization directory, the config as the only item."""
    directory = repo / "deploy" / "kustomize" / "lab-hq"
    result = krm(generator_resource_list(directory / "fabricgen.yaml"), directory)
    assert result.returncode == 0, result.stderr
    out = load_file_text(result.stdout)
    assert out["kind"] == "ResourceList"
    items = out["items"]
    assert items[0]["kind"] == "FabricGenerator"  # local-config: kustomize drops it
    assert [without_bookkeeping(o) for o in items[1:]] == expected_hq


def load_file_text(text: str) -> Any:
    [doc] = load_stream(text)
    return doc


def test_function_config_errors_are_results(repo: Path) -> None:
    stdin = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n"
             "  apiVersion: fabricgen.io/v1alpha1\n  kind: FabricGenerator\n  metadata: {name: x}\n"
             f"  spec: {{path: {LAB}, zone: hq, zoen: ai}}\n")
    result = krm(stdin, repo)
    assert result.returncode == 2
    out = load_file_text(result.stdout)
    assert out["items"] == []
    assert out["results"] == [{
        "message": "unknown field(s) zoen in FabricGenerator; known: path, inline, zone, outputDir, sourceName",
        "severity": "error",
    }]
    assert "unknown field(s) zoen" in result.stderr


def test_unknown_zone_is_an_error_result(repo: Path) -> None:
    stdin = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n"
             "  apiVersion: fabricgen.io/v1alpha1\n  kind: FabricGenerator\n  metadata: {name: x}\n"
             f"  spec: {{path: {LAB}, zone: nowhere}}\n")
    result = krm(stdin, repo)
    assert result.returncode == 2
    [problem] = load_file_text(result.stdout)["results"]
    assert problem["severity"] == "error"
    assert problem["resourceRef"] == {"apiVersion": "fabricgen.io/v1alpha1", "kind": "FabricGenerator",
                                      "name": "x"}
    assert "no zone 'nowhere'" in problem["message"]


def test_inline_fabric(repo: Path, expected_hq: list[dict[str, Any]]) -> None:
    text = (repo / LAB).read_text()
    inline = "".join(f"      {line}\n" if line else "\n" for line in text.splitlines())
    stdin = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n"
             "  apiVersion: fabricgen.io/v1alpha1\n  kind: FabricGenerator\n  metadata: {name: x}\n"
             f"  spec:\n    zone: hq\n    sourceName: {LAB}\n    inline: |\n{inline}")
    result = krm(stdin, repo)
    assert result.returncode == 0, result.stderr
    assert [without_bookkeeping(o) for o in load_file_text(result.stdout)["items"]] == expected_hq


def test_not_a_resource_list(repo: Path) -> None:
    result = krm("apiVersion: v1\nkind: ConfigMap\n", repo)
    assert result.returncode == 1
    assert result.stdout == ""
    assert "not a ResourceList" in result.stderr


@needs_kubectl
def test_kubectl_kustomize_silently_skips_the_exec_function(repo: Path) -> None:
    """The documented trap: no --enable-exec, and with alpha plugins alone nothing is generated."""
    directory = repo / "deploy" / "kustomize" / "lab-hq"
    flag = run(["kubectl", "kustomize", "--enable-alpha-plugins", "--enable-exec", "."], directory)
    assert flag.returncode != 0 and "unknown flag: --enable-exec" in flag.stderr
    silent = run(["kubectl", "kustomize", "--enable-alpha-plugins", "."], directory)
    assert silent.returncode == 0
    assert silent.stdout.strip() in ("", "{}")
