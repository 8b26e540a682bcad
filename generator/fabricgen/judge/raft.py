"""Raft health of an OVSDB clustered database (OVN NB, SB, IC NB, IC SB), judged from its members.

What each member says comes from `cluster/status` (`raft_status`, openvswitch/ovs
`ovsdb/raft.c` `raft_unixctl_status`) or, where no control socket can be reached, from its
`_Server` database (`raft_server_db`); `raft_members` says who is who. `judge` turns them into
one check line per aspect, each with the command that fixes it. This module is the API the
`status` command uses: the parsers and the `_Server` command are importable from here.

Rules, from raft.c and `Documentation/ref/ovsdb.7.rst`:

- the leader commits an entry once `count > hmap_count(&raft->servers) / 2` servers hold it
  (`raft_consider_updating_commit_index`): every entry of the server list counts, a stale one
  too, so a stale entry raises the majority the cluster needs;
- "a 3-server cluster can remain available in the face of at most 1 server failure ... a 4- or
  6-server cluster cannot tolerate more failures than a 3- or 5-server cluster" (ovsdb(7));
- `cluster/kick DB SERVER` removes a server by its id or address (`raft_unixctl_kick`); an
  address listed under two ids matches both and is refused, so fixes name the short id. Run on a
  follower, it forwards the request to the leader; fixes name the leader's socket.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fabricgen.judge.checks import DRIFT, OK, UNHEALTHY, UNKNOWN, UNREACHABLE, Check, Verdict
from fabricgen.judge.raft_members import (
    CLUSTER_MEMBER,
    JOINING,
    KUBE_OVN_CTL,
    OUTSIDE,
    Member,
    Membership,
    Reading,
)
from fabricgen.observe.raft_address import key as address_key
from fabricgen.observe.raft_server_db import ServerRow, parse_server_databases, server_databases_argv
from fabricgen.observe.raft_status import ClusterStatus, RaftParseError, parse_cluster_status

__all__ = [
    "KUBE_OVN_CTL", "LOG_LAG", "ClusterStatus", "Member", "RaftParseError", "Reading", "ServerRow", "judge",
    "parse_cluster_status", "parse_server_databases", "server_databases_argv",
]

# How many log entries behind a member may be and still keep up; see `judge`.
LOG_LAG = 100


def judge(database: str, subject: str, declared: Sequence[Member] | None, members: Mapping[str, Reading],
          *, ctls: Mapping[str, str] | None = None) -> list[Check]:
    """Check lines for the raft cluster of `database` (`OVN_Northbound`, ...), all with `subject`.

    `members`: per member name, its `cluster/status` (ClusterStatus), else its `_Server` row for
    `database` (ServerRow), else the error text of the member that could not be read. `declared`:
    the members the fabric declares; None when it declares none (a Kube-OVN zone's ovn-central
    pods): then the members that answered are the reference. `ctls`: each member's control
    socket for the fix commands, by default Kube-OVN's (`KUBE_OVN_CTL`).

    The lines, in this order (`name`: what is checked):

    - `raft.reachable`: every member answered (one did not: unhealthy; none did: unreachable,
      and no other line follows, as nothing else is known);
    - `raft.status`: each member's status is `cluster member` (from `_Server`: the database is
      clustered and connected);
    - `raft.leader`: a leader exists and every member names the same one; when members are
      down it says whether quorum is kept and how many more failures it tolerates;
    - `raft.servers`: the server list holds exactly the declared members (or those that
      answered); a stale entry, an address listed under a second id after a member rejoined
      with new files, or an address no member has, is named with the `cluster/kick` that removes it;
    - `raft.members`: every declared member is in the server list, and all are in one cluster;
    - `raft.count`: the server list counts 1 member or an odd number, at least 3 where more
      than one is declared (two cannot lose either; an even count tolerates no more failures than
      the odd count below it);
    - `raft.connections`: no member has a raft connection down (parenthesised); connections to
      a stale entry's nickname are left to `raft.servers`;
    - `raft.log`: committed and applied log indexes keep up: no member more than LOG_LAG (100)
      entries behind the leader by the leader's own `match_index` (one consistent snapshot,
      no clock between two reads), none with more than LOG_LAG committed entries it has not
      applied (`Entries not yet applied` minus `not yet committed`: entries its ovsdb-server has
      not read), the leader with no more than LOG_LAG entries waiting for a majority, and no
      uncommitted entry where no leader is known (raft.c commits only through a leader). A healthy
      member lags by the writes of one round trip, as the leader sends every missing entry in
      its next append request; 100 entries is the log length at which ovsdb-server starts to
      consider compacting it (`ovsdb/storage.c`). With `_Server` rows only: no member's `index`
      more than LOG_LAG below the highest.

    From `_Server` rows alone the server list and the connections cannot be seen: without one
    `cluster/status`, `raft.servers` and `raft.connections` are left out (and `raft.reachable`
    says so), and `raft.members` checks only the cluster ids.
    """
    view = _Checks(database, subject, tuple(declared) if declared is not None else None, dict(members),
                 dict(ctls or {}))
    checks = [view.reachable()]
    if checks[0].verdict == UNREACHABLE:
        return checks
    checks += [view.status(), view.leader()]
    if view.statuses:
        checks.append(view.servers())
    checks += [view.members(), view.count()]
    if view.statuses:
        checks.append(view.connections())
    checks.append(view.log())
    return checks


@dataclass(frozen=True)
class _Checks(Membership):
    """One method per check line."""

    def check(self, name: str, verdict: Verdict, why: str, fix: str = "") -> Check:
        return Check(self.subject, f"raft.{name}", verdict, why, fix if verdict != OK else "")

    def reachable(self) -> Check:
        answered = [n for n in self.names if n not in self.errors]
        failed = "; ".join(f"{n}: {e}" for n, e in self.errors.items())
        sources = f"{len(answered)} of {len(self.names)} members answered ({', '.join(answered) or 'none'})"
        if self.rows:
            sources += (f"; {', '.join(self.rows)} from the _Server database only"
                        + ("" if self.statuses else ", so the server list and connections are not checked"))
        if not answered:
            return self.check("reachable", UNREACHABLE, f"no member answered: {failed}",
                              "check that ovsdb-server runs on every member and that its control socket "
                              f"({self.ctl(self.names[0])}) or OVSDB remote can be reached")
        if self.errors:
            down = ", ".join(self.errors)
            return self.check("reachable", UNHEALTHY, f"{sources}; {failed}",
                              f"start the ovsdb-server of {down}, then check: "
                              + "; ".join(self.appctl(n, "cluster/status", self.database) for n in self.errors))
        return self.check("reachable", OK, sources)

    def status(self) -> Check:
        bad: list[str] = []
        fixes: list[str] = []
        for name, status in self.statuses.items():
            if status.status != CLUSTER_MEMBER:
                bad.append(f"{name}: {status.status} (role {status.role}, term {status.term})")
                fixes.append(self.status_fix(name, status))
        for name, row in self.rows.items():
            if row.model != "clustered" and self.single:
                continue
            if row.model != "clustered":
                bad.append(f"{name}: its {self.database} is {row.model}, not clustered, where "
                           f"{len(self.names)} members are {'declared' if self.declared is not None else 'read'}")
                fixes.append(f"on {name}: run {self.database} as a member of the cluster (ovsdb-tool join-cluster)")
            elif not row.connected:
                bad.append(f"{name}: not connected to a majority of its cluster (_Server)")
                fixes.append(f"on {name}: check its raft connections: "
                             + self.appctl(name, "cluster/status", self.database).removeprefix(f"on {name}: "))
        if bad:
            return self.check("status", UNHEALTHY, "; ".join(bad), "; ".join(fixes))
        answered = ", ".join([*self.statuses, *self.rows])
        if self.single and self.rows:
            row = next(iter(self.rows.values()))
            if row.model != "clustered":
                return self.check("status", OK, f"{answered}: a {row.model} database, the one member "
                                  + ("declared" if self.declared is not None else "read"))
        return self.check("status", OK, f"{answered}: {CLUSTER_MEMBER}" if not self.rows
                          else f"{answered}: {CLUSTER_MEMBER} (from _Server: clustered and connected)")

    def status_fix(self, name: str, status: ClusterStatus) -> str:
        if status.status == JOINING:
            remotes = " ".join(status.remotes_for_joining) or "its remotes"
            return (f"on {name}: its join waits for {remotes}; make sure they are the cluster's members, else "
                    f"remove its database file and join again with the members' addresses: "
                    + self.join_command(name, status.address))
        if status.status in ("leaving cluster", "left cluster"):
            return (f"on {name}: a server that left may never rejoin (ovsdb(7)): remove its database file and "
                    f"join again: {self.join_command(name, status.address)}")
        if status.status == "failed":
            # raft.c `raft_handle_write_error`: any error writing its log (a full disk, a read-only file
            # system). Kube-OVN's start-db.sh rebuilds a removed or corrupted file with the same server id
            # from its raft header backup (`ovsdb-tool rejoin-cluster` with /etc/ovn/ovn{nb,sb}_db.hdr), so
            # the id it had may be the id it runs with again: no kick is worked out in advance.
            return (f"on {name}: `failed` follows an error writing its raft log (a full disk, a read-only file "
                    f"system): free the disk, then restart its ovsdb-server; if its database file must be rebuilt, "
                    f"remove it and join again ({self.join_command(name, status.address)}; Kube-OVN's start-db.sh "
                    "does that itself, keeping the server id from its .hdr backup), then read "
                    + self.appctl(name, "cluster/status", self.database).removeprefix(f"on {name}: ")
                    + " on it and kick only an id of the server list that no running member prints as its own "
                    f"`Server ID:` (its id before the restart, {status.short_id}, may be its id again)")
        return (f"on {name}: it cannot reach a majority: check its raft connections and the other members "
                f"(raft.connections, raft.leader)")

    def join_command(self, name: str, address: str) -> str:
        remotes = [a for n in self.names
                   if n != name and (a := self.address(n)) and address_key(a) != address_key(address)]
        return shlex.join(["ovsdb-tool", "join-cluster", "<db file>", self.database, address, *remotes])

    def leader(self) -> Check:
        voters = [n for n in [*self.statuses, *self.rows]
                  if not (n in self.statuses and self.statuses[n].status in OUTSIDE)]
        named = {n: self.leader_named_by(n) for n in voters}
        leaders = sorted({leader for leader in named.values() if leader})
        majority = self.size // 2 + 1
        if not leaders:
            if any(leader == "" for leader in named.values()):
                return self.check("leader", UNREACHABLE, "no member that answered leads, and their _Server rows "
                                  "cannot name the leader", "read cluster/status on the members that did not answer")
            states = "; ".join(f"{n}: {self.statuses[n].role}, term {self.statuses[n].term}" if n in self.statuses
                               else f"{n}: not connected" for n in voters)
            down = ", ".join(self.errors) or "none"
            electing = [n for n in voters if n in self.statuses]
            if len(electing) >= majority:
                timer = max((self.statuses[n].election_timer_ms or 0 for n in electing), default=0) or 1000
                return self.check(
                    "leader", UNKNOWN,
                    f"no leader known yet while {len(electing)} of {self.size} members answer, a majority: an "
                    f"election is under way ({states}; did not answer: {down}); raft elects within a few "
                    f"election timers ({timer} ms)",
                    f"read again in {max(2 * timer // 1000, 2)} s or more (fabricgen status --wait 1m); if no "
                    "leader is elected by then, check the members' raft connections (raft.connections) and logs; "
                    "recover nothing by hand while a majority runs")
            running = self.running_unanswered()
            if running and len(electing) + len(running) >= majority:
                seen = "; ".join(f"{who} (by {by})" for who, by in running.items())
                return self.check(
                    "leader", UNKNOWN,
                    f"no leader known while {len(electing)} of {self.size} members answer ({states}); members that "
                    f"did not answer run, by the raft connections of those that did: {seen}, so {len(electing)} + "
                    f"{len(running)} of {self.size} run, a majority: an election is under way or a member could not "
                    f"be read (did not answer: {down})",
                    f"read cluster/status on {', '.join(running)} (the reads that failed: {down}) and again in a few "
                    "seconds (fabricgen status --wait 1m); recover nothing by hand while a majority runs")
            return self.check(
                "leader", UNHEALTHY,
                f"no leader: quorum lost ({states or 'no member in the cluster answered'}; did not answer: "
                f"{down}); {self.size} members need {majority} running to elect one", self.quorum_fix(down, majority))
        if len(leaders) > 1:
            says = "; ".join(f"{n} names {leader or 'none'}" for n, leader in named.items())
            return self.check("leader", UNHEALTHY, f"members name different leaders: {says}",
                              "wait one election timeout and check again; if it persists, restart the members "
                              "that name another leader than the others")
        leader = leaders[0]
        lost = [n for n, named_leader in named.items() if named_leader is None]
        if lost:
            return self.check("leader", UNHEALTHY,
                              f"{', '.join(lost)} name no leader while the others follow {leader}",
                              f"check the raft connections of {', '.join(lost)} to {leader} (raft.connections); "
                              "restart their ovsdb-server if it stays so")
        following = len(named)
        if following < majority:
            return self.thin_majority(leader, following, majority)
        why = (f"{leader} leads; every member that answered names it" if not self.rows else
               f"{leader} leads; the others that answered are connected (a _Server row names no leader)")
        if self.errors:
            spare = following - majority
            why += (f"; quorum kept: {following} of {self.size} members run, a majority is {majority}, "
                    + (f"{spare} more failure(s) tolerated" if spare > 0 else "no further failure tolerated"))
        return self.check("leader", OK, why)

    def running_unanswered(self) -> dict[str, str]:
        """Members that did not answer but run: a member that answered has a raft connection up
        with them (the session is connected, so an ovsdb-server listens there), named as the
        fabric names them, each with the member whose connection shows it."""
        found: dict[str, str] = {}
        for name, status in self.statuses.items():
            sids: dict[str, list[str]] = {}
            for server in status.servers:
                sids.setdefault(server.nickname, []).append(server.sid)
            for connection in status.connections:
                named = sids.get(connection.nickname, [])
                if not connection.up or len(named) != 1 or named[0] in self.answered_ids:
                    continue
                server = next(s for s in status.servers if s.sid == named[0])
                who = self.name_at(server.address) or f"{server.sid} at {server.address}"
                found.setdefault(who, f"{name}'s {connection}")
        return found

    def quorum_fix(self, down: str, majority: int) -> str:
        return (f"start the stopped members ({down}) so that {majority} of {self.size} run; if their databases "
                "are lost, recover as ovsdb(7) 'Manual cluster recovery' says: stop every member, "
                "`ovsdb-tool cluster-to-standalone` one member's file, `ovsdb-tool create-cluster` from it, "
                "then join the others anew")

    def thin_majority(self, leader: str, following: int, majority: int) -> Check:
        """A leader while fewer than a majority answered. Raft keeps the role until an election
        timer passes without hearing from a majority (then it stands again as a candidate), so the
        role alone proves nothing: the leader's own raft connections tell whether a majority is
        still there (members that run but could not be read) or not."""
        down = ", ".join(self.errors) or "none"
        status = self.statuses.get(leader)
        if status is None:
            return self.check("leader", UNKNOWN,
                              f"{leader} leads, but only {following} of {self.size} members answered, fewer than "
                              f"a majority ({majority}), and its own raft connections were not read (did not "
                              f"answer: {down})",
                              f"read cluster/status on {leader} and on the members that did not answer ({down})")
        peers = sorted({self.peer(status, c.nickname) for c in status.connections if c.up})
        if 1 + len(peers) >= majority:
            return self.check("leader", OK,
                              f"{leader} leads with raft connections up to {', '.join(peers)}: a majority of "
                              f"{self.size} with itself, though only {following} answered (did not answer: {down})")
        timer = status.election_timer_ms or 1000
        return self.check(
            "leader", UNHEALTHY,
            f"quorum lost: {leader} still calls itself leader (term {status.term}) but has raft connections up to "
            f"{len(peers)} of the other {self.size - 1} members, and {self.size} members need {majority}; a leader "
            f"that hears from no majority stands down within its election timer ({timer} ms) (did not answer: "
            f"{down})", self.quorum_fix(down, majority))

    def servers(self) -> Check:
        if self.configuration is None:
            return self.check("servers", UNREACHABLE, "no member in the cluster printed its server list",
                              "read cluster/status on a member of the cluster")
        if self.stale:
            entries = "; ".join(entry.why for entry in self.stale)
            return self.check("servers", UNHEALTHY,
                              f"stale server list entries: {entries}; they count towards the majority", self.kicks())
        if self.strangers and (self.addresses_disagree or not self.authoritative):
            return self.check("servers", UNKNOWN, self.unmatched_why(), self.unmatched_fix())
        if self.undeclared:
            return self.undeclared_check()
        reference = ("the declared members" if self.declared is not None else "the members that answered")
        listed = ", ".join(sorted(f"{self.name_at(s.address) or s.address} ({s.sid})" for s in self.configuration))
        return self.check("servers", OK, f"the server list holds exactly {reference}: {listed}")

    def undeclared_check(self) -> Check:
        """Members run that the fabric does not declare: what it renders would stop them."""
        declared = len(self.declared or ())
        runs = len(self.configuration or ())
        who = ", ".join(f"{s.sid} at {s.address} ({'answered' if s.sid in self.answered_ids else 'heard from'})"
                        for s in self.undeclared)
        field = ("interconnection.database.members" if self.database.startswith("OVN_IC_")
                 else "the deployment's databases.members")
        majority = runs // 2 + 1
        harm = (f"; an IC server rendered with {declared} replica(s) stops the others, leaving {declared} of "
                f"{runs}, {'no quorum' if declared < majority else 'a thinner majority'}"
                if self.database.startswith("OVN_IC_") else "")
        return self.check("servers", DRIFT,
                          f"{len(self.undeclared)} member(s) of the server list run and the fabric does not declare "
                          f"them: {who}; the fabric declares {declared} of the {runs} members{harm}",
                          f"declare every member that runs in {field} (its node and address), in the order "
                          "NODE_IPS has them where Kube-OVN's IC server runs it; remove a member from the cluster "
                          "(cluster/leave on it) before you remove it from the fabric")

    def members(self) -> Check:
        problems: list[str] = []
        fixes: list[str] = []
        cids = {n: s.cluster_id for n, s in self.statuses.items() if s.cluster_id}
        cids |= {n: r.cid for n, r in self.rows.items() if r.cid}
        if cids:
            common = max(set(cids.values()), key=list(cids.values()).count)
            for name, cid in cids.items():
                if cid != common:
                    problems.append(f"{name} is in another cluster ({cid[:4]}, the others {common[:4]})")
                    fixes.append(f"on {name}: remove its database file and join the cluster: "
                                 + self.join_command(name, self.address(name) or "<its address>"))
        unjudged = self.addresses_disagree or not self.authoritative
        if self.unlisted and unjudged and not problems:
            return self.check("members", UNKNOWN, self.unmatched_why(), self.unmatched_fix())
        if self.leader_status is not None and not unjudged:
            for member in self.unlisted:
                problems.append(f"{member.name} ({member.address}) is declared but not in the server list of the "
                                f"leader {self.leader_status.source}, which holds {self.listed_addresses()}")
                fixes.append(f"on {member.name}: stop its ovsdb-server, remove its database file, run "
                             f"{self.join_command(member.name, member.address)} and start ovsdb-server")
        if problems:
            return self.check("members", UNHEALTHY, "; ".join(problems), "; ".join(fixes))
        if self.declared is None:
            return self.check("members", OK, "the fabric declares no members here: judged against the "
                              f"{len(self.names) - len(self.errors)} that answered")
        scope = "in the server list" if self.configuration is not None else "in one cluster (cluster ids only)"
        elsewhere = [f"{m.name} at {entry.address}, not {m.address}" for m in self.declared
                     if (entry := self.listed_as(m.name)) is not None
                     and address_key(entry.address) != address_key(m.address)]
        note = ("; by their own server ids, as the cluster knows them at other addresses than the fabric's: "
                + ", ".join(elsewhere)) if elsewhere else ""
        return self.check("members", OK, f"all {len(self.declared)} declared members are {scope}{note}")

    def listed_addresses(self) -> str:
        return ", ".join(f"{s.sid} at {s.address}" for s in self.configuration or ()) or "no server"

    def unmatched_why(self) -> str:
        """What was seen when the server list and the declared members do not match up."""
        whose = (f"the leader {self.leader_status.source}'s" if self.leader_status is not None
                 else "the members' (no leader is known, so it may be out of date)")
        seen = f"{whose} server list holds {self.listed_addresses()}"
        if self.unlisted:
            missing = ", ".join(f"{m.name} ({m.address})" for m in self.unlisted)
            seen += f"; declared members not found there by address: {missing}"
        if self.strangers:
            seen += "; entries at no declared member's address: " + ", ".join(
                f"{s.sid} at {s.address}" for s in self.strangers)
        return seen + ": not judged, as kicking an entry or rejoining a member on this evidence could remove a " \
                      "healthy member"

    def unmatched_fix(self) -> str:
        return ("run " + self.appctl(self.kicker, "cluster/status", self.database).removeprefix(f"on {self.kicker}: ")
                + " on every member and compare each one's `Address:` with the fabric's address of that member; "
                "where the cluster knows a member by another address (a pod address, a NAT, another port), give it "
                "as the member's raftAddress in the endpoints file; kick only an id that no running member prints "
                "as its `Server ID:`")

    def count(self) -> Check:
        n = self.size
        declared = len(self.declared) if self.declared is not None else None
        stale = f" ({len(self.stale)} of them stale, see raft.servers)" if self.stale else ""
        kicks = self.kicks()
        if not kicks and declared is not None and declared > n:
            kicks = "join the declared members missing from the cluster (raft.members)"
        if n == 1:
            if declared in (None, 1):
                return self.check("count", OK, "1 member, as declared: no failure tolerated"
                                  if declared else "1 member: no failure tolerated")
            return self.check("count", UNHEALTHY, f"1 member in the cluster where {declared} are declared: "
                              "no failure tolerated", kicks)
        if n == 2:
            return self.check("count", UNHEALTHY, f"2 members{stale}: two members cannot lose either "
                              "(a majority of 2 is 2)",
                              kicks or self.third_member())
        if n % 2 == 0:
            return self.check("count", UNHEALTHY,
                              f"{n} members{stale} tolerate {(n - 1) // 2} failure(s), no more than {n - 1} do, "
                              f"and need {n // 2 + 1} for a majority",
                              kicks or "join one more member or remove one (cluster/leave on it)")
        return self.check("count", OK, f"{n} members: a majority is {n // 2 + 1}, "
                          f"{(n - 1) // 2} failure(s) tolerated")

    def third_member(self) -> str:
        """How a third member comes, by who runs the cluster."""
        if self.declared is None:  # a Kube-OVN zone's ovn-central: one member per master node
            return ("give the zone a third ovn-central member: Kube-OVN runs one per node labelled "
                    "kube-ovn/role=master (NODE_IPS of the ovn-central Deployment), so label a third node and "
                    "update ovn-central's NODE_IPS and replicas as Kube-OVN's install does")
        if self.database.startswith("OVN_IC_"):
            return ("declare a third member in interconnection.database.members: fabricgen's IC server then runs it "
                    "and start-ic-db.sh joins it to the cluster")
        return ("join a third member (ovsdb-tool join-cluster on a third host, its remotes the two members') and "
                "declare it in the deployment's databases.members")

    def connections(self) -> Check:
        # A connection to a stale id is down for good (its address answers with another id):
        # left to raft.servers. With `unix:` addresses the stale and the live id share a nickname,
        # so that is only told apart while the live member answers.
        stale_nicknames = {entry.server.nickname for entry in self.stale if not entry.ambiguous
                           and self.name_at(entry.server.address) not in self.errors}
        down: list[str] = []
        peers: set[str] = set()
        folded = 0
        for name, status in self.statuses.items():
            for connection in status.connections:
                if connection.up:
                    continue
                if connection.nickname in stale_nicknames:
                    folded += 1
                    continue
                peer = self.peer(status, connection.nickname)
                peers.add(peer)
                note = " (did not answer)" if peer in self.errors else ""
                down.append(f"{name} {connection}{note}")
        aside = f"; {folded} down to stale entries, see raft.servers" if folded else ""
        if down:
            return self.check("connections", UNHEALTHY, f"raft connections down: {', '.join(down)}{aside}",
                              f"check that the ovsdb-server of {', '.join(sorted(peers))} runs and that its raft "
                              "address can be reached from the other members")
        return self.check("connections", OK, f"every raft connection of {', '.join(self.statuses)} is up{aside}")

    def log(self) -> Check:
        behind: list[str] = []
        leader = self.leader_status
        for name, status in self.statuses.items():
            unapplied = status.unapplied - status.uncommitted
            if status.leader == "unknown" and status.uncommitted and status.status not in OUTSIDE:
                behind.append(f"{name}: {status.uncommitted} entries cannot commit without a leader")
            elif status is leader and status.uncommitted > LOG_LAG:
                behind.append(f"{name}: {status.uncommitted} entries wait for a majority")
            if unapplied > LOG_LAG:
                behind.append(f"{name}: {unapplied} committed entries not applied")
        if leader is not None:
            last = leader.log_end - 1
            stale = {entry.server.sid for entry in self.stale}
            for server in leader.servers:
                if (server.is_self or server.sid in stale or server.phase != "stable" or server.match_index is None):
                    continue
                if last - server.match_index > LOG_LAG:
                    who = self.name_at(server.address) or server.nickname
                    behind.append(f"{who}: {last - server.match_index} entries behind the leader")
        indexes = {n: r.index for n, r in self.rows.items() if r.index is not None}
        if indexes:
            top = max(indexes.values())
            behind += [f"{n}: index {i}, {top - i} below the highest" for n, i in indexes.items() if top - i > LOG_LAG]
        if behind:
            return self.check("log", UNHEALTHY, "log not keeping up: " + "; ".join(behind),
                              "restore the leader (raft.leader) where entries cannot commit; else check the lagging "
                              "members' connections and load: "
                              + "; ".join(self.appctl(n, "cluster/status", self.database) for n in self.statuses))
        if leader is not None:
            return self.check("log", OK, f"every member within {LOG_LAG} entries of the leader "
                              f"{leader.source} (log [{leader.log_start}, {leader.log_end}], "
                              f"committed {leader.commit_index}, applied {leader.applied_index})")
        return self.check("log", OK, f"no member has more than {LOG_LAG} entries to commit or apply")
