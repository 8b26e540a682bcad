"""A throwaway multi-AZ OVN-IC control plane in a private temporary directory.

Everything runs as unprivileged user-space daemons on unix sockets inside one
work directory: the IC northbound and southbound ovsdb-servers, and per
availability zone one ovsdb-server with its NB and SB, ovn-northd and ovn-ic. There is no
OVS, no kernel datapath, no TCP port and nothing outside the work directory
(every OVS/OVN run, log and database directory variable points into it); the
daemons are stopped by the process ids in their own pidfiles (SIGTERM, all at once), and
the directory is removed afterwards.

The interconnection is built the way Kube-OVN's ovn-ic-controller builds it:
router `ovn-cluster` per zone, LRP `<az>-<ts>` with the zone's transit address,
LSP `<ts>-<az>` of type router on the transit switch, gateway chassis marked
`other_config:is-interconn=true`. Without ovn-controller nobody claims the
chassisredirect port, so the claim is made with `ovn-sbctl lsp-bind`, exactly as
real ovn-controller would record it; only then does ovn-ic publish the port's
gateway and `ovn-ic-sbctl show` list the port.

AZs start in parallel (each daemon's `--detach` returns once it is ready), and
`ovn-trace` runs as one daemon per AZ answering on its control socket, so tracing
many paths starts no process per trace. What the lab only reads or waits for (rows,
`nb_cfg`) it asks the ovsdb-servers on their sockets (`transact`), starting no ctl
process. Readiness is polled with a bounded number of retries, never with a deadline.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from pathlib import Path
from typing import Any, TypeVar

from fabricgen.lab.ovn.processes import lab_processes, names_directory, terminate
from fabricgen.lab.ovn.programs import CONTROL_PLANE, OVN_SCHEMAS, Programs
from fabricgen.lab.ovn.programs import SYSTEM_DIRS as SYSTEM_DIRS  # where Debian puts ovsdb-server
from fabricgen.lab.ovn.running import INTERRUPTED, SandboxError, parallel, poll, run
from fabricgen.lab.ovn.tracers import Tracers
from fabricgen.lab.ovn.unixctl import Client, UnixctlError

SCHEMA_DIR = Path("/usr/share/ovn")  # the system's; a prefix has its own (`Programs.ovn_schemas`)
BINARIES = CONTROL_PLANE
SCHEMAS = OVN_SCHEMAS
DEBIAN_PACKAGES = ("ovn-central", "ovn-host", "ovn-ic", "ovn-ic-db", "openvswitch-switch")
INSTALL_COMMAND = "apt-get install " + " ".join(DEBIAN_PACKAGES)
ROUTER = "ovn-cluster"
TRANSIT_SUBNET = IPv4Network("169.254.100.0/24")
CTL_TIMEOUT = 20  # seconds ovn-*ctl wait for a database before giving up
_SOCKET_PATH_MAX = 107
STOP_ROUNDS = 20  # rounds of looking for a lab process still running after the pidfiles' were stopped
NB, SB, IC_NB, IC_SB = "OVN_Northbound", "OVN_Southbound", "OVN_IC_Northbound", "OVN_IC_Southbound"

T = TypeVar("T")


def program_path() -> str:
    """Where the lab looks for the OVN programs: the prefix of `FABRICGEN_OVN_PREFIX`, else PATH,
    then the system directories it lacks (see `programs`)."""
    return Programs.from_environment().search_path()


def missing_prerequisites(*, data_plane: bool = False, programs: Programs | None = None) -> list[str]:
    """What is missing to run a sandbox here (empty when it can run); `data_plane`: also the
    chassis' programs (ovs-vswitchd, ovs-vsctl, ovn-controller)."""
    return (programs or Programs.from_environment()).missing(data_plane=data_plane)


def transit_mac(address: IPv4Address) -> str:
    """A deterministic MAC for a transit port (Kube-OVN picks a random one)."""
    a, b, c, d = address.packed
    return f"00:00:{a:02x}:{b:02x}:{c:02x}:{d:02x}"


@dataclass(frozen=True)
class ZoneSpec:
    """One availability zone to join to the transit switch."""

    name: str
    transit_address: IPv4Address
    gateway: str  # chassis name and hostname of the zone's IC gateway (claims the port)
    gateway_ip: IPv4Address  # encap IP; never bound to an interface
    standby: tuple[str, ...] = ()  # further gateway chassis, priorities 99, 98, ...
    standby_ips: tuple[IPv4Address, ...] = ()  # their encap IPs (default: gateway_ip + 256, + 512, ...)

    def gateways(self, index: int = 0) -> list[str]:
        """The gateway chassis in priority order on transit switch `index`: Kube-OVN's list
        rotated left by `index` (`generateNewOrderGwNodes` in
        `pkg/ovn_ic_controller/ovn_ic_controller.go`)."""
        return rotated([self.gateway, *self.standby], index)

    def chassis_ips(self) -> list[tuple[str, IPv4Address]]:
        """Every gateway chassis of the zone with its encap IP, in priority order."""
        ips = self.standby_ips or tuple(self.gateway_ip + 256 * i for i in range(1, len(self.standby) + 1))
        return [(self.gateway, self.gateway_ip), *zip(self.standby, ips, strict=True)]


@dataclass
class Sandbox(Tracers):
    """A running sandbox. Use `start()`, then `stop()` (or the `running` context manager)."""

    workdir: Path
    zones: tuple[ZoneSpec, ...] = ()
    transit_switch: str = "ts"
    transit_subnet: IPv4Network = TRANSIT_SUBNET
    encapsulation: str = "geneve"
    programs: Programs = field(default_factory=Programs.from_environment)
    # Kube-OVN's further transit switches (`TS_NUM` > 1: `ts1`, `ts2`, ...), which its zones join
    # too, each on its own subnet and with the gateways in rotated order
    extra_switches: tuple[str, ...] = ()
    _pidfiles: list[Path] = field(default_factory=list)
    _tracers: dict[str, Client] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopped: bool = False

    # ------------------------------------------------------------ addresses
    @property
    def switches(self) -> tuple[str, ...]:
        return (self.transit_switch, *self.extra_switches)

    def switch_address(self, zone: ZoneSpec, index: int) -> IPv4Interface:
        """A zone's address on transit switch `index`: on `ts` its transit address, on the others
        the same host in Kube-OVN's subnet of that switch (169.254.(100 + index).0/24, `getTSCidr`
        in kubeovn/kube-ovn `pkg/ovn_leader_checker/ovn.go`; Kube-OVN picks the host at random)."""
        if index == 0:
            return IPv4Interface(f"{zone.transit_address}/{self.transit_subnet.prefixlen}")
        subnet = IPv4Network(f"169.254.{100 + index}.0/24")
        host = int(zone.transit_address) - int(self.transit_subnet.network_address)
        return IPv4Interface(f"{subnet.network_address + host % subnet.num_addresses}/{subnet.prefixlen}")

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

    # ------------------------------------------------------------ tools
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

    # ------------------------------------------------------------ OVSDB on its socket
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

    # ------------------------------------------------------------ daemons
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

    def start_ic_databases(self) -> None:
        ic = self.workdir / "ic"
        ic.mkdir(parents=True, exist_ok=True)
        parallel(lambda db: self._start_db(ic, *db),
                 [("ic_nb", "ovn-ic-nb.ovsschema"), ("ic_sb", "ovn-ic-sb.ovsschema")])

    def start_zone(self, zone: ZoneSpec) -> None:
        self.start_az(zone.name, az_name=zone.name)

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

    def add_gateway_chassis(self, az: str, chassis: str, ip: IPv4Address) -> None:
        """An IC gateway chassis in an AZ's SB, as ovn-controller registers a host with
        `ovn-is-interconn=true` (encap IP never bound to an interface)."""
        self.sb(az, *_chassis_commands(chassis, self.encapsulation, ip))

    def registered_zones(self) -> set[str]:
        return {row["name"] for row in self.rows(self.ic_sb, IC_SB, "Availability_Zone", ["name"])}

    def start(self, *, before_transit_switch: Sequence[Sequence[str]] = ()) -> None:
        """IC databases, every zone's daemons, the transit switch and each zone's port on it.

        `before_transit_switch`: commands run (with the IC NB in `OVN_IC_NB_DB`) after the IC
        database is up and before the transit switch exists, as an operator's setup script is.
        """
        self.start_ic_databases()
        self.icnb("init")
        for argv in before_transit_switch:
            run(argv, env={**self.env(), "OVN_IC_NB_DB": self.ic_nb})
        parallel(self.start_zone, self.zones)
        names = {z.name for z in self.zones}
        poll("every zone registered in the IC SB", lambda: self.registered_zones() >= names)
        self.icnb("ts-add", self.transit_switch)
        parallel(self.join, self.zones)
        parallel(self.claim_gateway, self.zones)
        poll("ports of every zone in `ovn-ic-sbctl show`", self._ports_published)
        poll("remote transit ports in every zone", self._remotes_bound)

    def join(self, zone: ZoneSpec, *more: str, register_chassis: bool = True, index: int = 0) -> None:
        """What Kube-OVN's establishInterConnection does for one zone and one transit switch, in one
        NB transaction once ovn-ic has created the transit switch; `more`: further ovn-nbctl
        commands (`--`-separated) for the same transaction. `register_chassis=False`: the gateway
        chassis are real (simulated) chassis whose ovn-controller registered them. `index`: which
        transit switch (`switches`), its gateways in Kube-OVN's order for it (`ZoneSpec.gateways`)."""
        ts, z = self.switches[index], zone.name
        lsp, lrp = f"{ts}-{z}", f"{z}-{ts}"
        address = self.switch_address(zone, index)
        chassis = zone.gateways(index)
        if register_chassis:
            self.sb(z, *self._gateway_chassis_commands(zone))
        gateways = [arg for i, name in enumerate(chassis)
                    for arg in ("--", "lrp-set-gateway-chassis", lrp, name, str(100 - i))]
        self.nb(z, "wait-until", "Logical_Switch", ts, "--", "--may-exist", "lr-add", ROUTER,
                "--", "lrp-add", ROUTER, lrp, transit_mac(address.ip), str(address),
                "--", "lsp-add", ts, lsp, "--", "lsp-set-type", lsp, "router",
                "--", "lsp-set-addresses", lsp, "router", "--", "lsp-set-options", lsp, f"router-port={lrp}",
                *gateways, *(["--", *more] if more else []))

    def _gateway_chassis_commands(self, zone: ZoneSpec) -> list[str]:
        commands: list[str] = []
        for name, ip in zone.chassis_ips():
            commands += ["--"] if commands else []
            commands += _chassis_commands(name, self.encapsulation, ip)
        return commands

    def claim_gateway(self, zone: ZoneSpec, *, register_chassis: bool = False, index: int = 0) -> None:
        """Make ovn-controller's claim of one zone's chassisredirect port on transit switch `index`
        (by the first gateway of its rotated order); `register_chassis`: its gateway chassis
        registered in the same transaction (see `join`)."""
        port = f"cr-{zone.name}-{self.switches[index]}"
        first = [*self._gateway_chassis_commands(zone), "--"] if register_chassis else []
        self.sb(zone.name, *first, "wait-until", "Port_Binding", port, "--", "lsp-bind", port, zone.gateways(index)[0])

    def claim_gateways(self) -> None:
        for zone in self.zones:
            self.claim_gateway(zone)

    def _ports_published(self) -> bool:
        text = self.icsb("show")
        return sum(1 for line in text.splitlines() if line.startswith("        port ")) >= len(self.zones)

    def _remotes_bound(self) -> bool:
        names = [z.name for z in self.zones]
        return all(self.remotes_bound(zone, names) for zone in names)

    def remotes_bound(self, zone: str, azs: Iterable[str], kube_ovn: Iterable[str] = ()) -> bool:
        """Every other AZ's transit port is a remote port bound to its gateway in the zone's SB
        (when not, the zone's ovn-ic is woken: see `wake`)."""
        rows = self.rows(self.sb_db(zone), SB, "Port_Binding", ["logical_port", "chassis"], [("type", "==", "remote")])
        bound = {row["logical_port"] for row in rows if atoms(row["chassis"])}
        others = [az for az in azs if az != zone]
        wanted = {f"{self.transit_switch}-{az}" for az in others}
        zones = set(kube_ovn)
        if zone in zones:  # a Kube-OVN zone holds every other Kube-OVN zone's ports on every switch
            wanted |= {f"{ts}-{az}" for ts in self.extra_switches for az in others if az in zones}
        if wanted <= bound:
            return True
        self.wake(zone)
        return False

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

    @classmethod
    @contextlib.contextmanager
    def running(
        cls,
        zones: Sequence[ZoneSpec],
        *,
        transit_switch: str = "ts",
        transit_subnet: IPv4Network = TRANSIT_SUBNET,
        encapsulation: str = "geneve",
        before_transit_switch: Sequence[Sequence[str]] = (),
    ) -> Iterator[Sandbox]:
        """A started sandbox, stopped and removed on exit (also when starting fails or is interrupted)."""
        with workdir() as path:
            sandbox = cls(path, tuple(zones), transit_switch, transit_subnet, encapsulation)
            try:
                sandbox.start(before_transit_switch=before_transit_switch)
                yield sandbox
            finally:
                sandbox.stop()


def rotated(items: Sequence[T], index: int) -> list[T]:
    """`items` rotated left by `index` (`ZoneSpec.gateways`)."""
    if not items:
        return []
    shift = index % len(items)
    return [*items[shift:], *items[:shift]]


def atoms(value: Any) -> list[Any]:
    """The elements of an OVSDB value as `transact` returns it: a set (`["set", [...]]`) or one atom
    (a UUID is `["uuid", "..."]`)."""
    if isinstance(value, list) and value and value[0] == "set":
        return [a[1] if isinstance(a, list) else a for a in value[1]]
    if isinstance(value, list) and value and value[0] == "uuid":
        return [value[1]]
    return [value]


def _chassis_commands(chassis: str, encapsulation: str, ip: IPv4Address) -> list[str]:
    return ["chassis-add", chassis, encapsulation, str(ip),
            "--", "set", "Chassis", chassis, f"hostname={chassis}", "other_config:is-interconn=true"]


@contextlib.contextmanager
def workdir() -> Iterator[Path]:
    """A fresh private directory (mode 0700) short enough for unix socket paths (< 108 bytes)."""
    base = os.environ.get("FABRICGEN_OVN_SANDBOX_BASE") or tempfile.gettempdir()
    if len(base) > 40:
        base = "/tmp"
    INTERRUPTED.clear()
    path = Path(tempfile.mkdtemp(prefix="fg-ovn-", dir=base))
    if len(str(path / "zone-name-of-63-chars" / "northd.ctl")) + 42 > _SOCKET_PATH_MAX:
        shutil.rmtree(path, ignore_errors=True)
        raise SandboxError(f"work directory {path} is too long for unix socket paths")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
