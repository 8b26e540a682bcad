"""Raft health (`fabricgen.judge.raft`) judged on real clusters, and its parsers.

The clusters are real: ovsdb-server members made with `ovsdb-tool create-cluster` and
`join-cluster` on unix sockets (`support/raft_cluster.py`), on both Open vSwitch versions at
hand: the system's (Debian 12, OVS 3.1) and Debian 13's OVS 3.5 that `scripts/setup.sh --test`
extracts into `.ovn/25.03`. Nothing is mocked: every verdict below is about what the members said.

The parser tests read `tests/data/raft/ovs-*/`, the verbatim outputs of those two versions
(`cluster/status` of each scenario, `ovsdb-client query` of `_Server`, and the errors a stopped
member and a standalone server give).
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from fabricgen.errors import FabricgenError
from fabricgen.judge.checks import Check
from fabricgen.judge.raft import (
    ClusterStatus,
    Member,
    RaftParseError,
    ServerRow,
    judge,
    parse_cluster_status,
    parse_server_databases,
    server_databases_argv,
)
from fabricgen.lab.ovn.programs import Programs
from support.fabrics import REPO
from support.raft_cluster import RaftCluster, missing

DATA = REPO / "tests" / "data" / "raft"
NB = "OVN_Northbound"
CHECKS = ["raft.reachable", "raft.status", "raft.leader", "raft.servers", "raft.members", "raft.count",
          "raft.connections", "raft.log"]
ALL_OK = dict.fromkeys(CHECKS, "ok")
SYSTEM = Programs()
DEBIAN13 = Programs((REPO / ".ovn" / "25.03").resolve())


def _version(programs: Programs, id_: str) -> object:
    gone = missing(programs, programs.ovn_schemas / "ovn-nb.ovsschema")
    reason = f"OVS programs of {programs.name} missing: {', '.join(gone)} (scripts/setup.sh --test installs 25.03)"
    return pytest.param(programs, id=id_, marks=pytest.mark.skipif(bool(gone), reason=reason))


VERSIONS = [_version(SYSTEM, "ovs-3.1"), _version(DEBIAN13, "ovs-3.5")]


@pytest.fixture(params=VERSIONS)
def programs(request: pytest.FixtureRequest) -> Programs:
    value: Programs = request.param
    return value


@pytest.fixture
def cluster(programs: Programs) -> Iterator[RaftCluster]:
    with RaftCluster(programs, programs.ovn_schemas / "ovn-nb.ovsschema") as built:
        yield built


# ---------------------------------------------------------------- reading a cluster as `status` will
def read(cluster: RaftCluster) -> dict[str, ClusterStatus | ServerRow | str]:
    """Each member's `cluster/status`, parsed, or the error text of a member that did not answer."""
    out: dict[str, ClusterStatus | ServerRow | str] = {}
    for name in cluster.members:
        done = cluster.appctl(name, "cluster/status", cluster.database)
        out[name] = parse_cluster_status(done.stdout, name) if done.returncode == 0 else done.stderr
    return out


def read_rows(cluster: RaftCluster) -> dict[str, ClusterStatus | ServerRow | str]:
    """Each member's `_Server` row for the database, read with the exported command."""
    out: dict[str, ClusterStatus | ServerRow | str] = {}
    for name, member in cluster.members.items():
        done = cluster.run(*server_databases_argv(member.remote), check=False)
        out[name] = (parse_server_databases(done.stdout, name)[cluster.database] if done.returncode == 0
                     else done.stderr)
    return out


def declared(cluster: RaftCluster) -> list[Member]:
    return [Member(name, member.address) for name, member in cluster.members.items()]


def ctls(cluster: RaftCluster) -> dict[str, str]:
    return {name: str(member.ctl) for name, member in cluster.members.items()}


def judged(cluster: RaftCluster, members: Mapping[str, ClusterStatus | ServerRow | str] | None = None,
           *, declare: bool = True) -> dict[str, Check]:
    checks = judge(cluster.database, "zone hq raft", declared(cluster) if declare else None,
                   read(cluster) if members is None else members, ctls=ctls(cluster))
    assert all(c.subject == "zone hq raft" for c in checks)
    assert all(bool(c.fix) == (c.verdict != "ok") for c in checks), checks
    return {c.name: c for c in checks}


def verdicts(checks: Mapping[str, Check]) -> dict[str, str]:
    return {name: check.verdict for name, check in checks.items()}


def appctl(cluster: RaftCluster, name: str, *args: str) -> str:
    """A fix command as `judge` words it for member `name`."""
    return f"on {name}: " + shlex.join(["ovn-appctl", "-t", str(cluster.members[name].ctl), *args])


def connections(text: str) -> list[str]:
    """The entries of the `Connections:` line of a cluster/status output."""
    line = next((x for x in text.splitlines() if x.startswith("Connections:")), "Connections:")
    return line.split()[1:]


def connection_down(cluster: RaftCluster, name: str, peer: str) -> bool:
    """Whether `name` lists its connection to `peer` as down and has no incoming one from it."""
    listed = connections(cluster.status(name))
    return f"(->{peer})" in listed and f"<-{peer}" not in listed


def run_fix(cluster: RaftCluster, fix: str) -> subprocess.CompletedProcess[str]:
    """Run a fix `on NAME: COMMAND` exactly as printed, with the cluster's programs."""
    _, _, command = fix.partition(": ")
    argv = shlex.split(command)
    return cluster.run(*argv, check=True)


# ---------------------------------------------------------------- real clusters
@pytest.mark.lab
def test_healthy_three_members_are_all_ok(cluster: RaftCluster) -> None:
    cluster.create(3)
    checks = judged(cluster)
    assert verdicts(checks) == ALL_OK
    assert list(checks) == CHECKS
    leader = cluster.leader()
    assert checks["raft.leader"].why == f"{leader} leads; every member that answered names it"
    assert checks["raft.count"].why == "3 members: a majority is 2, 1 failure(s) tolerated"
    # Undeclared (a Kube-OVN zone's ovn-central pods): judged against the members that answered.
    assert verdicts(judged(cluster, declare=False)) == ALL_OK
    # A database the server does not cluster answers an error, which is no cluster/status output.
    other = cluster.appctl("s1", "cluster/status", "OVN_Southbound")
    assert other.returncode != 0
    with pytest.raises(RaftParseError, match=r"^s1:1: not the output of `cluster/status`: 'unknown cluster'"):
        parse_cluster_status(other.stderr, "s1")


@pytest.mark.lab
def test_one_member_stopped_keeps_quorum(cluster: RaftCluster) -> None:
    cluster.create(3)
    leader = cluster.leader()
    stopped = next(n for n in cluster.members if n != leader)
    cluster.stop(stopped)
    running = [n for n in cluster.members if n != stopped]
    cluster.wait_until(lambda: all(connection_down(cluster, n, stopped) for n in running),
                       f"the others to see {stopped} down")
    checks = judged(cluster)
    assert verdicts(checks) == {**ALL_OK, "raft.reachable": "unhealthy", "raft.connections": "unhealthy"}
    assert checks["raft.leader"].why == (f"{leader} leads; every member that answered names it; quorum kept: 2 of 3 "
                                         "members run, a majority is 2, no further failure tolerated")
    assert stopped in checks["raft.reachable"].why
    assert appctl(cluster, stopped, "cluster/status", NB) in checks["raft.reachable"].fix
    assert f"(->{stopped}) (did not answer)" in checks["raft.connections"].why


@pytest.mark.lab
def test_two_members_stopped_lose_the_leader(cluster: RaftCluster) -> None:
    cluster.create(3)
    leader = cluster.leader()
    stopped = [n for n in cluster.members if n != leader]
    for name in stopped:
        cluster.stop(name)
    cluster.wait_until(lambda: "Status: disconnected from the cluster (election timeout)" in cluster.status(leader),
                       f"{leader} to give up its election")
    checks = judged(cluster)
    assert verdicts(checks) == {**ALL_OK, "raft.reachable": "unhealthy", "raft.status": "unhealthy",
                                "raft.leader": "unhealthy", "raft.connections": "unhealthy"}
    assert checks["raft.leader"].why.startswith(f"no leader: quorum lost ({leader}: candidate, term ")
    assert checks["raft.leader"].why.endswith(f"did not answer: {', '.join(stopped)}); 3 members need 2 running "
                                              "to elect one")
    assert checks["raft.leader"].fix.startswith(f"start the stopped members ({', '.join(stopped)}) so that 2 of 3 run")
    assert checks["raft.status"].why.startswith(f"{leader}: disconnected from the cluster (election timeout)")


@pytest.mark.lab
def test_stale_server_is_named_with_the_kick_that_removes_it(cluster: RaftCluster) -> None:
    cluster.create(3)
    rebuilt = next(n for n in cluster.members if n != cluster.leader())
    old = parse_cluster_status(cluster.status(rebuilt), rebuilt).short_id
    # The node is rebuilt without its state: files removed, joined again at the same address.
    cluster.rejoin(rebuilt)
    new = parse_cluster_status(cluster.status(rebuilt), rebuilt).short_id
    assert new != old

    def listed_by_all(count: int) -> bool:
        """Every member lists `count` servers, names a leader, and has no connection down but
        to the rebuilt member's address (which the stale id keeps trying)."""
        texts = [cluster.status(n) for n in cluster.members]
        return all("Status: cluster member" in t and "Leader: unknown" not in t
                   and t.count(" at unix:") == count
                   and not [c for c in connections(t) if c.startswith("(") and c != f"(->{rebuilt})"]
                   for t in texts)

    cluster.wait_until(lambda: listed_by_all(4), "every member to list the old and the new id")
    leader = cluster.leader()
    checks = judged(cluster)
    assert verdicts(checks) == {**ALL_OK, "raft.servers": "unhealthy", "raft.count": "unhealthy"}
    address = cluster.members[rebuilt].address
    assert checks["raft.servers"].why == (f"stale server list entries: {old} at {address}, where {rebuilt} runs as "
                                          f"{new}; they count towards the majority")
    kick = appctl(cluster, leader, "cluster/kick", NB, old)
    assert checks["raft.servers"].fix == kick
    assert checks["raft.count"].fix == kick
    assert checks["raft.count"].why.startswith("4 members (1 of them stale, see raft.servers) tolerate 1 failure(s)")

    # The fix, run as printed, removes the stale entry; the cluster is judged ok again.
    assert run_fix(cluster, kick).stdout.strip() == "started removal"
    cluster.wait_settled(list(cluster.members), 3)
    assert verdicts(judged(cluster)) == ALL_OK


@pytest.mark.lab
def test_two_member_cluster_is_unhealthy(cluster: RaftCluster) -> None:
    cluster.create(2)
    checks = judged(cluster)
    assert verdicts(checks) == {**ALL_OK, "raft.count": "unhealthy"}
    assert checks["raft.count"].why == "2 members: two members cannot lose either (a majority of 2 is 2)"
    assert "join a third member" in checks["raft.count"].fix


@pytest.mark.lab
def test_single_member_ic_cluster_is_ok(programs: Programs) -> None:
    with RaftCluster(programs, programs.ovn_schemas / "ovn-ic-nb.ovsschema") as cluster:
        cluster.create(1)
        assert cluster.database == "OVN_IC_Northbound"
        checks = judged(cluster)
        assert verdicts(checks) == ALL_OK
        assert checks["raft.count"].why == "1 member, as declared: no failure tolerated"


@pytest.mark.lab
def test_declared_member_that_never_joined(cluster: RaftCluster) -> None:
    cluster.create(2)
    nowhere = f"unix:{cluster.root}/nowhere.raft"
    cluster.join("s3", [nowhere])  # pointed at a cluster that is not there: it never joins
    cluster.start("s3")
    cluster.wait_until(lambda: "Status: joining cluster" in cluster.status("s3")
                       and connection_down(cluster, "s3", "nowhere"), "s3 to try to join")
    checks = judged(cluster)
    assert verdicts(checks) == {**ALL_OK, "raft.status": "unhealthy", "raft.members": "unhealthy",
                                "raft.count": "unhealthy", "raft.connections": "unhealthy"}
    s1, s2, s3 = (cluster.members[n].address for n in ("s1", "s2", "s3"))
    join = shlex.join(["ovsdb-tool", "join-cluster", "<db file>", NB, s3, s1, s2])
    assert checks["raft.members"].why.startswith(f"s3 ({s3}) is declared but not in the server list of the "
                                                 "leader s1, which holds ")
    assert checks["raft.members"].fix == (f"on s3: stop its ovsdb-server, remove its database file, run {join} "
                                          "and start ovsdb-server")
    assert checks["raft.status"].why.startswith("s3: joining cluster")
    assert f"its join waits for {nowhere}" in checks["raft.status"].fix
    assert checks["raft.count"].why == "2 members: two members cannot lose either (a majority of 2 is 2)"
    assert checks["raft.count"].fix == "join the declared members missing from the cluster (raft.members)"


@pytest.mark.lab
def test_server_rows_read_with_the_exported_command(cluster: RaftCluster) -> None:
    cluster.create(3)
    without_ctl = ["raft.reachable", "raft.status", "raft.leader", "raft.members", "raft.count", "raft.log"]
    checks = judged(cluster, read_rows(cluster))
    assert list(checks) == without_ctl
    assert verdicts(checks) == dict.fromkeys(without_ctl, "ok")
    assert checks["raft.reachable"].why.endswith("from the _Server database only, so the server list and "
                                                 "connections are not checked")
    leader = cluster.leader()
    assert checks["raft.leader"].why.startswith(f"{leader} leads")

    stopped = next(n for n in cluster.members if n != leader)
    cluster.stop(stopped)
    rows = read_rows(cluster)
    assert isinstance(rows[stopped], str)
    checks = judged(cluster, rows)
    assert verdicts(checks) == {**dict.fromkeys(without_ctl, "ok"), "raft.reachable": "unhealthy"}
    assert checks["raft.leader"].why.endswith("quorum kept: 2 of 3 members run, a majority is 2, "
                                              "no further failure tolerated")


# ---------------------------------------------------------------- parsers, on captured output
@pytest.fixture(params=["ovs-3.1", "ovs-3.5"])
def captured(request: pytest.FixtureRequest) -> Path:
    path: Path = DATA / request.param
    return path


def status_of(directory: Path, file: str, name: str) -> ClusterStatus:
    return parse_cluster_status((directory / file).read_text(), name)


def test_parse_leader_and_follower(captured: Path) -> None:
    leader = status_of(captured, "healthy-s1.txt", "s1")
    assert (leader.nickname, leader.database, leader.status, leader.role, leader.leader, leader.vote) == (
        "s1", NB, "cluster member", "leader", "self", "self")
    assert leader.address.endswith("/s1.raft") and leader.address.startswith("unix:/tmp/raft-")
    assert leader.server_id.startswith(leader.short_id) and len(leader.server_id) == 36
    assert leader.cluster_id is not None and len(leader.cluster_id) == 36
    assert (leader.log_start, leader.log_end, leader.uncommitted, leader.unapplied) == (2, 5, 0, 0)
    assert (leader.commit_index, leader.applied_index) == (4, 4)
    assert (leader.disconnections, leader.election_timer_ms) == (0, 1000)
    assert leader.election_won_ms is not None
    # A cluster's first leader: 3.1 records the election it started; 3.5's bootstrap election
    # skips the pre-vote, which is where it now records the start (raft_start_election).
    assert (leader.election_started_ms is not None) == (captured.name == "ovs-3.1")
    assert sorted(str(c) for c in leader.connections) == ["->s2", "->s3", "<-s2", "<-s3"]
    assert sorted((s.nickname, s.is_self, s.match_index) for s in leader.servers) == [
        ("s1", True, 4), ("s2", False, 4), ("s3", False, 4)]
    assert all(s.next_index is not None for s in leader.servers)
    follower = status_of(captured, "healthy-s2.txt", "s2")
    assert (follower.role, follower.leader, follower.vote) == ("follower", "s1", "unknown")
    assert {s.match_index for s in follower.servers} == {None}
    assert follower.cluster_id == leader.cluster_id
    assert [s.sid for s in follower.servers if s.is_self] == [follower.short_id]


def test_parse_degraded_and_leaderless(captured: Path) -> None:
    degraded = status_of(captured, "one-stopped-leader.txt", "s1")
    assert [str(c) for c in degraded.connections if not c.up] == ["(->s3)"]
    assert degraded.disconnections == 1
    lost = status_of(captured, "quorum-lost.txt", "s1")
    assert (lost.status, lost.role, lost.leader, lost.vote) == (
        "disconnected from the cluster (election timeout)", "candidate", "unknown", "self")
    assert lost.election_reason == "timeout"
    assert [s.voted_for for s in lost.servers if s.is_self] == ["s1"]
    assert {str(c) for c in lost.connections} == {"(->s2)", "(->s3)"}
    # OVS 3.1 raises its term with every election it starts; 3.5 asks for pre-votes first
    # (ovs commit 85634fd58, "Support pre-vote mechanism") and keeps the term of the lost leader.
    assert lost.term > 1 if captured.name == "ovs-3.1" else lost.term == 1


def test_parse_stale_joining_and_single(captured: Path) -> None:
    stale = status_of(captured, "stale-leader.txt", "leader")
    addresses = [s.address for s in stale.servers]
    assert len(addresses) == 4 and len(set(addresses)) == 3
    joining = status_of(captured, "joining.txt", "s2")
    assert (joining.status, joining.cluster_id, joining.servers, joining.term) == ("joining cluster", None, (), 0)
    assert joining.remotes_for_joining == ("unix:/nonexistent/x.raft",)
    assert [str(c) for c in joining.connections] == ["(->x)"]
    single = status_of(captured, "single.txt", "s1")
    assert (single.connections, len(single.servers), single.role) == ((), 1, "leader")


def test_parse_refuses_what_is_not_cluster_status(captured: Path) -> None:
    with pytest.raises(RaftParseError, match=r'^s3:1: not the output of `cluster/status`: .*cannot connect'):
        parse_cluster_status((captured / "stopped-member-error.txt").read_text().split("\n", 1)[1], "s3")
    with pytest.raises(RaftParseError, match=r"^s3:1: not the output of `cluster/status`: '2026-"):
        parse_cluster_status((captured / "stopped-member-error.txt").read_text(), "s3")
    with pytest.raises(RaftParseError, match=r"^sa:1: .*'\"cluster/status\" is not a valid command"):
        parse_cluster_status((captured / "standalone-error.txt").read_text(), "sa")
    text = (captured / "healthy-s1.txt").read_text()
    with pytest.raises(RaftParseError, match=r"^s1:10: not the output of `cluster/status`: no `Log:`, `Entries "):
        parse_cluster_status("\n".join(text.splitlines()[:10]), "s1")
    with pytest.raises(RaftParseError, match=r"^s1:8: `Term:` is not a number: 'one'"):
        parse_cluster_status(text.replace("Term: 1\n", "Term: one\n"), "s1")
    with pytest.raises(RaftParseError, match=r"^s1:2: expected `Name: DB`"):
        parse_cluster_status("s1\nCluster ID: x\n", "s1")
    with pytest.raises(RaftParseError, match=r"^x:1: not the output of `cluster/status`: ''"):
        parse_cluster_status("", "x")
    assert issubclass(RaftParseError, FabricgenError)
    # Lines it does not know are skipped.
    assert parse_cluster_status(text.replace("Vote: self\n", "Vote: self\nSomething new: 3\n"), "s1").term == 1


def test_parse_server_rows(captured: Path) -> None:
    rows = parse_server_databases((captured / "server-rows.json").read_text(), "s2")
    nb, server = rows[NB], rows["_Server"]
    assert (nb.model, nb.connected, nb.leader, nb.index) == ("clustered", True, False, 4)
    assert nb.cid is not None and nb.sid is not None and len(nb.sid) == 36
    assert (server.model, server.cid, server.sid, server.index) == ("standalone", None, None, None)
    lost = parse_server_databases((captured / "quorum-lost-rows.json").read_text(), "s1")[NB]
    assert (lost.connected, lost.leader) == (False, False)
    with pytest.raises(RaftParseError, match=r"^s1:1: the `_Server` select failed: 'syntax error' Parsing"):
        parse_server_databases('[{"details":"Parsing ovsdb operation 1 of 2 failed: No table named Nope.",'
                               '"error":"syntax error"},null]', "s1")
    with pytest.raises(RaftParseError, match=r"^s1:1: not the JSON result of `ovsdb-client query`"):
        parse_server_databases("ovsdb-client: failed to connect to \"unix:/x\" (No such file or directory)", "s1")
    assert server_databases_argv("unix:/var/run/ovn/ovnnb_db.sock") == [
        "ovsdb-client", "--timeout=10", "query", "unix:/var/run/ovn/ovnnb_db.sock",
        '["_Server",{"op":"select","table":"Database","where":[],'
        '"columns":["name","model","connected","leader","cid","sid","index"]}]']


# ---------------------------------------------------------------- judging captured output offline
def _stale_members(directory: Path) -> tuple[dict[str, ClusterStatus | ServerRow | str], ClusterStatus]:
    """The stale capture's leader and rebuilt member, and the third member (read before, in the
    same cluster)."""
    leader = status_of(directory, "stale-leader.txt", "leader")
    rejoined = status_of(directory, "stale-rejoined.txt", "rejoined")
    third = next(n for n in ("s1", "s2", "s3") if n not in (leader.nickname, rejoined.nickname))
    members: dict[str, ClusterStatus | ServerRow | str] = {
        "leader": leader, "rejoined": rejoined, "third": status_of(directory, f"healthy-{third}.txt", third)}
    return members, rejoined


def test_judge_stale_from_a_capture(captured: Path) -> None:
    members, rejoined = _stale_members(captured)
    leader = members["leader"]
    assert isinstance(leader, ClusterStatus)
    stale = next(s for s in leader.servers if s.address == rejoined.address and s.sid != rejoined.short_id)
    checks = {c.name: c for c in judge(NB, "zone hq NB", None, members)}
    assert checks["raft.servers"].verdict == "unhealthy"
    assert checks["raft.servers"].fix == ("on leader: ovn-appctl -t /var/run/ovn/ovnnb_db.ctl cluster/kick "
                                          f"OVN_Northbound {stale.sid}")
    # The rebuilt member does not answer: which of the two ids is its own is not known.
    members["rejoined"] = "ovn-appctl: cannot connect"
    checks = {c.name: c for c in judge(NB, "zone hq NB", None, members, ctls={"leader": "/l.ctl"})}
    assert checks["raft.servers"].verdict == "unhealthy"
    assert "did not answer to say which is its own" in checks["raft.servers"].why
    assert checks["raft.servers"].fix.endswith("cluster/sid OVN_Northbound prints its own id; then on leader: "
                                               "ovn-appctl -t /l.ctl cluster/kick OVN_Northbound '<the other id>'")


def test_judge_an_address_no_member_has(captured: Path) -> None:
    leader = status_of(captured, "healthy-s1.txt", "s1")
    others = [status_of(captured, f"healthy-s{i}.txt", f"s{i}") for i in (2, 3)]
    gone = others[1]
    declared_two = [Member(s.source, s.address) for s in (leader, others[0])]
    checks = {c.name: c for c in judge(NB, "dr", declared_two, {"s1": leader, "s2": others[0]})}
    assert checks["raft.servers"].why == (f"stale server list entries: {gone.short_id} at {gone.address}, an address "
                                          "no member has; they count towards the majority")
    assert checks["raft.servers"].fix == (f"on s1: ovn-appctl -t /var/run/ovn/ovnnb_db.ctl cluster/kick "
                                          f"OVN_Northbound {gone.short_id}")


def test_judge_nothing_answered() -> None:
    checks = judge("OVN_IC_Southbound", "IC southbound raft", None, {"a": "timeout", "b": "connection refused"})
    assert [(c.name, c.verdict) for c in checks] == [("raft.reachable", "unreachable")]
    assert checks[0].why == "no member answered: a: timeout; b: connection refused"
    assert "/var/run/ovn/ovn_ic_sb_db.ctl" in checks[0].fix


def test_a_failed_member_is_never_told_to_kick_its_own_id(captured: Path) -> None:
    """`failed` (raft.c `raft_handle_write_error`: a log write failed, a full disk) was told to
    remove its file, rejoin and kick its old id. Kube-OVN's start-db.sh rebuilds the file with the
    same server id from its .hdr backup, so that kick removes the live member: the fix reads the
    member's id after its restart instead, and names no kick of its id."""
    text = (captured / "healthy-s2.txt").read_text().replace("Status: cluster member", "Status: failed")
    failed = parse_cluster_status(text, "s2")
    members: dict[str, ClusterStatus | ServerRow | str] = {
        "s1": status_of(captured, "healthy-s1.txt", "s1"), "s2": failed,
        "s3": status_of(captured, "healthy-s3.txt", "s3")}
    checks = {c.name: c for c in judge(NB, "zone hq NB", None, members)}
    fix = checks["raft.status"].fix
    assert checks["raft.status"].verdict == "unhealthy"
    assert "cluster/kick" not in fix and "full disk" in fix and ".hdr" in fix
    assert "kick only an id of the server list that no running member prints as its own `Server ID:`" in fix
    assert f"{failed.short_id}, may be its id again" in fix
