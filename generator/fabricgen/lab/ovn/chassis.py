"""Simulated chassis on a simulated underlay, as OVN's own test suite builds them.

Modelled on ovn-org/ovn `tests/ovn-macros.at` and `tests/ofproto-macros.at` (v25.03.0):

- `Underlay.start` is `net_add n1`: a sandbox of its own (`sim_add main`) whose bridge `n1`
  is the underlay network; every chassis plugs into it (`net_attach`) through a dummy port
  pair on a unix socket (`options:pstream` on the underlay side, `options:stream` on the
  chassis' `br-phys`).
- `Underlay.add_chassis` is `sim_add` plus `ovn_az_attach`: the chassis' own OVS database
  (ovsdb-server), `ovs-vswitchd --enable-dummy=system` (the user-space dummy datapath: no
  kernel, no root), `br-phys` with the tunnel endpoint address (`netdev-dummy/ip4addr`,
  `ovs/route/add`), the `external_ids` ovn-controller reads (system-id, hostname,
  ovn-remote, ovn-encap-type, ovn-encap-ip; `ovn-is-interconn=true` on an IC gateway, as
  Kube-OVN's daemon `setICGateway` sets on a gateway node) or, for a deployment's host, its
  rendered `configure-ovn-host.sh`, then `br-int` and ovn-controller.
- `Underlay.populate_arp` is `OVN_POPULATE_ARP`: native tunnelling does not queue packets
  while it resolves a tunnel endpoint, so every chassis learns every other's MAC first
  (`tnl/neigh/set`).
- `Chassis.add_vm` is a VIF: a port on `br-int` with `external_ids:iface-id` and
  `options:tx_pcap`, and `Chassis.receive` is `netdev-dummy/receive`.

Each chassis keeps its files (database, sockets, `br-int.mgmt`, logs, pcaps) in its own
directory of the lab, `OVS_RUNDIR` pointing there; the daemons are registered with the
sandbox, which stops them.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path

from fabricgen.lab.ovn.databases import SB
from fabricgen.lab.ovn.running import SandboxError, parallel, poll, run
from fabricgen.lab.ovn.sandbox import Sandbox
from fabricgen.lab.ovn.settling import Counts, Port, read_counts
from fabricgen.lab.ovn.unixctl import Client, UnixctlError
from fabricgen.model.ovn import TUNNEL_OVERHEAD

NETWORK = "n1"
BFD_TRIES = 500  # polls, 20 ms apart: BFD takes a few of its 1 s intervals to come up
UNDERLAY_DIR = "u"
UNDERLAY = "main"  # the underlay bridge's own daemon, `sim_add main`


@dataclass(frozen=True)
class ChassisSpec:
    """One simulated chassis: its OVN name, the AZ whose SB it joins, its tunnel endpoint."""

    name: str  # system-id and hostname
    az: str  # the AZ's directory in the lab
    encapsulation: str  # ovn-encap-type: geneve, vxlan or geneve,vxlan
    encap_ip: IPv4Address
    gateway: bool = False  # an IC gateway (ovn-is-interconn=true)
    mtu: int = 1500  # underlay MTU of its tunnel interface
    host_script: str | None = None  # a deployment host's rendered configure-ovn-host.sh


@dataclass
class Chassis:
    spec: ChassisSpec
    directory: Path
    sandbox: Sandbox
    bridge_mac: str = ""
    vms: dict[str, Path] = field(default_factory=dict)  # VIF name -> its tx pcap
    local_ip_left_out: bool = False  # its rendered ovn-set-local-ip=true, which this OVS cannot simulate
    _client: Client | None = None

    @property
    def db(self) -> str:
        return f"unix:{self.directory / 'db.sock'}"

    def env(self) -> dict[str, str]:
        env = self.sandbox.env()
        for var in ("OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR", "OVN_RUNDIR", "OVN_LOGDIR", "OVN_DBDIR"):
            env[var] = str(self.directory)
        return env

    def vsctl(self, *args: str) -> str:
        return run(["ovs-vsctl", f"--db={self.db}", "--timeout=20", *args], env=self.env())

    def appctl(self, method: str, *params: str) -> str:
        """A command to this chassis' ovs-vswitchd (what `ovs-appctl` sends), on one kept connection."""
        if self._client is None:
            self._client = Client(self.directory / "vswitchd.ctl")
        try:
            return self._client.call(method, *params)
        except (OSError, UnixctlError) as exc:
            raise SandboxError(f"ovs-vswitchd of {self.spec.name}: {method}: {exc}") from None

    @property
    def vm_mtu(self) -> int:
        """The MTU a platform gives a VM or pod behind this chassis: the underlay's less the tunnel's
        overhead (Kube-OVN's, OVN-Kubernetes' and Neutron's own rule: the overlay packet must fit
        the underlay once encapsulated). ovs-vswitchd's dummy netdev drops a frame larger than its
        port's MTU on receive, so a port left at 1500 would lose every jumbo probe."""
        return self.spec.mtu - TUNNEL_OVERHEAD[self.spec.encapsulation.split(",")[0]]

    def add_vm(self, vif: str, logical_port: str, ofport: int) -> Path:
        """A VM's port on br-int, bound to `logical_port`, at the platform's MTU (`vm_mtu`);
        returns the pcap of what it receives."""
        pcap = self.directory / f"{vif}-tx.pcap"
        self.vsctl("add-port", "br-int", vif, "--", "set", "Interface", vif,
                   f"external-ids:iface-id={logical_port}", f"options:tx_pcap={pcap}",
                   f"options:rxq_pcap={self.directory / f'{vif}-rx.pcap'}", f"ofport-request={ofport}",
                   f"mtu_request={self.vm_mtu}")
        self.vms[vif] = pcap
        return pcap

    def receive(self, vif: str, frame_hex: str) -> None:
        """`netdev-dummy/receive VIF HEX`: the frame arrives on the VM's port as if the VM sent it."""
        self.appctl("netdev-dummy/receive", vif, frame_hex)

    def tunnels(self) -> list[tuple[str, str]]:
        """(type, remote_ip) of every tunnel port ovn-controller made on br-int."""
        rows = self.vsctl("--format=csv", "--data=bare", "--no-headings", "--columns=type,options", "list", "Interface")
        out = []
        for row in rows.splitlines():
            kind, _, options = row.partition(",")
            remote = next((o.split("=", 1)[1] for o in options.split() if o.startswith("remote_ip=")), "")
            if kind in ("geneve", "vxlan", "stt") and remote:
                out.append((kind, remote.strip('"')))
        return out

    def bfd_down(self) -> list[str]:
        """The tunnel ports with BFD on (ovn-controller turns it on towards the gateways of an HA
        chassis group) whose session is not up yet: a redirect to a gateway waits for it."""
        rows = self.sandbox.rows(self.db, "Open_vSwitch", "Interface", ["name", "bfd", "bfd_status"])
        return [row["name"] for row in rows
                if dict(row["bfd"][1]).get("enable") == "true" and dict(row["bfd_status"][1]).get("state") != "up"]

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


@dataclass
class Underlay:
    """The lab's underlay network and the chassis on it."""

    sandbox: Sandbox
    network: IPv4Network  # one L2 network holding every tunnel endpoint
    chassis: dict[str, Chassis] = field(default_factory=dict)
    _main: Chassis | None = None

    def start(self) -> None:
        spec = ChassisSpec(UNDERLAY, "", "", IPv4Address(0))
        self._main = self._start_switch(spec, self.sandbox.workdir / UNDERLAY_DIR)
        self._main.vsctl("add-br", NETWORK)

    def _start_switch(self, spec: ChassisSpec, directory: Path) -> Chassis:
        """`sim_add`: an OVS database and ovs-vswitchd with the dummy datapath."""
        directory.mkdir(parents=True, exist_ok=True)
        chassis = Chassis(spec, directory, self.sandbox)
        db = directory / "conf.db"
        run(["ovsdb-tool", "create", str(db), str(self.sandbox.programs.ovs_schema)], env=chassis.env())
        self.sandbox._daemon(directory, "db", ["ovsdb-server", f"--remote=punix:{directory / 'db.sock'}", str(db)],
                             env=chassis.env())
        chassis.vsctl("--no-wait", "init")
        self.sandbox._daemon(directory, "vswitchd", ["ovs-vswitchd", "--enable-dummy=system", chassis.db],
                             env=chassis.env())
        return chassis

    def add_chassis(self, spec: ChassisSpec, index: int, sb_remote: str) -> Chassis:
        """`sim_add` and `ovn_az_attach`: a chassis on the underlay with ovn-controller running."""
        assert self._main is not None, "start the underlay first"
        chassis = self._start_switch(spec, self.sandbox.workdir / f"c{index}")
        port = f"c{index}"
        socket = self.sandbox.workdir / UNDERLAY_DIR / f"{port}.sock"
        self._main.vsctl("add-port", NETWORK, port, "--", "set", "Interface", port,
                         f"options:pstream=punix:{socket}", f"mtu_request={spec.mtu}")
        chassis.vsctl("add-br", "br-phys", "--", "add-port", "br-phys", f"br-phys_{NETWORK}",
                      "--", "set", "Interface", f"br-phys_{NETWORK}", f"options:stream=unix:{socket}",
                      f"mtu_request={spec.mtu}", "--", "set", "Interface", "br-phys", f"mtu_request={spec.mtu}")
        chassis.bridge_mac = chassis.vsctl("get", "Interface", "br-phys", "mac_in_use").strip().strip('"')
        address = f"{spec.encap_ip}/{self.network.prefixlen}"
        chassis.appctl("netdev-dummy/ip4addr", "br-phys", address)
        chassis.appctl("ovs/route/add", str(self.network), "br-phys")
        if spec.host_script is not None:
            _run_host_script(chassis, spec)
            # A tunnel with options:local_ip (ovn-controller sets it for `ovn-set-local-ip=true`)
            # sends only from an address with a local route, as the kernel has one for each of a
            # host's addresses. Open vSwitch 3.5's dummy datapath adds one with the address, 3.1's
            # (Debian 12) does not: there its tunnels never send and BFD never comes up. The
            # chassis has that one address, so the tunnel's source is the same without local_ip.
            if f"SRC {spec.encap_ip} local" not in chassis.appctl("ovs/route/show") and chassis.vsctl(
                    "--if-exists", "get", "Open_vSwitch", ".", "external_ids:ovn-set-local-ip").strip() == '"true"':
                chassis.vsctl("set", "Open_vSwitch", ".", "external-ids:ovn-set-local-ip=false")
                chassis.local_ip_left_out = True
        else:
            chassis.vsctl("set", "Open_vSwitch", ".", f"external-ids:system-id={spec.name}",
                          f"external-ids:hostname={spec.name}", f"external-ids:ovn-encap-type={spec.encapsulation}",
                          f"external-ids:ovn-encap-ip={spec.encap_ip}",
                          f"external-ids:ovn-is-interconn={'true' if spec.gateway else 'false'}")
        # The lab's SB, whatever remote the host script names (the lab has no TCP).
        chassis.vsctl("set", "Open_vSwitch", ".", f"external-ids:ovn-remote={sb_remote}", "--", "--may-exist",
                      "add-br", "br-int", "--", "set", "Bridge", "br-int", "fail-mode=secure",
                      "other-config:disable-in-band=true")
        # Its control socket is its own default in OVN_RUNDIR (23.03 has no --unixctl).
        self.sandbox._daemon(chassis.directory, "controller", ["ovn-controller", chassis.db], env=chassis.env(),
                             unixctl=False)
        self.chassis[spec.name] = chassis
        return chassis

    def add_all(self, specs: Sequence[tuple[ChassisSpec, str]]) -> None:
        """Every chassis (with the SB remote of its AZ), several at once."""
        parallel(lambda item: self.add_chassis(item[1][0], item[0], item[1][1]), list(enumerate(specs)))

    def populate_arp(self, pairs: Mapping[str, Sequence[str]] | None = None) -> None:
        """`OVN_POPULATE_ARP`: each chassis learns the MAC of the tunnel endpoints it sends to
        (`pairs`: chassis -> peers; default every other chassis)."""
        def one(name: str) -> None:
            chassis = self.chassis[name]
            peers = pairs[name] if pairs is not None else [n for n in self.chassis if n != name]
            for peer in peers:
                other = self.chassis[peer]
                chassis.appctl("tnl/neigh/set", "br-phys", str(other.spec.encap_ip), other.bridge_mac)

        parallel(one, list(self.chassis))

    def wait_for_bfd(self, tries: int = BFD_TRIES) -> None:
        """Until every BFD session of every chassis is up, at most `tries` polls: one that stays
        down (a tunnel that does not work) shows as lost packets, explained."""
        with contextlib.suppress(SandboxError):
            poll("BFD sessions up", lambda: not any(c.bfd_down() for c in self.chassis.values()), tries=tries)

    def wait_for_encaps(self, sb: Sandbox, az: str, names: Sequence[str]) -> None:
        """`ovn_wait_for_encaps`: every chassis of an AZ has registered its tunnel endpoint."""
        def registered() -> bool:
            return set(names) <= {row["chassis_name"] for row in sb.rows(sb.sb_db(az), SB, "Encap", ["chassis_name"])}

        poll(f"the chassis of {az} in its SB", registered)

    def counts(self) -> Counts:
        """One round of readings: every chassis' port counters, then the underlay bridge's."""
        assert self._main is not None, "start the underlay first"
        out: Counts = {}
        for chassis in [*self.chassis.values(), self._main]:
            out.update(read_counts(chassis.spec.name, chassis.appctl("dpctl/show", "-s")))
        return out

    def links(self) -> list[tuple[Port, Port]]:
        """Both directions of every chassis' stream to the underlay bridge (`br-phys_n1` on the
        chassis, the port named for its directory on the bridge)."""
        out: list[tuple[Port, Port]] = []
        for name, chassis in self.chassis.items():
            mine, theirs = (name, f"br-phys_{NETWORK}"), (UNDERLAY, chassis.directory.name)
            out += [(mine, theirs), (theirs, mine)]
        return out

    def close(self) -> None:
        for chassis in self.chassis.values():
            chassis.close()
        if self._main is not None:
            self._main.close()


def _run_host_script(chassis: Chassis, spec: ChassisSpec) -> None:
    """A deployment host's rendered configure-ovn-host.sh against the chassis' database: it sets the
    chassis' system-id, encap type and IP (`OVN_ENCAP_IP`, its documented override: the lab has no
    interface holding the address) and whether it is an IC gateway."""
    assert spec.host_script is not None
    path = chassis.directory / "configure-ovn-host.sh"
    path.write_text(spec.host_script)
    result = subprocess.run(["sh", str(path)], capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
                            env={**chassis.env(), "OVN_ENCAP_IP": str(spec.encap_ip)})
    if result.returncode != 0:
        raise SandboxError(f"chassis {spec.name}: the rendered configure-ovn-host.sh exited {result.returncode}: "
                           f"{result.stderr.strip()}")
