"""What an Argo CD config-management plugin (CMP v2) invocation tells fabricgen.

The cmp-server runs `fabricgen argocd-generate` with the working directory set to
the Application's `spec.source.path` inside an unpacked copy of the repository
(usually without `.git`). Settings arrive as environment variables:

| setting | plugin parameter        | plugin env           | default                          |
| ------- | ----------------------- | -------------------- | -------------------------------- |
| zone    | `PARAM_ZONE`            | `ARGOCD_ENV_ZONE`    | the only zone, if there is one   |
| fabric  | `PARAM_FABRIC`          | `ARGOCD_ENV_FABRIC`  | nearest `fabric.yaml` walking up |

A parameter and an env entry for the same setting must agree when both are set;
a conflict is an error rather than a silent precedence rule, because picking
the wrong zone would sync one cluster's network into another. Every other
`PARAM_*` or `ARGOCD_ENV_*` variable is rejected: the Application uses one
plugin, so an unknown name is a typo.

`FABRIC` is relative to the repository root (the working directory minus
`ARGOCD_APP_SOURCE_PATH`) and must stay inside it. Standard library only (and the render
record's digests): the fast path imports this module.
"""

from __future__ import annotations

import difflib
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from fabricgen import exit_codes
from fabricgen.errors import FabricgenError
from fabricgen.serialise import render_record

SETTINGS = ("ZONE", "FABRIC")
PREFIXES = ("PARAM_", "ARGOCD_ENV_")
FABRIC_NAMES = ("fabric.yaml", "fabric.yml")


class PluginSettingsError(FabricgenError):
    """The Application's plugin settings are wrong: a typo, a conflict or a bad path."""

    exit_code = exit_codes.USAGE


@dataclass(frozen=True)
class PluginSettings:
    zone: str | None
    fabric: str | None


def read_settings(environ: Mapping[str, str]) -> PluginSettings:
    """The plugin settings from the environment; raises on unknown or conflicting names."""
    unknown: list[str] = []
    values: dict[str, dict[str, str]] = {name: {} for name in SETTINGS}
    for var, value in sorted(environ.items()):
        prefix = next((p for p in PREFIXES if var.startswith(p)), None)
        if prefix is None:
            continue
        name = var[len(prefix):]
        if name not in values:
            unknown.append(var)
        elif value.strip():
            values[name][var] = value.strip()
    if unknown:
        raise PluginSettingsError("; ".join(_unknown_message(var) for var in unknown))
    chosen: dict[str, str | None] = {}
    for name, found in values.items():
        distinct = set(found.values())
        if len(distinct) > 1:
            shown = ", ".join(f"{var}={value!r}" for var, value in found.items())
            raise PluginSettingsError(f"conflicting values for {name}: {shown}; set it once "
                                      "(plugin parameter or plugin env)")
        chosen[name] = distinct.pop() if distinct else None
    return PluginSettings(zone=chosen["ZONE"], fabric=chosen["FABRIC"])


def _unknown_message(var: str) -> str:
    prefix = next(p for p in PREFIXES if var.startswith(p))
    close = difflib.get_close_matches(var[len(prefix):], SETTINGS, n=1, cutoff=0.6)
    guess = f"did you mean {prefix}{close[0]}?" if close else f"known: {', '.join(SETTINGS)}"
    return f"unknown variable {var} ({guess})"


@dataclass(frozen=True)
class Checkout:
    """The part of the repository the plugin was sent: `root` on disk is the repository's
    directory `prefix` (empty: the repository root). Argo CD sends the whole repository,
    unless `reposerver.plugin.use.manifest.generate.paths` is set: then it sends only the
    deepest directory that holds the app path and its `manifest-generate-paths` (argo-cd
    `reposerver/repository/utils.go` `getApplicationRootPath`), and the working directory is
    that directory's copy of the app path (`util/cmp/stream.go`, `cmpserver/plugin/plugin.go`)."""

    root: Path
    prefix: PurePosixPath = field(default_factory=PurePosixPath)

    def name(self, path: Path) -> str:
        """A file's path relative to the repository root, as `fabricgen render` names it."""
        rel = path.resolve().relative_to(self.root.resolve())
        return (self.prefix / rel.as_posix()).as_posix()

    def path(self, name: str) -> Path | None:
        """The file at repository path `name`, or None when it is outside what was sent."""
        try:
            rel = PurePosixPath(name).relative_to(self.prefix)
        except ValueError:
            return None
        return self.root / rel


def checkout_root(cwd: Path, environ: Mapping[str, str]) -> Checkout:
    """What of the repository the working directory belongs to.

    Under Argo CD, the working directory is the app path `ARGOCD_APP_SOURCE_PATH` inside
    what was sent: the whole repository (the working directory ends with the app path), or
    a directory of it that holds the app path (it ends with the app path's last parts, or
    is that directory itself). Outside Argo CD (no such variable) the root is the nearest
    directory holding `.git`, else the working directory itself.
    """
    source_path = environ.get("ARGOCD_APP_SOURCE_PATH")
    if source_path is not None:
        parts = [p for p in PurePosixPath(source_path).parts if p not in ("", ".", "/")]
        if ".." in parts:
            raise PluginSettingsError(f"ARGOCD_APP_SOURCE_PATH={source_path!r} leaves the repository")
        sent = next((k for k in range(min(len(parts), len(cwd.parts) - 1), 0, -1)
                     if list(cwd.parts[-k:]) == parts[-k:]), 0)
        root = Path(*cwd.parts[: len(cwd.parts) - sent])
        return Checkout(root, PurePosixPath(*parts[: len(parts) - sent]))
    for candidate in (cwd, *cwd.parents):
        if (candidate / ".git").exists():
            return Checkout(candidate)
    return Checkout(cwd)


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _usable(path: Path, checkout: Checkout, shown: str) -> Path:
    """`path` when it is, or links within the checkout to, a regular file; raises otherwise:
    a fabric that is present but unusable is never passed over for another one."""
    try:
        resolved = path.resolve()
    except (RuntimeError, OSError):  # RuntimeError: a symlink loop (pathlib before Python 3.13)
        raise PluginSettingsError(f"{shown} is a symlink loop; point it at the fabric file or replace it "
                                  "with the fabric itself") from None
    if not resolved.is_relative_to(checkout.root.resolve()):
        raise PluginSettingsError(f"{shown} is a symlink to {resolved}, outside the repository; "
                                  "the plugin reads only the repository's own files")
    try:
        mode = os.stat(resolved).st_mode
    except FileNotFoundError:
        raise PluginSettingsError(f"{shown} is a dangling symlink; point it at the fabric file or "
                                  "replace it with the fabric itself") from None
    except OSError as exc:
        raise PluginSettingsError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise PluginSettingsError(f"{shown} is {kind}, not a fabric file")
    return path


def find_fabric(cwd: Path, checkout: Checkout, fabric: str | None) -> Path:
    """The fabric file: `fabric` (relative to the repository root) or the nearest one walking
    up from `cwd` to the top of the checkout. The first `fabric.yaml` (or `.yml`) found in any
    form is the one: a dangling symlink, a directory or a FIFO there is an error, never a
    reason to walk on to a parent site's fabric."""
    if fabric is not None:
        if PurePosixPath(fabric).is_absolute():
            raise PluginSettingsError(f"FABRIC={fabric!r} must be relative to the repository root")
        clean = os.path.normpath(fabric)
        if clean == ".." or clean.startswith("../"):
            raise PluginSettingsError(f"FABRIC={fabric!r} points outside the repository")
        path = checkout.path(clean)
        if path is None:
            raise PluginSettingsError(
                f"FABRIC={fabric!r} is outside the files Argo CD sent the plugin ({checkout.prefix}/); with "
                "reposerver.plugin.use.manifest.generate.paths, add its directory to the Application's "
                "argocd.argoproj.io/manifest-generate-paths")
        if not os.path.lexists(path):
            raise PluginSettingsError(f"FABRIC={fabric!r}: no such file in the repository")
        return _usable(path, checkout, f"FABRIC={fabric!r}")
    top = checkout.root.resolve()
    for directory in (cwd, *cwd.parents):
        for name in FABRIC_NAMES:
            candidate = directory / name
            if os.path.lexists(candidate):
                return _usable(candidate, checkout, checkout.name(candidate.parent) + "/" + name
                               if directory.resolve().is_relative_to(top) else str(candidate))
        if directory.resolve() == top:
            break
    raise PluginSettingsError(
        f"no fabric.yaml in {cwd} or above it up to the repository root; "
        "set the plugin parameter 'fabric' (PARAM_FABRIC) or env FABRIC (ARGOCD_ENV_FABRIC)")


def source_name(fabric: Path, checkout: Checkout) -> str:
    """How the fabric is named in messages and in `fabricgen.io/source`: relative to the root."""
    try:
        return checkout.name(fabric)
    except ValueError:
        return fabric.as_posix()


CACHE_FORMAT = 1


def cache_key(name: str, fabric: bytes, zone: str | None) -> str:
    """The name of the plugin's entry in fabricgen's private cache (`fabricgen.output.private_cache`):
    one per fabric source name and bytes, zone setting and fabricgen code."""
    parts = [CACHE_FORMAT, render_record.running_code_digest(), name, render_record.sha256(fabric), zone or ""]
    return render_record.sha256(json.dumps(parts, ensure_ascii=True).encode())


def cache_entry(stdout: str, stderr: str) -> bytes:
    """What the plugin printed, as its cache entry holds it."""
    return json.dumps({"stdout": stdout, "stderr": stderr}, ensure_ascii=True).encode()


def cached_output(entry: bytes | None) -> tuple[str, str] | None:
    """The stdout and stderr of a cache entry; None for no entry or one of another form."""
    if entry is None:
        return None
    try:
        doc = json.loads(entry)
    except ValueError:
        return None
    if not isinstance(doc, dict) or set(doc) != {"stdout", "stderr"}:
        return None
    stdout, stderr = doc["stdout"], doc["stderr"]
    if not isinstance(stdout, str) or not isinstance(stderr, str) or not stdout:
        return None
    return stdout, stderr
