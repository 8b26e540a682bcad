"""`fabricgen init`: a new fabric repository whose first commit passes its own pre-commit hook.

End to end with real git, real pre-commit and a real `pip install` of fabricgen from a git URL
at a commit, as the README tells a new user to do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from fabricgen import __version__
from fabricgen.cli import main
from fabricgen.model.schema import schema_text
from support import hook_repo
from support.crds import crd_validator
from support.fabrics import tree
from support.gitops_tree import BIN, load_stream, run, tool_env
from support.hook_repo import git

SCAFFOLD = (".gitignore", ".pre-commit-config.yaml", "README.md", "ci/github-actions.yaml", "ci/gitlab-ci.yml",
            "schemas/fabric.schema.json", "sites/example/fabric.yaml")


@pytest.mark.lab
def test_init_writes_a_repository_whose_output_is_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "fabric"
    assert main(["init", str(target)]) == 0
    files = tree(target)
    assert set(SCAFFOLD) <= set(files)
    assert any(name.startswith("rendered/example/east/") for name in files)
    assert any(name.startswith("rendered/example/west/") for name in files)
    fabric = (target / "sites/example/fabric.yaml").read_text()
    assert fabric.startswith("# yaml-language-server: $schema=../../schemas/fabric.schema.json\n")
    assert (target / "schemas/fabric.schema.json").read_text() == schema_text()
    # the modeline's schema accepts the sample, and the sample is valid without warnings
    monkeypatch.chdir(target)
    capsys.readouterr()
    assert main(["validate", "sites/example/fabric.yaml"]) == 0
    assert "(0 error(s), 0 warning(s))" in capsys.readouterr().err
    # exactly what `render --all` writes from the repository root
    git(target, "init", "-q")
    git(target, "add", "-A")
    assert main(["render", "--all", "--check"]) == 0
    _assert_delivery(target)


DELIVERY = ("argocd/applications/applications.yaml", "argocd/applications/kustomization.yaml",
            "argocd/bootstrap/argocd-cm.yaml", "argocd/bootstrap/kustomization.yaml", "argocd/bootstrap/root.yaml",
            "flux/gitrepository.yaml", "flux/kustomization.yaml", "flux/kustomizations.yaml")
PLACEHOLDER = "https://git.example/CHANGE-ME/fabric.git"


def _assert_delivery(repo: Path) -> None:
    """The sample's `delivery` section yields the Argo CD and Flux objects of both zones, valid
    against the upstream CRDs, from the clone URL placeholder the README tells the user to edit."""
    base = repo / "rendered" / "example" / "_delivery"
    assert sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file()) == sorted(DELIVERY)
    names: dict[str, set[str]] = {}
    for tool in ("argocd/applications", "flux"):  # what the root Application and `kubectl apply -k` apply
        built = run(["kubectl", "kustomize", str(base / tool)], repo)
        assert built.returncode == 0, built.stderr
        for obj in load_stream(built.stdout):
            names.setdefault(obj["kind"], set()).add(obj["metadata"]["name"])
            if obj["kind"] == "ConfigMap":  # argocd-cm, merged into Argo CD's own
                continue
            crd_validator(obj["apiVersion"], obj["kind"]).validate(obj)
            names.setdefault(obj["kind"], set()).add(obj["metadata"]["name"])
            source = obj["spec"].get("source") or obj["spec"]
            assert source.get("repoURL", source.get("url", PLACEHOLDER)) == PLACEHOLDER
    assert names["Application"] == {"fabric-example", "fabric-example-east", "fabric-example-west"}
    assert names["GitRepository"] == {"fabric-example"}
    assert {"fabric-example", "fabric-example-east-stage-0", "fabric-example-west-stage-0"} <= names["Kustomization"]
    readme = (repo / "README.md").read_text()
    assert "kubectl apply --server-side -k rendered/example/_delivery/argocd/bootstrap" in readme
    assert names["ConfigMap"] == {"argocd-cm"}
    assert "kubectl apply -k rendered/example/_delivery/flux" in readme
    assert "delivery.repoURL" in readme and PLACEHOLDER.rsplit("/", 2)[0] in readme


def test_init_pins_the_hooks_and_ci_to_the_given_commit(tmp_path: Path) -> None:
    rev = "0123456789abcdef0123456789abcdef01234567"
    assert main(["init", str(tmp_path), "--site", "dc1", "--hook-repo", "https://git.example/net/fabricgen",
                 "--hook-rev", rev]) == 0
    config = YAML(typ="safe").load((tmp_path / ".pre-commit-config.yaml").read_text())
    assert config == {"repos": [{"repo": "https://git.example/net/fabricgen", "rev": rev, "hooks": [
        {"id": "fabricgen-render"}, {"id": "fabricgen-check", "stages": ["manual"]}]}]}
    workflow = YAML(typ="safe").load((tmp_path / "ci/github-actions.yaml").read_text())
    assert workflow["env"]["FABRICGEN"] == f"fabricgen @ git+https://git.example/net/fabricgen@{rev}"
    gitlab = YAML(typ="safe").load((tmp_path / "ci/gitlab-ci.yml").read_text())
    assert gitlab["variables"]["FABRICGEN"] == workflow["env"]["FABRICGEN"]
    for steps in ([step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"]],
                  [line for job in ("check", "verify", "diff") for line in gitlab[job]["script"]]):
        assert "pre-commit run --hook-stage manual fabricgen-check --all-files --show-diff-on-failure" in steps
        assert any("| xargs -0 -n1 fabricgen verify" in step for step in steps)
        assert any("fabricgen diff \"$fabric\" --base" in step and "--format markdown" in step for step in steps)
    assert (tmp_path / "rendered" / "dc1").is_dir()


OVN_PACKAGES = {"ovn-central", "ovn-host", "ovn-ic", "ovn-ic-db", "openvswitch-switch"}
# What the CI images would install, standing in for them as in tests/cli/test_ci_examples.py.
DEBIAN13 = Path(__file__).resolve().parents[2] / ".ovn" / "25.03"


def _apt_installs(lines: list[str]) -> set[str]:
    """The packages the `apt-get install` lines of a job's shell commands name."""
    out: set[str] = set()
    for command in "\n".join(lines).replace("\\\n", " ").splitlines():  # continued lines joined
        words = command.split()
        if words[:2] == ["apt-get", "install"]:
            out |= {w for w in words[2:] if not w.startswith("-")}
    return out


def test_init_ci_runs_in_debian_13_with_its_ovn(tmp_path: Path) -> None:
    """Like deploy/ci/: every job in Debian 13, verify and diff with Debian's OVN 25.03 (the sample
    is VXLAN, which needs 25.03's vxlan_mode; the comment's lab matrix needs the OVN programs)."""
    assert main(["init", str(tmp_path), "--hook-repo", "https://git.example/net/fabricgen",
                 "--hook-rev", "0123456789abcdef0123456789abcdef01234567"]) == 0
    assert "encapsulation: vxlan" in (tmp_path / "sites/example/fabric.yaml").read_text()
    github_text = (tmp_path / "ci/github-actions.yaml").read_text()
    gitlab_text = (tmp_path / "ci/gitlab-ci.yml").read_text()
    for text in (github_text, gitlab_text):
        assert "ubuntu-latest" not in text and "python:3" not in text and "setup-python" not in text
    workflow = YAML(typ="safe").load(github_text)
    assert set(workflow["jobs"]) == {"check", "verify", "diff"}
    for name, job in workflow["jobs"].items():
        # verify makes network namespaces (its kernel underlay): that container is privileged
        assert job["container"] == ({"image": "debian:trixie", "options": "--privileged"} if name == "verify"
                                    else "debian:trixie"), name
        steps = job["steps"]
        runs = [step.get("run", "") for step in steps]
        checkout = next(i for i, step in enumerate(steps) if step.get("uses", "").startswith("actions/checkout@"))
        installs = _apt_installs(runs[:checkout])  # git before the checkout, so that it is a git checkout
        assert {"git", "python3-venv", "ca-certificates"} <= installs, name
        assert (installs >= OVN_PACKAGES) == (name in ("verify", "diff")), name
        assert (installs >= {"iproute2", "nftables", "frr"}) == (name in ("verify", "diff")), name
        # the job runs as root in a workspace the runner's user owns: trusted before git reads it
        assert runs[checkout + 1] == 'git config --global --add safe.directory "$GITHUB_WORKSPACE"', name
        assert any("python3 -m venv /opt/fabricgen" in run and "$GITHUB_PATH" in run for run in runs[:checkout])
    assert "gh" in _apt_installs([s.get("run", "") for s in workflow["jobs"]["diff"]["steps"]])
    gitlab = YAML(typ="safe").load(gitlab_text)
    assert gitlab["default"] == {"image": "debian:trixie"}
    for name in ("check", "verify", "diff"):
        assert "image" not in gitlab[name], name
        installs = _apt_installs(gitlab[name]["before_script"])
        assert {"git", "python3-venv", "ca-certificates"} <= installs, name
        assert (installs >= OVN_PACKAGES) == (name in ("verify", "diff")), name
        assert 'export PATH="/opt/fabricgen/bin:$PATH"' in gitlab[name]["before_script"]
    assert "curl" in _apt_installs(gitlab["diff"]["before_script"])


@pytest.mark.parametrize("existing", ["README.md", "sites/example/fabric.yaml", "rendered/example/old.yaml"])
def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path: Path, existing: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / existing
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("mine\n")
    before = tree(tmp_path)
    assert main(["init", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    shown = tmp_path / (existing if not existing.startswith("rendered/") else "rendered/example")
    assert f"\n  {shown}\n" in err + "\n"
    assert "nothing written" in err
    assert tree(tmp_path) == before


@pytest.mark.parametrize(("argv", "message"), [
    (["--site", "Bad_Name"], "--site 'Bad_Name' is not a valid name"),
    (["--hook-repo", "https://git.example/f"], "give --hook-repo and --hook-rev together"),
    (["--hook-repo", "https://git.example/f", "--hook-rev", "a b"], "is not a git revision"),
    (["--hook-repo", "https://x\n- id: evil", "--hook-rev", "main"], "is not a repository URL"),
])
def test_init_usage_errors(tmp_path: Path, argv: list[str], message: str,
                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(tmp_path / "new"), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


def _first_commit_then_edit(repo: Path, home: Path, fabricgen: Path) -> None:
    """pre-commit install, first commit passes, an edit fails until its output is staged."""
    environment = hook_repo.env(home)
    environment["PATH"] = f"{fabricgen.parent}{os.pathsep}{environment['PATH']}"
    git(repo, "init", "-q")
    assert run([str(BIN / "pre-commit"), "install"], repo, environment).returncode == 0
    git(repo, "add", "-A")

    def commit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "commit", "-q", "-m", "change", *args], cwd=repo, env=environment,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)

    first = commit()
    assert first.returncode == 0, first.stdout
    assert "fabricgen render" in first.stdout and "Passed" in first.stdout
    committed = git(repo, "ls-files", "rendered/example/_delivery").split()
    assert committed == [f"rendered/example/_delivery/{name}" for name in DELIVERY]
    check = run([str(BIN / "pre-commit"), "run", "--hook-stage", "manual", "fabricgen-check", "--all-files"],
                repo, environment)
    assert check.returncode == 0, check.stdout
    fabric = repo / "sites" / "example" / "fabric.yaml"
    fabric.write_text(fabric.read_text().replace("transitAddress: 169.254.100.12", "transitAddress: 169.254.100.13"))
    edited = commit("-a")
    assert edited.returncode == 1
    assert "changed  example/east/stage-2/default-vpc-routes.yaml" in edited.stdout
    git(repo, "add", "-A")
    staged = commit()
    assert staged.returncode == 0, staged.stdout
    assert git(repo, "status", "--porcelain") == ""
    assert "169.254.100.13" in git(repo, "show", "HEAD:rendered/example/east/stage-2/default-vpc-routes.yaml")
    _ci_diff_comments(repo, environment)


def _ci_diff_comments(repo: Path, environment: dict[str, str]) -> None:
    """The CI examples' diff scripts, run as the CI would (bash -e), against the previous commit."""
    workflow = YAML(typ="safe").load((repo / "ci/github-actions.yaml").read_text())
    gitlab = YAML(typ="safe").load((repo / "ci/gitlab-ci.yml").read_text())
    scripts = [
        next(step["run"] for step in workflow["jobs"]["diff"]["steps"] if "fabricgen diff" in step.get("run", ""))
        .replace("origin/${{ github.base_ref }}", "HEAD~1"),
        next(line for line in gitlab["diff"]["script"] if "fabricgen diff" in line)
        .replace("origin/$CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "HEAD~1"),
    ]
    if not (DEBIAN13 / "bin" / "ovs-vswitchd").exists():
        pytest.skip("OVN 25.03 is not installed in .ovn/25.03 (scripts/setup.sh --test)")
    for script in scripts:
        assert "HEAD~1" in script
        # the OVN the jobs install from Debian 13's packages: 25.03
        done = run(["bash", "-e", "-o", "pipefail", "-c", script], repo,
                   {**environment, "FABRICGEN_OVN_PREFIX": str(DEBIAN13)})
        assert done.returncode == 0, done.stderr
        comment = (repo / "comment.md").read_text()
        assert comment.startswith("## fabricgen: sites/example/fabric.yaml against HEAD~1\n")
        assert "169.254.100.13" in comment
        # the lab matrix, proven with packets on the OVN the zones run, and saying so
        assert "### OVN-IC lab: 2/2 pairs delivered\n" in comment
        assert ("proven with OVN 25.03.0 and Open vSwitch 3.5.0: ICMP echo and reply per pair, injected at a VM port "
                "(netdev-dummy) and read back at the other.") in comment
        assert "**Warning**" not in comment
        (repo / "comment.md").unlink()


@pytest.mark.lab
def test_pip_install_from_git_then_init_then_commit(tmp_path: Path, fabricgen_commit: tuple[Path, str, Path]) -> None:
    """The README's path for a new user: pip install fabricgen from a git URL at a commit, init,
    and the hooks pinned to that same commit pass the first commit."""
    source, rev, home = fabricgen_commit
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = tool_env(PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.update({k: v for k, v in os.environ.items() if k.startswith("PIP_")})
    install = run([str(venv / "bin" / "pip"), "install", "-q", f"git+file://{source}@{rev}"], tmp_path, env)
    assert install.returncode == 0, install.stderr
    fabricgen = venv / "bin" / "fabricgen"
    repo = tmp_path / "network-fabric"
    made = run([str(fabricgen), "init", str(repo)], tmp_path, env)
    assert made.returncode == 0, made.stderr
    assert f"fabricgen {__version__} from file://{source} at {rev}" in made.stderr
    config = YAML(typ="safe").load((repo / ".pre-commit-config.yaml").read_text())
    assert config["repos"][0]["repo"] == f"file://{source}"
    assert config["repos"][0]["rev"] == rev
    _first_commit_then_edit(repo, home, fabricgen)


@pytest.mark.lab
def test_init_from_a_directory_install_runs_the_fabricgen_on_path(tmp_path: Path,
                                                                  fabricgen_commit: tuple[Path, str, Path]) -> None:
    """This venv's fabricgen is installed from a directory (no commit on record): the hooks run
    the fabricgen on PATH, and say how to pin one."""
    direct = json.loads(subprocess.run(
        [sys.executable, "-c", "from importlib import metadata; "
         "print(metadata.distribution('fabricgen').read_text('direct_url.json') or '{}')"],
        check=True, capture_output=True, text=True).stdout)
    assert "vcs_info" not in direct
    repo = tmp_path / "fabric"
    assert main(["init", str(repo)]) == 0
    text = (repo / ".pre-commit-config.yaml").read_text()
    assert "repo: local" in text and "entry: fabricgen render --all" in text
    assert "rev: <full commit id>" in text
    # The CI check job runs those same local hooks, so it installs fabricgen itself: from where
    # the user says, never from a bare package name anyone could publish.
    install = 'pip install pre-commit "${FABRICGEN:?set FABRICGEN at the top of this file}"'
    workflow = YAML(typ="safe").load((repo / "ci/github-actions.yaml").read_text())
    assert install in [step.get("run", "").split("#")[0].strip() for step in workflow["jobs"]["check"]["steps"]]
    gitlab = YAML(typ="safe").load((repo / "ci/gitlab-ci.yml").read_text())
    assert install in gitlab["check"]["script"]
    assert workflow["env"]["FABRICGEN"] == gitlab["variables"]["FABRICGEN"] == ""
    for text in ((repo / "ci/github-actions.yaml").read_text(), (repo / "ci/gitlab-ci.yml").read_text()):
        assert "fabricgen==" not in text
    # An unset FABRICGEN stops the job with the reason, before pip could look anything up.
    done = subprocess.run(["sh", "-c", install.replace("pip install", "echo")], env={"FABRICGEN": ""},
                          capture_output=True, text=True, check=False)
    assert done.returncode != 0 and "set FABRICGEN at the top of this file" in done.stderr
    _first_commit_then_edit(repo, fabricgen_commit[2], BIN / "fabricgen")

