"""A throwaway multi-AZ OVN-IC control plane in a temporary directory.

Everything runs as unprivileged user-space daemons on unix sockets inside one
work directory: the IC northbound and southbound ovsdb-servers, and per
availability zone an NB and SB ovsdb-server, ovn-northd and ovn-ic. There is no
OVS, no kernel datapath, no TCP port and nothing outside the work directory; the
daemons are stopped by their own control sockets and pidfiles and the directory
is removed afterwards.

The interconnection is built the way Kube-OVN's ovn-ic-controller builds it:
router `ovn-cluster` per zone, LRP `<az>-<ts>` with the zone's transit address,
LSP `<ts>-<az>` of type router on the transit switch, a gateway chassis marked
`other_config:is-interconn=true`. Without ovn-controller nobody claims the
chassisredirect port, so the claim is faked with `ovn-sbctl lsp-bind`, exactly as
real ovn-controller would record it; only then does ovn-ic publish the port's
gateway and `ovn-ic-sbctl show` list the port.

Readiness is polled with a bounded number of retries, never with a deadline.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from pathlib import Path

SCHEMA_DIR = Path("/usr/share/ovn")
BINARIES = (
    "ovsdb-tool", "ovsdb-server", "ovn-northd", "ovn-ic", "ovn-nbctl", "ovn-sbctl",
    "ovn-ic-nbctl", "ovn-ic-sbctl", "ovn-trace", "ovs-appctl",
)
SCHEMAS = ("ovn-nb.ovsschema", "ovn-sb.ovsschema", "ovn-ic-nb.ovsschema", "ovn-ic-sb.ovsschema")
ROUTER = "ovn-cluster"
POLL_INTERVAL = 0.05
POLL_TRIES = 400  # bounded; a healthy sandbox needs a handful
TRANSIT_SUBNET = IPv4Network("169.254.100.0/24")
CTL_TIMEOUT = 20  # seconds ovn-*ctl wait for a database before giving up
_SOCKET_PATH_MAX = 107


def missing_prerequisites() -> list[str]:
    """What is missing to run a sandbox here (empty when it can run)."""
    missing = [b for b in BINARIES if shutil.which(b) is None]
    missing += [str(SCHEMA_DIR / s) for s in SCHEMAS if not (SCHEMA_DIR / s).is_file()]
    return missing


class SandboxError(RuntimeError):
    pass


def run(args: Sequence[str], *, env: dict[str, str] | None = None, check: bool = True) -> str:
    proc = subprocess.run(list(args), capture_output=True, text=True, env=env, check=False)
    if check and proc.returncode != 0:
        raise SandboxError(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stderr}{proc.stdout}")
    return proc.stdout


def poll(what: str, probe: object, tries: int = POLL_TRIES) -> None:
    """Call `probe()` until it returns true, at most `tries` times."""
    assert callable(probe)
    for _ in range(tries):
        with contextlib.suppress(SandboxError):
            if probe():
                return
        time.sleep(POLL_INTERVAL)
    raise SandboxError(f"gave up waiting for {what} after {tries} tries")


def transit_mac(address: IPv4Address) -> str:
    """A deterministic MAC for a transit port (Kube-OVN picks a random one)."""
    a, b, c, d = address.packed
    return f"00:00:{a:02x}:{b:02x}:{c:02x}:{d:02x}"


@dataclass(frozen=True)
class ZoneSpec:
    """One availability zone to join to the transit switch."""

    name: str
    transit_address: IPv4Address
    gateway: str  # chassis name and hostname of the zone's IC gateway
    gateway_ip: IPv4Address  # encap IP; never bound to an interface


@dataclass
class Sandbox:
    """A running sandbox. Use `start()`, then `stop()` (or the `running` context manager)."""

    workdir: Path
    zones: tuple[ZoneSpec, ...] = ()
    transit_switch: str = "ts"
    transit_subnet: IPv4Network = TRANSIT_SUBNET
    encapsulation: str = "geneve"
    _pidfiles: list[Path] = field(default_factory=list)

    # ------------------------------------------------------------ addresses
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
        env = dict(os.environ)
        for var in ("OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR", "OVN_RUNDIR", "OVN_LOGDIR", "OVN_DBDIR"):
            env[var] = str(self.workdir)
        for var in ("OVN_NB_DB", "OVN_SB_DB", "OVN_IC_NB_DB", "OVN_IC_SB_DB"):
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
        """`ovn-trace` in one zone (23.03 takes `--db=`, not `--ovnsb=`)."""
        return run(["ovn-trace", f"--db={self.sb_db(zone)}", *options, datapath, flow], env=self.env())

    def sync(self, zone: str) -> None:
        """Wait until northd has compiled the zone's NB into its SB."""
        self.nb(zone, "--wait=sb", "sync")

    # ------------------------------------------------------------ daemons
    def _start_db(self, directory: Path, name: str, schema: str) -> None:
        db = directory / f"{name}.db"
        run(["ovsdb-tool", "create", str(db), str(SCHEMA_DIR / schema)], env=self.env())
        self._daemon(directory, name, [
            "ovsdb-server", f"--remote=punix:{directory / f'{name}.sock'}", str(db),
        ])

    def _daemon(self, directory: Path, name: str, argv: list[str]) -> None:
        pidfile = directory / f"{name}.pid"
        self._pidfiles.append(pidfile)
        run([argv[0], "--detach", "--no-chdir", f"--pidfile={pidfile}", f"--log-file={directory / f'{name}.log'}",
             f"--unixctl={directory / f'{name}.ctl'}", *argv[1:]], env=self.env())

    def start_ic_databases(self) -> None:
        ic = self.workdir / "ic"
        ic.mkdir(parents=True, exist_ok=True)
        self._start_db(ic, "ic_nb", "ovn-ic-nb.ovsschema")
        self._start_db(ic, "ic_sb", "ovn-ic-sb.ovsschema")

    def start_zone(self, zone: ZoneSpec) -> None:
        self.start_az(zone.name, az_name=zone.name)

    def start_az(self, directory: str, *, az_name: str | None = None) -> None:
        """An AZ's NB and SB, ovn-northd and ovn-ic, in `<workdir>/<directory>/`.

        Without `az_name` NB_Global stays unnamed, and ovn-ic registers the AZ only once
        something sets the name (as a deployment's rendered configure-ovn-ic.sh does).
        """
        d = self.workdir / directory
        d.mkdir(parents=True, exist_ok=True)
        self._start_db(d, "nb", "ovn-nb.ovsschema")
        self._start_db(d, "sb", "ovn-sb.ovsschema")
        self.nb(directory, "init")
        if az_name is not None:
            self.nb(directory, "set", "NB_Global", ".", f"name={az_name}")
        nb, sb = self.nb_db(directory), self.sb_db(directory)
        self._daemon(d, "northd", ["ovn-northd", f"--ovnnb-db={nb}", f"--ovnsb-db={sb}"])
        self._daemon(d, "ic", ["ovn-ic", f"--ovnnb-db={nb}", f"--ovnsb-db={sb}",
                               f"--ic-nb-db={self.ic_nb}", f"--ic-sb-db={self.ic_sb}"])

    def add_gateway_chassis(self, az: str, chassis: str, ip: IPv4Address) -> None:
        """An IC gateway chassis in an AZ's SB, as ovn-controller registers a host with
        `ovn-is-interconn=true` (encap IP never bound to an interface)."""
        self.sb(az, "chassis-add", chassis, self.encapsulation, str(ip))
        self.sb(az, "set", "Chassis", chassis, f"hostname={chassis}", "other_config:is-interconn=true")

    def registered_zones(self) -> set[str]:
        return set(self.icsb("--bare", "--columns=name", "list", "Availability_Zone").split())

    def start(self, *, before_transit_switch: Sequence[Sequence[str]] = ()) -> None:
        """IC databases, every zone's daemons, the transit switch and each zone's port on it.

        `before_transit_switch`: commands run (with the IC NB in `OVN_IC_NB_DB`) after the IC
        database is up and before the transit switch exists, as an operator's setup script is.
        """
        self.start_ic_databases()
        self.icnb("init")
        for argv in before_transit_switch:
            run(argv, env={**self.env(), "OVN_IC_NB_DB": self.ic_nb})
        for zone in self.zones:
            self.start_zone(zone)
        names = {z.name for z in self.zones}
        poll("every zone registered in the IC SB", lambda: self.registered_zones() == names)
        self.icnb("ts-add", self.transit_switch)
        for zone in self.zones:
            self.nb(zone.name, "wait-until", "Logical_Switch", self.transit_switch)
            self.join(zone)
        self.claim_gateways()
        poll("ports of every zone in `ovn-ic-sbctl show`", self._ports_published)
        poll("remote transit ports in every zone", self._remotes_bound)

    def join(self, zone: ZoneSpec) -> None:
        """What Kube-OVN's establishInterConnection does for one zone and one transit switch."""
        ts, z = self.transit_switch, zone.name
        lsp, lrp = f"{ts}-{z}", f"{z}-{ts}"
        address = IPv4Interface(f"{zone.transit_address}/{self.transit_subnet.prefixlen}")
        self.add_gateway_chassis(z, zone.gateway, zone.gateway_ip)
        self.nb(z, "--may-exist", "lr-add", ROUTER)
        self.nb(z, "lrp-add", ROUTER, lrp, transit_mac(zone.transit_address), str(address))
        self.nb(z, "lsp-add", ts, lsp, "--", "lsp-set-type", lsp, "router",
                "--", "lsp-set-addresses", lsp, "router", "--", "lsp-set-options", lsp, f"router-port={lrp}")
        self.nb(z, "lrp-set-gateway-chassis", lrp, zone.gateway, "100")
        self.sync(z)

    def claim_gateways(self) -> None:
        """Fake ovn-controller's claim of each zone's chassisredirect port."""
        for zone in self.zones:
            port = f"cr-{zone.name}-{self.transit_switch}"
            self.sb(zone.name, "wait-until", "Port_Binding", port)
            self.sb(zone.name, "lsp-bind", port, zone.gateway)

    def _ports_published(self) -> bool:
        text = self.icsb("show")
        return sum(1 for line in text.splitlines() if line.startswith("        port ")) == len(self.zones)

    def _remotes_bound(self) -> bool:
        ts = self.transit_switch
        for zone in self.zones:
            remote = self.nb(zone.name, "--bare", "--columns=name", "find", "Logical_Switch_Port", "type=remote")
            if len(remote.split()) != len(self.zones) - 1:
                return False
            for other in self.zones:
                if other.name == zone.name:
                    continue
                chassis = self.sb(zone.name, "--bare", "--columns=chassis", "find", "Port_Binding",
                                  f"logical_port={ts}-{other.name}")
                if not chassis.strip():
                    return False
        return True

    def stop(self) -> None:
        """Stop every daemon this sandbox started, by control socket and then by pid."""
        for ctl in sorted(self.workdir.rglob("*.ctl")):
            subprocess.run(["ovs-appctl", "-t", str(ctl), "exit"], capture_output=True, timeout=10, check=False)
        for pidfile in self._pidfiles:
            with contextlib.suppress(OSError, ValueError):
                _terminate(int(pidfile.read_text().strip()))

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
        """A started sandbox, stopped and removed on exit (also when starting fails)."""
        with workdir() as path:
            sandbox = cls(path, tuple(zones), transit_switch, transit_subnet, encapsulation)
            try:
                sandbox.start(before_transit_switch=before_transit_switch)
                yield sandbox
            finally:
                sandbox.stop()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _terminate(pid: int) -> None:
    for attempt in range(40):
        if not _alive(pid):
            return
        if attempt == 5:
            os.kill(pid, signal.SIGTERM)
        time.sleep(POLL_INTERVAL)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def workdir() -> Iterator[Path]:
    """A fresh directory short enough for unix socket paths (< 108 bytes)."""
    base = os.environ.get("FABRICGEN_OVN_SANDBOX_BASE") or tempfile.gettempdir()
    if len(base) > 40:
        base = "/tmp"
    path = Path(tempfile.mkdtemp(prefix="fg-ovn-", dir=base))
    if len(str(path / "zone-name-of-63-chars" / "northd.ctl")) + 42 > _SOCKET_PATH_MAX:
        raise SandboxError(f"work directory {path} is too long for unix socket paths")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
