"""`fabricgen status` on the IC database as a default Kube-OVN install runs it, never on our picture of it.

The database is built by OVN's own `ovn-ctl` with the arguments of Kube-OVN v1.16.2's
`dist/images/start-ic-db.sh` (`support/kubeovn_db.py`): three members whose raft addresses are
bracketed IPv4 (`tcp:[IP]:6647`), on both OVN releases at hand. The fabric declares its members
by their bare node addresses, as a user writes them, and the endpoints file names only their
control sockets (no `raftAddress`): the verdicts below must hold on that alone.

No advice that could do harm may come from a healthy member: no `cluster/kick` of an id a running
member has, no database file removed, no rejoin, unless the evidence is unambiguous; where it is
not, the verdict is `unknown` and says what was seen.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabricgen import exit_codes
from fabricgen.cli import main
from fabricgen.lab.ovn.programs import Programs
from support.fabrics import REPO
from support.kubeovn_db import NB, SB, KubeOvnDatabase, missing

pytestmark = pytest.mark.lab  # starts real programs: kubectl, ovn-appctl, ovn-ctl, ovn-ic-nbctl, ovn-ic-sbctl...

LAB = REPO / "sites" / "lab" / "fabric.yaml"
SYSTEM = Programs.from_environment()
DEBIAN13 = Programs((REPO / ".ovn" / "25.03").resolve())
NODES = ("hq-node-1", "hq-node-2", "hq-node-3")
DECLARED = ("10.10.10.11", "10.10.10.12", "10.10.10.13")  # sites/lab's IC database members
HARM = re.compile(r"cluster/kick|remove its database file|join-cluster|cluster-to-standalone")


def _param(programs: Programs, id_: str) -> object:
    gone = missing(programs)
    return pytest.param(programs, id=id_, marks=pytest.mark.skipif(
        bool(gone), reason=f"OVN programs missing: {', '.join(gone)} (scripts/setup.sh --test)"))


@pytest.fixture(params=[_param(SYSTEM, "ovn-23.03"), _param(DEBIAN13, "ovn-25.03")])
def icdb(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[KubeOvnDatabase]:
    programs: Programs = request.param
    monkeypatch.setenv("PATH", programs.search_path())
    with KubeOvnDatabase(programs) as db:
        yield db


def fabric_at(db: KubeOvnDatabase, tmp_path: Path, addresses: tuple[str, ...] | None = None) -> Path:
    """sites/lab's fabric with its IC database members at the pods' addresses (bare, as users write)."""
    text = LAB.read_text(encoding="utf-8")
    for old, new in zip(DECLARED, addresses or [p.ip for p in db.pods.values()], strict=True):
        text = text.replace(f"address: {old}\n", f"address: {new}\n")
    path = tmp_path / "sites" / "lab" / "fabric.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


def endpoints_for(db: KubeOvnDatabase, tmp_path: Path) -> Path:
    pods = list(db.pods.values())
    endpoints = {"icDatabase": {
        "northbound": ",".join(p.remote(NB) for p in pods), "southbound": ",".join(p.remote(SB) for p in pods),
        "members": [{"name": node, "northbound": {"control": str(p.ctl(NB))},
                     "southbound": {"control": str(p.ctl(SB))}} for node, p in zip(NODES, pods, strict=True)]}}
    path = tmp_path / "endpoints.json"
    path.write_text(json.dumps(endpoints), encoding="utf-8")
    return path


def raft(fabric: Path, endpoints: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, dict[str, str]]]:
    """The IC database's raft lines by database (`nb`, `sb`) and check."""
    main(["status", str(fabric), "--endpoints", str(endpoints), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    out: dict[str, dict[str, dict[str, str]]] = {"nb": {}, "sb": {}}
    for check in doc["checks"]:
        for db in out:
            if check["subject"] == f"IC database {db} raft":
                out[db][check["check"]] = check
    return out


def no_harm(lines: dict[str, dict[str, str]]) -> None:
    for check in lines.values():
        assert not HARM.search(check["fix"]), check


def test_a_healthy_kube_ovn_ic_database_is_all_ok(icdb: KubeOvnDatabase, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    icdb.create()
    assert f"Address: tcp:[{icdb.pods['node-1'].ip}]:6647" in icdb.status("node-1")  # the form under test
    lines = raft(fabric_at(icdb, tmp_path), endpoints_for(icdb, tmp_path), capsys)
    for db in ("nb", "sb"):
        assert {name: c["verdict"] for name, c in lines[db].items()} == dict.fromkeys(lines[db], "ok"), lines[db]
        assert "hq-node-1" in lines[db]["raft.servers"]["why"]
        assert "all 3 declared members are in the server list" in lines[db]["raft.members"]["why"]


def test_one_member_down_is_named_and_nothing_healthy_is_kicked(icdb: KubeOvnDatabase, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: with bracketed addresses and one member down, the down member was called
    stale with its `cluster/kick`, every declared member missing with a rejoin, and the links to it
    ok. Now: the member is named as not answering, quorum is kept, its links are down, no kick."""
    icdb.create()
    fabric, endpoints = fabric_at(icdb, tmp_path), endpoints_for(icdb, tmp_path)
    down = next(n for n in icdb.pods if n != icdb.leader())  # a follower; the verdicts hold for either
    node = NODES[list(icdb.pods).index(down)]
    icdb.stop(down)
    lines = raft(fabric, endpoints, capsys)
    for db in ("nb", "sb"):
        verdicts = {name: c["verdict"] for name, c in lines[db].items()}
        assert verdicts == {"raft.reachable": "unhealthy", "raft.status": "ok", "raft.leader": "ok",
                            "raft.servers": "ok", "raft.members": "ok", "raft.count": "ok",
                            "raft.connections": "unhealthy", "raft.log": "ok"}, lines[db]
        assert node in lines[db]["raft.reachable"]["why"]
        assert "quorum kept: 2 of 3 members run" in lines[db]["raft.leader"]["why"]
        assert f"({node}) (did not answer)" not in lines[db]["raft.connections"]["why"]
        assert "(did not answer)" in lines[db]["raft.connections"]["why"]
        no_harm(lines[db])


def test_members_declared_at_other_addresses_are_not_judged_stale(icdb: KubeOvnDatabase, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A fabric whose member addresses are not how the cluster knows its members (here sites/lab's
    own 10.10.10.x against the pods' addresses). While every member answers, each one's own server
    id places it in the list: ok, with the addresses named. With one member down, its entry is at an
    address no declared member has while a declared member is missing: that is no evidence to kick
    or rejoin anything: `unknown`, saying what was seen."""
    icdb.create()
    fabric, endpoints = fabric_at(icdb, tmp_path, DECLARED), endpoints_for(icdb, tmp_path)
    lines = raft(fabric, endpoints, capsys)
    for db in ("nb", "sb"):
        assert {name: c["verdict"] for name, c in lines[db].items()} == dict.fromkeys(lines[db], "ok"), lines[db]
        assert (f"hq-node-2 at tcp:[{icdb.pods['node-2'].ip}]:{6647 if db == 'nb' else 6648}, not "
                f"tcp:10.10.10.12:{6647 if db == 'nb' else 6648}") in lines[db]["raft.members"]["why"]
    down = next(n for n in icdb.pods if n != icdb.leader())
    icdb.stop(down)
    lines = raft(fabric, endpoints, capsys)
    for db in ("nb", "sb"):
        assert lines[db]["raft.servers"]["verdict"] == "unknown", lines[db]["raft.servers"]
        assert lines[db]["raft.members"]["verdict"] == "unknown", lines[db]["raft.members"]
        why = lines[db]["raft.servers"]["why"]
        node = NODES[list(icdb.pods).index(down)]
        assert f"tcp:[{icdb.pods[down].ip}]:" in why and f"{node} (tcp:10.10.10.1" in why, why
        assert "raftAddress" in lines[db]["raft.servers"]["fix"]
        no_harm(lines[db])
    assert main(["status", str(fabric), "--endpoints", str(endpoints)]) in (exit_codes.NOT_READ,
                                                                          exit_codes.UNHEALTHY)
    capsys.readouterr()


def raise_election_timer(icdb: KubeOvnDatabase, timer_ms: int = 30000) -> None:
    """Raise every database's election timer to `timer_ms` (`cluster/change-election-timer` at most
    doubles it per call), so that members restarted together read as electing for that long."""
    leader = icdb.leader()
    timer = 1000
    while timer < timer_ms:
        timer = min(2 * timer, timer_ms)
        for database in (NB, SB):
            done = icdb.appctl(leader, "cluster/change-election-timer", database, str(timer), database=database)
            assert done.returncode == 0, done.stderr
            icdb.wait_until(lambda d=database, t=timer: all(f"Election timer: {t}" in icdb.status(n, d)  # type: ignore[misc]
                                                            for n in icdb.pods), f"election timer {timer}")


def test_an_election_under_way_is_not_a_lost_quorum(icdb: KubeOvnDatabase, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Every member answers and none leads yet: raft is electing. The members are restarted
    together, as pods are after a node drain, with an election timer long enough (raised with
    `cluster/change-election-timer`, which doubles at most per call) that reading happens before
    any of them times out. Not `quorum lost`, no manual recovery: `unknown`, read again."""
    icdb.create()
    raise_election_timer(icdb)
    fabric, endpoints = fabric_at(icdb, tmp_path), endpoints_for(icdb, tmp_path)
    for name in icdb.pods:
        icdb.stop(name)
    starting = [icdb.launch(name, "start_ic_ovsdb") for name in icdb.pods]  # ovn-ctl waits for `connected`: a leader
    try:
        icdb.wait_until(lambda: all("Role: follower" in icdb.status(n) and "Leader: unknown" in icdb.status(n)
                                    for n in icdb.pods), "every member to be up with no leader")
        lines = raft(fabric, endpoints, capsys)
        assert all("Leader: unknown" in icdb.status(n) for n in icdb.pods), "an election ended before the read"
    finally:
        for process in starting:
            process.kill()
            process.communicate()
    leader_line = lines["nb"]["raft.leader"]
    assert leader_line["verdict"] == "unknown", leader_line
    assert "an election is under way" in leader_line["why"] and "quorum lost" not in leader_line["why"]
    assert "30000 ms" in leader_line["why"]
    assert lines["nb"]["raft.reachable"]["verdict"] == "ok"
    for db in ("nb", "sb"):
        no_harm(lines[db])


def test_a_standalone_ic_database_of_one_declared_member_is_a_layout(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """start-ic-db.sh's first branch (no NODE_IPS): `ovn-ctl ... start_ic_ovsdb` without cluster
    addresses, a standalone database. With one member declared that is a supported layout: its
    control socket answers that `cluster/status` is no command, which is a standalone server,
    neither unreachable nor a fault to fix with `join-cluster`."""
    programs = SYSTEM
    if missing(programs):
        pytest.skip(f"OVN programs missing: {missing(programs)}")
    monkeypatch.setenv("PATH", programs.search_path())
    with KubeOvnDatabase(programs, size=1) as db:
        pod = db.pods["node-1"]
        done = subprocess.run([*db.argv(pod, None)[:3], "--db-ic-nb-addr=[::]", "--db-ic-sb-addr=[::]",
                               "start_ic_ovsdb"], env=db.env(pod), capture_output=True, text=True, timeout=120,
                              check=False, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stdout + done.stderr
        assert '"cluster/status" is not a valid command' in db.status("node-1")
        text = LAB.read_text(encoding="utf-8")
        text = re.sub(r"(    members:\n)(?:      - node: .*\n        address: .*\n)+",
                      rf"\1      - node: hq-node-1\n        address: {pod.ip}\n", text)
        fabric = tmp_path / "fabric.yaml"
        fabric.write_text(text, encoding="utf-8")
        endpoints = tmp_path / "endpoints.json"
        endpoints.write_text(json.dumps({"icDatabase": {
            "northbound": f"tcp:[{pod.ip}]:6645", "southbound": f"tcp:[{pod.ip}]:6646",
            "members": [{"name": "hq-node-1", "northbound": {"control": str(pod.ctl(NB))},
                         "southbound": {"control": str(pod.ctl(SB))}}]}}), encoding="utf-8")
        lines = raft(fabric, endpoints, capsys)
    for db_name in ("nb", "sb"):
        verdicts = {name: c["verdict"] for name, c in lines[db_name].items()}
        assert verdicts == dict.fromkeys(verdicts, "ok"), lines[db_name]
        assert "a standalone database, the one member declared" in lines[db_name]["raft.status"]["why"]


@pytest.mark.parametrize(("first", "second", "same"), [
    ("tcp:[10.0.0.1]:6647", "tcp:10.0.0.1:6647", True),       # Kube-OVN's form and the fabric's
    ("ssl:[10.0.0.1]:6647", "tcp:10.0.0.1:6647", True),       # ENABLE_SSL: one listener per host and port
    ("tcp:[fd00::1]:6643", "tcp:[fd00:0:0::1]:6643", True),   # IPv6, however it is written
    ("tcp:[10.0.0.1]:6647", "tcp:10.0.0.1:06647", True),
    ("tcp:[10.0.0.1]:6647", "tcp:10.0.0.2:6647", False),
    ("tcp:[10.0.0.1]:6647", "tcp:10.0.0.1:6648", False),
    ("unix:/run/a.raft", "unix:/run/a.raft", True),
    ("unix:/run/a.raft", "unix:/run/b.raft", False),
])
def test_raft_addresses_are_compared_as_ovsdb_means_them(first: str, second: str, same: bool) -> None:
    from fabricgen.observe import raft_address

    assert raft_address.same(first, second) is same


def test_declared_members_are_written_as_cluster_status_prints_them() -> None:
    from fabricgen.judge.raft_health import declared_members

    members = declared_members([("a", "10.0.0.1"), ("b", "fd00::2")], "northbound", ic=True, protocol="ssl")
    assert [m.address for m in members] == ["ssl:10.0.0.1:6647", "ssl:[fd00::2]:6647"]


def test_each_member_is_a_series_of_its_own(icdb: KubeOvnDatabase, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """`status --format openmetrics` per raft member: whether it answered, its role, its status, term,
    the servers its list holds and its disconnections, by the fabric's names, with the members the
    fabric declares; one member down is `up 0` with no role, the others keep theirs. Prometheus'
    own linter (`promtool check metrics`) reads it."""
    import shutil

    icdb.create()
    fabric, endpoints = fabric_at(icdb, tmp_path), endpoints_for(icdb, tmp_path)
    leader = icdb.leader()
    down = next(n for n in icdb.pods if n != leader)
    icdb.stop(down)
    main(["status", str(fabric), "--endpoints", str(endpoints), "--format", "openmetrics"])
    text = capsys.readouterr().out
    where = 'site="lab",scope="ic",name="",database="nb"'
    lead, gone = NODES[list(icdb.pods).index(leader)], NODES[list(icdb.pods).index(down)]
    assert f'fabricgen_raft_member_up{{{where},member="{lead}"}} 1' in text
    assert f'fabricgen_raft_member_up{{{where},member="{gone}"}} 0' in text
    assert f'fabricgen_raft_member_role{{{where},member="{lead}",role="leader"}} 1' in text
    assert not re.search(rf'fabricgen_raft_member_role\{{{re.escape(where)},member="{gone}",role="\w+"\}} 1', text)
    assert f'fabricgen_raft_member_servers{{{where},member="{lead}"}} 3' in text
    assert f'fabricgen_raft_member_status{{{where},member="{lead}",status="cluster member"}} 1' in text
    assert f'fabricgen_raft_member_status{{{where},member="{gone}"' not in text
    assert re.search(rf'fabricgen_raft_member_term\{{{re.escape(where)},member="{lead}"\}} [1-9]', text)
    assert f'fabricgen_raft_member_term{{{where},member="{gone}"}}' not in text  # not known: no value
    assert f'fabricgen_raft_declared_members{{{where}}} 3' in text
    promtool = shutil.which("promtool")
    if promtool is not None:
        done = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0, done.stdout + done.stderr


def one_member_fabric(db: KubeOvnDatabase, tmp_path: Path) -> tuple[Path, Path]:
    """sites/lab declaring one IC database member (hq-node-1 at the first pod's address) and an
    endpoints file naming its control sockets only: `ic-db-host` as Kube-OVN's docs show it, one
    address, on a three-member install."""
    pod = db.pods["node-1"]
    text = re.sub(r"(    members:\n)(?:      - node: .*\n        address: .*\n)+",
                  rf"\1      - node: hq-node-1\n        address: {pod.ip}\n", LAB.read_text(encoding="utf-8"))
    fabric = tmp_path / "sites" / "lab" / "fabric.yaml"
    fabric.parent.mkdir(parents=True)
    fabric.write_text(text, encoding="utf-8")
    endpoints = tmp_path / "endpoints.json"
    endpoints.write_text(json.dumps({"icDatabase": {
        "northbound": pod.remote(NB), "southbound": pod.remote(SB),
        "members": [{"name": "hq-node-1", "northbound": {"control": str(pod.ctl(NB))},
                     "southbound": {"control": str(pod.ctl(SB))}}]}}), encoding="utf-8")
    return fabric, endpoints


def test_members_that_run_undeclared_are_drift_and_never_kicked(icdb: KubeOvnDatabase, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Three members run (install-ic-server.sh's NODE_IPS), the fabric declares one and status reads
    that one only. The two others are in its server list at addresses no declared member has, and
    no member that answered is them: once that was a stale entry with its `cluster/kick` (removing
    two healthy members), or `ok` ("holds exactly the declared members"). Their raft connections
    to the member read are up, so they run: drift, naming both, and what the fabric would do."""
    icdb.create()
    fabric, endpoints = one_member_fabric(icdb, tmp_path)
    lines = raft(fabric, endpoints, capsys)
    for db in ("nb", "sb"):
        servers = lines[db]["raft.servers"]
        assert servers["verdict"] == "drift", servers
        for name in ("node-2", "node-3"):
            assert f"tcp:[{icdb.pods[name].ip}]:{6647 if db == 'nb' else 6648} (heard from)" in servers["why"]
        assert "the fabric declares 1 of the 3 members" in servers["why"]
        assert "leaving 1 of 3, no quorum" in servers["why"]
        assert "interconnection.database.members" in servers["fix"]
        no_harm(lines[db])


def test_a_minority_answering_without_a_leader_is_not_a_lost_quorum(icdb: KubeOvnDatabase, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """No leader; one member stopped, one running but not read (its control socket is not where
    the endpoints say: a failed `kubectl exec`), the third answers with its raft connections to the
    second up. One of three answered, yet two run: an election, not a lost quorum, and no manual
    recovery. The election timer is raised first (as in the election test) so that no leader is
    elected before the read."""
    icdb.create()
    raise_election_timer(icdb)
    fabric, endpoints = fabric_at(icdb, tmp_path), endpoints_for(icdb, tmp_path)
    document = json.loads(endpoints.read_text())
    for member in document["icDatabase"]["members"][1:2]:  # node-2 runs, but its reads fail
        member["northbound"]["control"] = member["southbound"]["control"] = str(tmp_path / "gone.ctl")
    endpoints.write_text(json.dumps(document))
    for name in icdb.pods:
        icdb.stop(name)
    starting = [icdb.launch(name, "start_ic_ovsdb") for name in ("node-1", "node-2")]
    try:
        icdb.wait_until(lambda: all("Role: follower" in icdb.status(n) and "Leader: unknown" in icdb.status(n)
                                    and "<-" in icdb.status(n) for n in ("node-1", "node-2")),
                        "two members up with no leader, connected to each other")
        lines = raft(fabric, endpoints, capsys)
        assert "Leader: unknown" in icdb.status("node-1"), "an election ended before the read"
    finally:
        for process in starting:
            process.kill()
            process.communicate()
    line = lines["nb"]["raft.leader"]
    assert line["verdict"] == "unknown", line
    assert "quorum lost" not in line["why"] and "cluster-to-standalone" not in line["fix"]
    assert "hq-node-2 (by hq-node-1's" in line["why"], line["why"]
    assert "1 + 1 of 3 run, a majority" in line["why"]
    no_harm(lines["nb"])
