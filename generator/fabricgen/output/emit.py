"""The only module that writes to the filesystem.

A fabric owns `<output root>/<site>/`. `write` compares the rendered tree with
what is there; when anything differs it builds the complete new tree in a
staging directory beside it and swaps the two (atomically with Linux
`renameat2(RENAME_EXCHANGE)`, else with two renames), so an interrupted or failed
run leaves the previous tree in place, and files of removed zones are gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import fcntl
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from fabricgen.errors import OutputError
from fabricgen.pipeline import Build, OutputFile
from fabricgen.regular_file import read_regular

STAGING_PREFIX = ".fabricgen-staging-"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


@dataclass(frozen=True)
class Changes:
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    def lines(self) -> list[str]:
        return ([f"added    {p}" for p in self.added] + [f"changed  {p}" for p in self.changed]
                + [f"removed  {p}" for p in self.removed])


def _mode(out: OutputFile) -> int:
    return 0o755 if out.executable else 0o644


_KINDS = ((stat.S_ISLNK, "symlink"), (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"),
          (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "special file")


@dataclass(frozen=True)
class _Tree:
    """What is under `<root>/<site>/`: regular files (content, executable) and everything
    else that is neither a file nor a directory (symlinks, FIFOs...), which fabricgen
    never writes, never follows and removes."""

    files: dict[PurePosixPath, tuple[bytes, bool]]
    foreign: dict[PurePosixPath, str]


def _existing(site_dir: Path) -> _Tree:
    tree = _Tree({}, {})
    try:
        top = site_dir.lstat()
    except FileNotFoundError:
        return tree
    rel_site = PurePosixPath(site_dir.name)
    if not stat.S_ISDIR(top.st_mode):
        tree.foreign[rel_site] = _kind(top.st_mode)
        return tree
    pending = [(site_dir, rel_site)]
    while pending:
        directory, rel_dir = pending.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                rel = rel_dir / entry.name
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    pending.append((Path(entry.path), rel))
                elif stat.S_ISREG(mode):
                    # What git records of a file: its content and the owner's execute bit
                    # (so a checkout under umask 002 or 000 is not "changed").
                    # Never follows a symlink or blocks on a FIFO swapped in meanwhile.
                    data, _mode = read_regular(entry.path, follow_symlinks=False)
                    tree.files[rel] = (data, bool(mode & stat.S_IXUSR))
                else:
                    tree.foreign[rel] = _kind(mode)
    return tree


def diff(root: Path, build: Build) -> Changes:
    """What `write` would change under `root/<site>/`."""
    try:
        old = _existing(root / build.site)
    except OSError as exc:
        raise OutputError(f"cannot read {root / build.site}: {exc.strerror or exc}") from exc
    added, changed = [], []
    for rel, out in build.files.items():
        if rel not in old.files:
            added.append(str(rel))
        elif old.files[rel] != (out.text.encode(), out.executable):
            changed.append(str(rel))
    removed = [str(rel) for rel in old.files if rel not in build.files]
    removed += [f"{rel} ({kind})" for rel, kind in old.foreign.items()]
    return Changes(tuple(sorted(added)), tuple(sorted(changed)), tuple(sorted(removed)))


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """Serialise writers of one output root (flock on the directory itself)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories; False where the kernel or libc cannot."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    rc = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    if ctypes.get_errno() in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(a))


def _stage(root: Path, build: Build) -> Path:
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{build.site}-", dir=root))
    try:
        for rel, out in build.files.items():
            target = staging / Path(*rel.parts[1:])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(out.text.encode())
            target.chmod(_mode(out))
        staging.chmod(0o755)
        for sub in staging.rglob("*"):
            if sub.is_dir():
                sub.chmod(0o755)
    except BaseException:  # a failed or interrupted run leaves no half-written tree behind
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return staging


def _cleanup_stale_staging(root: Path) -> None:
    for stale in root.glob(f"{STAGING_PREFIX}*"):
        shutil.rmtree(stale, ignore_errors=True)


def write(root: Path, build: Build) -> Changes:
    """Bring `root/<site>/` to exactly the rendered tree; returns what changed."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        with _locked(root):
            _cleanup_stale_staging(root)
            changes = diff(root, build)
            if not changes:
                return changes
            target = root / build.site
            if target.is_symlink() or (target.exists() and not target.is_dir()):
                raise OutputError(f"cannot write {target}: it exists and is not a directory; move it away")
            staging = _stage(root, build)
            try:
                if target.exists():
                    if not _exchange(staging, target):
                        old = staging.with_name(staging.name + "-old")
                        target.rename(old)
                        staging.rename(target)
                        staging = old
                else:
                    staging.rename(target)
                    return changes
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            return changes
    except OSError as exc:
        raise OutputError(f"cannot write {root / build.site}: {exc.strerror or exc}") from exc


def remove(root: Path, site: str, *, check: bool) -> Changes:
    """Delete `root/<site>/`, the output of a site that no fabric renders any more (with
    `check`, only say what would go)."""
    target = root / site
    tree = _existing(target)
    gone = Changes(removed=tuple(str(rel) for rel in sorted([*tree.files, *tree.foreign])))
    if check or not gone:
        return gone
    try:
        with _locked(root):
            if target.is_symlink() or not target.is_dir():
                raise OutputError(f"cannot remove {target}: it is not a directory; move it away")
            shutil.rmtree(target)
    except OSError as exc:
        raise OutputError(f"cannot remove {target}: {exc.strerror or exc}") from exc
    return gone
