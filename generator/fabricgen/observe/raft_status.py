"""The text of `ovn-appctl -t CTL cluster/status DB` (also `ovs-appctl`), parsed.

The format is `raft_unixctl_status` in openvswitch/ovs `ovsdb/raft.c`, unchanged from OVS 2.13
to 3.5 but for how the role is spelled in the source; nicknames come from
`raft_address_to_nickname` in `ovsdb/raft-private.c` (the file name of a `unix:` address up to
its first dot, else the short server id). One output, leader's shown:

    s1
    Name: OVN_Northbound
    Cluster ID: f23d (f23defce-a9c5-40b3-9d5d-cfd19f2780ab)
    Server ID: dc77 (dc77e7a8-bd62-4642-8d7b-ccac3b0d892e)
    Address: unix:/tmp/raft/s1.raft
    Status: cluster member
    Role: leader
    Term: 1
    Leader: self
    Vote: self

    Last Election won: 66 ms ago
    Election timer: 1000
    Log: [2, 5]
    Entries not yet committed: 0
    Entries not yet applied: 0
    Connections: <-s2 ->s2 (->s3)
    Disconnections: 1
    Servers:
        s3 (8ae1 at unix:/tmp/raft/s3.raft) next_index=5 match_index=4 last msg 2019 ms ago
        s1 (dc77 at unix:/tmp/raft/s1.raft) (self) next_index=2 match_index=4
        s2 (8d0c at unix:/tmp/raft/s2.raft) next_index=5 match_index=4 last msg 19 ms ago
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabricgen.errors import FabricgenError


class RaftParseError(FabricgenError):
    """The text is not what the command named in the message prints."""

    def __init__(self, name: str, line: int, message: str) -> None:
        self.name, self.line, self.message = name, line, message
        super().__init__(f"{name}:{line}: {message}")


@dataclass(frozen=True)
class Server:
    """One line under `Servers:`: `NICK (SID at ADDRESS) [(self)] [(PHASE)] [(voted for NICK)]
    [next_index=N match_index=M] [last msg N ms ago]`. `sid` is the short id (4 hex digits);
    `phase` is `stable` unless the line says `adding: ...` or `removing`; the indexes are printed
    by the leader only, `voted_for` by a candidate only."""

    nickname: str
    sid: str
    address: str
    is_self: bool
    phase: str = "stable"
    voted_for: str | None = None
    next_index: int | None = None
    match_index: int | None = None
    last_msg_ms: int | None = None


@dataclass(frozen=True)
class Connection:
    """One entry of `Connections:`: `->NICK` (outgoing) or `<-NICK` (incoming), in parentheses
    when the session is not connected."""

    outgoing: bool
    nickname: str
    up: bool

    def __str__(self) -> str:
        text = ("->" if self.outgoing else "<-") + self.nickname
        return text if self.up else f"({text})"


@dataclass(frozen=True)
class ServerChange:
    """`Adding server NICK (SID at ADDRESS) (PHASE)` or `Removing server ...`, printed by a leader."""

    adding: bool
    nickname: str
    sid: str
    address: str
    phase: str


@dataclass(frozen=True)
class ClusterStatus:
    """Everything `raft_unixctl_status` prints. `cluster_id` and `server_id` are full UUIDs
    (`cluster_id` is None while `not yet known`, i.e. joining); `leader` and `vote` are `self`,
    `unknown` or another server's nickname (its address's file name for `unix:` addresses, else
    its short id: `raft_address_to_nickname` in `ovsdb/raft-private.c`)."""

    source: str
    nickname: str
    database: str
    cluster_id: str | None
    server_id: str
    address: str
    status: str
    role: str
    term: int
    leader: str
    vote: str
    log_start: int
    log_end: int
    uncommitted: int
    unapplied: int
    connections: tuple[Connection, ...]
    disconnections: int
    servers: tuple[Server, ...]
    remotes_for_joining: tuple[str, ...] = ()
    changes: tuple[ServerChange, ...] = ()
    election_started_ms: int | None = None
    election_reason: str | None = None
    election_won_ms: int | None = None
    election_timer_ms: int | None = None
    election_timer_new_ms: int | None = None

    @property
    def short_id(self) -> str:
        return self.server_id[:4]

    @property
    def commit_index(self) -> int:
        """`Entries not yet committed` is `log_end - commit_index - 1` (raft.c)."""
        return self.log_end - self.uncommitted - 1

    @property
    def applied_index(self) -> int:
        return self.log_end - self.unapplied - 1

    def server(self, nickname: str) -> Server | None:
        """The listed server of that nickname (the first, when a stale one shares it)."""
        return next((s for s in self.servers if s.nickname == nickname), None)


_LONG_NUMBER = re.compile(r"[0-9]{21,}")
_ID = re.compile(r"^([0-9a-f]{4}) \(([0-9a-f-]{36})\)$")
_SERVER = re.compile(r"^    (\S+) \(([0-9a-f]{4}) at ([^)]*)\)(.*)$")
_CHANGE = re.compile(r"^(Adding|Removing) server (\S+) \(([0-9a-f]{4}) at ([^)]*)\) \(([^)]*)\)$")
_PHASE = re.compile(r" \((adding: catchup|adding: caught up|adding: committing|removing)\)")
_VOTED = re.compile(r" \(voted for (\S+)\)")
_INDEXES = re.compile(r" next_index=(\d+) match_index=(\d+)")
_LAST_MSG = re.compile(r" last msg (\d+) ms ago")
_LOG = re.compile(r"^\[(\d+), (\d+)\]$")
# `Last Election started N ms ago, reason: R` has its colon after the reason's label: the
# text before it is not a key, so the line is read whole.
ELECTION_STARTED = "Last Election started"
_ELECTION_STARTED = re.compile(r"^(\d+) ms ago, reason: (\S+)$")
_MS_AGO = re.compile(r"^(\d+) ms ago$")
_TIMER = re.compile(r"^(\d+)(?: \(changing to (\d+)\))?$")
_CONNECTION = re.compile(r"^(\()?(->|<-)(\S+?)(\))?$")
REQUIRED = ("Cluster ID", "Server ID", "Address", "Status", "Role", "Term", "Leader", "Vote", "Log",
            "Entries not yet committed", "Entries not yet applied", "Connections", "Disconnections",
            "Servers")


def parse_cluster_status(text: str, name: str) -> ClusterStatus:
    """The output of `cluster/status DB` from the member `name` (which error messages name).

    Raises RaftParseError when the text is not that output: its first line must be the server's
    nickname and its second `Name: DB`, so an error (`unknown cluster`, which a standalone
    database answers, or `ovn-appctl: cannot connect ...`) is refused at line 1; every field
    raft.c always prints must be there. Lines it does not know are skipped."""
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        long = _LONG_NUMBER.search(line)
        if long is not None:  # past an int64: raft.c prints its terms, indexes and timers as 64-bit
            raise RaftParseError(name, number, f"a number of {len(long[0])} digits, which `cluster/status` never "
                                               "prints (its terms, indexes and timers are 64-bit)")
    if not lines or not lines[0].strip() or len(lines[0].split()) != 1:
        first = lines[0] if lines else ""
        raise RaftParseError(name, 1, f"not the output of `cluster/status`: {first!r}")
    if len(lines) < 2 or not lines[1].startswith("Name: "):
        raise RaftParseError(name, 2, f"expected `Name: DB` after the server's nickname, "
                                      f"found {lines[1] if len(lines) > 1 else ''!r}")
    fields: dict[str, tuple[int, str]] = {}
    servers: list[Server] = []
    changes: list[ServerChange] = []
    in_servers = False
    for number, line in enumerate(lines[2:], start=3):
        if in_servers and line.startswith("    "):
            match = _SERVER.match(line)
            if match:
                servers.append(_server(match))
            continue
        in_servers = False
        change = _CHANGE.match(line)
        if change:
            changes.append(ServerChange(change[1] == "Adding", change[2], change[3], change[4], change[5]))
            continue
        key, colon, value = line.partition(":")
        if line.startswith(ELECTION_STARTED + " "):
            key, colon, value = ELECTION_STARTED, ":", line[len(ELECTION_STARTED):]
        if not colon:
            continue
        fields.setdefault(key, (number, value.strip()))
        in_servers = key == "Servers"
    missing = [key for key in REQUIRED if key not in fields]
    if missing:
        raise RaftParseError(name, len(lines), "not the output of `cluster/status`: no "
                             + ", ".join(f"`{key}:`" for key in missing) + " line")
    reader = _Fields(name, fields)
    return ClusterStatus(
        source=name, nickname=lines[0].strip(), database=lines[1][len("Name: "):].strip(),
        cluster_id=None if reader.text("Cluster ID") == "not yet known" else reader.uuid("Cluster ID"),
        server_id=reader.uuid("Server ID"), address=reader.text("Address"), status=reader.text("Status"),
        role=reader.text("Role"), term=reader.number("Term"), leader=reader.text("Leader"),
        vote=reader.text("Vote"),
        log_start=reader.match("Log", _LOG)[0], log_end=reader.match("Log", _LOG)[1],
        uncommitted=reader.number("Entries not yet committed"),
        unapplied=reader.number("Entries not yet applied"),
        connections=reader.connections(), disconnections=reader.number("Disconnections"),
        servers=tuple(servers),
        remotes_for_joining=tuple(reader.text("Remotes for joining").split()) if "Remotes for joining" in fields
        else (),
        changes=tuple(changes),
        election_started_ms=reader.optional_number(ELECTION_STARTED, _ELECTION_STARTED),
        election_reason=reader.optional_match(ELECTION_STARTED, _ELECTION_STARTED, 2),
        election_won_ms=reader.optional_number("Last Election won", _MS_AGO),
        election_timer_ms=reader.optional_number("Election timer", _TIMER),
        election_timer_new_ms=_int(reader.optional_match("Election timer", _TIMER, 2)),
    )


def _server(match: re.Match[str]) -> Server:
    rest = match[4]
    phase, voted, indexes, last = (_PHASE.search(rest), _VOTED.search(rest), _INDEXES.search(rest),
                                   _LAST_MSG.search(rest))
    return Server(
        nickname=match[1], sid=match[2], address=match[3], is_self=" (self)" in rest,
        phase=phase[1] if phase else "stable", voted_for=voted[1] if voted else None,
        next_index=int(indexes[1]) if indexes else None, match_index=int(indexes[2]) if indexes else None,
        last_msg_ms=int(last[1]) if last else None,
    )


def _int(value: str | None) -> int | None:
    return int(value) if value is not None else None


@dataclass(frozen=True)
class _Fields:
    """The `Key: value` lines of one output, read with the line number of each in errors."""

    name: str
    fields: dict[str, tuple[int, str]]

    def text(self, key: str) -> str:
        return self.fields[key][1]

    def fail(self, key: str, what: str) -> RaftParseError:
        number, value = self.fields[key]
        return RaftParseError(self.name, number, f"`{key}:` is not {what}: {value!r}")

    def number(self, key: str) -> int:
        value = self.text(key)
        if not value.isdigit():
            raise self.fail(key, "a number")
        return int(value)

    def uuid(self, key: str) -> str:
        match = _ID.match(self.text(key))
        if not match or not match[2].startswith(match[1]):
            raise self.fail(key, "`SHORT (UUID)`")
        return match[2]

    def match(self, key: str, pattern: re.Pattern[str]) -> tuple[int, int]:
        found = pattern.match(self.text(key))
        if not found:
            raise self.fail(key, f"of the form {pattern.pattern}")
        return int(found[1]), int(found[2])

    def optional_match(self, key: str, pattern: re.Pattern[str], group: int) -> str | None:
        if key not in self.fields:
            return None
        found = pattern.match(self.text(key))
        if not found:
            raise self.fail(key, f"of the form {pattern.pattern}")
        return found[group]

    def optional_number(self, key: str, pattern: re.Pattern[str]) -> int | None:
        return _int(self.optional_match(key, pattern, 1))

    def connections(self) -> tuple[Connection, ...]:
        out = []
        for token in self.text("Connections").split():
            found = _CONNECTION.match(token)
            if not found or bool(found[1]) != bool(found[4]):
                raise self.fail("Connections", "a list of `->NICK`, `<-NICK`, `(->NICK)`")
            out.append(Connection(found[2] == "->", found[3], up=not found[1]))
        return tuple(out)
