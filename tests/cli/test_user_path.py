"""A new user's whole path, end to end, in a repository of their own.

fabricgen is `pip install`ed from a directory into a fresh venv; then, in a new git repository,
as docs/repository.md and the scaffold's README tell: `fabricgen init`, the first commit through the
pre-commit hook, a zone edited, `fabricgen diff --base HEAD --format markdown`, `fabricgen
verify`, `fabricgen graph --format svg`, the commit of the edit, `kubectl kustomize` of each
zone, and the Argo CD plugin run the way Argo CD's cmp-server runs it: in the Application's
path of the unpacked repository (no `.git`), with only the plugin's environment
(`ARGOCD_ENV_ZONE`, `ARGOCD_APP_SOURCE_PATH`). Its output is the objects kustomize builds.

The shell's PATH is a normal Debian user's: without /usr/sbin, where Debian installs
ovsdb-server. verify and the review comment's lab still find the OVN programs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from fabricgen.lab.ovn.sandbox import missing_prerequisites
from support.gitops_tree import BIN, load_stream, run
from support.hook_repo import IDENTITY

pytestmark = pytest.mark.lab  # starts real programs: bash, fabricgen, pip, python, sh

USER_PATH = "/usr/local/bin:/usr/bin:/bin"  # Debian's default for a user: no sbin
TOOLS = ("kubectl", "dot")


def identity(obj: dict[str, object]) -> tuple[str, ...]:
    meta = obj["metadata"]
    assert isinstance(meta, dict)
    return (str(obj["apiVersion"]), str(obj["kind"]), str(meta.get("namespace", "")), str(meta["name"]))


@pytest.mark.skipif(bool(missing_prerequisites()) or any(shutil.which(t) is None for t in TOOLS),
                    reason="needs the OVN programs, kubectl and Graphviz dot")
def test_a_new_user_from_pip_install_to_the_argocd_plugin(
        tmp_path: Path, fabricgen_commit: tuple[Path, str, Path]) -> None:
    source, _rev, home = fabricgen_commit
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {"PATH": f"{venv / 'bin'}{os.pathsep}{BIN}{os.pathsep}{USER_PATH}", "HOME": str(tmp_path),
           "LANG": "C.UTF-8", "PRE_COMMIT_HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1", **IDENTITY,
           **{k: v for k, v in os.environ.items() if k.startswith("PIP_")}}
    install = run([str(venv / "bin" / "pip"), "install", "-q", str(source)], tmp_path, env)
    assert install.returncode == 0, install.stderr
    assert run(["sh", "-c", "command -v fabricgen"], tmp_path, env).stdout.strip() == str(venv / "bin" / "fabricgen")

    def sh(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, check=False)

    repo = tmp_path / "network-fabric"
    made = sh("fabricgen init network-fabric --site dc1", tmp_path)
    assert made.returncode == 0, made.stderr
    first = sh("git init -q && pre-commit install && git add -A && git commit -q -m 'Fabric dc1' 2>&1", repo)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "fabricgen render" in first.stdout and "Passed" in first.stdout

    fabric = repo / "sites" / "dc1" / "fabric.yaml"
    web = "          - {name: app-web, cidr: 10.100.1.0/24}\n"
    assert fabric.read_text().count(web) == 1
    fabric.write_text(fabric.read_text().replace(web, web + "          - {name: app-db, cidr: 10.100.2.0/24}\n"))

    diff = sh("fabricgen diff sites/dc1/fabric.yaml --base HEAD --format markdown", repo)
    assert diff.returncode == 3, diff.stderr
    assert diff.stdout.startswith("## fabricgen: sites/dc1/fabric.yaml against HEAD\n")
    assert "#### Subnet: app-db (added)" in diff.stdout
    # The lab found ovsdb-server and ovs-vswitchd in /usr/sbin: the system's OVN 23.03, which has no
    # vxlan_mode, so the VXLAN fabric's packets are lost there, and the comment says with what it ran.
    assert "### OVN-IC lab: 0/2 pairs delivered" in diff.stdout
    assert "proven with OVN 23.03" in diff.stdout and "this proof ran OVN 23.03" in diff.stdout

    verify = sh("fabricgen verify sites/dc1/fabric.yaml", repo)
    assert verify.returncode == 5, verify.stdout + verify.stderr
    assert ": tunnel-key: " in verify.stdout and verify.stdout.endswith("0/2 pairs delivered\n")
    debian13 = Path(__file__).resolve().parents[2] / ".ovn" / "25.03"
    if (debian13 / "bin" / "ovs-vswitchd").exists():  # OVN 25.03, as the zones run it
        verify = sh(f"fabricgen verify sites/dc1/fabric.yaml --ovn-prefix {debian13}", repo)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        assert verify.stdout.endswith("2/2 pairs delivered\n")

    graph = sh("fabricgen graph sites/dc1/fabric.yaml --format svg", repo)
    assert graph.returncode == 0, graph.stderr
    assert graph.stdout.startswith("<?xml") and "</svg>" in graph.stdout and "app&#45;db 10.100.2.0/24" in graph.stdout

    refused = sh("git commit -q -am 'dc1: app-db' 2>&1", repo)
    assert refused.returncode == 1 and "changed  dc1/west/" in refused.stdout, refused.stdout
    committed = sh("git add -A && git commit -q -m 'dc1: app-db' 2>&1 && git status --porcelain", repo)
    assert committed.returncode == 0 and committed.stdout.strip().endswith("Passed"), committed.stdout

    unpacked = tmp_path / "argocd-checkout"  # what the cmp-server receives: the files, no .git
    archive = tmp_path / "repo.tar"
    sh(f"git archive -o {archive} HEAD", repo).check_returncode()
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked, filter="data")
    assert not (unpacked / ".git").exists()
    applications = load_stream((repo / "rendered/dc1/_delivery/argocd/applications/applications.yaml").read_text())
    for zone in ("east", "west"):
        built = sh(f"kubectl kustomize rendered/dc1/{zone}", repo)
        assert built.returncode == 0, built.stderr
        app = next(a for a in applications if a["metadata"]["name"] == f"fabric-dc1-{zone}")
        # The Application syncs the committed zone directory, as Argo CD's kustomize builds it
        # in the checkout it received.
        assert app["spec"]["source"]["path"] == f"rendered/dc1/{zone}"
        synced = sh(f"kubectl kustomize {unpacked / 'rendered/dc1' / zone}", repo)
        assert synced.returncode == 0, synced.stderr
        assert synced.stdout == built.stdout
        # The plugin, for repositories that choose `argocdSource: plugin`, prints the same objects.
        plugin_env = {"ARGOCD_ENV_ZONE": zone}
        path = "sites/dc1"
        generated = subprocess.run(
            [str(venv / "bin" / "fabricgen"), "argocd-generate"], cwd=unpacked / path, capture_output=True,
            text=True, check=False,
            env={"PATH": USER_PATH, "HOME": str(tmp_path), "ARGOCD_APP_SOURCE_PATH": path,
                 "ARGOCD_APP_NAME": app["metadata"]["name"], **plugin_env})
        assert generated.returncode == 0, generated.stderr
        objects, expected = load_stream(generated.stdout), load_stream(built.stdout)
        assert sorted(map(identity, objects)) == sorted(map(identity, expected))
        assert {identity(o): o for o in objects} == {identity(o): o for o in expected}
        if zone == "west":
            assert ("kubeovn.io/v1", "Subnet", "", "app-db") in map(identity, objects)
