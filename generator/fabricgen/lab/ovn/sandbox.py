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
import os
import shutil
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from pathlib import Path
from typing import Any, TypeVar

from fabricgen.lab.ovn.daemons import Daemons
from fabricgen.lab.ovn.databases import IC_SB, SB
from fabricgen.lab.ovn.programs import CONTROL_PLANE, OVN_SCHEMAS, Programs
from fabricgen.lab.ovn.programs import SYSTEM_DIRS as SYSTEM_DIRS  # where Debian puts ovsdb-server
from fabricgen.lab.ovn.running import INTERRUPTED, SandboxError, parallel, poll, run
from fabricgen.lab.ovn.tracers import Tracers
from fabricgen.lab.ovn.unixctl import Client

SCHEMA_DIR = Path("/usr/share/ovn")  # the system's; a prefix has its own (`Programs.ovn_schemas`)
BINARIES = CONTROL_PLANE
SCHEMAS = OVN_SCHEMAS
DEBIAN_PACKAGES = ("ovn-central", "ovn-host", "ovn-ic", "ovn-ic-db", "openvswitch-switch")
INSTALL_COMMAND = "apt-get install " + " ".join(DEBIAN_PACKAGES)
ROUTER = "ovn-cluster"
TRANSIT_SUBNET = IPv4Network("169.254.100.0/24")
_SOCKET_PATH_MAX = 107

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
class Sandbox(Daemons, Tracers):
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

    def start_ic_databases(self) -> None:
        ic = self.workdir / "ic"
        ic.mkdir(parents=True, exist_ok=True)
        parallel(lambda db: self._start_db(ic, *db),
                 [("ic_nb", "ovn-ic-nb.ovsschema"), ("ic_sb", "ovn-ic-sb.ovsschema")])

    def start_zone(self, zone: ZoneSpec) -> None:
        self.start_az(zone.name, az_name=zone.name)

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
