"""The fabric's watch end to end, on this machine, 127.0.0.1 only (slow: minutes, real daemons).

- the IC database as Kube-OVN's `start-ic-db.sh` runs it (`support/kubeovn_db.py`): three raft
  members at bracketed `tcp:[IP]:6647`, OVN 25.03 where it is extracted, else the system's;
- the exporter: `fabricgen status FABRIC --endpoints FILE --serve ADDRESS --interval 3`, sites/lab
  with its IC database at those members (its zones have no cluster here: their series say
  `unreachable`, whose alert waits 15 minutes);
- a real Prometheus (Debian's 2.42) scraping it every 2 s and evaluating the rule file `render`
  wrote for the fabric, unchanged, every 2 s, sending to
- a real Alertmanager (Debian's 0.25) that notifies a webhook receiver this test runs.

Unbroken (vxlan_mode set as fabricgen's configure-ic-db.sh sets it), nothing but the zones' own
unreadable parts is pending, and nothing fires, for several evaluation rounds. Then the breaks
operators meet, one after another: vxlan_mode removed (FabricVxlanModeMissing pending within
seconds), one member of three stopped (FabricRaftMemberProblem pending, no lost quorum), a second
stopped (quorum lost): FabricRaftQuorumLost must reach the webhook for the IC database, critical,
not before its `for: 2m` and within a minute after it, naming the IC database; brought back, the
alert is resolved. Then a member that rejoins under a new server id (a stale entry:
raft.servers unhealthy, FabricRaftMemberProblem pending; kicked as status says, ok again), and a
two-member cluster (raft.count unhealthy). A second test moves a next hop in the OVN lab of every
zone (FabricStaleNextHop and FabricDrift pending, gone after the repair). The longer `for:` of
the other alerts (5 to 30 minutes) are Prometheus' own semantics, which this firing proves once;
promtool's unit tests (tests/delivery/test_alerts.py) prove each rule's timing. The time from the
break to the notification is printed (pytest -s) for the benchmark notes.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml
from test_raft_kubeovn import endpoints_for, fabric_at

from fabricgen.lab.ovn.programs import Programs
from fabricgen.render import alerts
from support.fabrics import REPO, build_text
from support.kubeovn_db import NB, SB, KubeOvnDatabase, missing

PROMETHEUS, ALERTMANAGER = Path("/usr/bin/prometheus"), Path("/usr/bin/prometheus-alertmanager")
PROGRAMS = Programs((REPO / ".ovn" / "25.03").resolve())  # vxlan_mode came with OVN 25.03
FABRICGEN = Path(sys.executable).with_name("fabricgen")
QUORUM_WAIT = 120  # the rule's `for: 2m`
# sites/lab's zones have no cluster here: their reads are `unreachable`, whose alert waits 15 minutes
UNBROKEN = {("FabricUnread", "zone")}
SLACK = 60  # a reading (3 s), a scrape and an evaluation (2 s each), Alertmanager's group_wait (1 s)

pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(
        not PROMETHEUS.exists() or not ALERTMANAGER.exists() or bool(missing(PROGRAMS)) or not FABRICGEN.exists(),
        reason="prometheus, prometheus-alertmanager, OVN 25.03 (scripts/setup.sh --test) "
        "or an installed fabricgen missing",
    ),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Receiver(http.server.ThreadingHTTPServer):
    """Alertmanager's webhook: every notification, with the time it arrived."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, dict[str, Any]]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.seen.append((time.monotonic(), json.loads(body)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    def alerts(self, name: str, status: str) -> list[tuple[float, dict[str, Any]]]:
        with self.lock:
            return [(t, a) for t, n in self.seen for a in n["alerts"]
                    if a["labels"].get("alertname") == name and a["status"] == status]


def wait_for(what: str, condition: Any, timeout: float, step: float = 1.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = condition()
        if found:
            return found
        time.sleep(step)
    raise AssertionError(f"gave up waiting {timeout:.0f} s for {what}")


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as answer:
        return json.loads(answer.read())


@pytest.fixture
def icdb(monkeypatch: pytest.MonkeyPatch) -> Iterator[KubeOvnDatabase]:
    monkeypatch.setenv("PATH", PROGRAMS.search_path())
    with KubeOvnDatabase(PROGRAMS) as db:
        db.create()
        yield db


@contextlib.contextmanager
def zone_hq(db: KubeOvnDatabase, root: Path) -> Iterator[None]:
    """sites/lab's zone hq as far as the IC database sees it: its NB and SB (one ovsdb-server) with its
    IC gateway chassis, and its ovn-ic, which registers the AZ and its gateway and, holding the IC
    SB's lock, gives each transit switch its datapath and tunnel key (ovn-org/ovn `ic/ovn-ic.c`), as
    every zone's ovn-ic does; then `ts`, as Kube-OVN's IC server creates it (`updateTS`, TS_NUM=1
    for sites/lab)."""
    az = root / "hq"
    az.mkdir()
    env = db.env()
    remotes = {name: ",".join(p.remote(name) for p in db.pods.values()) for name in (NB, SB)}

    def run(*argv: str) -> None:
        done = subprocess.run(list(argv), env=env, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, f"{argv}: {done.stderr}"

    for name, schema in (("nb", "ovn-nb.ovsschema"), ("sb", "ovn-sb.ovsschema")):
        run("ovsdb-tool", "create", str(az / f"{name}.db"), str(PROGRAMS.ovn_schemas / schema))
    socket_ = f"unix:{az / 'db.sock'}"
    daemons = {"db": ["ovsdb-server", f"--remote=p{socket_}", str(az / "nb.db"), str(az / "sb.db")],
               "ic": ["ovn-ic", f"--ovnnb-db={socket_}", f"--ovnsb-db={socket_}", f"--ic-nb-db={remotes[NB]}",
                      f"--ic-sb-db={remotes[SB]}"]}
    try:
        for name, argv in daemons.items():
            run(argv[0], "--detach", "--no-chdir", f"--pidfile={az / name}.pid", f"--log-file={az / name}.log",
                f"--unixctl={az / name}.ctl", *argv[1:])
            if name == "db":
                run("ovn-nbctl", f"--db={socket_}", "init")
                run("ovn-nbctl", f"--db={socket_}", "set", "NB_Global", ".", "name=hq")
                run("ovn-sbctl", f"--db={socket_}", "init")
                # its IC gateway, as its ovn-controller registers it (ovn-is-interconn=true, VXLAN):
                # ovn-ic publishes it with its encap, and keys switches for VXLAN only while the IC
                # SB holds a vxlan encap (`ts_run`)
                run("ovn-sbctl", f"--db={socket_}", "chassis-add", "hq-node-1", "vxlan", "192.0.2.11")
                run("ovn-sbctl", f"--db={socket_}", "set", "Chassis", "hq-node-1", "other_config:is-interconn=true")
        run("ovn-ic-nbctl", f"--db={remotes[NB]}", "--timeout=20", "set", "IC_NB_Global", ".",
            "options:vxlan_mode=true")  # fabricgen's configure-ic-db.sh, before the first switch
        run("ovn-ic-nbctl", f"--db={remotes[NB]}", "--timeout=20", "ts-add", "ts")

        def keyed() -> bool:
            done = subprocess.run(["ovn-ic-sbctl", f"--db={remotes[SB]}", "--timeout=20", "--bare",
                                   "--columns=tunnel_key", "find", "Datapath_Binding", "transit_switch=ts"],
                                  env=env, capture_output=True, text=True, timeout=60, check=False)
            return done.stdout.strip().isdigit() and 1024 <= int(done.stdout.strip()) <= 4095

        wait_for("ovn-ic to key transit switch ts in VXLAN's range", keyed, 60, 0.2)
        yield
    finally:
        for name in reversed(daemons):
            with contextlib.suppress(OSError, ValueError):
                os.kill(int((az / f"{name}.pid").read_text().strip()), signal.SIGTERM)


class Watching:
    """The exporter of `fabric` (with `endpoints`), Prometheus scraping it and evaluating the rule
    file `render` writes for it, and Alertmanager sending to `receiver`; `stop` ends them all."""

    def __init__(self, fabric: Path, endpoints: Path, root: Path) -> None:
        build = build_text(fabric.read_text(encoding="utf-8"), "sites/lab/fabric.yaml")
        rules = root / alerts.RULE_FILE
        rules.write_text(build.files[PurePosixPath("lab", str(alerts.DIRECTORY), alerts.RULE_FILE)].text)
        self.receiver = Receiver()
        threading.Thread(target=self.receiver.serve_forever, daemon=True).start()
        exporter, prom, am = free_port(), free_port(), free_port()
        (root / "am.yml").write_text(yaml.safe_dump({
            "route": {"receiver": "test", "group_by": ["alertname", "scope", "name", "database"],
                      "group_wait": "1s", "group_interval": "2s", "repeat_interval": "1h"},
            "receivers": [{"name": "test", "webhook_configs": [
                {"url": f"http://127.0.0.1:{self.receiver.server_address[1]}/", "send_resolved": True}]}]}))
        (root / "prometheus.yml").write_text(yaml.safe_dump({
            "global": {"scrape_interval": "2s", "evaluation_interval": "2s", "scrape_timeout": "2s"},
            "rule_files": [str(rules)],
            "alerting": {"alertmanagers": [{"static_configs": [{"targets": [f"127.0.0.1:{am}"]}]}]},
            "scrape_configs": [{"job_name": "fabricgen",
                                "static_configs": [{"targets": [f"127.0.0.1:{exporter}"]}]}]}))
        self.root = root
        self.processes = [
            subprocess.Popen([str(FABRICGEN), "status", str(fabric), "--endpoints", str(endpoints), "--serve",
                              f"127.0.0.1:{exporter}", "--interval", "3"], cwd=root,
                             stdout=subprocess.DEVNULL, stderr=(root / "exporter.log").open("w")),
            subprocess.Popen([str(ALERTMANAGER), f"--config.file={root / 'am.yml'}",
                              f"--storage.path={root / 'am'}", f"--web.listen-address=127.0.0.1:{am}",
                              "--cluster.listen-address="], stdout=subprocess.DEVNULL,
                             stderr=(root / "am.log").open("w")),
            subprocess.Popen([str(PROMETHEUS), f"--config.file={root / 'prometheus.yml'}",
                              f"--storage.tsdb.path={root / 'tsdb'}", f"--web.listen-address=127.0.0.1:{prom}"],
                             stdout=subprocess.DEVNULL, stderr=(root / "prometheus.log").open("w")),
        ]
        self.api = f"http://127.0.0.1:{prom}/api/v1"

    def alerts_now(self) -> list[dict[str, Any]]:
        return [a for a in get_json(f"{self.api}/alerts")["data"]["alerts"] if a["state"] in ("pending", "firing")]

    def named(self, name: str, scope: str, state: str | None = None) -> list[dict[str, Any]]:
        return [a for a in self.alerts_now() if a["labels"]["alertname"] == name
                and a["labels"].get("scope") == scope and state in (None, a["state"])]

    def query(self, expr: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = get_json(f"{self.api}/query?query={urllib.request.quote(expr)}")["data"]["result"]
        return found

    def scraped(self, expr: str) -> bool:
        try:
            return bool(self.query(expr))
        except OSError:
            return False

    def quiet(self, allowed: set[tuple[str, str]]) -> None:
        """Several evaluation rounds with nothing pending or firing but `allowed` (alert, scope)."""
        for _ in range(5):
            time.sleep(2)
            active = {(a["labels"]["alertname"], a["labels"].get("scope", "")) for a in self.alerts_now()}
            assert active <= allowed, active

    def stop(self) -> int | None:
        """Ends every process; the exporter's exit status."""
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.receiver.shutdown()
        return self.processes[0].returncode


def test_a_lost_quorum_pages_through_prometheus_and_alertmanager_and_resolves(icdb: KubeOvnDatabase,
                                                                           tmp_path: Path) -> None:
    fabric, endpoints = fabric_at(icdb, tmp_path), endpoints_for(icdb, tmp_path)
    remotes = ",".join(p.remote() for p in icdb.pods.values())

    def nbctl(*args: str) -> None:
        done = icdb.run("ovn-ic-nbctl", f"--db={remotes}", "--timeout=20", *args)
        assert done.returncode == 0, done.stderr

    hq = zone_hq(icdb, tmp_path)
    hq.__enter__()
    watching = Watching(fabric, endpoints, tmp_path)
    receiver, named = watching.receiver, watching.named
    try:
        def ic_quorum(state: str) -> list[dict[str, Any]]:
            return named("FabricRaftQuorumLost", "ic", state)

        def check_is(check: str, state: str) -> bool:
            return watching.scraped(f'fabricgen_status_check{{scope="ic",database="nb",check="{check}",'
                                    f'state="{state}"}} == 1')

        def sid(name: str, database: str) -> str:
            done = icdb.appctl(name, "cluster/sid", database, database=database)
            assert done.returncode == 0, done.stderr
            return done.stdout.strip()

        def readable() -> bool:  # both raft leaders ok: nb and sb
            return len(watching.query('fabricgen_status_check{scope="ic",check="raft.leader",state="ok"} == 1')) == 2 \
                if watching.scraped("fabricgen_status_verdict") else False

        wait_for("Prometheus to scrape the first reading", readable, 120)
        watching.quiet(UNBROKEN)  # unbroken: nothing but the absent zones' reads
        assert not receiver.seen

        # the IC database loses vxlan_mode (rebuilt by hand): its alert is pending at once
        nbctl("remove", "IC_NB_Global", ".", "options", "vxlan_mode")
        wait_for("FabricVxlanModeMissing pending", lambda: named("FabricVxlanModeMissing", "ic"), 30)
        # one member of three stops: a member problem, no lost quorum
        left = icdb.leader()
        stopped = [n for n in icdb.pods if n != left]
        icdb.stop(stopped[0])
        wait_for("FabricRaftMemberProblem pending", lambda: named("FabricRaftMemberProblem", "ic"), 30)
        assert not ic_quorum("pending") and not ic_quorum("firing")
        # a second stops: quorum is lost
        icdb.stop(stopped[1])
        broken = time.monotonic()
        wait_for("the alert to be pending", lambda: ic_quorum("pending") or ic_quorum("firing"), 60)
        fired = wait_for("the notification", lambda: receiver.alerts("FabricRaftQuorumLost", "firing"),
                         QUORUM_WAIT + SLACK)
        took = fired[0][0] - broken
        alert = fired[0][1]
        print(f"\nbreak to notification: {took:.1f} s (for: {QUORUM_WAIT} s)")
        assert took >= QUORUM_WAIT, took
        assert alert["labels"]["severity"] == "critical"
        assert alert["labels"]["scope"] == "ic" and alert["labels"]["site"] == "lab"
        assert alert["labels"]["database"] in ("nb", "sb")
        print(f"summary: {alert['annotations']['summary']}")
        assert alert["annotations"]["summary"].startswith(f"ic {alert['labels'].get('name', '')}".rstrip())

        assert not receiver.alerts("FabricRaftQuorumLost", "resolved"), receiver.seen  # it held while broken
        repaired = time.monotonic()
        icdb.start(*stopped)  # the repair (ovn-ctl returns once each member is connected)
        resolved = wait_for("the resolved notification", lambda: receiver.alerts("FabricRaftQuorumLost", "resolved"),
                            SLACK + 60)
        assert resolved[0][0] > repaired
        print(f"repair to resolved: {resolved[0][0] - repaired:.1f} s")

        # a member that comes back without its files and rejoins under a new server id: its old
        # entry stays in the server list, stale, and counts towards the majority
        first = next(iter(icdb.pods))  # the member the others join through (start-ic-db.sh)
        # not a leader where there is a choice; when the other two lead one database each, one of them:
        # the database it led elects another leader, and its stale entry is the same
        others = [n for n in reversed(icdb.pods) if n != first]
        leaders = {icdb.leader(NB), icdb.leader(SB)}
        member = next((n for n in others if n not in leaders), others[0])
        old = {db: sid(member, db) for db in (NB, SB)}
        icdb.stop(member)
        for path in icdb.pods[member].dir("db").glob("*.db"):
            path.unlink()
        icdb.start(member)
        assert all(sid(member, db) != old[db] for db in (NB, SB))
        wait_for("raft.servers unhealthy (a stale entry)", lambda: check_is("raft.servers", "unhealthy"), 60)
        wait_for("FabricRaftMemberProblem pending", lambda: named("FabricRaftMemberProblem", "ic"), 30)
        for db in (NB, SB):  # the fix status gives: kick the old id
            done = icdb.appctl(icdb.leader(db), "cluster/kick", db, old[db], database=db)
            assert done.returncode == 0, done.stderr
        wait_for("raft.servers ok again", lambda: check_is("raft.servers", "ok"), 60)

        # a two-member cluster: one member kicked and gone
        gone = next(n for n in reversed(icdb.pods) if n not in (first, icdb.leader(NB), icdb.leader(SB)))
        for db in (NB, SB):
            done = icdb.appctl(icdb.leader(db), "cluster/kick", db, sid(gone, db), database=db)
            assert done.returncode == 0, done.stderr
        icdb.stop(gone)
        wait_for("raft.count unhealthy (two members)", lambda: check_is("raft.count", "unhealthy"), 60)
        wait_for("FabricRaftMemberProblem pending again", lambda: named("FabricRaftMemberProblem", "ic"), 30)
    finally:
        code = watching.stop()
        hq.__exit__(None, None, None)
    assert code == 143, (tmp_path / "exporter.log").read_text()[-3000:]


def test_a_next_hop_that_moved_and_drift_are_pending_in_prometheus(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The lab of `test_status` (every AZ's NB/SB, northd and ovn-ic, OVN 25.03, read directly):
    unbroken, nothing is pending; hq's transit port moved as after an IC rebuild makes the other
    zones' routes stale (FabricStaleNextHop pending for each, `for: 5m`) and hq's address drift
    (FabricDrift, `for: 30m`); moved back, both go. Then the IC database stops while the zones
    answer: FabricIcDatabaseDown, critical, pending within a reading."""
    from test_status import running_lab

    with running_lab(PROGRAMS, tmp_path, monkeypatch) as (lab, endpoints):
        watching = Watching(REPO / "sites" / "lab" / "fabric.yaml", endpoints, tmp_path)
        try:
            wait_for("the first reading", lambda: watching.scraped('fabricgen_status_verdict{state="ok"} == 1'), 120)
            watching.quiet(set())
            sb = lab.sandbox
            sb.nb("hq", "set", "Logical_Router_Port", "hq-ts", 'networks="169.254.100.99/24"')
            stale = wait_for("FabricStaleNextHop pending for ai, edge and dr", lambda: {
                a["labels"]["name"] for a in watching.named("FabricStaleNextHop", "zone")} >= {"ai", "edge", "dr"}
                and watching.named("FabricStaleNextHop", "zone"), 60)
            assert all(a["state"] == "pending" for a in stale)  # `for: 5m`: pending, not yet firing
            assert stale[0]["annotations"]["summary"].startswith(f"zone {stale[0]['labels']['name']}: a static "
                                                                 "route's next hop is no longer")
            wait_for("FabricDrift pending for hq", lambda: [
                a for a in watching.named("FabricDrift", "zone") if a["labels"]["name"] == "hq"], 60)
            sb.nb("hq", "set", "Logical_Router_Port", "hq-ts", 'networks="169.254.100.71/24"')
            wait_for("the alerts to go", lambda: not watching.named("FabricStaleNextHop", "zone")
                     and not watching.named("FabricDrift", "zone"), 60)
            # the IC database dies (both ovsdb-servers stopped) while every zone still answers: the
            # page for it is pending at once (critical, `for: 2m`), not a 15-minute FabricUnread
            sb.stop_daemons(["ic"], ["ic_nb", "ic_sb"])
            down = wait_for("FabricIcDatabaseDown pending", lambda: [
                a for a in watching.alerts_now() if a["labels"]["alertname"] == "FabricIcDatabaseDown"], 60)
            assert down[0]["labels"]["severity"] == "critical" and down[0]["state"] == "pending", down
        finally:
            code = watching.stop()
    assert code == 143, (tmp_path / "exporter.log").read_text()[-3000:]
