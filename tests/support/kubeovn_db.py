"""Kube-OVN's OVN databases as its own scripts run them, for tests: OVN's own `ovn-ctl` started with
the arguments Kube-OVN v1.16.2's start scripts pass it, one member ("pod") per address.

Two flavours, each copied from its script (kubeovn/kube-ovn, `dist/images/`):

- `IC`, `start-ic-db.sh` (the IC server): the first member of `NODE_IPS` starts the cluster
  ("leader start"), the others join it through the first one ("follower start"): `ovn-ctl
  --db-ic-nb-create-insecure-remote=yes --db-ic-sb-create-insecure-remote=yes
  --db-ic-{nb,sb}-cluster-local-addr="[LOCAL_IP]" [--db-ic-{nb,sb}-cluster-remote-addr="[LEADER_IP]"]
  --ovn-ic-nb-db=CONN --ovn-ic-sb-db=CONN --db-ic-{nb,sb}-addr=[POD_IP] start_ic_ovsdb`, where CONN
  is `gen_conn_str`: every node's `tcp:[IP]:6647` (IC SB: 6648) joined by commas. The script
  passes no SSL argument to ovn-ctl even with `ENABLE_SSL` (only its own `ovsdb-client` queries
  use `ssl:`), so the IC database's raft is `tcp:` in every Kube-OVN install.
- `CENTRAL`, `start-db.sh` (ovn-central, a zone's NB and SB): `ovn-ctl ... start_nb_ovsdb`, then
  the same arguments with `start_sb_ovsdb`: `--db-{nb,sb}-create-insecure-remote=yes
  --db-{nb,sb}-cluster-local-addr=[IP] [--db-{nb,sb}-cluster-remote-addr=[LEADER]]
  --db-{nb,sb}-cluster-local-port=6643/6644 [--db-{nb,sb}-cluster-remote-port=...]
  --db-{nb,sb}-addr=[DB_ADDR] --db-{nb,sb}-port=6641/6642 --db-{nb,sb}-use-remote-in-db=no
  --ovn-northd-{nb,sb}-db=CONN`; with `ENABLE_SSL=true` (`ssl=True` here) instead
  `ovn_db_ssl_args /var/run/tls` (`ovn-db-ssl-options.sh`: one key, certificate and CA for all
  members, Kube-OVN's `kube-ovn-tls` secret) and `--db-{nb,sb}-cluster-{local,remote}-proto=ssl`,
  without the insecure remote, so raft runs over `ssl:[IP]:6643`.

What is left out, and why: start-db.sh's `-- --remote=db:Local_Config,Config,connections
/etc/ovn/ovn{nb,sb}_local_config.db` (Open vSwitch 3.1, Debian 12's, has no Local_Config schema;
it only adds client listeners, not raft), ovn-northd (`start_northd`: raft is the databases'),
and its recovery of corrupted files. `DB_ADDR` is the pod's address, as with
`ENABLE_BIND_LOCAL_IP=true`: Kube-OVN's default `::` would make every pod of a test listen on the
same port of one host.

Each member is a "pod": its own address on the loopback network (127.A.B.N, A and B chosen per
cluster so that clusters of tests running at once never share a socket) and its own directories
for `OVN_RUNDIR`, `OVN_DBDIR`, `OVN_LOGDIR` and `OVN_SYSCONFDIR`, so its control sockets are
Kube-OVN's file names (`ovn_ic_nb_db.ctl`, `ovnnb_db.ctl`). ovn-ctl detaches the servers
(`--detach --monitor`); they are stopped as a pod's are, by ovn-ctl's stop commands, and at the
end by the pids in their pidfiles, however the test ends.
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from fabricgen.lab.ovn.programs import Programs

NB, SB = "OVN_IC_Northbound", "OVN_IC_Southbound"
ZONE_NB, ZONE_SB = "OVN_Northbound", "OVN_Southbound"
POLL_INTERVAL = 0.05
POLL_TRIES = 1200  # 60 s at most


@dataclass(frozen=True)
class Flavor:
    """What one start script runs: its databases, ports, files and ovn-ctl commands."""

    name: str
    databases: tuple[str, str]  # (northbound, southbound)
    raft_ports: Mapping[str, int]
    client_ports: Mapping[str, int]
    ctl_files: Mapping[str, str]
    socket_files: Mapping[str, str]
    pid_files: tuple[str, ...]
    schemas: tuple[str, ...]
    start: tuple[str, ...]  # ovn-ctl commands, one invocation each
    stop: tuple[str, ...]


IC = Flavor("start-ic-db.sh", (NB, SB), {NB: 6647, SB: 6648}, {NB: 6645, SB: 6646},
            {NB: "ovn_ic_nb_db.ctl", SB: "ovn_ic_sb_db.ctl"}, {NB: "ovn_ic_nb_db.sock", SB: "ovn_ic_sb_db.sock"},
            ("ovn_ic_nb_db.pid", "ovn_ic_sb_db.pid"), ("ovn-ic-nb.ovsschema",), ("start_ic_ovsdb",),
            ("stop_ic_ovsdb",))
CENTRAL = Flavor("start-db.sh", (ZONE_NB, ZONE_SB), {ZONE_NB: 6643, ZONE_SB: 6644}, {ZONE_NB: 6641, ZONE_SB: 6642},
                 {ZONE_NB: "ovnnb_db.ctl", ZONE_SB: "ovnsb_db.ctl"},
                 {ZONE_NB: "ovnnb_db.sock", ZONE_SB: "ovnsb_db.sock"},
                 ("ovnnb_db.pid", "ovnsb_db.pid"), ("ovn-nb.ovsschema", "ovn-sb.ovsschema"),
                 ("start_nb_ovsdb", "start_sb_ovsdb"), ("stop_nb_ovsdb", "stop_sb_ovsdb"))
RAFT_PORTS = IC.raft_ports  # the IC flavour's, as tests of the IC database name them
CLIENT_PORTS = IC.client_ports


def ovn_ctl(programs: Programs) -> Path:
    return programs.ovn_schemas / "scripts" / "ovn-ctl"


def missing(programs: Programs, flavor: Flavor = IC, *, ssl: bool = False) -> list[str]:
    tools = ("ovsdb-server", "ovsdb-tool", "ovsdb-client", "ovn-appctl") + (("openssl",) if ssl else ())
    gone = [tool for tool in tools if programs.which(tool) is None and shutil.which(tool) is None]
    return gone + [str(p) for p in (ovn_ctl(programs), *(programs.ovn_schemas / s for s in flavor.schemas))
                   if not p.is_file()]


@dataclass
class Pod:
    """One database replica: its address and its directories."""

    name: str
    ip: str
    root: Path
    flavor: Flavor = IC
    protocol: str = "tcp"  # of its raft

    def dir(self, what: str) -> Path:
        return self.root / self.name / what

    def ctl(self, database: str = NB) -> Path:
        return self.dir("run") / self.flavor.ctl_files[database]

    def socket(self, database: str = NB) -> Path:
        return self.dir("run") / self.flavor.socket_files[database]

    def raft_address(self, database: str = NB) -> str:
        return f"{self.protocol}:[{self.ip}]:{self.flavor.raft_ports[database]}"

    def remote(self, database: str = NB) -> str:
        return f"tcp:[{self.ip}]:{self.flavor.client_ports[database]}"


@dataclass
class KubeOvnDatabase:
    """`size` pods of one flavour on 127.A.B.1..size; `pods` by name (`node-1`, ...). `ssl`: the
    CENTRAL flavour with `ENABLE_SSL=true`, its key, certificate and CA in `tls/`."""

    programs: Programs
    size: int = 3
    flavor: Flavor = IC
    ssl: bool = False
    pods: dict[str, Pod] = field(default_factory=dict)
    root: Path = field(init=False)

    def __post_init__(self) -> None:
        assert not (self.ssl and self.flavor is IC), "start-ic-db.sh passes ovn-ctl no SSL arguments"

    def __enter__(self) -> KubeOvnDatabase:
        self.root = Path(tempfile.mkdtemp(prefix="kovn-db-", dir="/tmp"))
        net = f"127.{random.randint(100, 250)}.{random.randint(1, 250)}"
        for index in range(1, self.size + 1):
            pod = Pod(f"node-{index}", f"{net}.{index}", self.root, self.flavor, "ssl" if self.ssl else "tcp")
            for what in ("run", "db", "log", "etc"):
                pod.dir(what).mkdir(parents=True)
            self.pods[pod.name] = pod
        if self.ssl:
            self._certificates()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            for pod in self.pods.values():
                self._kill(pod)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    @property
    def tls(self) -> Path:
        """Kube-OVN's /var/run/tls: `key`, `cert`, `cacert`, one set for every member."""
        return self.root / "tls"

    @property
    def databases(self) -> tuple[str, str]:
        return self.flavor.databases

    # ------------------------------------------------------------- as the start script runs ovn-ctl
    def conn_str(self, database: str) -> str:
        """The script's `gen_conn_str PORT`: every node's raft address, joined by commas."""
        return ",".join(p.raft_address(database) for p in self.pods.values())

    def argv(self, pod: Pod, leader_ip: str | None) -> list[str]:
        if self.flavor is IC:
            return self._ic_argv(pod, leader_ip)
        return self._central_argv(pod, leader_ip)

    def _ic_argv(self, pod: Pod, leader_ip: str | None) -> list[str]:
        argv = [str(ovn_ctl(self.programs)), "--db-ic-nb-create-insecure-remote=yes",
                "--db-ic-sb-create-insecure-remote=yes",
                f"--db-ic-sb-cluster-local-addr=[{pod.ip}]", f"--db-ic-nb-cluster-local-addr=[{pod.ip}]"]
        if leader_ip is not None:
            argv += [f"--db-ic-nb-cluster-remote-addr=[{leader_ip}]", f"--db-ic-sb-cluster-remote-addr=[{leader_ip}]"]
        return [*argv, f"--ovn-ic-nb-db={self.conn_str(NB)}", f"--ovn-ic-sb-db={self.conn_str(SB)}",
                f"--db-ic-nb-addr=[{pod.ip}]", f"--db-ic-sb-addr=[{pod.ip}]"]

    def _central_argv(self, pod: Pod, leader_ip: str | None) -> list[str]:
        """start-db.sh's `ovn_ctl_args`, its four branches: SSL or not, leader or follower."""
        argv = [str(ovn_ctl(self.programs))]
        if self.ssl:
            argv += [f"--ovn-{db}-db-ssl-{what}={self.tls / name}" for db in ("nb", "sb")
                     for what, name in (("key", "key"), ("cert", "cert"), ("ca-cert", "cacert"))]
            argv += [f"--ovn-northd-ssl-{what}={self.tls / name}"
                     for what, name in (("key", "key"), ("cert", "cert"), ("ca-cert", "cacert"))]
            argv += [f"--db-{db}-cluster-{end}-proto=ssl" for end in ("local", "remote") for db in ("nb", "sb")]
        else:
            argv += ["--db-nb-create-insecure-remote=yes", "--db-sb-create-insecure-remote=yes"]
        argv += [f"--db-nb-cluster-local-addr=[{pod.ip}]", f"--db-sb-cluster-local-addr=[{pod.ip}]"]
        if leader_ip is not None:
            argv += [f"--db-nb-cluster-remote-addr=[{leader_ip}]", f"--db-sb-cluster-remote-addr=[{leader_ip}]"]
        if leader_ip is not None or not self.ssl:  # the SSL leader start leaves the raft ports to ovn-ctl
            argv += ["--db-nb-cluster-local-port=6643", "--db-sb-cluster-local-port=6644"]
        if leader_ip is not None:
            argv += ["--db-nb-cluster-remote-port=6643", "--db-sb-cluster-remote-port=6644"]
        northd = "ssl" if self.ssl else "tcp"
        return [*argv, f"--db-nb-addr=[{pod.ip}]", f"--db-sb-addr=[{pod.ip}]", "--db-nb-port=6641",
                "--db-sb-port=6642", "--db-nb-use-remote-in-db=no", "--db-sb-use-remote-in-db=no",
                "--ovn-northd-nb-db=" + ",".join(f"{northd}:[{p.ip}]:6641" for p in self.pods.values()),
                "--ovn-northd-sb-db=" + ",".join(f"{northd}:[{p.ip}]:6642" for p in self.pods.values())]

    def env(self, pod: Pod | None = None) -> dict[str, str]:
        env = {**os.environ, "PATH": self.programs.search_path()}
        env.pop("OVN_USER", None)
        if pod is not None:
            env |= {"OVN_RUNDIR": str(pod.dir("run")), "OVS_RUNDIR": str(pod.dir("run")),
                    "OVN_DBDIR": str(pod.dir("db")), "OVN_LOGDIR": str(pod.dir("log")),
                    "OVN_SYSCONFDIR": str(pod.dir("etc")), "OVN_PKGDATADIR": str(self.programs.ovn_schemas)}
        return env

    def launch(self, name: str, command: str) -> subprocess.Popen[str]:
        """Run one ovn-ctl start command of pod `name` as the script does (the first pod leads a
        new cluster, the others follow it); ovn-ctl ends once its database is connected."""
        pod = self.pods[name]
        first = next(iter(self.pods.values()))
        leader_ip = None if pod is first else first.ip
        return subprocess.Popen([*self.argv(pod, leader_ip), command], env=self.env(pod), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def start(self, *names: str) -> None:
        """Start these pods at once (all when none is named), each command after the one before as
        the script runs them, and wait for their ovn-ctl."""
        for command in self.flavor.start:
            started = [(n, self.launch(n, command)) for n in (names or tuple(self.pods))]
            for name, process in started:
                out, _ = process.communicate(timeout=120)
                if process.returncode != 0:
                    raise RuntimeError(f"ovn-ctl {command} of {name} exited {process.returncode}:\n{out}")

    def create(self) -> None:
        """A new cluster: the first pod, then the others one after another (as the StatefulSet's
        pods come up), each waited for until connected."""
        for name in self.pods:
            self.start(name)
        self.wait_until(lambda: all("Leader: unknown" not in self.status(n, db) and self.servers(n, db) == self.size
                                    for n in self.pods for db in self.databases), "every member to know the leader")

    def stop(self, name: str) -> None:
        """ovn-ctl's stop commands for pod `name` (what the script's trap runs)."""
        pod = self.pods[name]
        for command in self.flavor.stop:
            subprocess.run([str(ovn_ctl(self.programs)), command], env=self.env(pod), capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=60, check=False)
        self._kill(pod)

    # ------------------------------------------------------------- reading
    def run(self, *argv: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        tool = self.programs.which(argv[0])
        assert tool is not None, argv[0]
        return subprocess.run([tool, *argv[1:]], capture_output=True, text=True, env=self.env(), check=check,
                              stdin=subprocess.DEVNULL, timeout=60)

    def appctl(self, name: str, *args: str, database: str | None = None) -> subprocess.CompletedProcess[str]:
        return self.run("ovn-appctl", "--timeout=10", "-t", str(self.pods[name].ctl(database or self.databases[0])),
                        *args)

    def status(self, name: str, database: str | None = None) -> str:
        database = database or self.databases[0]
        done = self.appctl(name, "cluster/status", database, database=database)
        return done.stdout if done.returncode == 0 else done.stderr

    def servers(self, name: str, database: str | None = None) -> int:
        text = self.status(name, database)
        return text.partition("Servers:\n")[2].count(f" at {'ssl' if self.ssl else 'tcp'}:")

    def leader(self, database: str | None = None) -> str:
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
        for pidfile in self.flavor.pid_files:
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
        for pidfile in self.flavor.pid_files:
            (pod.dir("run") / pidfile).unlink(missing_ok=True)

    def _certificates(self) -> None:
        """Kube-OVN's `kube-ovn-tls` secret as files: a CA and one key and certificate it signed,
        shared by every member (`/var/run/tls/{key,cert,cacert}`)."""
        self.tls.mkdir()
        tls = self.tls

        def openssl(*args: str) -> None:
            subprocess.run(["openssl", *args], check=True, capture_output=True, stdin=subprocess.DEVNULL, timeout=60)

        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(tls / "ca.key"), "-out",
                str(tls / "cacert"), "-days", "2", "-subj", "/CN=kube-ovn-ca")
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(tls / "key"), "-out", str(tls / "req"),
                "-subj", "/CN=ovn")
        openssl("x509", "-req", "-in", str(tls / "req"), "-CA", str(tls / "cacert"), "-CAkey", str(tls / "ca.key"),
                "-CAcreateserial", "-out", str(tls / "cert"), "-days", "2")
