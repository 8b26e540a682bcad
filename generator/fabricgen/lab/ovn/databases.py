"""The lab's databases, as its tools and its own code reach them: the unix sockets of the IC
northbound and southbound and of each AZ's northbound and southbound, the ctl programs run against
them (`nb`, `sb`, `icnb`, `icsb`, `trace`) with every OVS/OVN directory variable pointed into the
work directory, and OVSDB transactions sent on a socket without starting a process (`transact`,
`rows`, `sync_all`). A part of `Sandbox`."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from fabricgen.lab.ovn.programs import Programs
from fabricgen.lab.ovn.running import INTERRUPTED, SandboxError, poll, run
from fabricgen.lab.ovn.unixctl import Client, UnixctlError

CTL_TIMEOUT = 20  # seconds ovn-*ctl wait for a database before giving up
NB, SB, IC_NB, IC_SB = "OVN_Northbound", "OVN_Southbound", "OVN_IC_Northbound", "OVN_IC_Southbound"


class Databases:
    """The databases of a `Sandbox`, which provides what is declared here."""

    workdir: Path
    programs: Programs

    @property
    def ic_nb(self) -> str:
        return f"unix:{self.workdir / 'ic' / 'ic_nb.sock'}"

    @property
    def ic_sb(self) -> str:
        return f"unix:{self.workdir / 'ic' / 'ic_sb.sock'}"

    def nb_db(self, zone: str) -> str:
        return f"unix:{self.workdir / zone / 'nb.sock'}"

    def sb_db(self, zone: str) -> str:
        return f"unix:{self.workdir / zone / 'sb.sock'}"

    def env(self) -> dict[str, str]:
        """Environment for OVN tools: every default run/log/db directory inside the work dir."""
        env = {**os.environ, "PATH": self.programs.search_path()}
        for var in ("OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR", "OVN_RUNDIR", "OVN_LOGDIR", "OVN_DBDIR"):
            env[var] = str(self.workdir)
        for var in ("OVN_NB_DB", "OVN_SB_DB", "OVN_IC_NB_DB", "OVN_IC_SB_DB", "OVN_NB_DAEMON"):
            env.pop(var, None)
        return env

    def _ctl(self, tool: str, db: str, args: Sequence[str]) -> str:
        return run([tool, f"--db={db}", f"--timeout={CTL_TIMEOUT}", *args], env=self.env())

    def icnb(self, *args: str) -> str:
        return self._ctl("ovn-ic-nbctl", self.ic_nb, args)

    def icsb(self, *args: str) -> str:
        return self._ctl("ovn-ic-sbctl", self.ic_sb, args)

    def nb(self, zone: str, *args: str) -> str:
        return self._ctl("ovn-nbctl", self.nb_db(zone), args)

    def sb(self, zone: str, *args: str) -> str:
        return self._ctl("ovn-sbctl", self.sb_db(zone), args)

    def trace(self, zone: str, datapath: str, flow: str, *options: str) -> str:
        """`ovn-trace` in one zone (23.03 takes `--db=`, not `--ovnsb=`): a new process that reads
        the SB as it is now. `start_tracers` and `traced` answer many traces faster."""
        return run(["ovn-trace", f"--db={self.sb_db(zone)}", *options, datapath, flow], env=self.env())

    def sync(self, zone: str) -> None:
        """Wait until northd has compiled the zone's NB into its SB."""
        self.sync_all([zone])

    def sync_all(self, zones: Iterable[str]) -> None:
        """`ovn-nbctl --wait=sb sync` in every zone at once: each NB_Global's `nb_cfg` raised, then
        waited for until northd has answered with `sb_cfg` (on the databases' sockets, no process)."""
        wanted = {}
        for zone in zones:
            result = self.transact(self.nb_db(zone), NB, [
                {"op": "mutate", "table": "NB_Global", "where": [], "mutations": [["nb_cfg", "+=", 1]]},
                {"op": "select", "table": "NB_Global", "where": [], "columns": ["nb_cfg"]}])
            wanted[zone] = int(result[1]["rows"][0]["nb_cfg"])

        def done() -> bool:
            for zone in list(wanted):
                row = self.rows(self.nb_db(zone), NB, "NB_Global", ["sb_cfg"])[0]
                if int(row["sb_cfg"]) >= wanted[zone]:
                    del wanted[zone]
            return not wanted

        poll("northd to compile every NB into its SB", done)

    def transact(self, db: str, database: str, operations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One OVSDB transaction (RFC 7047 `transact`) on a database's unix socket (`unix:PATH`):
        what the ctl tools send, without starting one."""
        if INTERRUPTED.is_set():
            raise SandboxError("interrupted")
        try:
            with Client(Path(db.removeprefix("unix:")), timeout=CTL_TIMEOUT) as client:
                result = client.request("transact", [database, *operations])
        except (OSError, UnixctlError) as exc:
            raise SandboxError(f"{database} at {db}: {exc}") from None
        errors = [r for r in result if isinstance(r, dict) and "error" in r] if isinstance(result, list) else [result]
        if errors:
            raise SandboxError(f"{database} at {db}: {errors[0]}")
        return list(result)

    def rows(self, db: str, database: str, table: str, columns: Sequence[str],
             where: Sequence[tuple[str, str, object]] = ()) -> list[dict[str, Any]]:
        """The rows of a table (`where`: OVSDB conditions), the given columns only. ovsdb-server
        returns rows that are alike in those columns once: to count rows, ask for `_uuid` too."""
        result = self.transact(db, database, [{"op": "select", "table": table, "where": [list(c) for c in where],
                                               "columns": list(columns)}])
        return list(result[0]["rows"])
