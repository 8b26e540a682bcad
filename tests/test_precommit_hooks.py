"""The hooks in .pre-commit-hooks.yaml, run by real `pre-commit try-repo` in a scratch repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from support import hook_repo
from support.gitops_tree import BIN, LAB, REPO, break_nb_port, load_file, run, tool_env

HOOKS = {hook["id"]: hook for hook in load_file(REPO / ".pre-commit-hooks.yaml")}


def test_hook_contract() -> None:
    """Every tracked fabric on every commit: deletions reach no hook as file names, and a staged
    output file belongs to a fabric that may not be staged itself."""
    assert set(HOOKS) == {"fabricgen-render", "fabricgen-check"}
    for hook in HOOKS.values():
        assert hook["language"] == "python"
        assert hook["pass_filenames"] is False
        assert hook["always_run"] is True
        assert hook["require_serial"] is True
        assert "files" not in hook
    assert HOOKS["fabricgen-render"]["entry"] == "fabricgen render --all"
    assert HOOKS["fabricgen-check"]["entry"] == "fabricgen render --all --check"


@pytest.fixture
def consumer(tmp_path: Path, fabricgen_commit: tuple[Path, str, Path]) -> Path:
    """A repository keeping sites/lab/fabric.yaml and its committed, fresh rendered/, with both hooks
    configured at this work tree's commit (`hook` runs them)."""
    source, rev, _home = fabricgen_commit
    fabric = tmp_path / LAB
    fabric.parent.mkdir(parents=True)
    fabric.write_bytes((REPO / LAB).read_bytes())
    (tmp_path / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {source}\n    rev: {rev}\n    hooks: [{{id: fabricgen-render}}, {{id: fabricgen-check}}]\n")
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


def hook(repo: Path, home: tuple[Path, str, Path], hook_id: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`pre-commit run HOOK` with the consumer's pinned configuration (environment built once)."""
    return hook_repo.pre_commit(repo, home[2], "run", hook_id, *args)


def test_try_repo_fresh_output_passes(consumer: Path) -> None:
    """The README's `pre-commit try-repo` of a fabricgen checkout."""
    for hook in HOOKS:
        result = try_repo(consumer, hook, "--all-files")
        assert result.returncode == 0, result.stdout + result.stderr
        assert re.search(r"fabricgen (render|check)\.+Passed", result.stdout)
    assert git(consumer, "status", "--porcelain") == ""


def test_changed_fabric_rerenders_and_fails_until_staged(consumer: Path,
                                                         fabricgen_commit: tuple[Path, str, Path]) -> None:
    fabric = consumer / LAB
    fabric.write_text(fabric.read_text().replace("transitAddress: 169.254.100.23",
                                                 "transitAddress: 169.254.100.25"))
    git(consumer, "add", LAB)
    check = hook(consumer, fabricgen_commit, "fabricgen-check")
    assert check.returncode == 1
    assert "out of date" in check.stdout
    assert git(consumer, "status", "--porcelain") == "M  sites/lab/fabric.yaml\n"
    render = hook(consumer, fabricgen_commit, "fabricgen-render")
    assert render.returncode == 1
    assert "changed  lab/hq/stage-2/default-vpc-routes.yaml" in render.stdout
    git(consumer, "add", "-A")
    again = hook(consumer, fabricgen_commit, "fabricgen-render")
    assert again.returncode == 0, again.stdout


def test_new_untracked_and_stale_output_fail(consumer: Path, fabricgen_commit: tuple[Path, str, Path]) -> None:
    """pre-commit diffs only tracked files: the hook itself fails when it creates or deletes one."""
    git(consumer, "rm", "-q", "rendered/lab/hq/stage-0/backbone.yaml")
    stale = consumer / "rendered" / "lab" / "hq" / "old.yaml"
    stale.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old}\n")
    commit(consumer, "lose a rendered file, keep one fabricgen no longer writes")
    result = hook(consumer, fabricgen_commit, "fabricgen-render", "--all-files")
    assert result.returncode == 1
    assert "added    lab/hq/stage-0/backbone.yaml" in result.stdout
    assert "removed  lab/hq/old.yaml" in result.stdout
    assert not stale.exists()
    assert git(consumer, "status", "--porcelain") == (
        " D rendered/lab/hq/old.yaml\n?? rendered/lab/hq/stage-0/backbone.yaml\n")


def test_bad_fabric_fails_with_the_located_error(consumer: Path, fabricgen_commit: tuple[Path, str, Path]) -> None:
    line = break_nb_port(consumer / LAB)
    git(consumer, "add", LAB)
    before = git(consumer, "status", "--porcelain")
    result = hook(consumer, fabricgen_commit, "fabricgen-render")
    assert result.returncode == 1
    assert re.search(rf"^{re.escape(LAB)}:{line}:\d+: interconnection\.database\.nbPort: ",
                     result.stdout, re.MULTILINE), result.stdout
    assert "nothing written" in result.stdout
    assert git(consumer, "status", "--porcelain") == before


# The README's configuration, pinned to a commit, driven by `git commit` itself.

README = (REPO / "README.md").read_text(encoding="utf-8")
README_CONFIG = re.search(r"```yaml\n(# \.pre-commit-config\.yaml of a fabric repository\n.*?)```",
                          README, re.DOTALL)


@pytest.fixture
def pinned(fabricgen_commit: tuple[Path, str, Path]) -> tuple[Path, str, Path]:
    return fabricgen_commit


@pytest.fixture
def user_repo(tmp_path: Path, pinned: tuple[Path, str, Path]) -> Path:
    """A fabric repository with the README's .pre-commit-config.yaml, installed, first commit made."""
    source, rev, home = pinned
    assert README_CONFIG, "README lost its .pre-commit-config.yaml example"
    repo = tmp_path / "fabric"
    (repo / "sites" / "lab").mkdir(parents=True)
    (repo / LAB).write_bytes((REPO / LAB).read_bytes())
    (repo / ".pre-commit-config.yaml").write_text(hook_repo.pinned_config(README_CONFIG.group(1), source, rev))
    git(repo, "init", "-q")
    assert hook_repo.pre_commit(repo, home, "install").returncode == 0
    git(repo, "add", "-A")
    first = hook_repo.commit(repo, home)
    assert first.returncode == 1, "the first commit without rendered/ must fail"
    assert "added    lab/hq/stage-2/backbone.yaml" in first.stdout
    git(repo, "add", "-A")
    second = hook_repo.commit(repo, home)
    assert second.returncode == 0, second.stdout
    assert git(repo, "status", "--porcelain") == ""
    return repo


def home_of(pinned: tuple[Path, str, Path]) -> Path:
    return pinned[2]


def test_readme_configuration_check_runs_in_ci(user_repo: Path, pinned: tuple[Path, str, Path]) -> None:
    """The README's CI command works with the README's configuration (no 'No hook with id')."""
    command = re.search(r"^pre-commit (run --hook-stage manual fabricgen-check [^#\n]*?)\s*# in CI$",
                        README, re.MULTILINE)
    assert command
    args = command.group(1).split()
    ok = hook_repo.pre_commit(user_repo, home_of(pinned), *args)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert re.search(r"fabricgen check\.+Passed", ok.stdout)
    backbone = user_repo / "rendered" / "lab" / "hq" / "stage-2" / "backbone.yaml"
    backbone.write_text(backbone.read_text() + "# edited\n")
    stale = hook_repo.pre_commit(user_repo, home_of(pinned), *args)
    assert stale.returncode == 1
    assert "changed  lab/hq/stage-2/backbone.yaml" in stale.stdout
    assert backbone.read_text().endswith("# edited\n"), "the check writes nothing"


def test_hand_edit_of_rendered_output_fails(user_repo: Path, pinned: tuple[Path, str, Path]) -> None:
    backbone = user_repo / "rendered" / "lab" / "hq" / "stage-2" / "backbone.yaml"
    original = backbone.read_text()
    backbone.write_text(original.replace("natOutgoing: false", "natOutgoing: true"))
    git(user_repo, "add", "rendered")
    result = hook_repo.commit(user_repo, home_of(pinned))
    assert result.returncode == 1
    assert "changed  lab/hq/stage-2/backbone.yaml" in result.stdout
    assert backbone.read_text() == original
    assert git(user_repo, "log", "--oneline").count("\n") == 1


def test_output_staged_without_its_fabric_fails(user_repo: Path, pinned: tuple[Path, str, Path]) -> None:
    home = home_of(pinned)
    fabric = user_repo / LAB
    fabric.write_text(fabric.read_text().replace("transitAddress: 169.254.100.23", "transitAddress: 169.254.100.25"))
    first = hook_repo.commit(user_repo, home, "-a")
    assert first.returncode == 1
    assert "changed  lab/hq/stage-2/default-vpc-routes.yaml" in first.stdout
    # the advice of a failed hook, taken literally: stage the output, not the fabric
    git(user_repo, "add", "rendered")
    assert git(user_repo, "diff", "--cached", "--name-only") != ""
    second = hook_repo.commit(user_repo, home)
    assert second.returncode == 1, "output committed without the fabric change it comes from"
    assert "changed  lab/hq/stage-2/default-vpc-routes.yaml" in second.stdout
    assert git(user_repo, "log", "--oneline").count("\n") == 1
    # The failed hook rendered the staged (old) fabric back into rendered/; stage the fabric
    # with it, and the next commit renders the new fabric, fails once more, then passes.
    git(user_repo, "add", "-A")
    third = hook_repo.commit(user_repo, home)
    assert third.returncode == 1
    git(user_repo, "add", "-A")
    fourth = hook_repo.commit(user_repo, home)
    assert fourth.returncode == 0, fourth.stdout
    assert "169.254.100.25" in git(user_repo, "show", "HEAD:rendered/lab/hq/stage-2/default-vpc-routes.yaml")
    assert git(user_repo, "status", "--porcelain") == ""


def test_deleting_an_output_file_fails(user_repo: Path, pinned: tuple[Path, str, Path]) -> None:
    """A commit that only deletes passes no file name to any hook: always_run catches it."""
    git(user_repo, "rm", "-q", "rendered/lab/hq/stage-2/backbone.yaml")
    result = hook_repo.commit(user_repo, home_of(pinned))
    assert result.returncode == 1
    assert "added    lab/hq/stage-2/backbone.yaml" in result.stdout


def test_deleted_fabric_takes_its_output_along(user_repo: Path, pinned: tuple[Path, str, Path]) -> None:
    home = home_of(pinned)
    git(user_repo, "rm", "-q", LAB)
    result = hook_repo.commit(user_repo, home)
    assert result.returncode == 1
    assert "removed  lab/hq/stage-2/backbone.yaml" in result.stdout
    assert not (user_repo / "rendered" / "lab").exists()
    git(user_repo, "add", "-A")
    again = hook_repo.commit(user_repo, home)
    assert again.returncode == 0, again.stdout
    assert git(user_repo, "ls-files") == ".pre-commit-config.yaml\n"


def test_untracked_fabric_is_not_part_of_the_commit(user_repo: Path, pinned: tuple[Path, str, Path]) -> None:
    """A new fabric not yet added is neither rendered nor in the way of an unrelated commit."""
    new = user_repo / "sites" / "new" / "fabric.yaml"
    new.parent.mkdir()
    new.write_text((REPO / LAB).read_text().replace("  name: lab ", "  name: new ", 1))
    (user_repo / "NOTES.md").write_text("notes\n")
    git(user_repo, "add", "NOTES.md")
    result = hook_repo.commit(user_repo, home_of(pinned))
    assert result.returncode == 0, result.stdout
    assert not (user_repo / "rendered" / "new").exists()
