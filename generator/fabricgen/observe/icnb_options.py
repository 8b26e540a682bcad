"""Parsing `ovn-ic-nbctl get IC_NB_Global . options` (also `kubectl ko icnbctl ...`).

The command prints one OVSDB map in ovs-vsctl's syntax (openvswitch/ovs `lib/ovsdb-data.c`
`ovsdb_datum_to_string`, `ovsdb_atom_to_string`): `{}`, or `{key=value, key="value"}` with
`, ` between entries, where a string that is not a plain word (and `true`, `false`, a UUID) is
written as a JSON string. The output of `ovn-ic-nbctl list
IC_NB_Global` is accepted too: its `options : {...}` line is read. fabricgen needs
`vxlan_mode` from it (`IC_NB_Global` options, OVN 25.03 and later).
"""

from __future__ import annotations

import json
import re

from fabricgen.errors import FabricgenError


class OptionsParseError(FabricgenError):
    """The text is not an OVSDB map as ovn-ic-nbctl prints it."""


_LIST_LINE = re.compile(r"^options\s*:\s*(\{.*\})\s*$")
_WORD = re.compile(r"[^\s=,{}\"]+")


def parse(text: str, name: str = "<ovn-ic-nbctl get IC_NB_Global . options>") -> dict[str, str]:
    """The options map; raises OptionsParseError naming the file and what was expected."""
    body = text.strip()
    for line in text.splitlines():
        match = _LIST_LINE.match(line.strip())
        if match:
            body = match.group(1)
            break
    if not (body.startswith("{") and body.endswith("}")):
        raise OptionsParseError(f"{name}: expected the output of `ovn-ic-nbctl get IC_NB_Global . options` "
                                f"(a map such as {{vxlan_mode=\"true\"}} or {{}}), found {body[:60]!r}")
    inner, pos = body[1:-1], 0
    out: dict[str, str] = {}
    while True:
        pos = _skip(inner, pos)
        if pos >= len(inner):
            return out
        key, pos = _string(inner, pos, name)
        pos = _skip(inner, pos)
        if pos >= len(inner) or inner[pos] != "=":
            raise OptionsParseError(f"{name}: expected `=` after the key {key!r}")
        value, pos = _string(inner, _skip(inner, pos + 1), name)
        if key in out:
            raise OptionsParseError(f"{name}: the key {key!r} appears twice")
        out[key] = value
        pos = _skip(inner, pos)
        if pos < len(inner):
            if inner[pos] != ",":
                raise OptionsParseError(f"{name}: expected `,` between entries, found {inner[pos]!r}")
            pos += 1


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] == " ":
        pos += 1
    return pos


def _string(text: str, pos: int, name: str) -> tuple[str, int]:
    if pos < len(text) and text[pos] == '"':
        end = pos + 1
        while end < len(text) and text[end] != '"':
            end += 2 if text[end] == "\\" else 1
        if end >= len(text):
            raise OptionsParseError(f"{name}: a quoted string is not closed")
        try:
            value = json.loads(text[pos:end + 1])
        except ValueError:
            raise OptionsParseError(f"{name}: unreadable quoted string {text[pos:end + 1]!r}") from None
        return str(value), end + 1
    match = _WORD.match(text, pos)
    if match is None:
        raise OptionsParseError(f"{name}: expected a key or value at {text[pos:pos + 20]!r}")
    return match.group(), match.end()


def vxlan_mode(options: dict[str, str]) -> bool:
    """What ovn-ic reads: `smap_get_bool(options, "vxlan_mode", false)` (ovn-org/ovn `ic/ovn-ic.c`),
    true only for "true" in any case (openvswitch/ovs `lib/smap.c` `smap_get_bool`)."""
    return options.get("vxlan_mode", "").lower() == "true"
