"""ovn-nbctl commands that create the rows a controller writes into a northbound DB, in one
transaction with others: a row is created under a name of its own (`--id=@NAME`, unique in the
process) and added to the row that holds it. Keys and values of map columns are written as JSON
strings, which ovn-nbctl reads as quoted strings: `external_ids:"neutron:security_group_id"="..."`
(a key may hold `:` or `/`)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping

_REFS = itertools.count()


def ref(kind: str) -> str:
    """A name of its own for a row created in a transaction (`@KIND<n>`)."""
    return f"@{kind}{next(_REFS)}"


def pairs(column: str, values: Mapping[str, str]) -> list[str]:
    """A map column's entries as ovn-nbctl arguments (`COLUMN:"KEY"="VALUE"`)."""
    return [f"{column}:{json.dumps(key)}={json.dumps(value)}" for key, value in values.items()]


def acl(table: str, holder: str, direction: str, priority: int, match: str, action: str, *, tier: int | None = None,
        external_ids: Mapping[str, str] | None = None, options: Mapping[str, str] | None = None,
        name: str | None = None) -> list[list[str]]:
    """An ACL created and added to a logical switch or port group (`table`, `holder`); `tier`
    only where the schema has ACL tiers (OVN 23.06 and later); `name`, the ACL's own name column."""
    row = ref("acl")
    return [[f"--id={row}", "create", "ACL", f"direction={direction}", f"priority={priority}",
             f"match={json.dumps(match)}", f"action={action}", *([f"tier={tier}"] if tier is not None else []),
             *([f"name={json.dumps(name)}"] if name is not None else []),
             *pairs("external_ids", external_ids or {}), *pairs("options", options or {})],
            ["add", table, holder, "acls", row]]
