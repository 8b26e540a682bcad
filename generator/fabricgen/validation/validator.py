"""Validation: the schema step (pydantic) and the semantic rules, as located diagnostics."""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from ipaddress import IPv4Network
from typing import Any

from pydantic import BaseModel, ValidationError

from fabricgen.diagnostics import Diagnostic, Severity, format_path
from fabricgen.model import Fabric
from fabricgen.model.common import DNS_LABEL, DNS_SUBDOMAIN
from fabricgen.model.hosts import IFNAME
from fabricgen.source.reader import Source
from fabricgen.validation import rules


def _allowed_fields(model: type[BaseModel]) -> list[str]:
    return sorted(f.alias or name for name, f in model.model_fields.items())


def _members(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation may hold: one, or a tagged union's members."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in getattr(annotation, "__args__", ()) or () for m in _members(arg)]


def _tag(model: type[BaseModel]) -> str | None:
    """A tagged union member's tag: its `platform` literal (`consumers[]`)."""
    field = model.model_fields.get("platform")
    args: tuple[Any, ...] = tuple(getattr(field.annotation, "__args__", ())) if field is not None else ()
    tag = args[0] if len(args) == 1 else None
    return tag if isinstance(tag, str) else None


def _walk(loc: tuple[Any, ...]) -> tuple[tuple[Any, ...], type[BaseModel] | None]:
    """`loc` without the tags pydantic puts in it for a tagged union's member (`consumers[0]
    .openstack.name` is `consumers[0].name` in the file), and the model that holds its last field."""
    models: list[type[BaseModel]] = [Fabric]
    clean: list[Any] = []
    for index, part in enumerate(loc):
        if isinstance(part, int):
            clean.append(part)
            continue
        tagged = [m for m in models if _tag(m) == part]
        if len(models) > 1 and tagged:
            models = tagged
            continue
        clean.append(part)
        if index == len(loc) - 1:
            break
        if len(models) != 1:
            models = []
            continue
        field = next((f for n, f in models[0].model_fields.items() if (f.alias or n) == part), None)
        models = _members(field.annotation) if field is not None else []
    return tuple(clean), (models[0] if len(models) == 1 else None)


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class that holds the field at `loc`, to suggest allowed keys."""
    return _walk(loc)[1]


def _unwrap(annotation: Any) -> Any:
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _unwrap(arg)
        if isinstance(found, type) and issubclass(found, BaseModel):
            return found
    return annotation


def _item_model(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model of the items of the list field at `loc` (e.g. Ethernet for `ethernets`)."""
    model = _model_at(loc)
    if model is None:
        return None
    field = next((f for n, f in model.model_fields.items() if (f.alias or n) == loc[-1]), None)
    found = _unwrap(field.annotation) if field is not None else None
    return found if isinstance(found, type) and issubclass(found, BaseModel) else None


_FLOW_ITEM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,62}")


def _list_message(loc: tuple[Any, ...], value: Any) -> str:
    """A list field given something else; netplan writes ethernets and bridges as mappings."""
    if isinstance(value, dict):
        item = _item_model(loc)
        keys = [k for k in value if isinstance(k, str)]
        if item is not None and "name" in item.model_fields and keys:
            return (f"expected a list, found a mapping keyed by name; write one list item per entry, "
                    f"with the key as its name: '- name: {keys[0]}'")
        return "expected a list, found a mapping; write one '- ' item per entry"
    if isinstance(value, (str, int)) and not isinstance(value, bool) and _FLOW_ITEM.fullmatch(str(value)):
        return f"expected a list, found {_shown(value)}; write it as a list: [{value}]"
    return "expected a list; write one '- ' item per entry"


def _network_message(value: Any) -> str:
    """A CIDR that is not a network: name the network it lies in when it has host bits set."""
    base = f"{_shown(value)} is not an IPv4 network in CIDR form with no host bits set"
    if isinstance(value, str):
        try:
            network = IPv4Network(value.strip(), strict=False)
        except ValueError:
            network = None
        if network is not None and "/" in value:
            return f"{_shown(value)} has host bits set, but this field takes a network; did you mean {network}?"
    return f"{base}, e.g. 172.30.10.0/24"


_SHOWN = 80


def _shown(value: Any) -> str:
    """A value as messages quote it: repr (escapes every control character), cut short."""
    text = repr(value)
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}... ({len(text)} characters)"


def _message(error: Any) -> str:
    kind = error["type"]
    loc = tuple(error["loc"])
    if kind == "invalid_key":
        return (f"key {_shown(error.get('input'))} is not a field name: every key of a fabric is a "
                "string such as 'name'; fix or remove it")
    if kind == "extra_forbidden":
        model = _model_at(loc)
        key = str(loc[-1])
        if model is None:
            return f"unknown field {key!r}; remove it"
        allowed = _allowed_fields(model)
        close = difflib.get_close_matches(key, allowed, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return f"unknown field {key!r}; {hint}allowed fields: {', '.join(allowed)}"
    if kind == "missing":
        return f"required field {loc[-1]!r} is missing; add it"
    if kind == "string_pattern_mismatch":
        pattern = error.get("ctx", {}).get("pattern", "")
        if pattern in (DNS_LABEL, DNS_SUBDOMAIN):
            return (f"{_shown(error.get('input'))} is not a valid name: use lower-case letters, digits and '-', "
                    "starting and ending with a letter or digit")
        if pattern == IFNAME:
            return (f"{_shown(error.get('input'))} is not a Linux interface name: 1 to 15 letters, digits, "
                    "'.', '_' or '-', e.g. eth1.2000")
        return f"{_shown(error.get('input'))} does not have the expected form; it must match {pattern}"
    if kind == "ip_v4_network":
        return _network_message(error.get("input"))
    if kind == "list_type":
        return _list_message(loc, error.get("input"))
    if kind in ("ip_v4_address", "ip_v4_interface"):
        what = {"ip_v4_address": "an IPv4 address, e.g. 172.30.10.1",
                "ip_v4_interface": "an IPv4 address with prefix, e.g. 10.250.0.11/20"}[kind]
        return f"{_shown(error.get('input'))} is not {what}"
    if kind == "value_error":  # a model validator's own message, without pydantic's "Value error, "
        return str(error.get("ctx", {}).get("error", error["msg"]))
    if kind == "literal_error":
        expected = error.get("ctx", {}).get("expected", "")
        return f"{_shown(error.get('input'))} is not allowed; {_did_you_mean(error.get('input'), expected)}" \
               f"expected {expected}"
    if kind == "union_tag_invalid":  # a consumer's `platform`: pydantic names the tag it read
        ctx = error.get("ctx", {})
        expected = str(ctx.get("expected_tags", ""))
        return (f"{_shown(ctx.get('tag'))} is not allowed; {_did_you_mean(ctx.get('tag'), expected)}"
                f"expected one of {expected}")
    msg = str(error["msg"])
    return msg[0].lower() + msg[1:] if msg else kind


_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


def _did_you_mean(value: Any, expected: str) -> str:
    """`did you mean 'kube-ovn'? ` for a near miss among the quoted values pydantic lists."""
    allowed = _QUOTED.findall(expected)
    if len(allowed) < 2:  # "expected X" already says it
        return ""
    close = difflib.get_close_matches(value, allowed, n=1) if isinstance(value, str) else []
    if not close and isinstance(value, str):  # case or separators only: KubeOVN, kube_ovn
        folded = {re.sub(r"[^a-z0-9]", "", a.lower()): a for a in allowed}
        close = [folded[k] for k in (re.sub(r"[^a-z0-9]", "", value.lower()),) if k in folded]
    return f"did you mean {close[0]!r}? " if close else ""


def schema_diagnostics(exc: ValidationError, source: Source) -> list[Diagnostic]:
    out = []
    for error in exc.errors():
        loc = tuple(p for p in error["loc"] if isinstance(p, (str, int)))
        if error["type"] == "union_tag_invalid":  # point at the tag's value, not the whole item
            loc = (*loc, str(error.get("ctx", {}).get("discriminator", "")).strip("'"))
        else:
            loc = _walk(loc)[0]
        # pydantic reports tagged-union and function validators as extra segments;
        # `locate` keeps the deepest node that exists.
        value = error["type"] not in ("extra_forbidden", "missing", "invalid_key")
        if loc[-1:] == ("[key]",):  # pydantic's marker for a mapping key that failed validation
            loc, value = loc[:-1], False
        diagnostic = source.diagnostic(loc, _message(error), "FG003", value=value)
        at = getattr(error.get("ctx", {}).get("error"), "at", None)
        if isinstance(at, int) and isinstance(error.get("input"), str):
            diagnostic = replace(diagnostic, col=_column_in(source, diagnostic, error["input"], at))
        if error["type"] == "invalid_key":
            # The key is not a field name: show the mapping that holds it, not `[7]`.
            diagnostic = replace(diagnostic, path=format_path(loc[:-1]))
        out.append(diagnostic)
    return out


def _column_in(source: Source, diagnostic: Diagnostic, value: str, at: int) -> int:
    """The column of character `at` of a string value that starts at the diagnostic's position,
    where the file holds it on one line as written (plain or quoted, without escapes); else the
    value's own column."""
    lines = source.text.splitlines()
    if not 0 < diagnostic.line <= len(lines):
        return diagnostic.col
    line = lines[diagnostic.line - 1]
    start = diagnostic.col - 1 + (1 if line[diagnostic.col - 1:diagnostic.col] in ("'", '"') else 0)
    return start + at + 1 if line[start:start + len(value)] == value else diagnostic.col


def _rules_beside(source: Source, exc: ValidationError) -> list[Diagnostic]:
    """The semantic rules' errors on the rest of a fabric the schema refused, so that one run shows
    every problem that blocks it: each refused value is taken out (an optional field back to its default,
    else the list item that holds it), and what is left, if the schema now takes it, goes through
    the rules. A finding inside what was taken out, or naming a list item taken out, is left
    unsaid (it may be the refusal's echo), as is one about a list with items taken out, as a whole
    (an empty list); the paths of the rest are the file's. Nothing when the
    rest is still refused, or when the refusal is outside every list item and required."""
    data = _plain_copy(source.data)
    drops: dict[tuple[Any, ...], set[int]] = {}  # list path -> indexes taken out
    removed: list[tuple[Any, ...]] = []
    names: set[str] = set()
    for error in exc.errors():
        # the model from the loc with its union tags: without them a consumer's is not known
        loc, model = _walk(tuple(p for p in error["loc"] if isinstance(p, (str, int))))
        field = None
        if model is not None and loc and isinstance(loc[-1], str):
            field = next((f for n, f in model.model_fields.items() if (f.alias or n) == loc[-1]), None)
        if error["type"] == "extra_forbidden" or (field is not None and not field.is_required()
                                                   and error["type"] != "missing"):
            removed.append(loc)
            continue
        index = max((i for i, part in enumerate(loc) if isinstance(part, int)), default=None)
        if index is None:
            return []
        drops.setdefault(loc[:index], set()).add(int(loc[index]))
        removed.append(loc[:index + 1])
    for loc in removed:
        if loc and isinstance(loc[-1], str):  # a field back to its default; items go below
            _delete(data, loc)
    kept: dict[tuple[Any, ...], list[int]] = {}
    for path, indexes in sorted(drops.items(), key=lambda kv: len(kv[0]), reverse=True):
        items = _at(data, path)
        if not isinstance(items, list):
            return []
        kept[path] = [i for i in range(len(items)) if i not in indexes]
        for i in sorted(indexes, reverse=True):
            if i < len(items):
                item = items.pop(i)
                if isinstance(item, dict) and isinstance(item.get("name"), str):
                    names.add(item["name"])
    try:
        fabric = Fabric.model_validate(data)
    except ValidationError:
        return []
    out = []
    for finding in rules.run(fabric):
        if finding.severity != Severity.ERROR:  # warnings block nothing: the next run, once valid, says them
            continue
        path = _original(tuple(finding.path), kept)
        if any(path[:len(r)] == r for r in removed) or path in kept:  # a list with items taken out, as a whole
            continue
        if any(f"'{n}'" in finding.message for n in names):  # names are quoted in every rule's message
            continue
        out.append(source.diagnostic(path, finding.message, finding.code, severity=finding.severity))
    return sorted(out, key=lambda d: (d.line, d.col, d.code, d.message))


def _plain_copy(value: Any) -> Any:
    """A copy of loaded YAML as plain dicts and lists: `copy.deepcopy` of ruamel's round-trip nodes
    copies their comment and position attributes node by node, which grows with the square of the
    document (4,000 policy rules: two minutes)."""
    if isinstance(value, dict):
        return {key: _plain_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain_copy(item) for item in value]
    return value


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _delete(data: Any, loc: tuple[Any, ...]) -> None:
    parent = _at(data, loc[:-1])
    if isinstance(parent, dict) and loc and loc[-1] in parent:
        del parent[loc[-1]]


def _original(path: tuple[Any, ...], kept: dict[tuple[Any, ...], list[int]]) -> tuple[Any, ...]:
    """A path in the fabric with items taken out, as a path in the file."""
    out: list[Any] = []
    for part in path:
        if isinstance(part, int) and tuple(out) in kept and part < len(kept[tuple(out)]):
            part = kept[tuple(out)][part]
        out.append(part)
    return tuple(out)


def validate(source: Source) -> tuple[Fabric | None, list[Diagnostic]]:
    """Schema first; only a schema-valid fabric goes through the semantic rules."""
    if not isinstance(source.data, dict):
        return None, [source.diagnostic((), "expected a mapping with apiVersion, kind, metadata, "
                                        "interconnection and zones", "FG003")]
    try:
        fabric = Fabric.model_validate(source.data)
    except ValidationError as exc:
        return None, sorted([*schema_diagnostics(exc, source), *_rules_beside(source, exc)],
                            key=lambda d: (d.line, d.col, d.code, d.message))
    found = [
        source.diagnostic(f.path, f.message, f.code, severity=f.severity) for f in rules.run(fabric)
    ]
    return fabric, sorted(found, key=lambda d: (d.line, d.col, d.code, d.message))
