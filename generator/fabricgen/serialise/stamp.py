"""`<site>/.fabricgen.json`: what `fabricgen render` wrote for a site, and from what.

`render` writes the stamp beside the site's output (`fabricgen.pipeline.stamped`);
`fabricgen.fast_path` reads it to
tell, without loading the pipeline, that the output on disk is exactly what the same
fabric and the same fabricgen code would render. The stamp holds:

- `fabric`: the source name used in headers and `fabricgen.io/source` (printable, as
  `fabricgen.source.provenance.printable` writes it), and the SHA-256
  of the fabric file's bytes;
- `code`: the SHA-256 of fabricgen's own `.py` and `.j2` files (`code_digest`), computed at
  run time, so a code change without a version bump never trusts an old stamp; the
  versions of Python and of the libraries are left out, because the stamp must be the
  same bytes on every machine (`render --check` in CI compares it like any other file);
- `warnings`: how many warnings the fabric has (the fast path is taken only at 0, so
  it never has to repeat a diagnostic);
- `files`: every other file of the site with its SHA-256 and whether it is executable;
- `kubernetes`: per Kubernetes directory (zone or cluster), its manifest files in apply
  order and the number of objects they hold (what the Argo CD plugin prints).

Standard library only: the fast path imports this module.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

NAME = ".fabricgen.json"
FORMAT = 1
_CODE_SUFFIXES = (".py", ".j2")
_PACKAGE = Path(__file__).resolve().parent.parent  # the whole fabricgen package


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def code_digest(package: Path = _PACKAGE) -> str:
    """SHA-256 over the relative path and bytes of every `.py` and `.j2` file of the package."""
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
    """`code_digest` of the fabricgen that runs: computed once per process (render stamps every
    site with it, the fast path compares every stamp with it)."""
    return code_digest()


def text(*, site: str, source: str, fabric_sha256: str, code: str, warnings: int,
         files: Iterable[tuple[str, bytes, bool]], kubernetes: Mapping[str, tuple[Sequence[str], int]]) -> str:
    """The stamp's bytes: `files` are (path relative to the site, content, executable)."""
    doc: dict[str, Any] = {
        "format": FORMAT,
        "site": site,
        "fabric": {"source": source, "sha256": fabric_sha256},
        "code": code,
        "warnings": warnings,
        "files": {path: {"sha256": sha256(data), "executable": executable}
                  for path, data, executable in sorted(files)},
        "kubernetes": {directory: {"manifests": list(manifests), "objects": objects}
                       for directory, (manifests, objects) in kubernetes.items()},
    }
    return dump(doc)


def dump(doc: Mapping[str, Any]) -> str:
    """The one serialisation of a stamp; a stamp on disk in any other form is not trusted."""
    return json.dumps(doc, indent=1, ensure_ascii=True) + "\n"
