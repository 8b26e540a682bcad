"""The `_Server` database's `Database` table of one ovsdb-server, read over OVSDB.

Every ovsdb-server hosts `_Server` (openvswitch/ovs `ovsdb/_server.ovsschema`, kept up to
date by `ovsdb/ovsdb-server.c`): per database its model, whether it is connected to a majority of
its cluster, whether this server leads it, the cluster and server ids and the log index it exposes.
Kube-OVN's leader checker reads `leader` there; fabricgen reads it where no control socket
(`cluster/status`) can be reached.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fabricgen.live_text import escape
from fabricgen.observe import json_bounds
from fabricgen.observe.raft_status import RaftParseError

SERVER_COLUMNS = ("name", "model", "connected", "leader", "cid", "sid", "index")


@dataclass(frozen=True)
class ServerRow:
    """One row of the `_Server` database's `Database` table, as one server sees its database:
    `connected` (in contact with a majority), `leader` (this server leads), `index` (the log
    index exposed to clients); `cid`, `sid` and `index` are None for a standalone database."""

    name: str
    model: str
    connected: bool
    leader: bool
    cid: str | None
    sid: str | None
    index: int | None


def server_databases_argv(remote: str, *, ovsdb_client: str = "ovsdb-client", timeout: int = 10) -> list[str]:
    """The command whose output `parse_server_databases` reads:

        ovsdb-client --timeout=10 query REMOTE '["_Server",{"op":"select","table":"Database",
            "where":[],"columns":["name","model","connected","leader","cid","sid","index"]}]'

    `query` runs a read-only transaction and prints its JSON result; the `schema` column (the
    whole schema text) is left out. REMOTE is an OVSDB remote of the member, e.g. Kube-OVN's
    `unix:/var/run/ovn/ovnnb_db.sock` in its ovn-central pod."""
    query = ["_Server", {"op": "select", "table": "Database", "where": [], "columns": list(SERVER_COLUMNS)}]
    return [ovsdb_client, f"--timeout={timeout}", "query", remote, json.dumps(query, separators=(",", ":"))]


def parse_server_databases(text: str, name: str) -> dict[str, ServerRow]:
    """The rows `server_databases_argv` prints (`[{"rows": [...]}]`), by database name.
    Raises RaftParseError for anything else, e.g. `[{"error": ...}]` or an error message."""
    try:
        result = json.loads(text, parse_int=json_bounds.parse_int, parse_constant=json_bounds.parse_constant)
    except json.JSONDecodeError as exc:
        raise RaftParseError(name, exc.lineno, f"not the JSON result of `ovsdb-client query`: {exc.msg}") from None
    except json_bounds.OddNumber as exc:
        raise RaftParseError(name, 1, f"{exc}, which no `_Server` column holds") from None
    except RecursionError:
        raise RaftParseError(name, 1, "nests too deeply for the result of `ovsdb-client query`") from None
    if not (isinstance(result, list) and result and isinstance(result[0], dict)):
        raise RaftParseError(name, 1, "not the result of one `select` on the `_Server` database")
    if "rows" not in result[0]:
        # A failed transaction: `[{"error": ..., "details": ...}, null]` (RFC 7047 section 4.1.3).
        raise RaftParseError(name, 1, f"the `_Server` select failed: {result[0].get('error')!r} "
                                      f"{result[0].get('details', '')}".rstrip())
    rows: dict[str, ServerRow] = {}
    for row in result[0]["rows"]:
        try:
            parsed = ServerRow(name=_string(row["name"]), model=_string(row["model"]),
                               connected=_bool(row["connected"]), leader=_bool(row["leader"]),
                               cid=_optional_uuid(row["cid"]), sid=_optional_uuid(row["sid"]),
                               index=_optional_int(row["index"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise RaftParseError(name, 1, f"unexpected `Database` row {escape(repr(row))[:200]}: {exc}") from None
        rows[parsed.name] = parsed
    return rows


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected a boolean")
    return value


def _optional(value: Any) -> Any:
    """OVSDB's JSON for an optional column: the value, or `["set", []]` when empty."""
    if isinstance(value, list) and len(value) == 2 and value[0] == "set":
        if value[1]:
            raise ValueError("expected at most one value")
        return None
    return value


def _optional_uuid(value: Any) -> str | None:
    found = _optional(value)
    if found is None:
        return None
    if not (isinstance(found, list) and len(found) == 2 and found[0] == "uuid" and isinstance(found[1], str)):
        raise ValueError("expected a UUID")
    return found[1]


def _optional_int(value: Any) -> int | None:
    found = _optional(value)
    if found is not None and (not isinstance(found, int) or isinstance(found, bool)):
        raise ValueError("expected an integer")
    return found
