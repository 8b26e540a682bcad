"""verify's kernel underlay stage: the fabric's hosts as network namespaces, the rendered nft files
and frr.conf running in them, and every flow OVN needs between hosts sent through the kernel.

Between the hosts stands one router the lab makes itself (a top-of-rack namespace): it peers BGP
unnumbered with every uplink a host declares, and routes the hosts without BGP by their addresses
(all on one link each, with the prefixes the fabric declares; the router answers ARP for their
neighbours). Each host's link is at its deployment's underlay MTU. What is judged is
the kernel's: a firewall rule that drops a flow is named by the kernel's trace, a route missing is
what the sending kernel says, a packet too large is lost on the way while a small one arrives.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, ip_network
from pathlib import Path

from fabricgen.lab.underlay import firewall, frr, probes
from fabricgen.lab.underlay.hosts import Host, hosts_of
from fabricgen.lab.underlay.namespaces import Namespaces, UnderlayError, ip, run_in, sweep, tcp_socket
from fabricgen.lab.underlay.needs import SMALL, Need, needs_of
from fabricgen.pipeline import Build

ROUTER_ADDRESS = "169.254.255.1"  # the lab router's address on every link to a host without BGP
CONVERGE_SECONDS = 30.0
RETRY_WAIT = 3.0  # seconds a flow that failed once is waited for the second time
LAB_ASN = 64512


@dataclass(frozen=True)
class UnderlayFlow:
    need: Need
    verdict: str  # "through", "dropped", "no route", "mtu", "lost"
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.verdict == "through"

    def as_dict(self) -> dict[str, object]:
        n = self.need
        return {"what": n.what, "source": n.source, "sourceAddress": str(n.source_address or "") or None,
                "target": n.target, "address": str(n.address), "protocol": n.protocol, "port": n.port,
                "size": n.size or None, "verdict": self.verdict, "detail": self.detail, "ok": self.ok}


@dataclass(frozen=True)
class UnderlayProof:
    hosts: tuple[str, ...]
    flows: tuple[UnderlayFlow, ...]
    sessions: tuple[tuple[str, str, str], ...]  # host, uplink, BGP state
    refused: tuple[str, ...]  # a rendered file its reader refused: "host: path: what it said"
    frr_version: str = ""

    @property
    def ok(self) -> bool:
        established = all(s == "Established" for _, _, s in self.sessions)
        return all(f.ok for f in self.flows) and not self.refused and established


def missing() -> str | None:
    """Why the kernel underlay cannot be built here, or None: the programs, root, and a network
    namespace made and removed (a container without CAP_SYS_ADMIN has root and cannot)."""
    lacking = [p for p in ("ip", "nft") if shutil.which(p) is None] + frr.missing()
    if lacking:
        return f"these are missing: {', '.join(lacking)}"
    if os.geteuid() != 0:
        return "it makes network namespaces, which takes root"
    probe = Namespaces()
    try:
        probe.add()
    except UnderlayError as exc:
        return f"no network namespace can be made here ({exc}; a container needs CAP_SYS_ADMIN: --privileged)"
    finally:
        probe.close()
    return None


def _routes(namespace: str) -> list[IPv4Network]:
    done = run_in(namespace, ["ip", "-4", "-o", "route", "show"])
    out = []
    for line in done.stdout.splitlines():
        first = line.split()[0] if line.split() else ""
        out.append(IPv4Network("0.0.0.0/0") if first == "default" else ip_network(first, strict=False))
    return [n for n in out if isinstance(n, IPv4Network)]


def _routed(address: IPv4Address, routes: list[IPv4Network]) -> bool:
    return any(address in n for n in routes)


class Underlay:
    """One kernel underlay, built from a build's hosts, and always torn down (`close`)."""

    def __init__(self, build: Build) -> None:
        self.hosts = hosts_of(build)
        self.needs = needs_of(build)
        self.directory = Path(tempfile.mkdtemp(prefix="fabricgen-underlay-"))
        self.namespaces = Namespaces()
        self.frr = frr.Frr(self.directory)
        self.where: dict[str, str] = {}
        self.refused: list[str] = []

    def close(self) -> None:
        self.frr.stop()
        self.namespaces.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def build(self) -> None:
        sweep(frr.RUN_DIR)
        router = self.namespaces.add()
        if run_in(router, ["sysctl", "-qw", "net.ipv4.ip_forward=1"]).returncode != 0:
            raise UnderlayError("the lab's router cannot forward IPv4 (sysctl net.ipv4.ip_forward)")
        uplinks: list[str] = []
        for i, host in enumerate(self.hosts):
            name = self.where[host.name] = self.namespaces.add()
            for j, uplink in enumerate(host.uplinks):
                self.namespaces.link(name, uplink, router, f"h{i}u{j}", host.mtu)
                if host.bgp is not None:
                    uplinks.append(f"h{i}u{j}")
            self._address(host, name, router, f"h{i}u0")
        for host in self.hosts:
            namespace = self.where[host.name]
            for path, text in host.nft:
                said = firewall.load(namespace, text, self.directory, f"{namespace}-{path.name}")
                if said is not None:
                    self.refused.append(f"{host.name}: {path}: nft refused it: {said}")
        used = {h.bgp.asn for h in self.hosts if h.bgp is not None}
        asn = next(a for a in range(LAB_ASN, LAB_ASN + 1024) if a not in used)
        if uplinks:
            said = self.frr.start(router, frr.router_config(asn, uplinks))
            if said is not None:
                raise UnderlayError(f"the lab's router: FRR refused its configuration: {said}")
        for host in self.hosts:
            if host.bgp is None:
                continue
            if host.frr is None:
                self.refused.append(f"{host.name}: declares BGP uplinks, but no frr.conf was rendered for it")
                continue
            said = self.frr.start(self.where[host.name], host.frr[1])
            if said is not None:
                self.refused.append(f"{host.name}: {host.frr[0]}: FRR refused it: {said}")

    def _address(self, host: Host, name: str, router: str, router_side: str) -> None:
        """A host's addresses on its first link (or, with BGP, its loopback), routed by the lab's router."""
        if not host.addresses:
            return
        device = "lo" if host.bgp is not None else host.uplinks[0]
        for address in host.addresses:
            ip("address", "add", str(address if host.bgp is None else address.ip), "dev", device, namespace=name)
            ip("route", "add", f"{address.ip}/32", "dev", router_side, namespace=router)
        if host.bgp is None:
            ip("route", "add", "default", "via", ROUTER_ADDRESS, "dev", device, "onlink", namespace=name)
        ip("address", "add", f"{ROUTER_ADDRESS}/32", "dev", router_side, namespace=router)
        # a declared prefix (10.0.0.21/24) makes its neighbours on-link: the router answers for them
        if run_in(router, ["sysctl", "-qw", f"net.ipv4.conf.{router_side}.proxy_arp=1"]).returncode != 0:
            raise UnderlayError(f"the lab's router cannot answer ARP for {host.name}'s neighbours")

    def converge(self) -> float:
        """Wait until every flow's source has a route to its target and every BGP session is up
        (or `CONVERGE_SECONDS` pass); the seconds it took."""
        start = time.monotonic()
        while time.monotonic() - start < CONVERGE_SECONDS:
            routes = {h.name: _routes(self.where[h.name]) for h in self.hosts}
            if all(_routed(n.address, routes[n.source]) for n in self.needs) and all(
                    s == "Established" for _, _, s in self.sessions()):
                break
            time.sleep(0.25)
        return time.monotonic() - start

    def sessions(self) -> list[tuple[str, str, str]]:
        out = []
        for host in self.hosts:
            if host.bgp is None or host.frr is None:
                continue
            states = self.frr.sessions(self.where[host.name])
            out += [(host.name, uplink, states.get(uplink, "not configured")) for uplink in host.bgp.uplinks]
        return out

    def flows(self) -> list[UnderlayFlow]:
        indexed = list(enumerate(self.needs))
        udp = probes.udp(self.where.__getitem__, [(i, n) for i, n in indexed if n.protocol == "udp"])
        tcp = probes.tcp(self.where.__getitem__, [(i, n) for i, n in indexed if n.protocol == "tcp"])
        # what failed is sent once more, alone and waited for longer, before anything is concluded:
        # a busy machine may answer late
        again = [(i, n) for i, n in indexed if n.protocol == "udp" and not all(udp[i][:2])]
        udp.update(probes.udp(self.where.__getitem__, again, RETRY_WAIT))
        again = [(i, n) for i, n in indexed if n.protocol == "tcp" and tcp[i] is not None]
        tcp.update(probes.tcp(self.where.__getitem__, again, RETRY_WAIT))
        out = []
        for i, need in indexed:
            if need.protocol == "udp":
                small, full, said = udp[i]
                out.append(self._udp_verdict(i, need, small, full, said))
            else:
                out.append(self._tcp_verdict(need, tcp[i]))
        return out

    def _udp_verdict(self, index: int, need: Need, small: bool, full: bool, said: str | None) -> UnderlayFlow:
        if small and full:
            return UnderlayFlow(need, "through")
        if small:
            return UnderlayFlow(need, "mtu", f"a {need.size}-byte packet is lost ({said or 'on the way'}) where a "
                                             f"{SMALL}-byte one arrives: the path is short of the underlay MTU")
        if said is not None and said != probes.TOO_LARGE:
            verdict = "no route" if said == probes.NO_ROUTE else "lost"
            return UnderlayFlow(need, verdict, f"{need.source}'s kernel: {said}")

        def send() -> None:
            probes.send_udp(self.where.__getitem__, need, -1, SMALL)
        return self._judged(need, send)

    def _tcp_verdict(self, need: Need, said: str | None) -> UnderlayFlow:
        if said is None:
            return UnderlayFlow(need, "through")
        if said == probes.NO_ROUTE:
            return UnderlayFlow(need, "no route", f"{need.source}'s kernel: no route to {need.address}")

        def connect() -> None:
            sock = tcp_socket(self.where[need.source])
            sock.settimeout(0.2)
            try:
                sock.connect((str(need.address), need.port))
            except OSError:
                pass
            finally:
                sock.close()
        listener = tcp_socket(self.where[need.target])
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((str(need.address), need.port))
            listener.listen(1)
            return self._judged(need, connect, said)
        finally:
            listener.close()

    def _judged(self, need: Need, send: Callable[[], None], said: str | None = None) -> UnderlayFlow:
        rule = firewall.dropped_by(self.where[need.target], need, send, self.directory)
        if rule is not None:
            return UnderlayFlow(need, "dropped", f"dropped by {need.target}'s {rule}")
        return UnderlayFlow(need, "lost", said or "lost on the way: no firewall rule of the target dropped it")


def prove_underlay(build: Build) -> UnderlayProof | None:
    """The kernel underlay's proof of a build, or None when the fabric renders no host output."""
    underlay = Underlay(build)
    if not underlay.hosts:
        return None
    try:
        underlay.build()
        underlay.converge()
        flows = underlay.flows()
        sessions = underlay.sessions()
        return UnderlayProof(tuple(h.name for h in underlay.hosts), tuple(flows), tuple(sessions),
                             tuple(underlay.refused), frr.version())
    finally:
        underlay.close()


__all__ = ["UnderlayError", "UnderlayFlow", "UnderlayProof", "missing", "prove_underlay"]
