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
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from fabricgen.errors import OutputError
from fabricgen.pipeline import Build, OutputFile

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


def _existing(site_dir: Path) -> dict[PurePosixPath, tuple[bytes, int]]:
    found: dict[PurePosixPath, tuple[bytes, int]] = {}
    if not site_dir.is_dir():
        return found
    for path in sorted(site_dir.rglob("*")):
        if path.is_file() and not path.is_symlink():
            rel = PurePosixPath(path.relative_to(site_dir.parent).as_posix())
            found[rel] = (path.read_bytes(), path.stat().st_mode & 0o777)
    return found


def diff(root: Path, build: Build) -> Changes:
    """What `write` would change under `root/<site>/`."""
    old = _existing(root / build.site)
    added, changed = [], []
    for rel, out in build.files.items():
        if rel not in old:
            added.append(str(rel))
        elif old[rel][0] != out.text.encode() or old[rel][1] != _mode(out):
            changed.append(str(rel))
    removed = [str(rel) for rel in old if rel not in build.files]
    return Changes(tuple(added), tuple(changed), tuple(removed))


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
    gone = Changes(removed=tuple(str(rel) for rel in _existing(target)))
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
