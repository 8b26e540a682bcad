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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from fabricgen.errors import OutputError
from fabricgen.files.regular import read_regular
from fabricgen.output import ownership, private_cache
from fabricgen.pipeline import Build, OutputFile
from fabricgen.serialise import render_record

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


class PartialWriteError(OutputError):
    """Some sites were written and the rest could not be, nor the written ones restored: `done`
    holds what changed in each written site, so that every written tree is reported."""

    def __init__(self, message: str, done: Sequence[Changes]) -> None:
        super().__init__(message)
        self.done = tuple(done)


@dataclass
class _Plan:
    """One site of a run: what is there, what changes, and (once staged) the new tree."""

    site: str
    old: _Tree
    changes: Changes
    build: Build | None  # None: a retired site, removed
    staging: Path | None = None  # the new tree until it is swapped in; then what it replaced

    def leftovers(self) -> list[Path]:
        """What the run deletes at its end, whether it succeeded or not (a path that is not
        there any more is skipped): the staging tree, or the tree it replaced."""
        if self.staging is None:
            return []
        return [self.staging, self.staging.with_name(self.staging.name + "-old")]


def _planned(root: Path, builds: Sequence[Build], retired: Sequence[str], inputs: Sequence[Path]) -> list[_Plan]:
    """Every site of the run with its changes; raises, naming each, when a site directory holds
    something the run must not replace or remove (`fabricgen.output.ownership`)."""
    plans = [_Plan(b.site, old, _changes(old, b), b) for b in builds for old in (_read(root, b.site),)]
    for site in retired:
        old = _read(root, site)
        gone = [*map(str, old.files), *(f"{rel} ({kind})" for rel, kind in old.foreign.items())]
        plans.append(_Plan(site, old, Changes(removed=tuple(sorted(gone))), None))
    refused: list[str] = []
    for item in plans:
        if not item.changes:
            continue
        removed = set(item.changes.removed)
        touched = [PurePosixPath(p) for p in item.changes.changed]
        touched += [rel for rel in item.old.files if str(rel) in removed] + list(item.old.foreign)
        files = {rel: data for rel, (data, _status) in item.old.files.items()}
        refused += ownership.problems(root, item.site, files, item.old.foreign, touched, inputs)
    if refused:
        raise OutputError("nothing written:" + "".join(f"\n  {line}" for line in refused))
    return plans


def check_all(root: Path, builds: Sequence[Build], retired: Sequence[str] = (), *,
              inputs: Sequence[Path] = ()) -> list[Changes]:
    """What `write_all` would change (and refuse) under `root`, writing nothing."""
    return [item.changes for item in _planned(root, builds, retired, inputs)]


def _swap(root: Path, item: _Plan) -> Callable[[], object]:
    """Put the staged tree of `item` in place (a retired site: move its tree aside, to be
    deleted); returns what undoes it."""
    target = root / item.site
    if item.build is None:
        item.staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{item.site}-", dir=root))
        aside = item.staging.with_name(item.staging.name + "-old")
        target.rename(aside)
        return lambda: aside.rename(target)
    staging = item.staging
    if staging is None:  # pragma: no cover - every changed build is staged before the swaps
        raise AssertionError(item.site)
    if not (target.exists() or target.is_symlink()):
        staging.rename(target)
        return lambda: target.rename(staging)
    if _exchange(staging, target):  # staging now holds the previous tree

        def exchange_back() -> None:
            if not _exchange(staging, target):
                raise OSError(errno.ENOTSUP, "cannot exchange the trees back", str(target))

        return exchange_back
    previous = staging.with_name(staging.name + "-old")
    target.rename(previous)
    try:
        staging.rename(target)
    except OSError:
        previous.rename(target)
        raise

    def rename_back() -> None:
        target.rename(staging)
        previous.rename(target)

    return rename_back


def _swap_all(root: Path, changed: Sequence[_Plan]) -> None:
    """Swap every staged tree in; when one fails, undo the swaps made before it."""
    undos: list[tuple[_Plan, Callable[[], object]]] = []
    for item in changed:
        try:
            undos.append((item, _swap(root, item)))
        except OSError as exc:
            failed = f"cannot write {root / item.site}: {exc.strerror or exc}"
            kept: list[_Plan] = []
            for earlier, undo in reversed(undos):
                try:
                    undo()
                except OSError:
                    kept.insert(0, earlier)
            if kept:
                raise PartialWriteError(f"{failed}; these sites were written and could not be restored: "
                                        + ", ".join(k.site for k in kept), [k.changes for k in kept]) from exc
            raise OutputError(f"{failed}; nothing written") from exc


def _record(root: Path, build: Build) -> None:
    """Keep the render record of `root/<site>/` in fabricgen's private cache."""
    if build.origin is None:
        return
    path = os.path.realpath(root / build.site)
    files = [(PurePosixPath(*rel.parts[1:]).as_posix(), out.text.encode(), out.executable)
             for rel, out in build.files.items()]
    text = render_record.text(path=path, site=build.site, source=build.plan.source_name,
                              fabric_sha256=build.origin.fabric_sha256, code=render_record.running_code_digest(),
                              warnings=build.origin.warnings, files=files)
    private_cache.write(os.environ, private_cache.RENDER, private_cache.key(path), text.encode())


def write_all(root: Path, builds: Sequence[Build], retired: Sequence[str] = (), *,
              inputs: Sequence[Path] = ()) -> list[Changes]:
    """Bring every `root/<site>/` of `builds` to exactly its rendered tree and remove the
    `retired` sites, all or none: every new tree is staged first, then all are swapped in, and
    a swap that fails undoes the ones before it. Refused before anything is touched when a
    site directory holds one of the `inputs` or a file git tracks that fabricgen did not write
    (`fabricgen.output.ownership`). Returns what changed, per build, then per retired site."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        with _locked(root):
            _cleanup_stale_staging(root)
            plans = _planned(root, builds, retired, inputs)
            changed = [item for item in plans if item.changes]
            try:
                for item in changed:
                    target = root / item.site
                    if target.is_symlink() or (target.exists() and not target.is_dir()):
                        raise OutputError(f"cannot write {target}: it exists and is not a directory; move it "
                                          "away; nothing written")
                    if target.exists() and not os.access(target, os.W_OK):
                        raise OutputError(f"cannot write {target}: permission denied; nothing written")
                    if item.build is not None:
                        item.staging = _stage(root, item.build, item.old)
                _swap_all(root, changed)
            finally:
                for item in changed:
                    for leftover in item.leftovers():
                        shutil.rmtree(leftover, ignore_errors=True)
            for build in builds:
                _record(root, build)
            return [item.changes for item in plans]
    except OSError as exc:
        raise OutputError(f"cannot write {exc.filename or root}: {exc.strerror or exc}; nothing written") from exc


def write(root: Path, build: Build) -> Changes:
    """Bring `root/<site>/` to exactly the rendered tree; returns what changed."""
    return write_all(root, [build])[0]
