"""Who is who in one raft database (OVN NB, SB, IC NB, IC SB): what every member said, the
server list it agrees on, the declared members missing from it and the entries no member is
(stale, or another cluster's), and the `cluster/kick` that removes one. `raft.judge` turns this
into check lines."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import cached_property

from fabricgen.observe.raft_address import key as address_key
from fabricgen.observe.raft_server_db import ServerRow
from fabricgen.observe.raft_status import ClusterStatus, Server

# Kube-OVN's control sockets in its ovn-central and IC server pods, by database name.
KUBE_OVN_CTL = {
    "OVN_Northbound": "/var/run/ovn/ovnnb_db.ctl",
    "OVN_Southbound": "/var/run/ovn/ovnsb_db.ctl",
    "OVN_IC_Northbound": "/var/run/ovn/ovn_ic_nb_db.ctl",
    "OVN_IC_Southbound": "/var/run/ovn/ovn_ic_sb_db.ctl",
}
CLUSTER_MEMBER = "cluster member"
JOINING = "joining cluster"
# Not voting members of the configuration: their leader and connections are judged by their status.
OUTSIDE = (JOINING, "leaving cluster", "left cluster", "failed")


@dataclass(frozen=True)
class Member:
    """A member the fabric declares: `name` (its key in `judge`'s `members`) and its raft address
    (`tcp:IP:6643`, `ssl:IP:6643`, `unix:PATH`), as `cluster/status` lists it."""

    name: str
    address: str


Reading = ClusterStatus | ServerRow | str


@dataclass(frozen=True)
class _Stale:
    """A server list entry no member is: `why` says how it is known; `ambiguous` when the
    address is listed twice and its member did not answer to say which id is its own."""

    server: Server
    why: str
    ambiguous: bool = False


@dataclass(frozen=True)
class Membership:
    """What every member said about one database (`readings`, by member name), and who is who in it."""

    database: str
    subject: str
    declared: tuple[Member, ...] | None
    readings: dict[str, Reading]
    ctls: dict[str, str]

    # ------------------------------------------------------------- what was read
    @cached_property
    def names(self) -> tuple[str, ...]:
        declared = [m.name for m in self.declared or ()]
        return tuple(declared + [name for name in self.readings if name not in declared])

    @cached_property
    def statuses(self) -> dict[str, ClusterStatus]:
        return {n: r for n in self.names if isinstance(r := self.readings.get(n), ClusterStatus)}

    @cached_property
    def rows(self) -> dict[str, ServerRow]:
        return {n: r for n in self.names if isinstance(r := self.readings.get(n), ServerRow)}

    @cached_property
    def errors(self) -> dict[str, str]:
        return {n: _first_line(r) if isinstance(r, str) else "not read" for n in self.names
                if not isinstance(r := self.readings.get(n), ClusterStatus | ServerRow)}

    def ctl(self, name: str) -> str:
        return self.ctls.get(name) or KUBE_OVN_CTL.get(self.database) or f"<{self.database} control socket>"

    def appctl(self, name: str, *args: str, where: str | None = None) -> str:
        """`on NAME: ovn-appctl -t CTL ARGS...`, the form of every fix run on a member (`where`
        instead of NAME for a member known by its address only)."""
        return f"on {where or name}: " + shlex.join(["ovn-appctl", "-t", self.ctl(name), *args])

    # ------------------------------------------------------------- who is who
    def address(self, name: str) -> str | None:
        for member in self.declared or ():
            if member.name == name:
                return member.address
        status = self.statuses.get(name)
        return status.address if status else None

    def name_at(self, address: str) -> str | None:
        """The member at a raft address, however it is spelled (`raft_address.key`)."""
        wanted = address_key(address)
        for member in self.declared or ():
            if address_key(member.address) == wanted:
                return member.name
        return next((n for n, s in self.statuses.items() if address_key(s.address) == wanted), None)

    def peer(self, status: ClusterStatus, nickname: str) -> str:
        """The member a nickname in `status` stands for (by its address), else the nickname."""
        server = status.server(nickname)
        return (self.name_at(server.address) if server else None) or nickname

    def leader_named_by(self, name: str) -> str | None:
        """The member `name` names as leader; None if it names none. From a `_Server` row only
        `name` itself can be named; a connected follower's row names nobody (`""`)."""
        if name in self.rows:
            row = self.rows[name]
            return name if row.leader else ("" if row.connected else None)
        status = self.statuses[name]
        if status.leader == "self":
            return name
        if status.leader == "unknown":
            return None
        return self.peer(status, status.leader)

    @cached_property
    def leader_status(self) -> ClusterStatus | None:
        leaders = [s for s in self.statuses.values() if s.role == "leader"]
        return max(leaders, key=lambda s: s.term, default=None)

    @cached_property
    def configuration(self) -> tuple[Server, ...] | None:
        """The cluster's server list: the leader's, else every member's merged; None when no
        member in the cluster printed one."""
        if self.leader_status is not None:
            return self.leader_status.servers
        merged: dict[tuple[str, str], Server] = {}
        for status in self.statuses.values():
            if status.status not in OUTSIDE:
                for server in status.servers:
                    merged.setdefault((server.sid, server.address), server)
        return tuple(merged.values()) or None

    @cached_property
    def answered_ids(self) -> set[str]:
        """Short server ids of the members that answered."""
        ids = {s.server_id[:4] for s in self.statuses.values()}
        return ids | {r.sid[:4] for r in self.rows.values() if r.sid}

    @cached_property
    def heard_from(self) -> set[str]:
        """Short ids of servers from which a member that answered has an incoming raft connection
        up: each connected and said its own server id, so it runs, whether it answered or not.
        raft.c names an incoming connection by its peer's entry (`raft_get_nickname`), and an
        entry of a `tcp:` or `ssl:` address by its short id (`raft_address_to_nickname`), so only
        such a nickname names one server; a `unix:` address's is its file name, which a stale
        entry and the member that rejoined at that address share."""
        heard: set[str] = set()
        for status in self.statuses.values():
            sids: dict[str, list[str]] = {}
            for server in status.servers:
                sids.setdefault(server.nickname, []).append(server.sid)
            for connection in status.connections:
                named = sids.get(connection.nickname, [])
                if connection.up and not connection.outgoing and named == [connection.nickname]:
                    heard.add(named[0])
        return heard

    @cached_property
    def live_ids(self) -> set[str]:
        """Short server ids of members that answered or were heard from: none of them is stale."""
        return self.answered_ids | self.heard_from

    @cached_property
    def undeclared(self) -> tuple[Server, ...]:
        """Server list entries of members that run (answered, or heard from) at an address no
        declared member has and under no declared member's own id: members the fabric does not
        declare. Empty where the fabric declares none."""
        if self.declared is None:
            return ()
        known = {address_key(m.address) for m in self.declared}
        own = {entry.sid for m in self.declared if (entry := self.listed_as(m.name)) is not None}
        return tuple(s for s in self.configuration or () if s.sid in self.live_ids and s.sid not in own
                     and address_key(s.address) not in known)

    @cached_property
    def known_addresses(self) -> set[str] | None:
        """The addresses members have: the declared ones, else (when every member answered)
        those the members print; None when unknown."""
        if self.declared is not None:
            return {address_key(m.address) for m in self.declared}
        return {address_key(s.address) for s in self.statuses.values()} if not self.errors else None

    @cached_property
    def by_address(self) -> dict[str, list[Server]]:
        """The server list's entries by address, however each is spelled (`raft_address.key`)."""
        out: dict[str, list[Server]] = {}
        for server in self.configuration or ():
            out.setdefault(address_key(server.address), []).append(server)
        return out

    @cached_property
    def unlisted(self) -> tuple[Member, ...]:
        """Declared members whose address the server list does not hold."""
        if self.configuration is None:
            return ()
        return tuple(m for m in self.declared or () if address_key(m.address) not in self.by_address
                     and self.listed_as(m.name) is None)

    def listed_as(self, name: str) -> Server | None:
        """The server list entry of a member that answered with its own server id, whatever
        address the list has it at."""
        status = self.statuses.get(name)
        row = self.rows.get(name)
        own = status.short_id if status is not None else (row.sid[:4] if row is not None and row.sid else None)
        return next((s for s in self.configuration or () if s.sid == own), None) if own else None

    @cached_property
    def strangers(self) -> tuple[Server, ...]:
        """Server list entries at an address no declared member has, listed once, by an id no
        member that answered has."""
        known = self.known_addresses
        if known is None:
            return ()
        return tuple(same[0] for key, same in self.by_address.items()
                     if len(same) == 1 and same[0].sid not in self.live_ids and key not in known)

    @cached_property
    def addresses_disagree(self) -> bool:
        """The server list holds entries at addresses no declared member has while declared
        members are missing from it: the fabric may name its members by other addresses than
        the cluster knows them by (a pod address, a NAT, another port), so neither the entries
        nor the missing members can be judged."""
        return bool(self.unlisted and self.strangers)

    @cached_property
    def authoritative(self) -> bool:
        """Whether the server list is a leader's (raft's configuration as committed), not
        followers' views merged while no leader is known."""
        return self.leader_status is not None

    @cached_property
    def stale(self) -> tuple[_Stale, ...]:
        """Entries of the server list no member is. An address listed under two ids after a
        member rejoined with new files: the id that is not the member's own (ambiguous when the
        member did not answer). An address listed once that no member has: that id."""
        found: list[_Stale] = []
        for server in self.configuration or ():
            if server.sid in self.live_ids:
                continue
            same = self.by_address[address_key(server.address)]
            owner = self.name_at(server.address) or server.address
            live = [s.sid for s in same if s.sid in self.live_ids]
            if live:
                found.append(_Stale(server, f"{server.sid} at {server.address}, where {owner} runs as {live[0]}"))
            elif len(same) > 1 and server is same[0]:
                ids = ", ".join(s.sid for s in same)
                found.append(_Stale(server, f"{server.address} is listed as {ids} and {owner} did not answer "
                                            "to say which is its own", ambiguous=True))
            elif server in self.strangers and not self.addresses_disagree and self.authoritative:
                found.append(_Stale(server, f"{server.sid} at {server.address}, an address no member has"))
        return tuple(found)

    @cached_property
    def kicker(self) -> str:
        """Where kicks run: the leader if it answered, else the first member that did."""
        if self.leader_status is not None:
            return self.leader_status.source
        return next(iter(self.statuses), next(iter(self.rows), self.names[0]))

    def kicks(self) -> str:
        fixes = []
        for entry in self.stale:
            if entry.ambiguous:
                owner = self.name_at(entry.server.address)
                fixes.append(self.appctl(owner or "", "cluster/sid", self.database,
                                         where=owner or f"the member at {entry.server.address}")
                             + " prints its own id; then "
                             + self.appctl(self.kicker, "cluster/kick", self.database, "<the other id>"))
            else:
                fixes.append(self.appctl(self.kicker, "cluster/kick", self.database, entry.server.sid))
        return "; ".join(fixes)

    @cached_property
    def single(self) -> bool:
        """One member, declared so (or, with nothing declared, the only one read): a layout a
        standalone database serves as well as a one-member cluster."""
        return len(self.names) == 1 and (self.declared is None or len(self.declared) == 1)

    @property
    def size(self) -> int:
        """Members in the configuration, stale entries included (they count towards the majority)."""
        if self.configuration is not None:
            return len(self.configuration)
        return len(self.declared) if self.declared is not None else len(self.statuses) + len(self.rows)


_VLOG = re.compile(r"^\d{4}-\d\d-\d\dT[^|]*\|\d+\|")


def _first_line(text: str) -> str:
    """The first line of an error that is not an OVS log line (`2026-...|00001|unixctl|WARN|...`)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    said = [line for line in lines if not _VLOG.match(line)] or lines
    first = said[0] if said else "no output"
    return first if len(first) <= 400 else first[:397] + "..."
