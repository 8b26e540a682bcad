"""fabricgen as a fabric repository's pre-commit configuration pins it: a git repository at a commit.

`snapshot` copies this work tree (tracked files and new ones not yet committed, as
`pre-commit try-repo` does) into a scratch repository and commits it, so tests can write
`repo: <path>` and `rev: <full commit id>` exactly as a user pins a fabricgen commit. One
PRE_COMMIT_HOME per test session: pre-commit builds the hook environment once per commit.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from support.gitops_tree import BIN, REPO, run, tool_env

IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_COMMITTER_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def git(repo: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                          cwd=repo, check=check, capture_output=True, text=True)
    return done.stdout


def snapshot(dst: Path) -> tuple[Path, str]:
    """A git repository holding this work tree as it is; returns its path and commit id."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, check=True, capture_output=True, text=True).stdout
    for rel in filter(None, listed.split("\0")):
        src = REPO / rel
        if src.is_file():
            target = dst / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    git(dst, "init", "-q")
    git(dst, "add", "-A")
    git(dst, "commit", "-q", "-m", "fabricgen under test")
    return dst, git(dst, "rev-parse", "HEAD").strip()


def env(home: Path) -> dict[str, str]:
    return tool_env(PRE_COMMIT_HOME=str(home), **IDENTITY)


def pinned_config(text: str, source: Path, rev: str) -> str:
    """A configuration's `repo:` and `rev:` lines pointed at the scratch fabricgen repository."""
    text, repos = re.subn(r"(?m)^(\s*-\s*repo:\s*)\S+.*$", lambda m: f"{m.group(1)}{source}", text)
    text, revs = re.subn(r"(?m)^(\s*rev:\s*)\S+.*$", lambda m: f"{m.group(1)}{rev}", text)
    assert (repos, revs) == (1, 1), text
    return text


def pre_commit(repo: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run([str(BIN / "pre-commit"), *args], repo, env(home))


def commit(repo: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`git commit` as a user runs it, with the pre-commit hook `pre-commit install` wrote
    (git shows the hook's output on stderr; here it is all in `stdout`)."""
    return subprocess.run(["git", "commit", "-q", "-m", "change", *args], cwd=repo, env=env(home),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
