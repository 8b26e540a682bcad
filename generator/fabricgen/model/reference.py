"""The fabric.yaml reference in Markdown, generated from the JSON schema (`model.schema`).

One source of truth: the schema is made from the models and their field docstrings, and this
page is made from the schema, so a field, its type, its default and its description are
written once, beside the model. Each object of the document gets a section named by its path
(`zones[].backbone`), with a table of its fields; a list of alternatives told apart by one
field (a consumer's `platform`) gets a section per alternative. `fabricgen schema --format
markdown -o docs/fabric-yaml.md` writes it, and the tests hold the committed page to it.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator, Mapping
from typing import Any

from fabricgen.model.schema import schema_text

INTRO = """\
# fabric.yaml reference

Generated from fabricgen's models by `fabricgen schema --format markdown -o docs/fabric-yaml.md`;
do not edit by hand. The same descriptions are in the JSON schema
(`fabricgen schema`, committed as `schemas/fabric.schema.json`), which editors read for
completion and checking. Fields are written as they appear in fabric.yaml; `a[].b` is field
`b` of every item of list `a`. A field without a default is required.

A fabric is versioned with `apiVersion: fabricgen.io/v1alpha1` and `kind: Fabric`.
`sites/lab/fabric.yaml` is a commented example that reproduces a four-site SUSE Virtualization
lab; read it first. `sites/nat/fabric.yaml` adds VPC NAT gateways; `sites/cloudstack/fabric.yaml`
and `sites/openstack-k8s/fabric.yaml` are OVN deployments with their hosts and platforms. Put
this modeline on the first line of a fabric (the path is relative to the fabric file) and editors
check it against the schema as you type (see
[The schema in your editor](repository.md#the-schema-in-your-editor)):

```yaml
# yaml-language-server: $schema=../../schemas/fabric.schema.json
```

The rules that check a fabric beyond its schema are in [Diagnostics](diagnostics.md); what each
section becomes in [Rendering](output.md), [Host output](host-output.md) and
[Delivery](delivery.md).
"""


def _ref(schema: Mapping[str, Any]) -> str | None:
    ref = schema.get("$ref")
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def _options(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The alternatives of an anyOf/oneOf, without `null` (shown as an optional field)."""
    items = schema.get("anyOf") or schema.get("oneOf") or []
    return [s for s in items if s.get("type") != "null"]


def _type(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> str:
    """A short, exact description of what a value may be."""
    name = _ref(schema)
    if name is not None:
        target = defs[name]
        return _type(target, defs) if "enum" in target or "const" in target else "object"
    options = _options(schema)
    if options:
        return " or ".join(dict.fromkeys(_type(option, defs) for option in options))
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return " | ".join(f"`{value}`" for value in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return f"list of {_type(schema.get('items', {}), defs)}"
    if kind == "object":
        extra = schema.get("additionalProperties")
        return f"map of {_type(extra, defs)}" if isinstance(extra, dict) and extra else "object"
    text = str(kind or "any")
    if "format" in schema:
        text += f" ({schema['format']})"
    bounds = [f"{sign} {schema[key]}" for key, sign in (("minimum", ">="), ("exclusiveMinimum", ">"),
                                                      ("maximum", "<="), ("exclusiveMaximum", "<"))
              if key in schema]
    bounds += [f"length {sign} {schema[key]}" for key, sign in (("minLength", ">="), ("maxLength", "<="))
               if key in schema]
    if "pattern" in schema:
        bounds.append(f"matching `{schema['pattern']}`")
    return f"{text}, {', '.join(bounds)}" if bounds else text


def _paragraph(text: str) -> str:
    """A description as a paragraph of lines of at most 100 characters."""
    return textwrap.fill(" ".join(text.split()), width=100, break_long_words=False,
                         break_on_hyphens=False) + "\n"


def _cell(text: str) -> str:
    """One table cell: no line breaks, no column separators."""
    return " ".join(text.split()).replace("|", "\\|")


def _default(prop: Mapping[str, Any]) -> str:
    if "default" not in prop:
        return "required"
    value = prop["default"]
    if value is None:
        return "none"
    if value in ([], {}):
        return "empty"
    text = json.dumps(value, sort_keys=True)
    return f"`{text}`" if len(text) <= 60 else "(see the description)"


def _children(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(suffix, definition name) of the objects a property holds: `x` for an object, `x[]` for a
    list of objects, `x.<key>` for a map of objects."""
    name = _ref(schema)
    if name is not None:
        return [] if "enum" in defs[name] else [("", name)]
    found: list[tuple[str, str]] = []
    for option in _options(schema):
        found += _children(option, defs)
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        found += [(f"[]{suffix}", n) for suffix, n in _children(schema["items"], defs)]
    extra = schema.get("additionalProperties")
    if schema.get("type") == "object" and isinstance(extra, dict):
        found += [(f".<key>{suffix}", n) for suffix, n in _children(extra, defs)]
    return found


def _variant(name: str, defs: Mapping[str, Any]) -> str:
    """`(platform: openstack)` for an alternative told apart by a constant field."""
    for field, prop in defs[name].get("properties", {}).items():
        if "const" in prop:
            return f" ({field}: {prop['const']})"
    return ""


def _sections(path: str, name: str, defs: Mapping[str, Any], seen: set[tuple[str, str]],
              variant: str = "") -> Iterator[str]:
    if (path, name) in seen:
        return
    seen.add((path, name))
    schema = defs[name]
    yield f"## `{path}`{variant}\n"
    if schema.get("description"):
        yield _paragraph(str(schema["description"]))
    rows = ["| field | type | default | description |", "| --- | --- | --- | --- |"]
    nested: list[tuple[str, str, str]] = []
    properties: Mapping[str, Any] = schema.get("properties", {})
    for field, prop in properties.items():
        rows.append(f"| `{field}` | {_cell(_type(prop, defs))} | {_cell(_default(prop))} | "
                    f"{_cell(str(prop.get('description', '')))} |")
        children = _children(prop, defs)
        alternatives = len({n for _s, n in children}) > 1
        for suffix, child in children:
            nested.append((f"{path}.{field}{suffix}", child, _variant(child, defs) if alternatives else ""))
    yield "\n".join(rows) + "\n"
    for child_path, child, child_variant in nested:
        yield from _sections(child_path, child, defs, seen, child_variant)


def markdown() -> str:
    """The reference page."""
    schema = json.loads(schema_text())
    defs: Mapping[str, Any] = schema["$defs"]
    root = {"properties": schema["properties"], "description": schema.get("description", "")}
    parts = [INTRO]
    rows = ["| field | type | default | description |", "| --- | --- | --- | --- |"]
    nested: list[tuple[str, str, str]] = []
    for field, prop in schema["properties"].items():
        rows.append(f"| `{field}` | {_cell(_type(prop, defs))} | {_cell(_default(prop))} | "
                    f"{_cell(str(prop.get('description', '')))} |")
        children = _children(prop, defs)
        alternatives = len({n for _s, n in children}) > 1
        nested += [(f"{field}{suffix}", child, _variant(child, defs) if alternatives else "")
                   for suffix, child in children]
    parts.append("## The document\n")
    if root["description"]:
        parts.append(_paragraph(str(root["description"])))
    parts.append("\n".join(rows) + "\n")
    seen: set[tuple[str, str]] = set()
    for path, name, variant in nested:
        parts.extend(_sections(path, name, defs, seen, variant))
    return "\n".join(parts)
