"""The KRM function wire format: a `ResourceList` in on stdin, one out on stdout.

Spec: kustomize `cmd/config/docs/api-conventions/functions-spec.md`. This is
the one place that reads and writes that format. Input items are kept as
ruamel.yaml round-trip nodes (quotes preserved) and written back by the same
round-trip dumper, so the comments, key order and quoting of the user's files survive a
`kpt fn render` (kpt writes back exactly what the function returns; JSON output
would turn every file into flow style). Generated objects are plain data.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from fabricgen.diagnostics import Diagnostic
from fabricgen.errors import FabricgenError
from fabricgen.serialise.roundtrip_yaml import round_trip

# A package fabricgen generates into holds one zone's objects and what the user keeps beside
# them; the round-trip reader and writer, which keep the user's comments and quoting, take
# about 2.5 s per MiB here, so a larger ResourceList is refused before it is parsed.
MAX_BYTES = 1024 * 1024
# Kubernetes objects nest a few dozen levels at most (a CRD's schema); deeper input is refused
# before the round-trip writer, which recurses once per level, could run out of stack.
MAX_DEPTH = 100

API_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1")
PATH = "internal.config.kubernetes.io/path"
INDEX = "internal.config.kubernetes.io/index"
LEGACY_PATH = "config.kubernetes.io/path"
LEGACY_INDEX = "config.kubernetes.io/index"
PACKAGE_PATH = "internal.config.kubernetes.io/package-path"


class ResourceListError(FabricgenError):
    """stdin is not a ResourceList."""


@dataclass
class ResourceList:
    api_version: str
    items: list[Any]
    function_config: Any
    results: list[dict[str, Any]] = field(default_factory=list)


def read_input(stdin: TextIO) -> str:
    """The text on stdin, refused past MAX_BYTES, the limit of a fabric file: the
    ResourceList carries the inline fabric, and a package that large is not one
    fabricgen generates into. Read as bytes where the stream has them, so the limit is
    the same count of bytes."""
    binary = getattr(stdin, "buffer", None)
    data = binary.read(MAX_BYTES + 1) if binary is not None else stdin.read(MAX_BYTES + 1).encode()
    if len(data) > MAX_BYTES:
        raise ResourceListError(f"<stdin>: the ResourceList is larger than {MAX_BYTES // (1024 * 1024)} MiB "
                                f"({MAX_BYTES} bytes), far more than a package fabricgen generates into; give "
                                "the fabric by path, or split the package")
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResourceListError(f"<stdin>: byte 0x{data[exc.start]:02x} is not UTF-8") from exc


def read(text: str) -> ResourceList:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        data = round_trip().load(text)
    except RecursionError:
        raise ResourceListError(_TOO_DEEP) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"<stdin>:{mark.line + 1}:{mark.column + 1}: " if mark else "<stdin>: "
        raise ResourceListError(f"{where}YAML syntax error: {exc.problem}") from exc
    except YAMLError as exc:
        raise ResourceListError(f"<stdin>: YAML error: {exc}") from exc
    if _depth(data) > MAX_DEPTH:
        raise ResourceListError(_TOO_DEEP)
    if not isinstance(data, Mapping) or data.get("kind") != "ResourceList":
        raise ResourceListError("stdin is not a ResourceList (kind: ResourceList); "
                                "run this through kpt or kustomize, not directly")
    api_version = data.get("apiVersion")
    if api_version not in API_VERSIONS:
        raise ResourceListError(f"unsupported ResourceList apiVersion {api_version!r}; "
                                f"expected one of {', '.join(API_VERSIONS)}")
    items = data.get("items")
    if items is None:
        items = []
    if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
        raise ResourceListError("ResourceList items must be a list of objects")
    return ResourceList(str(api_version), list(items), data.get("functionConfig"))


_TOO_DEEP = (f"<stdin>: the ResourceList nests deeper than {MAX_DEPTH} levels, far more than Kubernetes "
             "objects do; remove the deeply nested item from the package")


def _depth(data: Any) -> int:
    """How deep mappings and sequences nest in `data` (an iterative walk: no recursion)."""
    deepest = 0
    pending = [(data, 1)]
    seen: dict[int, int] = {}  # a node shared through aliases is walked once per depth it is met at
    while pending:
        node, depth = pending.pop()
        if seen.get(id(node), 0) >= depth:
            continue
        seen[id(node)] = depth
        if isinstance(node, Mapping):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        if depth <= MAX_DEPTH:
            pending.extend((child, depth + 1) for child in children)
    return deepest


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    found = meta.get("annotations") if isinstance(meta, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def diagnostic_result(d: Diagnostic, text: str) -> dict[str, Any]:
    return {"message": text, "severity": d.severity.value,
            "file": {"path": d.file}, "tags": {"code": d.code}}


def error_result(message: str, ref: Mapping[str, Any] | None, path: str | None) -> dict[str, Any]:
    result: dict[str, Any] = {"message": message, "severity": "error"}
    if ref:
        result["resourceRef"] = dict(ref)
    if path:
        result["file"] = {"path": path}
    return result


def _block_strings(value: Any) -> Any:
    """Multi-line strings of generated objects as `|` blocks, as in rendered files."""
    from ruamel.yaml.scalarstring import LiteralScalarString

    if isinstance(value, str) and "\n" in value:
        return LiteralScalarString(value)
    if isinstance(value, dict):
        return {k: _block_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_block_strings(v) for v in value]
    return value


def dump(resource_list: ResourceList, generated: list[dict[str, Any]]) -> str:
    doc: dict[str, Any] = {
        "apiVersion": resource_list.api_version,
        "kind": "ResourceList",
        "items": [*resource_list.items, *(_block_strings(g) for g in generated)],
    }
    if resource_list.results:
        doc["results"] = resource_list.results
    out = io.StringIO()
    round_trip().dump(doc, out)
    return out.getvalue()
