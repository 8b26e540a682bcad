"""fabricgen's private cache: what fabricgen itself wrote, kept where only its user can write.

Two kinds of entry, each a file named by the SHA-256 of what it answers for:

- `render/`: the render record of a site directory (`fabricgen.serialise.render_record`),
  keyed by the directory's real path; `render` writes it after it brought the directory to
  the rendered tree, the fast path reads it to answer `render` without the pipeline;
- `argocd/`: what the Argo CD plugin printed for one fabric (its bytes and source name), one
  zone setting and one fabricgen code digest (`fabricgen.delivery.argocd_plugin.cache_key`).

Nothing in the repository or the output tree is ever taken as evidence: anyone can commit
a file, and a file can describe itself as anything. An entry is trusted only in a cache
directory owned by the user who runs fabricgen, writable by nobody else and reached without
a symlink at its last step; each entry must be a regular file of that user, not writable by
others. Anything else is no entry, and the caller runs the full pipeline. Entries are
written atomically (a private temporary file renamed over the entry); a cache that cannot
be written is simply not written.

The directory is `$FABRICGEN_CACHE_DIR`, else `$XDG_CACHE_HOME/fabricgen`, else
`~/.cache/fabricgen`. Standard library only: the fast path imports this module.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

RENDER = "render"
ARGOCD = "argocd"
_MAX_ENTRY_BYTES = 64 * 1024 * 1024


def directory(environ: Mapping[str, str]) -> Path | None:
    """Where the cache lives, or None when no home or cache directory is known."""
    chosen = environ.get("FABRICGEN_CACHE_DIR")
    if chosen:
        return Path(chosen)
    xdg = environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "fabricgen"
    home = environ.get("HOME")
    if home and os.path.isabs(home):
        return Path(home) / ".cache" / "fabricgen"
    return None


def key(*parts: str) -> str:
    """The entry name for `parts`: SHA-256 of their length-prefixed concatenation."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogateescape")
        digest.update(f"{len(data)}:".encode())
        digest.update(data)
    return digest.hexdigest()


def _private(status: os.stat_result) -> bool:
    """Owned by whoever runs fabricgen and writable by nobody else."""
    return status.st_uid == os.geteuid() and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _trusted_dir(path: Path) -> bool:
    try:
        status = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(status.st_mode) and _private(status)


def read(environ: Mapping[str, str], kind: str, name: str) -> bytes | None:
    """The entry `kind/name`, or None when there is none or it cannot be trusted."""
    top = directory(environ)
    if top is None or not _trusted_dir(top) or not _trusted_dir(top / kind):
        return None
    try:
        fd = os.open(top / kind / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or not _private(status) or status.st_size > _MAX_ENTRY_BYTES:
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _ensure_dir(path: Path) -> bool:
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    return _trusted_dir(path)


def write(environ: Mapping[str, str], kind: str, name: str, data: bytes) -> bool:
    """Store `data` as the entry `kind/name`; False (and nothing stored) when the cache cannot
    be written or is not private."""
    top = directory(environ)
    if top is None:
        return False
    try:
        top.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not _ensure_dir(top) or not _ensure_dir(top / kind):
            return False
        target = top / kind / name
        temporary = target.with_name(f".{name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, 0o600)
        finally:
            os.close(fd)
        try:
            os.replace(temporary, target)
        except OSError:
            os.unlink(temporary)
            raise
    except OSError:
        return False
    return True
