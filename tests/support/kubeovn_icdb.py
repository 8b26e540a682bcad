"""The IC database as Kube-OVN's IC server runs it, for tests: OVN's own `ovn-ctl` started with the
arguments Kube-OVN v1.16.2's `dist/images/start-ic-db.sh` passes it, one member per address.

What is copied from that script (kubeovn/kube-ovn, `dist/images/start-ic-db.sh`):

- the first member of `NODE_IPS` starts the cluster ("leader start"), the others join it
  through the first one ("follower start"): `ovn-ctl --db-ic-nb-create-insecure-remote=yes
  --db-ic-sb-create-insecure-remote=yes --db-ic-{nb,sb}-cluster-local-addr="[LOCAL_IP]"
  [--db-ic-{nb,sb}-cluster-remote-addr="[LEADER_IP]"] --ovn-ic-nb-db=CONN --ovn-ic-sb-db=CONN
  --db-ic-{nb,sb}-addr=[POD_IP] start_ic_ovsdb`, where CONN is `gen_conn_str`: every node's
  `tcp:[IP]:6647` (IC SB: 6648) joined by commas;
- so every raft address is bracketed, IPv4 included (`tcp:[IP]:6647`), on ovn-ctl's IC cluster
  ports 6647/6648, and the clients' ports are ovn-ctl's 6645/6646 on the member's address.

Each member is a "pod": its own address on the loopback network (127.A.B.N, A and B chosen per
cluster so that clusters of tests running at once never share a socket) and its own directories
for `OVN_RUNDIR`, `OVN_DBDIR`, `OVN_LOGDIR` and `OVN_SYSCONFDIR`, so its control sockets are
Kube-OVN's file names (`ovn_ic_nb_db.ctl`). ovn-ctl detaches the servers (`--detach --monitor`);
they are stopped as a pod's are, by `ovn-ctl stop_ic_ovsdb`, and at the end by the pids in
their pidfiles, however the test ends.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from fabricgen.lab.programs import Programs

NB, SB = "OVN_IC_Northbound", "OVN_IC_Southbound"
RAFT_PORTS = {NB: 6647, SB: 6648}  # ovn-ctl's DB_IC_{NB,SB}_CLUSTER_LOCAL_PORT, start-ic-db.sh's gen_conn_str
CLIENT_PORTS = {NB: 6645, SB: 6646}  # ovn-ctl's DB_IC_{NB,SB}_PORT
CTL_FILES = {NB: "ovn_ic_nb_db.ctl", SB: "ovn_ic_sb_db.ctl"}
PID_FILES = ("ovn_ic_nb_db.pid", "ovn_ic_sb_db.pid")
POLL_INTERVAL = 0.05
POLL_TRIES = 1200  # 60 s at most


def ovn_ctl(programs: Programs) -> Path:
    return programs.ovn_schemas / "scripts" / "ovn-ctl"


def missing(programs: Programs) -> list[str]:
    gone = [tool for tool in ("ovsdb-server", "ovsdb-tool", "ovsdb-client", "ovn-appctl")
            if programs.which(tool) is None]
    return gone + [str(p) for p in (ovn_ctl(programs), programs.ovn_schemas / "ovn-ic-nb.ovsschema")
                   if not p.is_file()]


@dataclass
class Pod:
    """One IC server replica: its address and its directories."""

    name: str
    ip: str
    root: Path

    def dir(self, what: str) -> Path:
        return self.root / self.name / what

    def ctl(self, database: str = NB) -> Path:
        return self.dir("run") / CTL_FILES[database]

    def raft_address(self, database: str = NB) -> str:
        return f"tcp:[{self.ip}]:{RAFT_PORTS[database]}"

    def remote(self, database: str = NB) -> str:
        return f"tcp:[{self.ip}]:{CLIENT_PORTS[database]}"


@dataclass
class KubeOvnIcDatabase:
    """`size` IC server pods on 127.A.B.1..size; `pods` by name (`node-1`, ...)."""

    programs: Programs
    size: int = 3
    pods: dict[str, Pod] = field(default_factory=dict)
    root: Path = field(init=False)

    def __enter__(self) -> KubeOvnIcDatabase:
        self.root = Path(tempfile.mkdtemp(prefix="kovn-ic-", dir="/tmp"))
        net = f"127.{random.randint(100, 250)}.{random.randint(1, 250)}"
        for index in range(1, self.size + 1):
            pod = Pod(f"node-{index}", f"{net}.{index}", self.root)
            for what in ("run", "db", "log", "etc"):
                pod.dir(what).mkdir(parents=True)
            self.pods[pod.name] = pod
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            for pod in self.pods.values():
                self._kill(pod)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    # ------------------------------------------------------------- as start-ic-db.sh runs ovn-ctl
    def conn_str(self, database: str) -> str:
        """start-ic-db.sh's `gen_conn_str 6647` (6648 for the IC SB)."""
        return ",".join(p.raft_address(database) for p in self.pods.values())

    def argv(self, pod: Pod, leader_ip: str | None) -> list[str]:
        argv = [str(ovn_ctl(self.programs)), "--db-ic-nb-create-insecure-remote=yes",
                "--db-ic-sb-create-insecure-remote=yes",
                f"--db-ic-sb-cluster-local-addr=[{pod.ip}]", f"--db-ic-nb-cluster-local-addr=[{pod.ip}]"]
        if leader_ip is not None:
            argv += [f"--db-ic-nb-cluster-remote-addr=[{leader_ip}]", f"--db-ic-sb-cluster-remote-addr=[{leader_ip}]"]
        return [*argv, f"--ovn-ic-nb-db={self.conn_str(NB)}", f"--ovn-ic-sb-db={self.conn_str(SB)}",
                f"--db-ic-nb-addr=[{pod.ip}]", f"--db-ic-sb-addr=[{pod.ip}]", "start_ic_ovsdb"]

    def env(self, pod: Pod | None = None) -> dict[str, str]:
        env = {**os.environ, "PATH": self.programs.search_path()}
        env.pop("OVN_USER", None)
        if pod is not None:
            env |= {"OVN_RUNDIR": str(pod.dir("run")), "OVS_RUNDIR": str(pod.dir("run")),
                    "OVN_DBDIR": str(pod.dir("db")), "OVN_LOGDIR": str(pod.dir("log")),
                    "OVN_SYSCONFDIR": str(pod.dir("etc")), "OVN_PKGDATADIR": str(self.programs.ovn_schemas)}
        return env

    def launch(self, name: str) -> subprocess.Popen[str]:
        """Start pod `name` as start-ic-db.sh does (the first pod leads a new cluster, the others
        follow it); returns ovn-ctl's process, which ends once the databases are connected."""
        pod = self.pods[name]
        first = next(iter(self.pods.values()))
        leader_ip = None if pod is first else first.ip
        return subprocess.Popen(self.argv(pod, leader_ip), env=self.env(pod), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def start(self, *names: str) -> None:
        """Start these pods at once (all when none is named) and wait for their ovn-ctl."""
        started = [(n, self.launch(n)) for n in (names or tuple(self.pods))]
        for name, process in started:
            out, _ = process.communicate(timeout=120)
            if process.returncode != 0:
                raise RuntimeError(f"ovn-ctl start_ic_ovsdb of {name} exited {process.returncode}:\n{out}")

    def create(self) -> None:
        """A new cluster: the first pod, then the others one after another (as the StatefulSet's
        pods come up), each waited for until connected."""
        for name in self.pods:
            self.start(name)
        self.wait_until(lambda: all("Leader: unknown" not in self.status(n) and self.servers(n) == self.size
                                    for n in self.pods), "every member to know the leader")

    def stop(self, name: str) -> None:
        """`ovn-ctl stop_ic_ovsdb` of pod `name` (what start-ic-db.sh's trap runs)."""
        pod = self.pods[name]
        subprocess.run([str(ovn_ctl(self.programs)), "stop_ic_ovsdb"], env=self.env(pod), capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=60, check=False)
        self._kill(pod)

    # ------------------------------------------------------------- reading
    def run(self, *argv: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        tool = self.programs.which(argv[0])
        assert tool is not None, argv[0]
        return subprocess.run([tool, *argv[1:]], capture_output=True, text=True, env=self.env(), check=check,
                              stdin=subprocess.DEVNULL, timeout=60)

    def appctl(self, name: str, *args: str, database: str = NB) -> subprocess.CompletedProcess[str]:
        return self.run("ovn-appctl", "--timeout=10", "-t", str(self.pods[name].ctl(database)), *args)

    def status(self, name: str, database: str = NB) -> str:
        done = self.appctl(name, "cluster/status", database, database=database)
        return done.stdout if done.returncode == 0 else done.stderr

    def servers(self, name: str, database: str = NB) -> int:
        text = self.status(name, database)
        return text.partition("Servers:\n")[2].count(" at tcp:")

    def leader(self, database: str = NB) -> str:
        found = [n for n in self.pods if "Role: leader" in self.status(n, database)]
        assert len(found) == 1, found
        return found[0]

    def wait_until(self, condition: Callable[[], bool], what: str) -> None:
        for _ in range(POLL_TRIES):
            if condition():
                return
            time.sleep(POLL_INTERVAL)
        states = "\n".join(f"--- {n}\n{self.status(n)}" for n in self.pods)
        raise TimeoutError(f"gave up waiting for {what}:\n{states}")

    # ------------------------------------------------------------- internals
    def _kill(self, pod: Pod) -> None:
        """Stop what runs from the pod's pidfiles: the server, then its monitor (a SIGTERM ends both)."""
        pids = []
        for pidfile in PID_FILES:
            path = pod.dir("run") / pidfile
            try:
                pids.append(int(path.read_text().strip()))
            except (OSError, ValueError):
                continue
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for pid in pids:
            for _ in range(200):
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(POLL_INTERVAL)
            else:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        for pidfile in PID_FILES:
            (pod.dir("run") / pidfile).unlink(missing_ok=True)
