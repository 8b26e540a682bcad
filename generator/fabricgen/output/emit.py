"""The only module that writes to the filesystem.

A fabric owns `<output root>/<site>/`. `write` compares the rendered tree with
what is there; when anything differs it builds the complete new tree in a
staging directory beside it and swaps the two (atomically with Linux
`renameat2(RENAME_EXCHANGE)`, else with two renames), so an interrupted or failed
run leaves the previous tree in place, and files of removed zones are gone. Files
that did not change enter the staging tree as hard links to the current ones
(`_reuse`): the new tree is still complete before the swap, at the cost of a link
rather than a new file.
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
    """What is under `<root>/<site>/`: regular files (content, status) and everything
    else that is neither a file nor a directory (symlinks, FIFOs...), which fabricgen
    never writes, never follows and removes."""

    files: dict[PurePosixPath, tuple[bytes, os.stat_result]]  # content, and status taken as it was read
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
                    # Never follows a symlink or blocks on a FIFO swapped in meanwhile.
                    tree.files[rel] = read_regular(entry.path, follow_symlinks=False)
                else:
                    tree.foreign[rel] = _kind(mode)
    return tree


def _same(current: tuple[bytes, os.stat_result], out: OutputFile) -> bool:
    """What git records of a file: its content and the owner's execute bit (so a checkout
    under umask 002 or 000 is not "changed")."""
    data, status = current
    return data == out.text.encode() and bool(status.st_mode & stat.S_IXUSR) == out.executable


def _read(root: Path, site: str) -> _Tree:
    try:
        return _existing(root / site)
    except OSError as exc:
        raise OutputError(f"cannot read {root / site}: {exc.strerror or exc}") from exc


def diff(root: Path, build: Build) -> Changes:
    """What `write` would change under `root/<site>/`."""
    return _changes(_read(root, build.site), build)


def _changes(old: _Tree, build: Build) -> Changes:
    added, changed = [], []
    for rel, out in build.files.items():
        if rel not in old.files:
            added.append(str(rel))
        elif not _same(old.files[rel], out):
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


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Create one file of the staging tree (never an existing one, never through a symlink)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)  # whatever the umask
    finally:
        os.close(fd)


def _reuse(old: _Tree, rel: PurePosixPath, source: Path, path: Path, data: bytes, mode: int) -> bool:
    """Hard-link an unchanged file of the current tree into the staging tree: creating a file
    costs far more than linking one on most filesystems, and a re-render usually changes
    few files. Only a file read as exactly these bytes, with exactly this mode, owned by
    whoever runs fabricgen (as a written file would be), and not modified since it was read
    (same inode, size and mtime) is linked; anything else, or a filesystem without hard
    links, is written afresh."""
    if rel not in old.files:
        return False
    current, seen = old.files[rel]
    if current != data or stat.S_IMODE(seen.st_mode) != mode or seen.st_uid != os.geteuid():
        return False
    try:
        os.link(source, path, follow_symlinks=False)
        now = path.lstat()
    except OSError:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return False
    if (now.st_ino, now.st_dev, now.st_size, now.st_mtime_ns) != (seen.st_ino, seen.st_dev, seen.st_size,
                                                                   seen.st_mtime_ns):
        path.unlink()  # replaced or edited after it was read: not the bytes compared
        return False
    return True


def _stage(root: Path, build: Build, old: _Tree) -> Path:
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{build.site}-", dir=root))
    site_dir = root / build.site
    try:
        os.chmod(staging, 0o755)
        made: set[PurePosixPath] = set()
        for rel, out in build.files.items():
            inner = PurePosixPath(*rel.parts[1:])
            for parent in reversed(inner.parents[:-1]):
                if parent not in made:
                    os.mkdir(staging / parent, 0o755)
                    os.chmod(staging / parent, 0o755)  # whatever the umask
                    made.add(parent)
            data, mode, target = out.text.encode(), _mode(out), staging / inner
            if not _reuse(old, rel, site_dir / inner, target, data, mode):
                _write_new(target, data, mode)
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
            old = _read(root, build.site)
            changes = _changes(old, build)
            if not changes:
                return changes
            target = root / build.site
            if target.is_symlink() or (target.exists() and not target.is_dir()):
                raise OutputError(f"cannot write {target}: it exists and is not a directory; move it away")
            staging = _stage(root, build, old)
            try:
                if target.exists():
                    if not _exchange(staging, target):
                        previous = staging.with_name(staging.name + "-old")
                        target.rename(previous)
                        staging.rename(target)
                        staging = previous
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
