"""The rows that `ovn-nbctl --format=json list TABLE` (and `find`, and ovn-sbctl, ovn-ic-nbctl,
ovn-ic-sbctl) print.

The output is one JSON object, `{"headings": [column, ...], "data": [[value, ...], ...]}`
(openvswitch/ovs `lib/table.c` `table_print_json`, the cells from `ovsdb_datum_to_json`): an
atom is a JSON string, number or boolean, or `["uuid", "..."]`; a set of other than one
element is `["set", [atom, ...]]` (one element is written as the atom itself); a map is
`["map", [[key, value], ...]]`. Rows come back as plain dicts: a uuid as its string, a set
as a list, a map as a dict; `as_list` reads a set column whichever way it was written.
"""

from __future__ import annotations

import json
from typing import Any

from fabricgen.errors import FabricgenError
from fabricgen.observe import json_bounds


class RowsError(FabricgenError):
    """The text is not the JSON table output of an OVN ctl tool."""


Row = dict[str, Any]


# What the columns fabricgen reads hold, in every OVN schema it reads them from (ovn-nb, ovn-sb,
# ovn-ic-nb, ovn-ic-sb `.ovsschema`): a cell of another kind is no output of OVN's tools, and
# is refused with its table, row and column, so that no reader is handed what it cannot use.
INTEGER, STRING, MAP, SET, UUID = "an integer", "a string", "a map", "a set", "a uuid"
COLUMNS: dict[str, str] = {
    "priority": INTEGER, "tunnel_key": INTEGER, "sb_cfg": INTEGER,
    "name": STRING, "ip_prefix": STRING, "nexthop": STRING, "match": STRING, "action": STRING,
    "direction": STRING, "hostname": STRING, "chassis_name": STRING, "route_table": STRING, "mac": STRING,
    "policy": STRING, "transit_switch": STRING,
    "external_ids": MAP, "options": MAP, "other_config": MAP,
    "networks": SET, "acls": SET, "ports": SET, "nexthops": SET, "static_routes": SET, "policies": SET,
    "gateway_chassis": SET,
    "_uuid": UUID,
}
MAX_DEPTH = 4  # a map of sets is the deepest an OVSDB cell goes


def rows(text: str, name: str) -> list[Row]:
    """Every row of the table; raises RowsError naming `name` and what was expected."""
    try:
        doc = json.loads(text, parse_int=json_bounds.parse_int, parse_constant=json_bounds.parse_constant)
    except json.JSONDecodeError as exc:
        raise RowsError(f"{name}: expected the JSON table of an OVN ctl tool (--format=json), "
                        f"line {exc.lineno}: {exc.msg}") from None
    except json_bounds.OddNumber as exc:
        raise RowsError(f"{name}: {exc}, which no OVSDB column holds (an integer is 64-bit)") from None
    except RecursionError:
        raise RowsError(f"{name}: nests too deeply for an OVSDB table") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("headings"), list) or not isinstance(doc.get("data"), list):
        raise RowsError(f"{name}: expected a JSON object with `headings` and `data` (--format=json)")
    headings = doc["headings"]
    out = []
    for number, data in enumerate(doc["data"], start=1):
        if not isinstance(data, list) or len(data) != len(headings):
            raise RowsError(f"{name}: row {number} has {len(data) if isinstance(data, list) else 'no'} cells "
                            f"for {len(headings)} columns")
        if json_bounds.deeper_than(data, MAX_DEPTH + 1):
            raise RowsError(f"{name}: row {number} nests deeper than an OVSDB cell")
        row = {str(h): _value(cell, name) for h, cell in zip(headings, data, strict=True)}
        for column, value in row.items():
            _check_kind(value, column, f"{name}: row {number}")
        out.append(row)
    return out


def _check_kind(value: Any, column: str, where: str) -> None:
    kind = COLUMNS.get(column)
    empty = value == []  # an optional column that is unset
    fits = {INTEGER: (isinstance(value, int) and not isinstance(value, bool)) or empty,
            STRING: isinstance(value, str) or empty,
            MAP: isinstance(value, dict) and all(not isinstance(v, dict | list) for v in value.values()),
            SET: isinstance(value, str | int) or (isinstance(value, list) and all(isinstance(v, str | int)
                                                                                  for v in value)),
            UUID: isinstance(value, str)}.get(kind or "", True)
    if not fits:
        shown = json.dumps(value, ensure_ascii=True)
        raise RowsError(f"{where}: column {column} holds {shown[:60]}{'...' if len(shown) > 60 else ''}, not {kind} "
                        "as OVN's schema has it; read it again with the OVN tools")


def _value(cell: Any, name: str) -> Any:
    if isinstance(cell, list):
        if len(cell) == 2 and cell[0] == "uuid" and isinstance(cell[1], str):
            return cell[1]
        if len(cell) == 2 and cell[0] == "set" and isinstance(cell[1], list):
            return [_value(atom, name) for atom in cell[1]]
        if len(cell) == 2 and cell[0] == "map" and isinstance(cell[1], list):
            return {str(_value(k, name)): _value(v, name) for k, v in cell[1]}
        raise RowsError(f"{name}: a cell is neither a uuid, a set nor a map: {json.dumps(cell)[:80]}")
    if isinstance(cell, (str, int, float, bool)):
        return cell
    raise RowsError(f"{name}: a cell is not an OVSDB value: {json.dumps(cell)[:80]}")


def as_list(value: Any) -> list[Any]:
    """A set column: the list it holds (one element is printed as the atom itself)."""
    return value if isinstance(value, list) else [value]


def as_map(value: Any) -> dict[str, Any]:
    """A map column (an empty map never comes back as anything but `{}`)."""
    return value if isinstance(value, dict) else {}
