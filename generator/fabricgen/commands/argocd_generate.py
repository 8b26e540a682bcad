"""`fabricgen argocd-generate`: the generate command of the Argo CD plugin.

Prints one zone's Kubernetes objects as a single YAML stream on stdout and
nothing else; messages go to stderr, short and located, because Argo CD shows
them in the UI. It renders the zone from the fabric in this run; the only thing
it writes is its own entry in fabricgen's private cache (`fabricgen.output.private_cache`),
so that the same fabric at a later commit is answered without the pipeline
(`fabricgen.fast_path`). It needs neither git nor the network and is safe to run
many times at once. See `fabricgen.delivery.argocd_plugin` for how the zone and the
fabric are chosen.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from fabricgen import exit_codes, report
from fabricgen.delivery import argocd_plugin
from fabricgen.delivery.zone_selection import zone_build, zone_objects
from fabricgen.errors import InvalidFabricError
from fabricgen.output import private_cache
from fabricgen.pipeline import check
from fabricgen.serialise.manifest_yaml import dump_all
from fabricgen.source.reader import read

MAX_ERRORS_SHOWN = 10
ZONE_HINT = "set the plugin parameter 'zone' (PARAM_ZONE) or env ZONE (ARGOCD_ENV_ZONE)"


def run(*, cwd: Path, environ: Mapping[str, str]) -> int:
    settings = argocd_plugin.read_settings(environ)
    checkout = argocd_plugin.checkout_root(cwd, environ)
    fabric_path = argocd_plugin.find_fabric(cwd, checkout, settings.fabric)
    name = argocd_plugin.source_name(fabric_path, checkout)
    try:
        fabric, source, warnings = check(*read(fabric_path, name))
    except InvalidFabricError as exc:
        _errors(exc)
        return exit_codes.INVALID
    build, zone = zone_build(fabric, name, settings.zone, hint=ZONE_HINT)
    objects = zone_objects(build, zone)
    for warning in warnings:
        sys.stderr.write(report.text_line(warning) + "\n")
    stdout = dump_all(objects)
    summary = f"fabricgen: {name}: zone {zone}: {len(objects)} object(s)\n"
    sys.stdout.write(stdout)
    sys.stderr.write(summary)
    if not warnings:  # a fabric with warnings is always rendered, so that they are printed
        key = argocd_plugin.cache_key(name, source.text.encode(), settings.zone)
        private_cache.write(environ, private_cache.ARGOCD, key, argocd_plugin.cache_entry(stdout, summary))
    return 0


def _errors(exc: InvalidFabricError) -> None:
    errors = [d for d in exc.diagnostics if d.is_error]
    for d in errors[:MAX_ERRORS_SHOWN]:
        sys.stderr.write(report.text_line(d) + "\n")
    if len(errors) > MAX_ERRORS_SHOWN:
        sys.stderr.write(f"... and {len(errors) - MAX_ERRORS_SHOWN} more error(s)\n")
    sys.stderr.write(f"fabricgen: {report.summary(exc.diagnostics)}; no manifests generated\n")
