"""Reading a regular file without blocking, following a link only where asked, and within a size.

A FIFO swapped in for a fabric or an output file must not hang fabricgen, and a device such as
/dev/zero must never be read. Every reader of a file fabricgen did not just write goes through
`read_regular`: the fabric's reader, the output tree's walk and the fast path. Standard library
only: the fast path imports this module before anything else of fabricgen is loaded.
"""

from __future__ import annotations

import errno
import os
import stat

# A fabric of ten thousand zones is about 3 MB; anything larger is not a fabric, and
# parsing it would take minutes and gigabytes.
MAX_FABRIC_BYTES = 4 * 1024 * 1024


class NotRegularError(OSError):
    """The path names something other than a regular file; `mode` says what."""

    def __init__(self, path: str | os.PathLike[str], mode: int) -> None:
        super().__init__(errno.EINVAL, "not a regular file", os.fspath(path))
        self.mode = mode


class TooLargeError(OSError):
    """The file holds more than the limit it was read with."""

    def __init__(self, path: str | os.PathLike[str], limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {limit} bytes", os.fspath(path))
        self.limit = limit


def read_regular(path: str | os.PathLike[str], *, follow_symlinks: bool,
                 limit: int | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes and the status (taken before reading) of a regular file. Raises NotRegularError for anything else
    (a symlink too, unless `follow_symlinks`), TooLargeError past `limit` bytes, or the
    OSError of opening or reading it."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    fd = os.open(path, flags if follow_symlinks else flags | os.O_NOFOLLOW)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegularError(path, status.st_mode)
        chunks: list[bytes] = []
        size = 0
        while limit is None or size <= limit:
            chunk = os.read(fd, 1 << 20 if limit is None else min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if limit is not None and size > limit:
            raise TooLargeError(path, limit)
        return b"".join(chunks), status
    finally:
        os.close(fd)
