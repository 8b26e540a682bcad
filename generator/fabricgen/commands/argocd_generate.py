"""`fabricgen argocd-generate`: the generate command of the Argo CD plugin.

Prints one zone's Kubernetes objects as a single YAML stream on stdout and
nothing else; messages go to stderr, short and located, because Argo CD shows
them in the UI. It reads the fabric and writes nothing, needs neither git nor
the network, and so is safe to run many times at once. See
`fabricgen.delivery.argocd_plugin` for how the zone and the fabric are chosen.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from fabricgen import exit_codes, report
from fabricgen.delivery import argocd_plugin
from fabricgen.delivery.zone_selection import zone_build, zone_objects
from fabricgen.errors import InvalidFabricError
from fabricgen.pipeline import load_text
from fabricgen.serialise.manifest_yaml import dump_all
from fabricgen.source.reader import read_text

MAX_ERRORS_SHOWN = 10
ZONE_HINT = "set the plugin parameter 'zone' (PARAM_ZONE) or env ZONE (ARGOCD_ENV_ZONE)"


def run(*, cwd: Path, environ: Mapping[str, str]) -> int:
    settings = argocd_plugin.read_settings(environ)
    root = argocd_plugin.checkout_root(cwd, environ)
    fabric_path = argocd_plugin.find_fabric(cwd, root, settings.fabric)
    name = argocd_plugin.source_name(fabric_path, root)
    try:
        fabric, _source, warnings = load_text(read_text(fabric_path), name)
    except InvalidFabricError as exc:
        _errors(exc)
        return exit_codes.INVALID
    except (OSError, UnicodeDecodeError) as exc:
        raise argocd_plugin.PluginSettingsError(f"{name}: cannot read: {exc}") from exc
    build, zone = zone_build(fabric, name, settings.zone, hint=ZONE_HINT)
    objects = zone_objects(build, zone)
    for warning in warnings:
        sys.stderr.write(report.text_line(warning) + "\n")
    sys.stdout.write(dump_all(objects))
    sys.stderr.write(f"fabricgen: {name}: zone {zone}: {len(objects)} object(s)\n")
    return 0


def _errors(exc: InvalidFabricError) -> None:
    errors = [d for d in exc.diagnostics if d.is_error]
    for d in errors[:MAX_ERRORS_SHOWN]:
        sys.stderr.write(report.text_line(d) + "\n")
    if len(errors) > MAX_ERRORS_SHOWN:
        sys.stderr.write(f"... and {len(errors) - MAX_ERRORS_SHOWN} more error(s)\n")
    sys.stderr.write(f"fabricgen: {report.summary(exc.diagnostics)}; no manifests generated\n")

