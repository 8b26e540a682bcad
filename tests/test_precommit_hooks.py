"""The hooks in .pre-commit-hooks.yaml, run by real `pre-commit try-repo` in a scratch repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from support.gitops_tree import BIN, LAB, REPO, break_nb_port, load_file, run, tool_env

HOOKS = {hook["id"]: hook for hook in load_file(REPO / ".pre-commit-hooks.yaml")}


@pytest.mark.parametrize(("path", "matches"), [
    ("fabric.yaml", True),
    ("sites/lab/fabric.yaml", True),
    ("sites/lab/fabric.yml", True),
    ("sites/lab/myfabric.yaml", False),
    ("sites/lab/fabric.yaml.bak", False),
    ("rendered/lab/hq/backbone.yaml", False),
])
def test_files_regex(path: str, matches: bool) -> None:
    for hook in HOOKS.values():
        assert bool(re.search(hook["files"], path)) is matches


def test_hook_contract() -> None:
    assert set(HOOKS) == {"fabricgen-render", "fabricgen-check"}
    for hook in HOOKS.values():
        assert hook["language"] == "python"
        assert hook["pass_filenames"] is True
        assert hook["require_serial"] is True
    assert HOOKS["fabricgen-check"]["entry"].endswith("--check")


@pytest.fixture
def consumer(tmp_path: Path) -> Path:
    """A repository keeping sites/lab/fabric.yaml and its committed, fresh rendered/."""
    fabric = tmp_path / LAB
    fabric.parent.mkdir(parents=True)
    fabric.write_bytes((REPO / LAB).read_bytes())
    git(tmp_path, "init", "-q")
    result = run([str(BIN / "fabricgen"), "render", LAB, "-q"], tmp_path)
    assert result.returncode == 3, result.stderr
    commit(tmp_path, "fabric and rendered output")
    return tmp_path


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                          cwd=repo, check=True, capture_output=True, text=True).stdout


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def try_repo(repo: Path, hook: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`pre-commit try-repo` on this work tree (it installs the hook environment every time)."""
    env = tool_env(PRE_COMMIT_HOME=str(repo.parent / "pre-commit-home"), GIT_AUTHOR_NAME="t", GIT_COMMITTER_NAME="t",
                   GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_EMAIL="t@example.invalid")
    return run([str(BIN / "pre-commit"), "try-repo", str(REPO), hook, *args], repo, env)


def test_fresh_output_passes(consumer: Path) -> None:
    for hook in HOOKS:
        result = try_repo(consumer, hook, "--all-files")
        assert result.returncode == 0, result.stdout + result.stderr
        assert re.search(r"fabricgen (render|check)\.+Passed", result.stdout)
    assert git(consumer, "status", "--porcelain") == ""


def test_changed_fabric_rerenders_and_fails_until_staged(consumer: Path) -> None:
    fabric = consumer / LAB
    fabric.write_text(fabric.read_text().replace("transitAddress: 169.254.100.23",
                                                 "transitAddress: 169.254.100.25"))
    git(consumer, "add", LAB)
    check = try_repo(consumer, "fabricgen-check")
    assert check.returncode == 1
    assert "out of date" in check.stdout
    assert git(consumer, "status", "--porcelain") == "M  sites/lab/fabric.yaml\n"
    render = try_repo(consumer, "fabricgen-render")
    assert render.returncode == 1
    assert "changed  lab/hq/stage-2/default-vpc-routes.yaml" in render.stdout
    git(consumer, "add", "-A")
    again = try_repo(consumer, "fabricgen-render")
    assert again.returncode == 0, again.stdout


def test_new_untracked_and_stale_output_fail(consumer: Path) -> None:
    """pre-commit diffs only tracked files: the hook itself fails when it creates or deletes one."""
    git(consumer, "rm", "-q", "rendered/lab/hq/stage-0/backbone.yaml")
    stale = consumer / "rendered" / "lab" / "hq" / "old.yaml"
    stale.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old}\n")
    commit(consumer, "lose a rendered file, keep one fabricgen no longer writes")
    result = try_repo(consumer, "fabricgen-render", "--all-files")
    assert result.returncode == 1
    assert "added    lab/hq/stage-0/backbone.yaml" in result.stdout
    assert "removed  lab/hq/old.yaml" in result.stdout
    assert not stale.exists()
    assert git(consumer, "status", "--porcelain") == (
        " D rendered/lab/hq/old.yaml\n?? rendered/lab/hq/stage-0/backbone.yaml\n")


def test_bad_fabric_fails_with_the_located_error(consumer: Path) -> None:
    line = break_nb_port(consumer / LAB)
    git(consumer, "add", LAB)
    before = git(consumer, "status", "--porcelain")
    result = try_repo(consumer, "fabricgen-render")
    assert result.returncode == 1
    assert re.search(rf"^{re.escape(LAB)}:{line}:\d+: interconnection\.database\.nbPort: ",
                     result.stdout, re.MULTILINE), result.stdout
    assert "nothing written" in result.stdout
    assert git(consumer, "status", "--porcelain") == before
