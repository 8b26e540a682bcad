"""Writing a file that must be new: `fabricgen import`'s fabric.yaml.

The text goes to a temporary file beside the target, which is then linked to the target's
name: `link` fails when the name exists, so an existing file (or a link, or anything else of
that name) is never replaced, and no reader ever sees a half-written file. The temporary file
is removed on every path. The file is 0644 whatever the umask, like rendered output.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from fabricgen.errors import OutputError
from fabricgen.files.held_signals import held_signals


def exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def write_new(path: Path, text: str) -> None:
    """Create `path` holding `text`; OutputError if it exists or cannot be written."""
    if exists(path):
        raise OutputError(f"{path} exists; import writes only a new file: give another path (nothing written)")
    directory = path.parent if str(path.parent) else Path(".")
    with held_signals() as release:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {exc.strerror or exc} (nothing written)") from None
        try:
            release()
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
                out.write(text)
                out.flush()
                os.fchmod(out.fileno(), 0o644)
                os.fsync(out.fileno())
            try:
                os.link(temporary, path)
            except FileExistsError:
                raise OutputError(f"{path} exists; import writes only a new file: give another path "
                                  "(nothing written)") from None
            except OSError as exc:
                raise OutputError(f"cannot write {path}: {exc.strerror or exc} (nothing written)") from None
        finally:
            os.unlink(temporary)
