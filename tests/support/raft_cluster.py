"""A real OVSDB raft cluster of ovsdb-server processes on unix sockets, for tests.

Built the way openvswitch/ovs `tests/ovsdb-cluster.at` builds one: `ovsdb-tool create-cluster`
for the first member, `ovsdb-tool join-cluster` for the others, one `ovsdb-server` per member
with raft on a `unix:` address, its own `--unixctl` control socket and an OVSDB remote.

    with RaftCluster(programs, schema) as cluster:
        cluster.create(3)                   # s1 s2 s3 running, one leader, 3 servers listed by each
        cluster.appctl("s1", "cluster/status", cluster.database)
        cluster.stop("s3")
        cluster.rejoin("s3")                # files removed, joined again under a new server id

Everything lives in a private directory under /tmp with a short name (a unix socket path must
stay under 108 bytes), which OVS_RUNDIR, OVS_LOGDIR and OVS_DBDIR point to. The servers run in
the foreground as children of this process, so each is stopped by its own process id: on
`stop`, and for all of them when the context ends, however it ends. Waiting is bounded polling.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from fabricgen.lab.ovn.programs import Programs

TOOLS = ("ovsdb-server", "ovsdb-tool", "ovsdb-client", "ovn-appctl")
POLL_INTERVAL = 0.05
POLL_TRIES = 600  # 30 s at most; a cluster of three settles within a few election timeouts (1 s)
STOP_TIMEOUT = 10.0
_SERVER_LINE = re.compile(r"^    \S+ \([0-9a-f]{4} at ", re.MULTILINE)


def missing(programs: Programs, schema: Path) -> list[str]:
    """What is missing to build a cluster with these programs (empty when it can)."""
    gone = [tool for tool in TOOLS if programs.which(tool) is None]
    return gone + ([str(schema)] if not schema.is_file() else [])


@dataclass
class ClusterMember:
    """One ovsdb-server of the cluster: `sN` with raft at `unix:ROOT/sN.raft`."""

    name: str
    root: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"unix:{self.root / self.name}.raft"

    @property
    def ctl(self) -> Path:
        return self.root / f"{self.name}.ctl"

    @property
    def remote(self) -> str:
        """The OVSDB remote (for ovsdb-client)."""
        return f"unix:{self.root / self.name}.ovsdb"

    @property
    def db_file(self) -> Path:
        return self.root / f"{self.name}.db"

    @property
    def log(self) -> Path:
        return self.root / f"{self.name}.log"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class RaftCluster:
    programs: Programs
    schema: Path
    members: dict[str, ClusterMember] = field(default_factory=dict)
    root: Path = field(init=False)
    database: str = field(init=False)

    def __enter__(self) -> RaftCluster:
        self.root = Path(tempfile.mkdtemp(prefix="raft-", dir="/tmp"))
        try:
            self.database = self.run("ovsdb-tool", "schema-name", str(self.schema)).stdout.strip()
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            for member in self.members.values():
                self._terminate(member)
            for member in self.members.values():
                self._reap(member)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    # ------------------------------------------------------------- running the tools
    def env(self) -> dict[str, str]:
        return {**os.environ, "PATH": self.programs.search_path(), "OVS_RUNDIR": str(self.root),
                "OVS_LOGDIR": str(self.root), "OVS_DBDIR": str(self.root)}

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """A tool of these programs (`ovsdb-tool`, `ovn-appctl`, ...), its output captured."""
        tool = self.programs.which(argv[0])
        if tool is None:
            raise FileNotFoundError(f"{argv[0]} is not among {self.programs.name} programs")
        return subprocess.run([tool, *argv[1:]], capture_output=True, text=True, check=check, env=self.env(),
                              stdin=subprocess.DEVNULL, timeout=60)

    def appctl(self, name: str, *args: str) -> subprocess.CompletedProcess[str]:
        """`ovn-appctl -t CTL ARGS` on member `name`; not checked (a stopped member fails)."""
        return self.run("ovn-appctl", "--timeout=10", "-t", str(self.members[name].ctl), *args, check=False)

    def status(self, name: str) -> str:
        """`cluster/status` of member `name`: its output, or its error text if it failed."""
        done = self.appctl(name, "cluster/status", self.database)
        return done.stdout if done.returncode == 0 else (done.stderr or done.stdout or f"exit {done.returncode}")

    # ------------------------------------------------------------- building and breaking
    def create(self, count: int) -> None:
        """Members s1..sN: s1 creates the cluster, the others join it through s1; all started,
        then waited for until each is a `cluster member` naming a leader and listing N servers."""
        first = self._member("s1")
        self.run("ovsdb-tool", "create-cluster", str(first.db_file), str(self.schema), first.address)
        for index in range(2, count + 1):
            self.join(f"s{index}", [first.address])
        for name in list(self.members):
            self.start(name)
        self.wait_settled(list(self.members), count)

    def join(self, name: str, remotes: Sequence[str] | None = None) -> ClusterMember:
        """`ovsdb-tool join-cluster` for member `name` (not started); `remotes` default to the
        addresses of the other members."""
        member = self._member(name)
        others = [m.address for m in self.members.values() if m.name != name]
        self.run("ovsdb-tool", "join-cluster", str(member.db_file), self.database, member.address,
                 *(remotes if remotes is not None else others))
        return member

    def start(self, name: str) -> None:
        """Start member `name`'s ovsdb-server; returns once its control socket answers."""
        member = self.members[name]
        server = self.programs.which("ovsdb-server")
        assert server is not None
        member.ctl.unlink(missing_ok=True)
        member.process = subprocess.Popen(
            [server, "--no-chdir", "-vconsole:off", f"--log-file={member.log}", f"--unixctl={member.ctl}",
             f"--remote=p{member.remote}", str(member.db_file)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env())
        self.wait_until(lambda: self._answers(member), f"{name}'s control socket to answer")

    def stop(self, name: str) -> None:
        """Stop member `name` (SIGTERM, then SIGKILL) and wait until it is gone."""
        member = self.members[name]
        self._terminate(member)
        self._reap(member)

    def remove(self, name: str) -> None:
        """Stop member `name` and delete its database file: a node rebuilt without its state."""
        self.stop(name)
        member = self.members[name]
        member.db_file.unlink()
        (self.root / f".{member.db_file.name}.~lock~").unlink(missing_ok=True)

    def rejoin(self, name: str) -> None:
        """Remove member `name`'s files, join it again at the same address through the other
        members (so under a new server id) and start it; waits until it is a `cluster member`."""
        self.remove(name)
        self.join(name)
        self.start(name)
        self.wait_until(lambda: "Status: cluster member" in self.status(name), f"{name} to rejoin")

    # ------------------------------------------------------------- waiting
    def wait_until(self, condition: Callable[[], bool], what: str) -> None:
        """Poll `condition` every POLL_INTERVAL, at most POLL_TRIES times; fail naming `what`
        with every member's cluster/status."""
        for _ in range(POLL_TRIES):
            if condition():
                return
            for member in self.members.values():
                if member.process is not None and member.process.poll() is not None:
                    raise RuntimeError(f"{member.name}'s ovsdb-server exited: {self._log_tail(member)}")
            time.sleep(POLL_INTERVAL)
        states = "\n".join(f"--- {n}\n{self.status(n) if m.running else 'stopped'}" for n, m in self.members.items())
        raise TimeoutError(f"gave up waiting for {what}:\n{states}")

    def wait_settled(self, names: Sequence[str], servers: int) -> None:
        """Wait until each member of `names` is a `cluster member` that names a leader, lists
        `servers` servers and has every connection up."""
        def settled(name: str) -> bool:
            text = self.status(name)
            connections = next((line for line in text.splitlines() if line.startswith("Connections:")), "(")
            return ("Status: cluster member" in text and "Leader: unknown" not in text
                    and len(_SERVER_LINE.findall(text)) == servers and "(" not in connections)

        self.wait_until(lambda: all(settled(n) for n in names), f"{', '.join(names)} to settle with {servers} servers")

    def leader(self) -> str:
        """The member that says `Role: leader`."""
        found = [n for n, m in self.members.items() if m.running and "Role: leader" in self.status(n)]
        assert len(found) == 1, f"expected one leader, found {found}"
        return found[0]

    # ------------------------------------------------------------- internals
    def _member(self, name: str) -> ClusterMember:
        return self.members.setdefault(name, ClusterMember(name, self.root))

    def _answers(self, member: ClusterMember) -> bool:
        if member.process is not None and member.process.poll() is not None:
            raise RuntimeError(f"{member.name}'s ovsdb-server exited: {self._log_tail(member)}")
        return member.ctl.exists() and self.appctl(member.name, "cluster/status", self.database).returncode == 0

    def _terminate(self, member: ClusterMember) -> None:
        if member.running:
            assert member.process is not None
            member.process.terminate()

    def _reap(self, member: ClusterMember) -> None:
        if member.process is None:
            return
        try:
            member.process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            member.process.kill()
            member.process.wait()
        member.process = None

    @staticmethod
    def _log_tail(member: ClusterMember) -> str:
        try:
            return "\n".join(member.log.read_text(errors="replace").splitlines()[-20:])
        except OSError:
            return "(no log)"
