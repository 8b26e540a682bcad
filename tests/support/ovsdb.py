"""Throwaway ovsdb-server processes on unix sockets, for tests that run real ctl tools.

    with OvsdbServers(tmp_path) as dbs:
        ovs = dbs.start(OPEN_VSWITCH)          # socket <tmp>/open_vswitch/db.sock
        nb = dbs.start(OVN_NB)
        env = {"OVS_RUNDIR": str(ovs.directory), "OVN_NB_DB": nb.remote}
        ... run ovs-vsctl / ovn-nbctl with env ...
        before = nb.dump()

Each server listens only on its unix socket (no `--remote=db:...`), so rows that a
script writes into a Connection table never open a TCP port on the test machine.
Servers are stopped by their own process id when the context ends.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

OPEN_VSWITCH = Path("/usr/share/openvswitch/vswitch.ovsschema")
OVN_NB = Path("/usr/share/ovn/ovn-nb.ovsschema")
OVN_SB = Path("/usr/share/ovn/ovn-sb.ovsschema")
TOOLS = ("ovsdb-server", "ovsdb-tool", "ovsdb-client")


def missing() -> list[str]:
    """Tools or schemas this helper needs that are not installed (empty when usable)."""
    gone = [tool for tool in TOOLS if shutil.which(tool) is None]
    gone += [str(schema) for schema in (OPEN_VSWITCH, OVN_NB, OVN_SB) if not schema.exists()]
    return gone


def _schema_name(schema: Path) -> str:
    out = subprocess.run(["ovsdb-tool", "schema-name", str(schema)], check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


@dataclass
class Database:
    """One running ovsdb-server with one database."""

    name: str  # the schema's database name, e.g. OVN_Northbound
    directory: Path  # holds the socket; use as OVS_RUNDIR for Open_vSwitch
    socket: Path
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def remote(self) -> str:
        """`unix:<socket>`: the value for OVN_NB_DB, OVN_SB_DB or `--db`."""
        return f"unix:{self.socket}"

    def dump(self) -> str:
        """Every table and row (with UUIDs), to compare two states of the database."""
        out = subprocess.run(["ovsdb-client", "dump", self.remote, self.name], check=True,
                             capture_output=True, text=True)
        return out.stdout

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait()


@dataclass
class OvsdbServers:
    """Starts databases under `root`; stops every one of them on exit."""

    root: Path
    started: list[Database] = field(default_factory=list)

    def start(self, schema: Path, socket_name: str = "db.sock") -> Database:
        name = _schema_name(schema)
        directory = self.root / name.lower()
        directory.mkdir(parents=True, exist_ok=False)
        db_file, socket, log = directory / "conf.db", directory / socket_name, directory / "ovsdb-server.log"
        subprocess.run(["ovsdb-tool", "create", str(db_file), str(schema)], check=True)
        process = subprocess.Popen(
            ["ovsdb-server", str(db_file), f"--remote=punix:{socket}",
             f"--unixctl={directory / 'ovsdb-server.ctl'}", "--no-chdir", f"--log-file={log}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        database = Database(name, directory, socket, process, log)
        self.started.append(database)
        # Wait for the socket; a server that exits instead fails the test with its log.
        while not socket.exists():
            if process.poll() is not None:
                raise RuntimeError(f"ovsdb-server for {name} exited: {log.read_text(errors='replace')}")
            time.sleep(0.01)
        return database

    def stop(self) -> None:
        for database in self.started:
            database.stop()

    def __enter__(self) -> OvsdbServers:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
