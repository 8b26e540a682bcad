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


class RowsError(FabricgenError):
    """The text is not the JSON table output of an OVN ctl tool."""


Row = dict[str, Any]


def rows(text: str, name: str) -> list[Row]:
    """Every row of the table; raises RowsError naming `name` and what was expected."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RowsError(f"{name}: expected the JSON table of an OVN ctl tool (--format=json), "
                        f"line {exc.lineno}: {exc.msg}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("headings"), list) or not isinstance(doc.get("data"), list):
        raise RowsError(f"{name}: expected a JSON object with `headings` and `data` (--format=json)")
    headings = doc["headings"]
    out = []
    for number, data in enumerate(doc["data"], start=1):
        if not isinstance(data, list) or len(data) != len(headings):
            raise RowsError(f"{name}: row {number} has {len(data) if isinstance(data, list) else 'no'} cells "
                            f"for {len(headings)} columns")
        out.append({str(h): _value(cell, name) for h, cell in zip(headings, data, strict=True)})
    return out


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
