"""Answers from the stamp (`fabricgen.serialise.stamp`) when nothing changed, without loading the pipeline.

Pre-commit runs `fabricgen render --check` (or `render --all`) on every commit, and the
Argo CD plugin runs for every Application on every refresh; most of the time neither the
fabric nor the output has changed. Loading pydantic, ruamel.yaml and jinja2 alone costs
more than `kubectl kustomize` of the committed output, so this module answers those
runs from `<output>/<site>/.fabricgen.json` instead, with the standard library only.

It answers only when it can verify everything: the fabric's bytes, its source name and the
digest of the running fabricgen code equal the stamp's, the fabric had no warnings, and, for
`render`, the site directory holds exactly the stamped files (no file missing or extra, every
one a regular file with the stamped SHA-256 and executable bit; no symlink or other special
entry); for the plugin, every file it prints is a regular file with the stamped SHA-256
(the site's other files never reach its output). Anything else (no stamp, an unreadable or non-canonical stamp,
another fabricgen, a file edited by hand) returns None, and the caller runs the full
pipeline, which behaves exactly as without a stamp. `FABRICGEN_FAST_PATH=0` turns it off.
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

from fabricgen.regular_file import MAX_FABRIC_BYTES, read_regular
from fabricgen.serialise import stamp

STAGING_PREFIX = ".fabricgen-staging-"  # fabricgen.output.emit's; a leftover one makes `render` clean up
RENDERED = "rendered"  # where the plugin looks for the stamps: the default output root, at the repository root


def enabled(environ: Mapping[str, str]) -> bool:
    return environ.get("FABRICGEN_FAST_PATH", "1") != "0"


def _read_regular(path: str, limit: int | None = None) -> tuple[bytes, bool] | None:
    """A regular file's bytes and owner execute bit; None for anything else or any error."""
    try:
        data, status = read_regular(path, follow_symlinks=False, limit=limit)
    except OSError:
        return None
    return data, bool(status.st_mode & stat.S_IXUSR)


def _stamps(output: Path) -> dict[str, str] | None:
    """The text of every stamp under `output`, by site; None when a staging leftover is there."""
    found: dict[str, str] = {}
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
        read = _read_regular(os.path.join(entry.path, stamp.NAME))
        if read is not None:
            try:
                found[entry.name] = read[0].decode("ascii")
            except UnicodeDecodeError:
                continue
    return found


def _match(stamps: Mapping[str, str], source: str, fabric_sha256: str,
           code: str) -> tuple[str, dict[str, Any]] | None:
    """The site and stamp of the fabric: a canonical stamp of this format for its bytes, its
    source name and this code, with no warnings."""
    for site, text in stamps.items():
        if fabric_sha256 not in text:  # most stamps are another fabric's: skip parsing them
            continue
        try:
            doc = json.loads(text)
        except ValueError:
            continue
        if (isinstance(doc, dict) and doc.get("format") == stamp.FORMAT and doc.get("site") == site
                and doc.get("fabric") == {"source": source, "sha256": fabric_sha256}
                and doc.get("code") == code and doc.get("warnings") == 0 and stamp.dump(doc) == text):
            return site, doc
    return None


def _verify(site_dir: Path, doc: Mapping[str, Any], *, modes: bool) -> bool:
    """Whether the site directory is exactly what the stamp lists."""
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
                    if name == stamp.NAME:
                        continue
                    if _stamped_file(entry.path, files.get(name), modes=modes) is None:
                        return False  # not stamped, not a regular file, other bytes or mode
                    seen += 1
    except OSError:
        return False
    return seen == len(files)


def _stamped_file(path: str, want: Any, *, modes: bool) -> bytes | None:
    """The bytes of the file at `path` when `want` is its stamp entry and the file is a regular
    file with the stamped SHA-256 (and, with `modes`, the stamped execute bit)."""
    read = _read_regular(path) if isinstance(want, dict) else None
    if read is None or hashlib.sha256(read[0]).hexdigest() != want.get("sha256"):
        return None
    if modes and read[1] is not want.get("executable"):
        return None
    return read[0]


def _site_for(path: Path, source: str, stamps: Mapping[str, str], code: str) -> tuple[str, dict[str, Any]] | None:
    read = _read_regular(str(path), MAX_FABRIC_BYTES)
    if read is None:
        return None
    return _match(stamps, source, hashlib.sha256(read[0]).hexdigest(), code)


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
    stamps = _stamps(output)
    if not fabrics or not stamps:
        return None
    from fabricgen import report
    from fabricgen.source import provenance

    code = stamp.running_code_digest()
    sites: set[str] = set()
    for path in fabrics:
        found = _site_for(path, provenance.printable(provenance.source_name(path, output)), stamps, code)
        if found is None or found[0] in sites:  # a second fabric for one site is FG004: the full path says so
            return None
        site, doc = found
        if not _verify(output / site, doc, modes=True):
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
    """The plugin's output for one zone from the committed `rendered/<site>/`, else None."""
    if not enabled(environ):
        return None
    from fabricgen.delivery import argocd_plugin

    settings = argocd_plugin.read_settings(environ)  # errors here are the full path's errors too
    root = argocd_plugin.checkout_root(cwd, environ)
    fabric_path = argocd_plugin.find_fabric(cwd, root, settings.fabric)
    name = argocd_plugin.source_name(fabric_path, root)
    stamps = _stamps(root / RENDERED)
    if not stamps:
        return None
    from fabricgen.source.provenance import printable

    found = _site_for(fabric_path, printable(name), stamps, stamp.running_code_digest())
    if found is None:
        return None
    site, doc = found
    kubernetes = doc.get("kubernetes")
    if not isinstance(kubernetes, dict):
        return None
    zone = settings.zone
    if zone is None and len(kubernetes) == 1:
        zone = next(iter(kubernetes))
    entry = kubernetes.get(zone) if zone is not None else None
    if not isinstance(entry, dict) or not entry.get("objects") or not isinstance(entry.get("manifests"), list):
        return None  # no zone chosen, an unknown zone, or nothing to print: the full path explains
    paths = [f"{zone}/{m}" for m in entry["manifests"]]
    # Only the printed files are read: each must hold the stamped bytes, whatever else the
    # site holds (another zone's files do not reach this output), so one zone of a large site
    # costs what one zone costs. Argo CD's cmp-server unpacks every file 0644 unless the plugin
    # sets preserveFileMode (argo-cd util/io/files/tar.go `untar`): no mode is compared, and
    # none reaches the printed objects.
    files = doc.get("files")
    if not isinstance(files, dict):
        return None
    bodies = []
    for path in paths:
        data = _stamped_file(os.path.join(root, RENDERED, site, path), files.get(path), modes=False)
        body = None if data is None else _body(data)
        if body is None:
            return None
        bodies.append(body)
    sys.stdout.write("---\n".join(bodies))
    sys.stderr.write(f"fabricgen: {name}: zone {zone}: {entry['objects']} object(s)\n")
    return 0


def _body(data: bytes) -> str | None:
    """A manifest file's YAML stream without its comment header and the `---` after it."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    at = 0
    while text.startswith("#", at):
        end = text.find("\n", at)
        if end < 0:
            return None
        at = end + 1
    if not text.startswith("---\n", at):
        return None
    return text[at + 4:]

