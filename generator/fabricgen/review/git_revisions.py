"""Reading a file as it was at a git revision: the only module that imports gitpython."""

from __future__ import annotations

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
    try:
        commit = repo.commit(revision)
    except (git.BadName, ValueError) as exc:
        raise UnknownRevisionError(f"unknown revision {revision!r}; give a commit, branch or tag "
                                   "of this repository (e.g. --base origin/main)") from exc
    try:
        blob = commit.tree / rel
    except KeyError:
        return None
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
