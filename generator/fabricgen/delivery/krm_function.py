"""The `FabricGenerator` KRM function: one zone's objects added to a ResourceList.

functionConfig (kind `FabricGenerator`, or the `ConfigMap` that
`kpt fn eval --exec ... -- zone=hq path=...` builds; same keys under `data`):

    apiVersion: fabricgen.io/v1alpha1
    kind: FabricGenerator
    metadata:
      name: lab-hq
      annotations:
        config.kubernetes.io/local-config: "true"
    spec:
      path: ../../sites/lab/fabric.yaml   # or `inline: |` with the fabric itself
      zone: hq                            # optional when the fabric has one zone
      outputDir: generated                # kpt: where new files go in the package

A relative `path` is resolved against the directory of the FabricGenerator
file under `kpt fn render` (kpt tells the package path), and against the
working directory otherwise: the kustomization directory under kustomize, the
current directory under `kpt fn eval`. Objects are named in messages and in
`fabricgen.io/source` relative to the repository root (the nearest directory
holding `.git`), as `fabricgen render` names them when run from that root.
Inline fabrics are named `fabric.yaml` (or `sourceName`), lines counted from
the first line of the inline text.

Every generated object carries `fabricgen.io/generated-by: FabricGenerator/<name>`;
items with that annotation are dropped from the input before the new ones are
added, so running the function again replaces its output instead of adding a
second copy.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from fabricgen import exit_codes
from fabricgen.delivery import resource_list as rl
from fabricgen.delivery.zone_selection import zone_build, zone_objects
from fabricgen.errors import FabricgenError, InvalidFabricError
from fabricgen.pipeline import load_text
from fabricgen.render.artifacts import KubeObject
from fabricgen.source import provenance
from fabricgen.source.reader import read, read_text

API_VERSION = "fabricgen.io/v1alpha1"
KIND = "FabricGenerator"
GENERATED_BY = "fabricgen.io/generated-by"
KEYS = ("path", "inline", "zone", "outputDir", "sourceName")
DEFAULT_OUTPUT_DIR = "generated"
ZONE_HINT = "set spec.zone in the FabricGenerator"


class FunctionConfigError(FabricgenError):
    """The functionConfig is missing, of the wrong kind, or has unknown or bad fields."""

    exit_code = exit_codes.USAGE


@dataclass(frozen=True)
class GeneratorConfig:
    name: str
    path: str | None
    inline: str | None
    zone: str | None
    output_dir: str
    source_name: str | None
    base: Path  # what a relative path is relative to
    file: str | None  # the FabricGenerator's own file, when kpt says

    @property
    def marker(self) -> str:
        return f"{KIND}/{self.name}"

    @property
    def ref(self) -> dict[str, str]:
        return {"apiVersion": API_VERSION, "kind": KIND, "name": self.name}


def read_config(function_config: Any, cwd: Path) -> GeneratorConfig:
    if not isinstance(function_config, Mapping):
        raise FunctionConfigError(f"no functionConfig; give a {KIND} ({API_VERSION})")
    kind = function_config.get("kind")
    if kind == KIND:
        if function_config.get("apiVersion") != API_VERSION:
            raise FunctionConfigError(f"{KIND} apiVersion must be {API_VERSION}")
        values = function_config.get("spec")
    elif kind == "ConfigMap":
        values = function_config.get("data")
    else:
        raise FunctionConfigError(f"functionConfig kind {kind!r}: expected {KIND} ({API_VERSION})")
    if not isinstance(values, Mapping):
        values = {}
    unknown = sorted(str(k) for k in values if k not in KEYS)
    if unknown:
        raise FunctionConfigError(f"unknown field(s) {', '.join(unknown)} in {kind}; "
                                  f"known: {', '.join(KEYS)}")
    spec = {k: _string(kind, k, values.get(k)) for k in KEYS}
    if (spec["path"] is None) == (spec["inline"] is None):
        raise FunctionConfigError(f"{kind} needs exactly one of path (a fabric file) or inline")
    output_dir = spec["outputDir"] if spec["outputDir"] is not None else DEFAULT_OUTPUT_DIR
    out = PurePosixPath(output_dir)
    if out.is_absolute() or ".." in out.parts:
        raise FunctionConfigError(f"outputDir {output_dir!r} must be a path inside the package")
    meta = function_config.get("metadata")
    name = str(meta.get("name") or "") if isinstance(meta, Mapping) else ""
    notes = rl.annotations_of(function_config)
    file = notes.get(rl.PATH) or notes.get(rl.LEGACY_PATH)
    base = cwd
    if notes.get(rl.PACKAGE_PATH):
        base = Path(str(notes[rl.PACKAGE_PATH])) / PurePosixPath(str(file or "x")).parent
    return GeneratorConfig(name=name or "fabricgen", path=spec["path"], inline=spec["inline"],
                           zone=spec["zone"], output_dir=output_dir, source_name=spec["sourceName"],
                           base=base, file=str(file) if file else None)


def _string(kind: object, key: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise FunctionConfigError(f"{kind} field {key} must be a non-empty string")
    return value if key == "inline" else value.strip()


def repository_name(path: Path) -> str:
    """The fabric's name relative to the repository root, as `fabricgen render` names it."""
    return provenance.source_name(path)


def generate(config: GeneratorConfig) -> tuple[list[dict[str, Any]], list[Any]]:
    """The zone's objects, annotated for kpt, and the warnings; raises on any error."""
    if config.inline is not None:
        name = config.source_name or "fabric.yaml"
        text = config.inline
    else:
        fabric_path = config.base / str(config.path)
        name = config.source_name or repository_name(fabric_path)
        try:
            text = read_text(fabric_path)
        except UnicodeDecodeError:  # the located FG000 that validate reports: an invalid fabric
            raise InvalidFabricError(read(fabric_path, name)[1]) from None
        except OSError as exc:
            raise FunctionConfigError(f"cannot read fabric {config.path!r} "
                                      f"(resolved to {fabric_path}): {exc}") from exc
    fabric, _source, warnings = load_text(text, name)
    build, zone = zone_build(fabric, name, config.zone, hint=ZONE_HINT)
    zone_objects(build, zone)  # refuses an empty zone
    out: list[dict[str, Any]] = []
    for manifest in build.manifests[zone]:
        path = str(PurePosixPath(config.output_dir) / manifest.filename)
        out.extend(_mark(obj, config.marker, path, index) for index, obj in enumerate(manifest.objects))
    return out, list(warnings)


def _mark(obj: KubeObject, marker: str, path: str, index: int) -> dict[str, Any]:
    item = copy.deepcopy(obj)
    notes = item.setdefault("metadata", {}).setdefault("annotations", {})
    notes[GENERATED_BY] = marker
    notes[rl.LEGACY_PATH] = path
    notes[rl.LEGACY_INDEX] = str(index)
    notes[rl.PATH] = path
    notes[rl.INDEX] = str(index)
    return item


def previous_output(item: Mapping[str, Any], config: GeneratorConfig) -> bool:
    return bool(rl.annotations_of(item).get(GENERATED_BY) == config.marker)
