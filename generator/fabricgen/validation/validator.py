"""Validation: the schema step (pydantic) and the semantic rules, as located diagnostics."""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from ipaddress import IPv4Network
from typing import Any

from pydantic import BaseModel, ValidationError

from fabricgen.diagnostics import Diagnostic, format_path
from fabricgen.model import Fabric
from fabricgen.model.common import DNS_LABEL, DNS_SUBDOMAIN
from fabricgen.model.hosts import IFNAME
from fabricgen.source.reader import Source
from fabricgen.validation import rules


def _allowed_fields(model: type[BaseModel]) -> list[str]:
    return sorted(f.alias or name for name, f in model.model_fields.items())


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class that holds the field at `loc`, to suggest allowed keys."""
    model: Any = Fabric
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        if field is None:
            return None
        model = _unwrap(field.annotation)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


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
        # pydantic reports tagged-union and function validators as extra segments;
        # `locate` keeps the deepest node that exists.
        value = error["type"] not in ("extra_forbidden", "missing", "invalid_key")
        if loc[-1:] == ("[key]",):  # pydantic's marker for a mapping key that failed validation
            loc, value = loc[:-1], False
        diagnostic = source.diagnostic(loc, _message(error), "FG003", value=value)
        if error["type"] == "invalid_key":
            # The key is not a field name: show the mapping that holds it, not `[7]`.
            diagnostic = replace(diagnostic, path=format_path(loc[:-1]))
        out.append(diagnostic)
    return out


def validate(source: Source) -> tuple[Fabric | None, list[Diagnostic]]:
    """Schema first; only a schema-valid fabric goes through the semantic rules."""
    if not isinstance(source.data, dict):
        return None, [source.diagnostic((), "expected a mapping with apiVersion, kind, metadata, "
                                        "interconnection and zones", "FG003")]
    try:
        fabric = Fabric.model_validate(source.data)
    except ValidationError as exc:
        return None, sorted(schema_diagnostics(exc, source))
    found = [
        source.diagnostic(f.path, f.message, f.code, severity=f.severity) for f in rules.run(fabric)
    ]
    return fabric, sorted(found, key=lambda d: (d.line, d.col, d.code, d.message))
