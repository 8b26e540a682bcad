"""A fabric's rendered output in a throwaway OVN-IC lab, and every path between AZs traced.

The lab is built from what fabricgen wrote, not from the model, so it proves the output:

- per zone, from its rendered objects (found by kind and name): `ovn-ic-config`
  (`az-name`, `gw-nodes`, `auto-route`: with it, ovn-ic advertises and learns routes, and
  Kube-OVN's 29500 allow is added per learned route) and the partial Vpc `ovn-cluster` (its
  `staticRoutes` and `policyRoutes`, applied the way Kube-OVN applies them), on a
  router `ovn-cluster` that Kube-OVN's ovn-ic-controller joined to the transit switch
  with the zone's transit address (the fabric's, or the live one from `--actual`),
  beside Kube-OVN's own baseline: the backbone and join subnets with their 31000
  allows and the 29000 reroute of the backbone to a node;
- per interconnected OVN deployment: its rendered `configure-ovn-ic.sh`, run against
  the AZ's databases, and a network with one VM behind its router per advertised range.

Then every ordered pair of endpoints in different AZs (a zone's backbone, a deployment's
advertised range) is traced with ovn-trace: out of the source AZ onto the transit switch,
and from there in the destination AZ to the VM. A failing pair says where the packet went.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path, PurePosixPath
from typing import Any

from fabricgen import exit_codes
from fabricgen.errors import FabricgenError
from fabricgen.live_state.icsb_show import IcSbShow
from fabricgen.live_state.lab import kubeovn
from fabricgen.live_state.lab.sandbox import (
    Sandbox,
    SandboxError,
    ZoneSpec,
    parallel,
    poll,
    transit_mac,
    workdir,
)
from fabricgen.pipeline import Build
from fabricgen.plan.zones import DEFAULT_VPC, DeploymentJoin

IC_SCRIPT = "configure-ovn-ic.sh"
IC_DB_CONFIGMAP, IC_DB_SCRIPT = "fabricgen-ic-db-setup", "configure-ic-db.sh"
ENCAP_BASE = IPv4Address("127.1.0.10")  # encap IPs of the lab's chassis: never bound to an interface
LEARN_TRIES = 250  # polls (20 ms apart) for ovn-ic to learn the routes of auto-route AZs

DELIVERED = "delivered"
REROUTED = "rerouted"
DROPPED = "dropped"
WRONG_ZONE = "wrong-zone"
UNRESOLVED = "unresolved"


class ProofError(FabricgenError):
    """The lab cannot be built from the rendered output, or cannot run here."""

    exit_code = exit_codes.NO_LAB


@dataclass(frozen=True)
class Endpoint:
    az: str
    cidr: IPv4Network
    label: str  # the AZ, or `AZ CIDR` when the AZ has several

    def as_dict(self) -> dict[str, str]:
        return {"az": self.az, "cidr": str(self.cidr)}


@dataclass(frozen=True)
class Pair:
    source: Endpoint
    target: Endpoint
    outcome: str  # DELIVERED, REROUTED, DROPPED, WRONG_ZONE or UNRESOLVED
    detail: str  # where the packet went, in words

    @property
    def delivered(self) -> bool:
        return self.outcome == DELIVERED

    def as_dict(self) -> dict[str, object]:
        return {"from": self.source.as_dict(), "to": self.target.as_dict(), "delivered": self.delivered,
                "outcome": self.outcome, "detail": self.detail}


@dataclass(frozen=True)
class Az:
    """One availability zone of the lab as it was built."""

    name: str
    kind: str  # "zone" or "deployment"
    transit_address: IPv4Address
    fabric_address: IPv4Address | None  # what the fabric says (None: not known yet)
    mac: str
    source: str = "fabric"  # where the lab's address came from: fabric, actual (--actual) or lab (picked)

    @property
    def stale(self) -> bool:
        """The live transit switch (`--actual`) has another address than the fabric."""
        return self.source == "actual" and self.fabric_address != self.transit_address

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "kind": self.kind, "transitAddress": str(self.transit_address),
                "fabricAddress": str(self.fabric_address) if self.fabric_address else None,
                "source": self.source, "stale": self.stale}


@dataclass(frozen=True)
class Proof:
    transit_switch: str
    transit_subnet: IPv4Network
    azs: tuple[Az, ...]
    endpoints: tuple[Endpoint, ...]
    pairs: tuple[Pair, ...]

    @property
    def delivered(self) -> int:
        return sum(p.delivered for p in self.pairs)

    @property
    def ok(self) -> bool:
        return self.delivered == len(self.pairs)

    def pair(self, source: Endpoint, target: Endpoint) -> Pair | None:
        return next((p for p in self.pairs if p.source == source and p.target == target), None)


# ------------------------------------------------------------------ reading the rendered output
def zone_objects(build: Build, zone: str) -> list[dict[str, Any]]:
    """Every Kubernetes object rendered for a zone, wherever inside the zone's directory it is."""
    return [obj for directory in build.manifests
            if directory == zone or directory.startswith(zone + "/") for obj in build.objects(directory)]


def find_object(objects: Sequence[Mapping[str, Any]], kind: str, name: str) -> Mapping[str, Any] | None:
    return next((o for o in objects if o.get("kind") == kind and o.get("metadata", {}).get("name") == name), None)


def ic_database_script(build: Build) -> str | None:
    """The script the IC database's zone runs before the transit switch exists (ConfigMap
    `fabricgen-ic-db-setup`, as its Job mounts it); None when no zone hosts the IC database."""
    for zone in build.plan.zones:
        config = find_object(zone_objects(build, zone.name), "ConfigMap", IC_DB_CONFIGMAP)
        if config is not None and IC_DB_SCRIPT in config.get("data", {}):
            return str(config["data"][IC_DB_SCRIPT])
    return None


def deployment_script(build: Build, deployment: str) -> str:
    """The deployment's rendered `configure-ovn-ic.sh` (every controller gets the same one)."""
    top = PurePosixPath(build.site, "_host", deployment)
    for path, out in build.files.items():
        if path.name == IC_SCRIPT and path.is_relative_to(top):
            return out.text
    raise ProofError(f"deployment {deployment}: no rendered {IC_SCRIPT}")


@dataclass(frozen=True)
class _ZoneSetup:
    spec: ZoneSpec
    backbone: IPv4Network
    gateway: IPv4Address
    vpc_spec: Mapping[str, Any]
    fabric_address: IPv4Address | None
    source: str
    auto_route: bool


def _zones(build: Build, actual: Mapping[str, IPv4Address]) -> list[_ZoneSetup]:
    used = {a for a in actual.values()} | {z.zone.transit_address for z in build.plan.zones if z.zone.transit_address}
    used |= {j.network.ip for j in build.plan.joins}
    subnet = build.plan.interconnection.transit_switch.subnet
    free = (a for a in subnet.hosts() if a not in used)
    out = []
    for i, zone in enumerate(build.plan.zones):
        objects = zone_objects(build, zone.name)
        config = find_object(objects, "ConfigMap", "ovn-ic-config")
        vpc = find_object(objects, "Vpc", DEFAULT_VPC)
        if config is None:
            raise ProofError(f"zone {zone.name}: no rendered ConfigMap ovn-ic-config")
        data = config.get("data", {})
        az = data.get("az-name", zone.name)
        gateways = [g for g in str(data.get("gw-nodes", "")).split(",") if g]
        if not gateways:
            raise ProofError(f"zone {zone.name}: ovn-ic-config has no gw-nodes")
        source = "actual" if az in actual else "fabric" if zone.zone.transit_address else "lab"
        address = actual.get(az) or zone.zone.transit_address or next(free)
        spec = ZoneSpec(az, address, gateways[0], ENCAP_BASE + 4 * i, tuple(gateways[1:]))
        out.append(_ZoneSetup(spec, zone.zone.backbone.cidr, zone.backbone_gateway,
                              vpc.get("spec", {}) if vpc is not None else {}, zone.zone.transit_address, source,
                              data.get("auto-route") == "true"))
    return out


# ------------------------------------------------------------------ the lab
@dataclass
class Lab:
    """The lab of one build; `running(build)` starts it and stops it."""

    build: Build
    sandbox: Sandbox
    zones: list[_ZoneSetup]
    joins: tuple[DeploymentJoin, ...]
    networks: dict[str, list[kubeovn.Backbone]] = field(default_factory=dict)  # per AZ: its endpoints' VMs
    nodes: dict[str, str] = field(default_factory=dict)  # per zone: the node port of Kube-OVN's reroute
    macs: dict[str, str] = field(default_factory=dict)  # per AZ: its transit port's MAC
    addresses: dict[str, IPv4Address] = field(default_factory=dict)

    @property
    def azs(self) -> list[str]:
        return [z.spec.name for z in self.zones] + [j.az for j in self.joins]

    def start(self) -> None:
        sb = self.sandbox
        sb.start_ic_databases()
        sb.icnb("init")
        script = ic_database_script(self.build)
        if script is not None:
            self._run_script(sb.workdir / "ic" / IC_DB_SCRIPT, script, {"OVN_IC_NB_DB": sb.ic_nb}, "the IC database")
        parallel(self._start_az, self.azs)
        zones = {z.spec.name for z in self.zones}
        poll("every zone registered in the IC SB", lambda: sb.registered_zones() >= zones)
        sb.icnb("ts-add", sb.transit_switch)
        parallel(self._set_up_zone, self.zones)
        parallel(self._set_up_deployment, self.joins)
        poll("every AZ's transit port in the IC SB", self._published)
        poll("every AZ's remote transit ports bound", self._remotes_bound)
        auto = [z for z in self.zones if z.auto_route]
        if auto or any(j.auto_route for j in self.joins):
            self._settle_learned_routes()
            parallel(lambda z: kubeovn.allow_learned_routes(sb, z.spec.name), auto)
        parallel(sb.sync, self.azs)
        sb.start_tracers(self.azs)

    def _start_az(self, az: str) -> None:
        zone = next((z for z in self.zones if z.spec.name == az), None)
        self.sandbox.start_az(az, az_name=az if zone is not None else None)

    def _set_up_zone(self, zone: _ZoneSetup) -> None:
        sb, name = self.sandbox, zone.spec.name
        backbone, commands = kubeovn.network_commands(name, f"backbone-{name}", zone.backbone, zone.gateway)
        node, join = kubeovn.join_reroute_commands(name, zone.backbone)
        commands += [kubeovn.subnet_allow(zone.backbone), *join, *kubeovn.new_vpc_route_commands(zone.vpc_spec)]
        if zone.auto_route:
            commands.append(kubeovn.auto_route_options())
        sb.join(zone.spec, *kubeovn.batch(commands))  # one transaction: the router is new
        sb.claim_gateway(zone.spec)
        self.networks[name] = [backbone]
        self.nodes[name] = node
        self.macs[name] = transit_mac(zone.spec.transit_address)
        self.addresses[name] = zone.spec.transit_address

    def _set_up_deployment(self, join: DeploymentJoin) -> None:
        sb, az = self.sandbox, join.az
        index = len(self.zones) + self.joins.index(join)
        commands: list[str] = []
        for i, (chassis, _priority) in enumerate(join.gateway_chassis):
            commands += ["--"] if commands else []
            commands += ["chassis-add", chassis, sb.encapsulation, str(ENCAP_BASE + 4 * index + 256 * i),
                         "--", "set", "Chassis", chassis, f"hostname={chassis}", "other_config:is-interconn=true"]
        sb.sb(az, *commands)
        if not join.create_router:
            sb.nb(az, "--may-exist", "lr-add", join.router)  # the platform's router
        self._run_script(sb.workdir / az / IC_SCRIPT, deployment_script(self.build, join.deployment.name),
                         {"OVN_NB_DB": sb.nb_db(az), "OVN_SB_DB": sb.sb_db(az), "OVN_IC_NB_DB": sb.ic_nb,
                          "OVN_IC_SB_DB": sb.ic_sb}, f"deployment {join.deployment.name}")
        networks, nb = [], []
        advertise = join.deployment.interconnect.advertise if join.deployment.interconnect else []
        for i, cidr in enumerate(advertise):
            gateway = cidr.network_address + 1
            network, created = kubeovn.network_commands(
                az, f"advertised-{i}", cidr, gateway, router=join.router, vm=f"vm-{az}-{i}")
            networks.append(network)
            nb += created
        if nb:
            sb.nb(az, *kubeovn.batch(nb))
        port = f"cr-{join.router_port}"
        sb.sb(az, "wait-until", "Port_Binding", port, "--", "lsp-bind", port, join.gateway_chassis[0][0])
        self.networks[az] = networks
        self.macs[az] = join.mac
        self.addresses[az] = join.network.ip

    def _run_script(self, path: Path, text: str, databases: Mapping[str, str], what: str) -> None:
        """A rendered script, as its operator runs it, against the lab's databases."""
        path.write_text(text)
        result = subprocess.run(["sh", str(path)], capture_output=True, text=True, check=False,
                                env={**self.sandbox.env(), **databases}, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise ProofError(f"{what}: the rendered {path.name} exited {result.returncode}: "
                             f"{result.stderr.strip()}")

    def _settle_learned_routes(self) -> None:
        """With auto-route, wait (bounded) until every learning AZ has learned every other AZ's
        endpoint networks; what is still missing then shows as undelivered pairs."""
        learning = [z.spec.name for z in self.zones if z.auto_route] + [j.az for j in self.joins if j.auto_route]

        def learned_all() -> bool:
            for az in learning:
                have = {route.network for route, _origin in kubeovn.learned_routes(self.sandbox, az)}
                want = {n.cidr for other, nets in self.networks.items() if other != az for n in nets}
                if not want <= have:
                    return False
            return True

        with contextlib.suppress(SandboxError):
            poll("routes learned through ovn-ic", learned_all, tries=LEARN_TRIES)

    def _published(self) -> bool:
        ports = self.sandbox.icsb("--bare", "--columns=logical_port", "find", "Port_Binding",
                                  f"transit_switch={self.sandbox.transit_switch}").split()
        return {f"{self.sandbox.transit_switch}-{az}" for az in self.azs} <= set(ports)

    def _remotes_bound(self) -> bool:
        ts = self.sandbox.transit_switch
        for az in self.azs:
            rows = self.sandbox.sb(az, "--format=csv", "--data=bare", "--no-headings",
                                   "--columns=logical_port,chassis", "find", "Port_Binding", "type=remote")
            bound = {line.split(",")[0] for line in rows.splitlines() if line.split(",")[1:2] != [""]}
            if not {f"{ts}-{other}" for other in self.azs if other != az} <= bound:
                return False
        return True

    # -------------------------------------------------------------- tracing
    def endpoints(self) -> list[tuple[Endpoint, kubeovn.Backbone]]:
        out = []
        for az in self.azs:
            networks = self.networks.get(az, [])
            for network in networks:
                label = az if len(networks) == 1 else f"{az} {network.cidr}"
                out.append((Endpoint(az, network.cidr, label), network))
        return out


def flow(src_mac: str, dst_mac: str, src: IPv4Address, dst: IPv4Address, inport: str, ttl: int = 64) -> str:
    return (f'inport=="{inport}" && eth.src=={src_mac} && eth.dst=={dst_mac} && '
            f"ip4.src=={src} && ip4.dst=={dst} && ip.ttl=={ttl}")


def actions(trace: str) -> list[str]:
    """The lines of a `--minimal` trace after the flow: what the packet finally does."""
    return [line.strip() for line in trace.splitlines() if line.strip() and not line.startswith("#")]


def outputs(trace: str) -> list[str]:
    """The ports a `--minimal` trace outputs to, at the top level (not inside `arp { }`)."""
    out, depth = [], 0
    for line in actions(trace):
        if depth == 0 and line.startswith('output("') and line.endswith('");'):
            out.append(line[len('output("'):-len('");')])
        depth += line.count("{") - line.count("}")
    return out


def next_hop(detailed: str) -> str | None:
    """The next hop the router's routing stage picked (`reg0 = IP;`), from a detailed trace."""
    for line in detailed.splitlines():
        text = line.strip()
        if text.startswith("reg0 = ") and text.endswith(";"):
            return text[len("reg0 = "):-1]
    return None


def _trace(lab: Lab, az: str, datapath: str, packet: str, *options: str) -> str:
    return lab.sandbox.traced(az, datapath, packet, *options)


def trace_pair(lab: Lab, src: Endpoint, source: kubeovn.Backbone, dst: Endpoint, target: kubeovn.Backbone) -> Pair:
    ts = lab.sandbox.transit_switch
    packet = flow(source.vm_mac, source.router_mac, source.vm_ip, target.vm_ip, source.vm)
    first = _trace(lab, src.az, source.switch, packet, "--minimal")
    ports = outputs(first)
    out = ports[-1] if ports else None
    by_port = {f"{ts}-{az}": az for az in lab.azs}
    if out == f"{ts}-{dst.az}" and f"eth.dst = {lab.macs[dst.az]};" in actions(first):
        arriving = flow(lab.macs[src.az], lab.macs[dst.az], source.vm_ip, target.vm_ip, f"{ts}-{src.az}", ttl=63)
        second = outputs(_trace(lab, dst.az, ts, arriving, "--minimal"))
        if second and second[-1] == target.vm:
            return Pair(src, dst, DELIVERED, f"{src.az} -> {ts} -> {dst.az}")
        where = f"output to {second[-1]}" if second else "dropped"
        return Pair(src, dst, DROPPED, f"reached {dst.az} on {ts} but was not delivered there ({where})")
    detailed = _trace(lab, src.az, source.switch, packet)
    hop = next_hop(detailed)
    if out is not None and out == lab.nodes.get(src.az):
        return Pair(src, dst, REROUTED, f"rerouted to a node by Kube-OVN's priority-29000 policy in {src.az}: "
                                        f"no allow policy above it for {dst.cidr}")
    if out in by_port and by_port[out] != dst.az:
        return Pair(src, dst, WRONG_ZONE, f"sent to {by_port[out]} instead (next hop {hop})")
    owner = next((az for az, address in lab.addresses.items() if str(address) == hop), None)
    if hop is not None and (owner is None or "arp {" in first):
        return Pair(src, dst, UNRESOLVED, f"next hop {hop} unresolved: no transit port on {ts} has that address "
                                          f"({dst.az}'s is {lab.addresses[dst.az]})")
    if hop is None:
        return Pair(src, dst, DROPPED, f"dropped in {src.az}: no route to {dst.cidr}")
    where = f"output to {out}" if out else "dropped"
    return Pair(src, dst, DROPPED, f"{where} in {src.az} (next hop {hop})")


@contextlib.contextmanager
def running(build: Build, actual: Mapping[str, IPv4Address] | None = None) -> Iterator[Lab]:
    """The started lab of a build; every daemon is stopped and the directory removed on exit,
    also when starting fails or is interrupted. `actual`: live transit addresses per AZ name."""
    ic = build.plan.interconnection
    zones = _zones(build, actual or {})
    with workdir() as path:
        sandbox = Sandbox(path, (), ic.transit_switch.name, ic.transit_switch.subnet, ic.encapsulation)
        lab = Lab(build, sandbox, zones, build.plan.joins)
        try:
            lab.start()
            yield lab
        finally:
            sandbox.stop()


def prove(build: Build, actual: Mapping[str, IPv4Address] | None = None) -> Proof:
    """Build the lab, trace every ordered pair of endpoints in different AZs, stop the lab.
    Without an interconnection there is nothing to trace and no lab is started."""
    if build.plan.fabric.interconnection is None:
        return Proof("", IPv4Network("0.0.0.0/32"), (), (), ())
    try:
        return _prove(build, actual)
    except SandboxError as exc:
        raise ProofError(f"the OVN lab failed: {exc}") from None


def _prove(build: Build, actual: Mapping[str, IPv4Address] | None) -> Proof:
    with running(build, actual) as lab:
        endpoints = lab.endpoints()
        pairs = tuple(trace_pair(lab, src, source, dst, target)
                      for src, source in endpoints for dst, target in endpoints if src.az != dst.az)
        azs = tuple(Az(z.spec.name, "zone", z.spec.transit_address, z.fabric_address, lab.macs[z.spec.name],
                       z.source) for z in lab.zones)
        azs += tuple(Az(j.az, "deployment", j.network.ip, j.network.ip, j.mac) for j in lab.joins)
    ic = build.plan.interconnection
    return Proof(ic.transit_switch.name, ic.transit_switch.subnet, azs, tuple(e for e, _ in endpoints), pairs)


def live_addresses(show: IcSbShow, transit_switch: str) -> dict[str, IPv4Address]:
    """Each AZ's address on the transit switch in an `ovn-ic-sbctl show` capture."""
    out = {}
    for az, port in show.ports_on(transit_switch).items():
        if port.ipv4 is not None:
            out[az] = port.ipv4.ip
    return out
