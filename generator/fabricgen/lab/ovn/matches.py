"""OVN's own expression parser, asked about matches: the judge of every ACL and policy match
fabricgen accepts or renders, wherever the OVN programs are installed.

ovn-northd and ovn-controller parse a match with `expr_parse_string` (ovn-org/ovn `lib/expr.c`)
against the symbol table of `lib/logical-fields.c`, the SB's address sets and the port groups of
the match's datapath; a match that does not parse is skipped with a log line, so an ACL that
does not parse is a rule that silently does not exist. `ovn-trace` parses every logical flow of
its SB with the same parser and the same symbol table when it starts, and logs
`MATCH: parsing expression failed (WHY)` for each that does not parse (`ovntrace` `read_flows`).
So: one throwaway ovsdb-server with the SB schema, one datapath, the address sets and port
groups declared (a port group's SB name is `<datapath tunnel key>_<name>`, as northd writes
it), one logical flow per match, and one `ovn-trace` run: every match's verdict from OVN itself.
A sentinel match OVN must refuse proves that it read the flows.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fabricgen.lab.ovn.programs import Programs
from fabricgen.lab.ovn.running import SandboxError, run

DATAPATH = "fabricgen-matches"
TUNNEL_KEY = 1
SENTINEL = "fabricgen_no_such_field"  # a match OVN must refuse, or it parsed nothing
CHUNK_BYTES = 64 * 1024  # one transaction's JSON is a command-line argument: well below the limit
_FAILED = re.compile(r"\|ovntrace\|WARN\|(?P<match>.*): parsing expression failed \((?P<why>.*)\)$")


@dataclass(frozen=True)
class Verdicts:
    """What OVN said of each match: None where it parses, else OVN's own words."""

    refused: Mapping[str, str]
    judged: tuple[str, ...]
    ovn_version: str

    def of(self, match: str) -> str | None:
        return self.refused.get(match)


def judge(matches: Iterable[str], *, address_sets: Mapping[str, Sequence[str]] | None = None,
          port_groups: Iterable[str] = (), programs: Programs | None = None) -> Verdicts:
    """Every match (as a logical flow of one datapath) through OVN's parser. Address sets are
    declared with their addresses, port groups as names (one port each: their members do not
    change whether a match parses)."""
    programs = programs or Programs.from_environment()
    wanted = tuple(dict.fromkeys(matches))
    lines = [SENTINEL, *dict.fromkeys(_one_line(m) for m in wanted if "\x00" not in m)]
    env = {"PATH": programs.search_path()}
    with tempfile.TemporaryDirectory(prefix="fabricgen-matches-") as tmp:
        directory = Path(tmp)
        db, sock, ctl = directory / "sb.db", directory / "sb.sock", directory / "sb.ctl"
        run(["ovsdb-tool", "create", str(db), str(programs.ovn_schemas / "ovn-sb.ovsschema")], env=env)
        run(["ovsdb-server", "--detach", f"--pidfile={directory / 'sb.pid'}", f"--remote=punix:{sock}",
             f"--unixctl={ctl}", f"--log-file={directory / 'sb.log'}", str(db)], env=env)
        try:
            remote = f"unix:{sock}"
            answer = run(["ovsdb-client", "transact", remote,
                          json.dumps(["OVN_Southbound", *_declarations(address_sets or {}, port_groups)])], env=env)
            datapath = json.loads(answer)[0]["uuid"]
            plain = [line for line in lines if _echoed(line)]
            said = _refused(remote, env, datapath, plain)
            refused = {m: said[_one_line(m)] for m in wanted if _one_line(m) in said}
            # Matches OVS's log does not echo byte for byte (a control, a non-ASCII byte) are asked
            # in groups beside the sentinel and counted: a group whose every match is refused is
            # done, one with none too, and a mixed one is split until each is known.
            odd = [m for m in wanted if not _echoed(_one_line(m)) and "\x00" not in m]
            refused |= _counted(lambda group: _refused(remote, env, datapath, [SENTINEL, *map(_one_line, group)]),
                                    odd)
            refused |= {m: "OVSDB holds no NUL byte in a string: no controller can write this match"
                        for m in wanted if "\x00" in m}
        finally:
            run(["ovs-appctl", "-t", str(ctl), "exit"], env=env, check=False)
    return Verdicts(refused, wanted, programs.versions()[0])


def _counted(ask: Callable[[Sequence[str]], dict[str, str]], matches: Sequence[str]) -> dict[str, str]:
    """Which of `matches` OVN refuses, from how many refusals each group draws (the sentinel's
    aside): all or none settle a group; a mixed one is halved."""
    if not matches:
        return {}
    said = ask(matches)
    reasons = [why for text, why in said.items() if text != SENTINEL]
    if not reasons:
        return {}
    if len(reasons) >= len(matches):
        return dict.fromkeys(matches, reasons[0])  # each refused; the words of one of them
    if len(matches) == 1:
        return {matches[0]: reasons[0]}
    half = len(matches) // 2
    return _counted(ask, matches[:half]) | _counted(ask, matches[half:])


def _echoed(line: str) -> bool:
    """Whether the log line of a refusal holds the match as it is: printable ASCII only."""
    return line.isascii() and line.isprintable()


def _refused(remote: str, env: dict[str, str], datapath: list[str], matches: Sequence[str]) -> dict[str, str]:
    """The flows of the SB replaced by `matches` (the sentinel first), ovn-trace run once, and
    what it refused, by the text its log line gives."""
    run(["ovsdb-client", "transact", remote, json.dumps(["OVN_Southbound", {"op": "delete", "table": "Logical_Flow",
                                                                            "where": []}])], env=env)
    for chunk in _chunks(_flows(matches, datapath)):
        run(["ovsdb-client", "transact", remote, json.dumps(["OVN_Southbound", *chunk])], env=env)
    # Any microflow: the flows are parsed when ovn-trace reads the SB, before it traces.
    done = run(["ovn-trace", f"--db={remote}", DATAPATH, "1"], env=env, check=False, stderr=True)
    said = {found["match"]: found["why"] for line in done.splitlines() if (found := _FAILED.search(line))}
    unmapped = [line for line in done.splitlines() if "parsing expression failed" in line and not _FAILED.search(line)]
    if SENTINEL not in said and not unmapped:
        raise SandboxError(f"ovn-trace parsed no logical flow of the throwaway SB:\n{done[-2000:]}")
    for number, line in enumerate(unmapped):  # a refusal whose line the match broke: counted, not named
        said[f"<unechoed {number}>"] = line.rpartition("parsing expression failed (")[2].rstrip(")")
    return said


def _one_line(match: str) -> str:
    """The match as one line: OVN's lexer reads a tab, a line feed and a carriage return as a
    blank, and the log line that names a match ends at its first line break."""
    return match.replace("\t", " ").replace("\n", " ").replace("\r", " ")


def _declarations(address_sets: Mapping[str, Sequence[str]], port_groups: Iterable[str]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = [
        {"op": "insert", "table": "Datapath_Binding",
         "row": {"tunnel_key": TUNNEL_KEY, "external_ids": ["map", [["name", DATAPATH]]]}}]
    for name, addresses in sorted(address_sets.items()):
        rows.append({"op": "insert", "table": "Address_Set",
                     "row": {"name": name, "addresses": ["set", list(addresses)]}})
    for name in sorted(set(port_groups)):
        rows.append({"op": "insert", "table": "Port_Group",
                     "row": {"name": f"{TUNNEL_KEY}_{name}", "ports": ["set", [f"{name}-port"]]}})
    return rows


def _flows(matches: Sequence[str], datapath: list[str]) -> Iterator[dict[str, object]]:
    for number, match in enumerate(matches, start=1):
        yield {"op": "insert", "table": "Logical_Flow",
               "row": {"logical_datapath": datapath, "pipeline": "ingress", "table_id": 0,
                       "priority": number % 65536, "match": match, "actions": "next;"}}


def _chunks(rows: Iterable[dict[str, object]]) -> Iterator[list[dict[str, object]]]:
    chunk: list[dict[str, object]] = []
    size = 0
    for row in rows:
        length = len(json.dumps(row))
        if chunk and size + length > CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
        chunk.append(row)
        size += length
    if chunk:
        yield chunk
