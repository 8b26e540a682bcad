"""The render record: what `fabricgen render` wrote for a site, and from what.

`render` keeps one record per site directory in fabricgen's private cache
(`fabricgen.output.private_cache`), never in the output: a file in the repository could be
written by anyone, and a committed file is never evidence of its own correctness.
`fabricgen.fast_path` reads the record to tell, without loading the pipeline, that the
output on disk is exactly what fabricgen itself wrote from the same fabric with the same
code. The record holds:

- `path`: the real path of the site directory it describes;
- `fabric`: the source name used in headers and `fabricgen.io/source` (printable, as
  `fabricgen.source.provenance.printable` writes it), and the SHA-256 of the fabric file's
  bytes;
- `code`: the SHA-256 of fabricgen's own `.py`, `.j2` and `.lua` files (`code_digest`), computed at
  run time, so a code change without a version bump never trusts an old record;
- `warnings`: how many warnings the fabric has (the fast path is taken only at 0, so it
  never has to repeat a diagnostic);
- `files`: every file of the site with its SHA-256 and whether it is executable.

Standard library only: the fast path imports this module.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

FORMAT = 2
_CODE_SUFFIXES = (".py", ".j2", ".lua")
_PACKAGE = Path(__file__).resolve().parent.parent  # the whole fabricgen package


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def code_digest(package: Path = _PACKAGE) -> str:
    """SHA-256 over the relative path and bytes of every `.py`, `.j2` and `.lua` file of the package."""
    digest = hashlib.sha256()
    found: list[tuple[str, str]] = []
    pending = [(str(package), "")]
    while pending:
        directory, rel = pending.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        pending.append((entry.path, f"{rel}{entry.name}/"))
                elif entry.name.endswith(_CODE_SUFFIXES):
                    found.append((f"{rel}{entry.name}", entry.path))
    for rel_name, path in sorted(found):
        with open(path, "rb") as handle:
            data = handle.read()
        digest.update(f"{rel_name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


@cache
def running_code_digest() -> str:
    """`code_digest` of the fabricgen that runs: computed once per process (render records every
    site with it, the fast path compares every record with it)."""
    return code_digest()


def text(*, path: str, site: str, source: str, fabric_sha256: str, code: str, warnings: int,
         files: Iterable[tuple[str, bytes, bool]]) -> str:
    """The record's bytes: `files` are (path relative to the site, content, executable)."""
    doc: dict[str, Any] = {
        "format": FORMAT,
        "path": path,
        "site": site,
        "fabric": {"source": source, "sha256": fabric_sha256},
        "code": code,
        "warnings": warnings,
        "files": {rel: {"sha256": sha256(data), "executable": executable}
                  for rel, data, executable in sorted(files)},
    }
    return dump(doc)


def dump(doc: Mapping[str, Any]) -> str:
    """The one serialisation of a record; a record in any other form is not trusted."""
    return json.dumps(doc, indent=1, ensure_ascii=True) + "\n"
