"""The lab's daemons: each database server, ovn-northd and ovn-ic started detached with its pidfile,
log and control socket in the work directory (one database file per schema created once and
copied), asked to pause, resume or wake on its control socket, and stopped by its pidfile, then
any process still naming the work directory. A part of `Sandbox`."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from fabricgen.lab.ovn.databases import NB, Databases
from fabricgen.lab.ovn.processes import lab_processes, names_directory, terminate
from fabricgen.lab.ovn.running import SandboxError, poll, run
from fabricgen.lab.ovn.unixctl import Client, UnixctlError

STOP_ROUNDS = 20  # rounds of looking for a lab process still running after the pidfiles' were stopped


class Daemons(Databases):
    """The daemons of a `Sandbox`, which provides what is declared here."""

    _pidfiles: list[Path]
    _tracers: dict[str, Client]
    _lock: threading.Lock
    _stopped: bool

    def _template(self, schema: str) -> Path:
        """An empty database file of `schema`, created once and copied for every server."""
        path = self.workdir / "templates" / f"{schema}.db"
        with self._lock:
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                run(["ovsdb-tool", "create", str(path), str(self._schema_path(schema))], env=self.env())
        return path

    @functools.cached_property
    def acl_tiers(self) -> bool:
        """The northbound schema has ACL tiers (OVN 23.06 and later)."""
        tables = json.loads(self._schema_path("ovn-nb.ovsschema").read_text())["tables"]
        return "tier" in tables["ACL"]["columns"]

    def _schema_path(self, schema: str) -> Path:
        if schema == "vswitch.ovsschema":
            return self.programs.ovs_schema
        return self.programs.ovn_schemas / schema

    def _start_db(self, directory: Path, name: str, schema: str) -> None:
        db = directory / f"{name}.db"
        shutil.copyfile(self._template(schema), db)
        self._daemon(directory, name, [
            "ovsdb-server", f"--remote=punix:{directory / f'{name}.sock'}", str(db),
        ])

    def _daemon(self, directory: Path, name: str, argv: list[str], *, env: dict[str, str] | None = None,
                unixctl: bool = True) -> None:
        """Start a daemon detached, its pidfile, log and control socket (`unixctl=False`: the
        daemon's own default, `<OVN_RUNDIR>/<program>.<pid>.ctl`) named after `name` in `directory`."""
        if self._stopped:
            raise SandboxError("the sandbox is stopping")
        pidfile = directory / f"{name}.pid"
        with self._lock:
            self._pidfiles.append(pidfile)
        control = [f"--unixctl={directory / f'{name}.ctl'}"] if unixctl else []
        run([argv[0], "--detach", "--no-chdir", f"--pidfile={pidfile}", f"--log-file={directory / f'{name}.log'}",
             *control, *argv[1:]], env=env or self.env())

    def start_az(self, directory: str, *, az_name: str | None = None) -> None:
        """An AZ's NB and SB (one ovsdb-server), ovn-northd and ovn-ic, in `<workdir>/<directory>/`.

        Without `az_name` NB_Global stays unnamed, and ovn-ic registers the AZ only once
        something sets the name (as a deployment's rendered configure-ovn-ic.sh does).
        """
        d = self.workdir / directory
        d.mkdir(parents=True, exist_ok=True)
        # One ovsdb-server serves both databases, each on its own socket (a client picks its database
        # by name on any of them): half the servers to start and to stop.
        for name, schema in (("nb", "ovn-nb.ovsschema"), ("sb", "ovn-sb.ovsschema")):
            shutil.copyfile(self._template(schema), d / f"{name}.db")
        self._daemon(d, "db", ["ovsdb-server", f"--remote=punix:{d / 'nb.sock'}", f"--remote=punix:{d / 'sb.sock'}",
                               str(d / "nb.db"), str(d / "sb.db")])
        # `ovn-nbctl init` (and `set NB_Global . name=AZ`), on the socket.
        self.transact(self.nb_db(directory), NB, [
            {"op": "insert", "table": "NB_Global", "row": {"name": az_name} if az_name is not None else {}}])
        nb, sb = self.nb_db(directory), self.sb_db(directory)
        self._daemon(d, "northd", ["ovn-northd", f"--ovnnb-db={nb}", f"--ovnsb-db={sb}"])
        self._daemon(d, "ic", ["ovn-ic", f"--ovnnb-db={nb}", f"--ovnsb-db={sb}",
                               f"--ic-nb-db={self.ic_nb}", f"--ic-sb-db={self.ic_sb}"])

    def pause(self, az: str, daemon: str) -> None:
        """Pause an AZ's ovn-ic or ovn-northd (`ovn-appctl -t DAEMON pause`, `daemon` "ic" or
        "northd"): it keeps reading its databases and writes nothing until `resume`, so it then
        acts on everything that changed meanwhile at once."""
        self._control(az, daemon, "pause")

    def resume(self, az: str, daemon: str) -> None:
        """Resume a paused daemon, and wait until it has its lock again and is active (`status`):
        23.03's `resume` does not wake the daemon, a request that follows does."""
        self._control(az, daemon, "resume")
        poll(f"ovn-{daemon} of {az} active again", lambda: "active" in self._control(az, daemon, "status"))

    def wake(self, az: str, daemon: str = "ic") -> None:
        """Have a daemon run its loop once more (any request on its control socket does). ovn-ic
        retries a transaction the IC SB refused (two AZs took the same tunnel key) only when
        something wakes it, and in a quiet lab nothing else may."""
        with contextlib.suppress(SandboxError):
            self._control(az, daemon, "status")

    def _control(self, az: str, daemon: str, command: str) -> str:
        try:
            with Client(self.workdir / az / f"{daemon}.ctl") as client:
                return client.call(command)
        except (OSError, UnixctlError) as exc:
            raise SandboxError(f"ovn-{daemon} of {az}: {command}: {exc}") from None

    def stop_daemons(self, azs: Iterable[str], names: Sequence[str]) -> None:
        """Stop some daemons of these AZs (pidfile names, e.g. `northd`, `ic`) and wait until they are gone."""
        self._stop_pidfiles([self.workdir / az / f"{name}.pid" for az in azs for name in names])

    def _stop_pidfiles(self, pidfiles: Iterable[Path]) -> None:
        """SIGTERM, all at once, to the process ids in these pidfiles that are still the lab's
        (their command line names the work directory: OVS and OVN daemons exit cleanly on it),
        then SIGKILL for one that stays."""
        pids: list[int] = []
        for pidfile in pidfiles:
            with contextlib.suppress(OSError, ValueError):
                pid = int(pidfile.read_text().strip())
                if names_directory(pid, self.workdir):
                    pids.append(pid)
                    os.kill(pid, signal.SIGTERM)
        terminate(pids)

    def stop(self) -> None:
        """Stop every daemon this sandbox started, by its pidfile (`_stop_pidfiles`), then any
        process still naming the work directory."""
        self._stopped = True
        for client in self._tracers.values():
            client.close()
        self._tracers.clear()
        self._stop_pidfiles(self._pidfiles)
        # A daemon whose start was interrupted may not have written its pidfile when it was read
        # (its `--detach` parent was signalled with the caller): every process still running with
        # this work directory on its command line is one of the lab's, and is stopped too.
        for _ in range(STOP_ROUNDS):
            left = lab_processes(self.workdir)
            if not left:
                break
            terminate(left, grace=0)
