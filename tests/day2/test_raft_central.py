"""`fabricgen status` on a zone's ovn-central as Kube-OVN's `start-db.sh` runs it, plain and with
`ENABLE_SSL=true`, never on our picture of it.

The NB and SB are started by OVN's own `ovn-ctl` with the arguments of Kube-OVN v1.16.2's
`dist/images/start-db.sh` (`support/kubeovn_db.py`, flavour `CENTRAL`): three members whose raft
addresses are bracketed IPv4, `tcp:[IP]:6643` / `6644`, or `ssl:[IP]:6643` with the one key,
certificate and CA of Kube-OVN's TLS secret. The endpoints file names the zone's members by their
control sockets and the databases by their unix sockets, as `kubectl exec` into the ovn-central
pods reads them. A fabric declares no ovn-central members for a Kube-OVN zone: the verdicts hold
on what the members say of each other alone.

No advice that could do harm (`cluster/kick`, a database file removed, a rejoin) may come from
members that are healthy, down or in an election.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabricgen.cli import main
from fabricgen.lab.ovn.programs import Programs
from support.fabrics import REPO
from support.kubeovn_db import CENTRAL, ZONE_NB, ZONE_SB, KubeOvnDatabase, missing

pytestmark = pytest.mark.lab  # starts real programs: kubectl, openssl, ovn-appctl, ovn-ctl, ovn-nbctl...

LAB = REPO / "sites" / "lab" / "fabric.yaml"
ZONE = "hq"  # sites/lab's zone whose ovn-central the lab plays
NODES = ("hq-node-1", "hq-node-2", "hq-node-3")
HARM = re.compile(r"cluster/kick|remove its database file|join-cluster|cluster-to-standalone")
KICK = re.compile(r"cluster/kick|remove its database file|join-cluster")
SYSTEM = Programs.from_environment()
DEBIAN13 = Programs((REPO / ".ovn" / "25.03").resolve())


def _params() -> list[object]:
    out = []
    for programs, name in ((SYSTEM, "ovn-23.03"), (DEBIAN13, "ovn-25.03")):
        for ssl in (False, True):
            gone = missing(programs, CENTRAL, ssl=ssl)
            out.append(pytest.param((programs, ssl), id=f"{name}-{'ssl' if ssl else 'tcp'}", marks=pytest.mark.skipif(
                bool(gone), reason=f"OVN programs missing: {', '.join(gone)} (scripts/setup.sh --test)")))
    return out


@pytest.fixture(params=_params())
def central(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[KubeOvnDatabase]:
    programs, ssl = request.param
    monkeypatch.setenv("PATH", programs.search_path())
    with KubeOvnDatabase(programs, flavor=CENTRAL, ssl=ssl) as db:
        db.create()
        yield db


def endpoints_for(db: KubeOvnDatabase, tmp_path: Path) -> Path:
    pods = list(db.pods.values())
    zone = {"northbound": ",".join(f"unix:{p.socket(ZONE_NB)}" for p in pods),
            "southbound": ",".join(f"unix:{p.socket(ZONE_SB)}" for p in pods),
            "members": [{"name": node, "northbound": {"control": str(p.ctl(ZONE_NB))},
                         "southbound": {"control": str(p.ctl(ZONE_SB))}} for node, p in zip(NODES, pods, strict=True)]}
    path = tmp_path / "endpoints.json"
    path.write_text(json.dumps({"availabilityZones": {ZONE: zone}}), encoding="utf-8")
    return path


def raft(db: KubeOvnDatabase, tmp_path: Path,
         capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, dict[str, str]]]:
    """The zone's raft lines by database (`nb`, `sb`) and check."""
    main(["status", str(LAB), "--endpoints", str(endpoints_for(db, tmp_path)), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    out: dict[str, dict[str, dict[str, str]]] = {"nb": {}, "sb": {}}
    for check in doc["checks"]:
        for name in out:
            if check["subject"] == f"zone {ZONE} {name} raft":
                out[name][check["check"]] = check
    assert out["nb"] and out["sb"], doc["checks"]
    return out


def no_harm(lines: dict[str, dict[str, str]]) -> None:
    for check in lines.values():
        assert not HARM.search(check["fix"]), check


def test_a_healthy_ovn_central_is_all_ok(central: KubeOvnDatabase, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    protocol = "ssl" if central.ssl else "tcp"
    ip = central.pods["node-1"].ip
    assert f"Address: {protocol}:[{ip}]:6643" in central.status("node-1", ZONE_NB)  # the form under test
    assert f"Address: {protocol}:[{ip}]:6644" in central.status("node-1", ZONE_SB)
    lines = raft(central, tmp_path, capsys)
    for db in ("nb", "sb"):
        assert {name: c["verdict"] for name, c in lines[db].items()} == dict.fromkeys(lines[db], "ok"), lines[db]
        no_harm(lines[db])


def test_one_member_down_keeps_quorum_and_nothing_healthy_is_kicked(central: KubeOvnDatabase, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    down = next(n for n in central.pods if n != central.leader(ZONE_NB))
    node = NODES[list(central.pods).index(down)]
    central.stop(down)
    lines = raft(central, tmp_path, capsys)
    for db in ("nb", "sb"):
        verdicts = {name: c["verdict"] for name, c in lines[db].items()}
        assert verdicts["raft.reachable"] == "unhealthy" and node in lines[db]["raft.reachable"]["why"], lines[db]
        assert verdicts["raft.leader"] == "ok", lines[db]
        assert "quorum kept: 2 of 3 members run" in lines[db]["raft.leader"]["why"]
        assert verdicts["raft.servers"] == "ok" and verdicts["raft.count"] == "ok", lines[db]
        no_harm(lines[db])


def test_two_members_down_is_a_lost_quorum_with_no_kick_and_no_wipe(central: KubeOvnDatabase, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Seed 000's incident on one zone: two of three members gone. The one left cannot lead; the
    advice is to bring the members back, never to kick them (which needs a leader anyway) or to
    wipe the survivor."""
    left = central.leader(ZONE_NB)
    for name in [n for n in central.pods if n != left]:
        central.stop(name)
    lines = raft(central, tmp_path, capsys)
    gone = ", ".join(NODES[list(central.pods).index(n)] for n in central.pods if n != left)
    for db in ("nb", "sb"):
        leader = lines[db]["raft.leader"]
        assert leader["verdict"] == "unhealthy", lines[db]
        assert "quorum lost" in leader["why"], leader
        # the documented recovery (ovsdb(7)) only if the stopped members' databases are lost
        assert leader["fix"].startswith(f"start the stopped members ({gone}) so that 2 of 3 run; if their "
                                        "databases are lost, recover as ovsdb(7)"), leader
        for check in lines[db].values():
            assert not KICK.search(check["fix"]), check


# What the surviving leader printed in the test above (OVN 23.03, `start-db.sh`'s addresses) about
# 300 ms after its two followers stopped: still "Role: leader", both connections down.
LONE_LEADER = """\
c33b
Name: OVN_Northbound
Cluster ID: 0ac8 (0ac8e2e9-2120-49a4-8592-81d23894dc49)
Server ID: c33b (c33be97b-2753-438f-b641-e34bb26894f9)
Address: tcp:[127.235.86.1]:6643
Status: cluster member
Role: leader
Term: 1
Leader: self
Vote: self

Last Election started 11215 ms ago, reason: timeout
Last Election won: 11215 ms ago
Election timer: 1000
Log: [2, 6]
Entries not yet committed: 0
Entries not yet applied: 0
Connections: {connections}
Disconnections: 2
Servers:
    3b87 (3b87 at tcp:[127.235.86.3]:6643) next_index=6 match_index=5 last msg 295 ms ago
    16a5 (16a5 at tcp:[127.235.86.2]:6643) next_index=6 match_index=5 last msg 965 ms ago
    c33b (c33b at tcp:[127.235.86.1]:6643) (self) next_index=2 match_index=5
"""
UNANSWERED = "`ovn-appctl -t /var/run/ovn/ovnnb_db.ctl cluster/status OVN_Northbound` exited 1: failed to connect"


@pytest.mark.parametrize(("connections", "verdict", "says"), [
    ("(->16a5) (->3b87)", "unhealthy", "quorum lost: hq-node-1 still calls itself leader (term 1) but has raft "
                                       "connections up to 0 of the other 2 members"),
    ("->16a5 <-16a5 (->3b87)", "ok", "hq-node-1 leads with raft connections up to 16a5: a majority of 3 with "
                                     "itself, though only 1 answered"),
])
def test_a_leader_that_answers_alone_has_quorum_only_if_its_connections_reach_a_majority(
        connections: str, verdict: str, says: str) -> None:
    """Raft keeps a leader's role until an election timer passes without a majority: the role of
    the one member that answered proves no quorum. Its connections tell a leader cut off (quorum
    lost, start the others) from members that run but could not be read."""
    from fabricgen.judge import raft
    from fabricgen.observe.raft_status import parse_cluster_status

    leader = parse_cluster_status(LONE_LEADER.format(connections=connections), "hq-node-1")
    checks = raft.judge(ZONE_NB, "zone hq nb raft", None,
                        {"hq-node-1": leader, "hq-node-2": UNANSWERED, "hq-node-3": UNANSWERED},
                        ctls={n: "/var/run/ovn/ovnnb_db.ctl" for n in NODES})
    found = next(c for c in checks if c.name == "raft.leader")
    assert (found.verdict, found.why.startswith(says)) == (verdict, True), found
    assert not any(KICK.search(c.fix) for c in checks)
