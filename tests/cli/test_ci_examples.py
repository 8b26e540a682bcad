"""The CI examples in deploy/ci/ run: their fabricgen commands, taken from the workflow files
themselves, in a real git repository whose last commit changes a fabric and its output.

GitHub Actions runs a `run:` block with `bash --noprofile --norc -eo pipefail {0}`; GitLab runs
`script` and `after_script` items in a POSIX shell that stops at the first failing item. The
steps that install packages or post the comment (they need the network and a token) are not
run; the test checks that they post the comment the diff step wrote.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import git
import pytest
from ruamel.yaml import YAML

from fabricgen.lab.ovn.sandbox import INSTALL_COMMAND, missing_prerequisites
from support.fabrics import REPO, edit

GITHUB = REPO / "deploy" / "ci" / "github" / "fabricgen.yml"
GITLAB = REPO / "deploy" / "ci" / "gitlab" / ".gitlab-ci.yml"
ACTOR = git.Actor("t", "t@example.invalid")
BIN = Path(shutil.which("fabricgen") or REPO / ".venv" / "bin" / "fabricgen").parent

pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(bool(missing_prerequisites()), reason=f"real OVN needed ({INSTALL_COMMAND})"),
]


def load(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text())


def runs_fabricgen(command: str) -> bool:
    return "fabricgen " in command and "pip install" not in command


@pytest.fixture
def fabric_repo(tmp_path: Path) -> tuple[Path, str]:
    """sites/lab with its rendered output, committed; then a transit address change with its new output."""
    fabric = tmp_path / "sites" / "lab" / "fabric.yaml"
    fabric.parent.mkdir(parents=True)
    shutil.copy(REPO / "sites" / "lab" / "fabric.yaml", fabric)
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    repo = git.Repo.init(tmp_path)

    def commit(message: str) -> str:
        subprocess.run(["fabricgen", "render", "-q", "sites/lab/fabric.yaml"], cwd=tmp_path, env=env, check=False)
        repo.git.add("-A")
        return repo.index.commit(message, author=ACTOR, committer=ACTOR).hexsha

    base = commit("lab")
    fabric.write_text(edit(fabric.read_text(), "transitAddress: 169.254.100.23", "transitAddress: 169.254.100.25"))
    commit("ai re-joined: new transit address")
    return tmp_path, base


# The examples run on a Debian 13 image, whose OVN is 25.03: here, the prefix scripts/setup.sh
# --test makes of Debian 13's packages stands in for it.
DEBIAN13 = Path(__file__).resolve().parents[2] / ".ovn" / "25.03"


def execute(shell: list[str], command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    if not (DEBIAN13 / "bin" / "ovs-vswitchd").exists():
        pytest.skip("OVN 25.03 is not installed in .ovn/25.03 (scripts/setup.sh --test)")
    return subprocess.run([*shell, command], cwd=cwd, env={**os.environ, **env, "FABRICGEN_OVN_PREFIX": str(DEBIAN13),
                          "PATH": f"{BIN}:{os.environ['PATH']}"}, capture_output=True, text=True, check=False)


def check_comment(repo: Path, base: str) -> None:
    comment = (repo / "comment.md").read_text()
    assert comment.startswith(f"## fabricgen: sites/lab/fabric.yaml against {base}\n")
    assert "> **Caution** the transit address changes: ai 169.254.100.23 -> " in comment
    assert "### OVN-IC lab: 12/12 pairs delivered" in comment
    # which OVN proved it: Debian 13's, the image's (here the extracted packages standing in for it)
    assert ("proven with OVN 25.03.0 and Open vSwitch 3.5.0: ICMP echo and reply per pair, injected at a VM port "
            "(netdev-dummy) and read back at the other.") in comment
    assert "**Warning**" not in comment  # the zones' OVN (Kube-OVN 1.16: 25.03) is the one that proved it


def test_github_actions_workflow(fabric_repo: tuple[Path, str]) -> None:
    repo, base = fabric_repo
    workflow = load(GITHUB)
    assert set(workflow["on"]) == {"pull_request"}
    (job,) = workflow["jobs"].values()
    env = {k: str(v) for k, v in job["env"].items() if "${{" not in str(v)}
    env["BASE_SHA"] = base  # ${{ github.event.pull_request.base.sha }}
    steps = [s for s in job["steps"] if runs_fabricgen(s.get("run", ""))]
    names = [s["name"] for s in steps]
    assert names == ["Validate", "Check that rendered/ is current", "Verify in an OVN-IC lab",
                     "Write the review comment"]
    for step in steps:
        result = execute(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"], step["run"], repo, env)
        assert result.returncode == 0, f"{step['name']}: {result.stderr}{result.stdout}"
    check_comment(repo, base)
    (post,) = [s for s in job["steps"] if "gh pr comment" in s.get("run", "")]
    assert "--body-file comment.md" in post["run"] and post["if"] == "success() || failure()"


def test_gitlab_ci_job(fabric_repo: tuple[Path, str]) -> None:
    repo, base = fabric_repo
    (job,) = [v for k, v in load(GITLAB).items() if isinstance(v, dict) and "script" in v]
    env = {k: str(v) for k, v in job["variables"].items()}
    env["CI_MERGE_REQUEST_DIFF_BASE_SHA"] = base
    commands = [c for c in [*job["script"], *job["after_script"]] if runs_fabricgen(c)]
    assert [c.split()[1] if c.startswith("fabricgen") else "diff" for c in commands] == [
        "validate", "render", "verify", "diff"]
    for command in commands:
        result = execute(["sh", "-e", "-c"], command, repo, env)
        assert result.returncode == 0, f"{command}: {result.stderr}{result.stdout}"
    check_comment(repo, base)
    assert any('--data-urlencode "body@comment.md"' in c for c in job["after_script"])


def test_the_examples_install_fabricgen_from_a_commit_never_by_bare_name() -> None:
    """A bare `fabricgen` (or `fabricgen==X`) is whatever a package index serves under that name."""
    import re

    for path in (REPO / "deploy/ci/github/fabricgen.yml", REPO / "deploy/ci/gitlab/.gitlab-ci.yml"):
        installs = [line for line in path.read_text().splitlines() if "pip install" in line and "fabricgen" in line]
        assert installs, path
        for line in installs:
            assert re.search(r'"fabricgen @ git\+https://[^"@ ]+@[0-9a-f]{40}"', line), line
