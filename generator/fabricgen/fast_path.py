"""Answers from fabricgen's private cache when nothing changed, without loading the pipeline.

Pre-commit runs `fabricgen render` (or `render --all`) on every commit, and the Argo CD plugin
runs for every Application whenever its repository moves; most of the time neither the fabric
nor the output has changed. Loading pydantic, ruamel.yaml and jinja2 alone costs more than
`kubectl kustomize` of the committed output, so this module answers those runs from what
fabricgen itself recorded in its private cache (`fabricgen.output.private_cache`), with the
standard library only. Nothing in the repository is evidence: a committed file, or a list of
digests beside it, can be written by anyone.

- `render` and `render --check`: the render record of each site directory, which `render`
  wrote when it brought that directory to the rendered tree. The run is answered "up to date"
  only when the fabric's bytes, its source name and the digest of the running fabricgen code
  equal the record's, the fabric had no warnings, and the site directory holds exactly the
  recorded files (no file missing or extra, every one a regular file with the recorded
  SHA-256 and executable bit; no symlink or other special entry). A fresh clone (CI) has no
  record, so its first run is always the full pipeline.
- `argocd-generate`: what the plugin printed before for the same fabric bytes, source name,
  zone setting and code (`fabricgen.delivery.argocd_plugin.cache_key`); it never prints a
  file of the checkout.

Anything else (no record, an unreadable or non-canonical one, another fabricgen, a file
edited by hand) returns None, and the caller runs the full pipeline, which behaves exactly as
without a cache. `FABRICGEN_FAST_PATH=0` turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fabricgen.files.regular import MAX_FABRIC_BYTES, read_regular
from fabricgen.output import private_cache
from fabricgen.serialise import render_record

STAGING_PREFIX = ".fabricgen-staging-"  # fabricgen.output.emit's; a leftover one makes `render` clean up


def enabled(environ: Mapping[str, str]) -> bool:
    return environ.get("FABRICGEN_FAST_PATH", "1") != "0"


def _read_regular(path: str, limit: int | None = None) -> tuple[bytes, bool] | None:
    """A regular file's bytes and owner execute bit; None for anything else or any error."""
    try:
        data, status = read_regular(path, follow_symlinks=False, limit=limit)
    except OSError:
        return None
    return data, bool(status.st_mode & stat.S_IXUSR)


def _records(output: Path, environ: Mapping[str, str]) -> dict[str, tuple[str, str]] | None:
    """Per site directory under `output`: its real path and the text of its render record;
    None when a staging leftover is there."""
    found: dict[str, tuple[str, str]] = {}
    try:
        with os.scandir(output) as entries:
            listed = list(entries)
    except OSError:
        return found
    for entry in listed:
        if entry.name.startswith(STAGING_PREFIX):
            return None
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        path = os.path.realpath(entry.path)
        data = private_cache.read(environ, private_cache.RENDER, private_cache.key(path))
        if data is not None:
            try:
                found[entry.name] = (path, data.decode("ascii"))
            except UnicodeDecodeError:
                continue
    return found


def _match(records: Mapping[str, tuple[str, str]], source: str, fabric_sha256: str,
           code: str) -> tuple[str, dict[str, Any]] | None:
    """The site and record of the fabric: a canonical record of this format for its bytes, its
    source name and this code, with no warnings."""
    for site, (path, text) in records.items():
        if fabric_sha256 not in text:  # most records are another fabric's: skip parsing them
            continue
        try:
            doc = json.loads(text)
        except ValueError:
            continue
        if (isinstance(doc, dict) and doc.get("format") == render_record.FORMAT and doc.get("site") == site
                and doc.get("path") == path and doc.get("fabric") == {"source": source, "sha256": fabric_sha256}
                and doc.get("code") == code and doc.get("warnings") == 0 and render_record.dump(doc) == text):
            return site, doc
    return None


def _verify(site_dir: Path, doc: Mapping[str, Any]) -> bool:
    """Whether the site directory is exactly what the record lists."""
    files = doc.get("files")
    if not isinstance(files, dict):
        return False
    seen = 0
    pending = [(str(site_dir), "")]
    try:
        while pending:
            directory, rel = pending.pop()
            with os.scandir(directory) as entries:
                for entry in entries:
                    name = rel + entry.name
                    if entry.is_dir(follow_symlinks=False):
                        pending.append((entry.path, name + "/"))
                        continue
                    want = files.get(name)
                    if not isinstance(want, dict):
                        return False  # not recorded
                    read = _read_regular(entry.path)
                    if (read is None or hashlib.sha256(read[0]).hexdigest() != want.get("sha256")
                            or read[1] is not want.get("executable")):
                        return False  # not a regular file, other bytes or mode
                    seen += 1
    except OSError:
        return False
    return seen == len(files)


def render(*, fabrics: Sequence[Path], output: Path, check: bool, fmt: str, quiet: bool,
           all_tracked: bool = False) -> int | None:
    """`fabricgen render [--check] [--all]` when every fabric's output is verified current, else None."""
    if not enabled(os.environ):
        return None
    top = None
    if all_tracked:
        from fabricgen.output import git_index

        top = git_index.toplevel(Path.cwd())  # the full path would fail here the same way
        fabrics = git_index.fabrics(top)
    records = _records(output, os.environ)
    if not fabrics or not records:
        return None
    from fabricgen import report
    from fabricgen.source import provenance

    code = render_record.running_code_digest()
    sites: set[str] = set()
    for path in fabrics:
        read = _read_regular(str(path), MAX_FABRIC_BYTES)
        source = provenance.printable(provenance.source_name(path, output))
        found = None if read is None else _match(records, source, hashlib.sha256(read[0]).hexdigest(), code)
        if found is None or found[0] in sites:  # a second fabric for one site is FG004: the full path says so
            return None
        site, doc = found
        if not _verify(output / site, doc):
            return None
        sites.add(site)
    if top is not None:
        from fabricgen.output import git_index

        if any(site not in sites for site in git_index.sites(top, output)):
            return None  # a retired site to remove
    if report.resolve(fmt) == "json":
        sys.stdout.write(report.format_diagnostics((), fmt))
    if not quiet:
        sys.stderr.write(f"fabricgen: {output} is up to date\n")
    return 0


def argocd_generate(*, cwd: Path, environ: Mapping[str, str]) -> int | None:
    """What the plugin printed before for this fabric, zone setting and code, else None."""
    if not enabled(environ):
        return None
    from fabricgen.delivery import argocd_plugin

    settings = argocd_plugin.read_settings(environ)  # errors here are the full path's errors too
    root = argocd_plugin.checkout_root(cwd, environ)
    fabric_path = argocd_plugin.find_fabric(cwd, root, settings.fabric)
    name = argocd_plugin.source_name(fabric_path, root)
    read = _read_regular(str(fabric_path), MAX_FABRIC_BYTES)
    if read is None:
        return None
    entry = private_cache.read(environ, private_cache.ARGOCD, argocd_plugin.cache_key(name, read[0], settings.zone))
    cached = argocd_plugin.cached_output(entry)
    if cached is None:
        return None
    stdout, stderr = cached
    sys.stdout.write(stdout)
    sys.stderr.write(stderr)
    return 0
