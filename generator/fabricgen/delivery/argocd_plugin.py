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
`ARGOCD_APP_SOURCE_PATH`) and must stay inside it.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from fabricgen import exit_codes
from fabricgen.errors import FabricgenError

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


def checkout_root(cwd: Path, environ: Mapping[str, str]) -> Path:
    """The repository root: the working directory minus `ARGOCD_APP_SOURCE_PATH`.

    Outside Argo CD (no such variable) it is the nearest directory holding `.git`,
    else the working directory itself.
    """
    source_path = environ.get("ARGOCD_APP_SOURCE_PATH")
    if source_path is not None:
        parts = [p for p in PurePosixPath(source_path).parts if p not in ("", ".", "/")]
        if not parts:
            return cwd
        if list(cwd.parts[-len(parts):]) != parts:
            raise PluginSettingsError(
                f"working directory {cwd} does not end with ARGOCD_APP_SOURCE_PATH={source_path!r}")
        return Path(*cwd.parts[: -len(parts)])
    for candidate in (cwd, *cwd.parents):
        if (candidate / ".git").exists():
            return candidate
    return cwd


def find_fabric(cwd: Path, root: Path, fabric: str | None) -> Path:
    """The fabric file: `fabric` (relative to `root`) or the nearest one walking up from `cwd`."""
    if fabric is not None:
        if PurePosixPath(fabric).is_absolute():
            raise PluginSettingsError(f"FABRIC={fabric!r} must be relative to the repository root")
        path = (root / fabric).resolve()
        if not path.is_relative_to(root.resolve()):
            raise PluginSettingsError(f"FABRIC={fabric!r} points outside the repository")
        if not path.is_file():
            raise PluginSettingsError(f"FABRIC={fabric!r}: no such file in the repository")
        return path
    for directory in (cwd, *cwd.parents):
        for name in FABRIC_NAMES:
            if (directory / name).is_file():
                return directory / name
        if directory == root:
            break
    raise PluginSettingsError(
        f"no fabric.yaml in {cwd} or above it up to the repository root; "
        "set the plugin parameter 'fabric' (PARAM_FABRIC) or env FABRIC (ARGOCD_ENV_FABRIC)")


def source_name(fabric: Path, root: Path) -> str:
    """How the fabric is named in messages and in `fabricgen.io/source`: relative to the root."""
    try:
        return fabric.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return fabric.as_posix()
