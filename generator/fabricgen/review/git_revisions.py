"""Reading a file as it was at a git revision: the only module that imports gitpython.

The revision is resolved by git itself (`git rev-parse --verify --end-of-options REV^{commit}`),
so `--base` takes exactly what git takes (branches, tags, `origin/main`, `HEAD~2`, `@{-1}`,
reflog dates) and nothing else: a path (`HEAD:file`), a range, a tree or an option is no
commit, and a revision git cannot resolve is a usage error (exit 2) that says so.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from fabricgen import exit_codes
from fabricgen.errors import FabricgenError
from fabricgen.source.reader import MAX_BYTES


class GitError(FabricgenError):
    """The repository or revision cannot be read."""


class BlobTooLargeError(GitError):
    """The file at the revision is larger than a fabric file may be (source.MAX_BYTES)."""


class UnknownRevisionError(GitError):
    """`--base` names no revision of the repository: a usage error."""

    exit_code = exit_codes.USAGE


def read_at(path: Path, revision: str) -> str | None:
    """The text of `path` at `revision`, or None when the file did not exist there."""
    import git

    try:
        repo = git.Repo(path.resolve().parent, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise GitError(f"{path} is not inside a git repository") from exc
    top = Path(str(repo.working_tree_dir))
    rel = path.resolve().relative_to(top.resolve()).as_posix()
    commit = repo.commit(_resolve(top, revision))
    try:
        blob = commit.tree / rel
    except KeyError:
        return None
    if not isinstance(blob, git.Blob) or blob.mode not in (0o100644, 0o100755):
        kind = {"submodule": "a submodule (gitlink)", "tree": "a directory"}.get(blob.type, f"a {blob.type}")
        if isinstance(blob, git.Blob) and blob.mode == 0o120000:
            kind = "a symbolic link"
        raise UnknownRevisionError(f"{rel} at {revision} is {kind}, not a fabric file; compare against a "
                                   "revision where it is one")
    if blob.size > MAX_BYTES:
        raise BlobTooLargeError(f"{rel} at {revision} is larger than {MAX_BYTES // (1024 * 1024)} MiB "
                                f"({blob.size} bytes; the limit is {MAX_BYTES}), far more than a fabric needs; "
                                "compare against a revision where it is a fabric")
    data: bytes = blob.data_stream.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GitError(f"{rel} at {revision}: byte 0x{data[exc.start]:02x} is not UTF-8; "
                       "compare against a revision where it is a fabric") from exc


def _resolve(top: Path, revision: str) -> str:
    """The commit id `revision` names, as git resolves it; raises UnknownRevisionError. Resolved
    first as given (`:/message` takes nothing after it), then peeled to its commit (a tag)."""
    unknown = (f"unknown revision {revision!r}: git resolves it to no commit of this repository; give a "
               "commit, branch or tag (e.g. --base origin/main)")
    if not revision or "\0" in revision:
        raise UnknownRevisionError(unknown)
    named = revision
    for peel in ("", "^{commit}"):
        try:
            done = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "--end-of-options", named + peel],
                                  cwd=top, capture_output=True, text=True, check=False)
        except OSError as exc:
            raise GitError(f"diff needs the git program: {exc.strerror or exc}") from None
        named = done.stdout.strip()
        if done.returncode != 0 or len(named) not in (40, 64) or not all(c in "0123456789abcdef" for c in named):
            raise UnknownRevisionError(unknown)
    return named
