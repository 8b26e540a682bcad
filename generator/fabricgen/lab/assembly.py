"""The lab built from a fabric's rendered output: from what fabricgen wrote, not from the
model, so that it proves the output:

- per zone, from its rendered objects (found by kind and name): `ovn-ic-config`
  (`az-name`, `gw-nodes`, `auto-route`: with it, ovn-ic advertises and learns routes, and
  Kube-OVN's 29500 allow is added per learned route) and the partial Vpc `ovn-cluster` (its
  `staticRoutes` and `policyRoutes`, applied the way Kube-OVN applies them), on a
  router `ovn-cluster` that Kube-OVN's ovn-ic-controller joined to the transit switch
  with the zone's transit address (the fabric's, or the live one from `--actual`),
  beside Kube-OVN's own baseline: the backbone and join subnets with their 31000
  allows and the 29000 reroute of the backbone to a node;
- per interconnected OVN deployment: its rendered `configure-ovn-ic.sh`, run against
  the AZ's databases, and a network with one VM behind its router per advertised range;
- with a data plane, simulated chassis (`chassis`) for the gateways and the VMs' hosts.

`running` starts it and always stops it.
"""

from __future__ import annotations

import contextlib
import itertools
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path, PurePosixPath
from typing import Any

from fabricgen import exit_codes
from fabricgen.errors import FabricgenError
from fabricgen.lab.ovn.chassis import ChassisSpec, Underlay
from fabricgen.lab.ovn.databases import IC_SB, NB, SB
from fabricgen.lab.ovn.programs import Programs
from fabricgen.lab.ovn.running import SandboxError, parallel, poll
from fabricgen.lab.ovn.sandbox import Sandbox, ZoneSpec, atoms, transit_mac, workdir
from fabricgen.lab.platforms import kubeovn, platform_policy
from fabricgen.lab.provers.paths import Endpoint
from fabricgen.pipeline import Build
from fabricgen.plan.zones import DEFAULT_VPC, DeploymentJoin

IC_DB_CONFIGMAP, IC_DB_SCRIPT = "fabricgen-ic-db-setup", "configure-ic-db.sh"
IC_SCRIPT = "configure-ovn-ic.sh"
HOST_SCRIPT = "configure-ovn-host.sh"
UNDERLAY_BASE = IPv4Address("198.18.0.10")  # tunnel endpoints of the zones' simulated chassis (RFC 2544)
ENCAP_BASE = IPv4Address("127.1.0.10")  # encap IPs of the lab's chassis: never bound to an interface
CLAIM_TRIES = 500  # polls for the gateways' ovn-controller to claim the transit ports
LEARN_TRIES = 250  # polls (20 ms apart) for ovn-ic to learn the routes of auto-route AZs


class ProofError(FabricgenError):
    """The lab cannot be built from the rendered output, or cannot run here."""

    exit_code = exit_codes.NO_LAB


# ------------------------------------------------------------------ reading the rendered output
def find_object(objects: Sequence[Mapping[str, Any]], kind: str, name: str) -> Mapping[str, Any] | None:
    return next((o for o in objects if o.get("kind") == kind and o.get("metadata", {}).get("name") == name), None)


def tenant_objects(build: Build, zone: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A zone's rendered tenant Vpcs and their Subnets."""
    objects = build.objects_within(zone)
    vpcs = [o for o in objects if o["kind"] == "Vpc" and o["metadata"]["name"] != DEFAULT_VPC]
    names = {v["metadata"]["name"] for v in vpcs}
    return vpcs, [o for o in objects if o["kind"] == "Subnet" and o.get("spec", {}).get("vpc") in names]


def ic_database_script(build: Build) -> str | None:
    """The script the IC database's zone runs before the transit switch exists (ConfigMap
    `fabricgen-ic-db-setup`, as its Job mounts it); None when no zone hosts the IC database."""
    for zone in build.plan.zones:
        config = find_object(build.objects_within(zone.name), "ConfigMap", IC_DB_CONFIGMAP)
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
    zone: str = ""  # the fabric's name of the zone (its rendered directory); the AZ may be named otherwise


def _zones(build: Build, actual: Mapping[str, IPv4Address]) -> list[_ZoneSetup]:
    used = {a for a in actual.values()} | {z.zone.transit_address for z in build.plan.zones if z.zone.transit_address}
    used |= {j.network.ip for j in build.plan.joins}
    subnet = build.plan.interconnection.transit_switch.subnet
    free = (a for a in subnet.hosts() if a not in used)
    out = []
    encap = 0  # the chassis' encap IPs, one after another from ENCAP_BASE
    for zone in build.plan.zones:
        objects = build.objects_within(zone.name)
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
        ips = tuple(ENCAP_BASE + encap + j for j in range(len(gateways)))
        encap += len(gateways)
        spec = ZoneSpec(az, address, gateways[0], ips[0], tuple(gateways[1:]), ips[1:])
        out.append(_ZoneSetup(spec, zone.zone.backbone.cidr, zone.backbone_gateway,
                              vpc.get("spec", {}) if vpc is not None else {}, zone.zone.transit_address, source,
                              data.get("auto-route") == "true", zone.name))
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
    # The data plane (None: the logical lab, whose chassis are rows without ovn-controller):
    # the simulated chassis per AZ, and which of them hosts the AZ's VMs.
    underlay: Underlay | None = None
    chassis: dict[str, list[ChassisSpec]] = field(default_factory=dict)
    vm_hosts: dict[str, str] = field(default_factory=dict)
    vifs: dict[tuple[str, str], str] = field(default_factory=dict)  # (AZ, VM port) -> VIF on its host
    tenants: dict[str, dict[str, kubeovn.Backbone]] = field(default_factory=dict)  # per zone: Subnet -> its VM
    # per deployment AZ: the policy's members on its platforms, each a VM with its platform's rows
    members: dict[str, platform_policy.Members] = field(default_factory=dict)
    tracing: bool = True  # start the tracing daemons (the data plane starts them when a pair is lost)
    final: bool = False  # nothing changes the lab once started: northd and ovn-ic stop before the tracers start

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
        if self.underlay is not None:
            self._start_chassis(self.underlay)
        zones = {z.spec.name for z in self.zones}
        poll("every zone registered in the IC SB", lambda: sb.registered_zones() >= zones)
        if self.underlay is not None:
            poll("the zones' gateways in the IC SB", lambda: self._gateways_published(zones))
        for switch in sb.switches:  # as Kube-OVN's IC server keeps TS_NUM of them (`updateTS`)
            sb.icnb("ts-add", switch)
        # Every zone's ovn-ic is held (paused) but while its own zone joins, and all are resumed
        # once every zone has joined: then each ovn-ic copies every other AZ's transit port into its
        # NB at once, where otherwise every port published has every ovn-ic and northd of the lab run
        # again (n times n runs).
        parallel(self._hold_ic, self.zones)
        parallel(self._set_up_zone, self.zones)
        parallel(self._set_up_deployment, self.joins)
        parallel(lambda zone: sb.resume(zone.spec.name, "ic"), self.zones)
        poll("every AZ's transit port in the IC SB", lambda: self._published())
        if self.underlay is None:
            poll("every AZ's remote transit ports bound", self._remotes_bound)
        else:  # a gateway that never claims its port (its BFD sessions down) shows as lost pairs, explained
            with contextlib.suppress(SandboxError):
                poll("every AZ's remote transit ports bound", self._remotes_bound, tries=CLAIM_TRIES)
            poll("every AZ's gateways in the IC SB", lambda: self._gateways_published(set(self.azs)))
            poll("the transit switch's tunnel key synced to every AZ", self._keys_synced)
        auto = [z for z in self.zones if z.auto_route]
        if auto or any(j.auto_route for j in self.joins):
            self._settle_learned_routes()
            parallel(lambda z: kubeovn.allow_learned_routes(sb, z.spec.name), auto)
        sb.sync_all(self.azs)
        if self.underlay is not None:
            self._attach_vms(self.underlay)
        if self.tracing:
            if self.final:  # every SB is complete; from here on only ovn-trace reads it (a third less memory)
                sb.stop_daemons(self.azs, ("northd", "ic"))
            sb.start_tracers(self.azs)

    # -------------------------------------------------------------- the data plane
    def _start_chassis(self, underlay: Underlay) -> None:
        underlay.start()
        specs = [(spec, self.sandbox.sb_db(az)) for az in self.azs for spec in self.chassis.get(az, [])]
        underlay.add_all(specs)
        underlay.populate_arp()
        for az in self.azs:
            underlay.wait_for_encaps(self.sandbox, az, [c.name for c in self.chassis.get(az, [])])

    def _gateways_published(self, azs: set[str]) -> bool:
        sb = self.sandbox
        have = {row["name"] for row in sb.rows(sb.ic_sb, IC_SB, "Gateway", ["name"])}
        return all(c.name in have for az in azs for c in self.chassis.get(az, []) if c.gateway)

    def _keys_synced(self) -> bool:
        """ovn-ic has written the IC SB's tunnel key of every transit switch into every AZ's NB."""
        sb = self.sandbox
        for ts in sb.switches:
            keys = sb.rows(sb.ic_sb, IC_SB, "Datapath_Binding", ["tunnel_key"], [("transit_switch", "==", ts)])
            if not keys:
                return False
            for az in self.azs:
                rows = sb.rows(sb.nb_db(az), NB, "Logical_Switch", ["other_config"], [("name", "==", ts)])
                if not rows or dict(rows[0]["other_config"][1]).get("requested-tnl-key") != str(keys[0]["tunnel_key"]):
                    return False
        return True

    def _attach_vms(self, underlay: Underlay) -> None:
        """Each endpoint's VM, and each tenant subnet's the policy is proven on, as a VIF on its AZ's
        VM host, then wait until ovn-controller has bound every one and every chassis has caught
        up (`--wait=hv`)."""
        def one(az: str) -> None:
            host = underlay.chassis[self.vm_hosts[az]]
            every = [*self.networks.get(az, []), *self.tenants.get(az, {}).values(),
                     *(self.members[az].vms.values() if az in self.members else ())]
            # once each: a backbone in a policy group is its own member, and two interfaces bound to
            # one logical port have ovn-controller move the binding between them
            vms = list({n.vm: n for n in every}.values())
            for i, network in enumerate(vms):
                vif = f"vif{i}"
                host.add_vm(vif, network.vm, i + 1)
                self.vifs[(az, network.vm)] = vif
            ports = [n.vm for n in vms]
            poll(f"the VMs of {az} bound", lambda: self._bound(az, ports))
            self.sandbox.nb(az, "--wait=hv", "sync")

        parallel(one, self.azs)
        underlay.wait_for_bfd()

    def _bound(self, az: str, ports: Sequence[str]) -> bool:
        sb = self.sandbox
        rows = sb.rows(sb.sb_db(az), SB, "Port_Binding", ["logical_port", "chassis"])
        return {row["logical_port"] for row in rows if atoms(row["chassis"])} >= set(ports)

    def _start_az(self, az: str) -> None:
        zone = next((z for z in self.zones if z.spec.name == az), None)
        self.sandbox.start_az(az, az_name=az if zone is not None else None)

    def _hold_ic(self, zone: _ZoneSetup) -> None:
        """Pause the zone's ovn-ic once it has made its copy of the transit switch."""
        sb, name = self.sandbox, zone.spec.name

        def copied() -> bool:
            rows = sb.rows(sb.nb_db(name), NB, "Logical_Switch", ["name"])
            return set(sb.switches) <= {row["name"] for row in rows}

        poll(f"ovn-ic's transit switches in {name}", copied)
        sb.pause(name, "ic")

    def _set_up_zone(self, zone: _ZoneSetup) -> None:
        sb, name = self.sandbox, zone.spec.name
        backbone, commands = kubeovn.network_commands(name, f"backbone-{name}", zone.backbone, zone.gateway)
        node, join = kubeovn.join_reroute_commands(name, zone.backbone)
        commands += [*kubeovn.subnet_allow(zone.backbone, f"backbone-{name}"), *join,
                     *kubeovn.new_vpc_route_commands(zone.vpc_spec)]
        if zone.auto_route:
            commands.append(kubeovn.auto_route_options())
        guarded = platform_policy.zone_members(self.build, zone.zone, backbone, tiers=sb.acl_tiers)
        commands += guarded.commands
        sb.join(zone.spec, *kubeovn.batch(commands), register_chassis=False)  # one transaction: a new router
        for index in range(1, len(sb.switches)):  # Kube-OVN's zones join every transit switch
            sb.join(zone.spec, register_chassis=False, index=index)
        if self.underlay is None:  # else the gateways are simulated chassis and ovn-controller claims the port
            sb.claim_gateway(zone.spec, register_chassis=True)
            for index in range(1, len(sb.switches)):
                sb.claim_gateway(zone.spec, index=index)
        # ovn-ic publishes the zone's port, then is held again until every zone has joined.
        sb.resume(name, "ic")
        poll(f"{name}'s transit port in the IC SB", lambda: self._published([name]))
        sb.pause(name, "ic")
        vpcs, subnets = tenant_objects(self.build, name)
        if any(s["spec"].get("acls") for s in subnets):  # the policy is proven there (`policy_flows`)
            networks, created = kubeovn.tenant_commands(name, vpcs, subnets, tiers=sb.acl_tiers)
            sb.nb(name, *kubeovn.batch(created))
            self.tenants[name] = networks
        self.networks[name] = [backbone]
        if guarded.vms:
            self.members[name] = guarded
        self.nodes[name] = node
        self.macs[name] = transit_mac(zone.spec.transit_address)
        self.addresses[name] = zone.spec.transit_address

    def _set_up_deployment(self, join: DeploymentJoin) -> None:
        sb, az = self.sandbox, join.az
        # encap IPs one after another, after the zones' (see `_zones`) and the deployments' before it
        first = sum(1 + len(z.spec.standby) for z in self.zones)
        first += sum(len(j.gateway_chassis) for j in self.joins[:self.joins.index(join)])
        commands: list[str] = []
        for i, (chassis, _priority) in enumerate(join.gateway_chassis):
            commands += ["--"] if commands else []
            commands += ["chassis-add", chassis, sb.encapsulation, str(ENCAP_BASE + first + i),
                         "--", "set", "Chassis", chassis, f"hostname={chassis}", "other_config:is-interconn=true"]
        if self.underlay is None:  # else the hosts' own ovn-controller registered them
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
        found = platform_policy.members(self.build, join, networks, tiers=sb.acl_tiers)
        if found.vms:
            sb.nb(az, *kubeovn.batch(found.commands))
            self.members[az] = found
        port = f"cr-{join.router_port}"
        if self.underlay is None:
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

    def _published(self, azs: Sequence[str] | None = None) -> bool:
        """Every AZ's (or these AZs') transit port is in the IC SB, a Kube-OVN zone's on every
        transit switch; the ovn-ic of one that is not is woken (`Sandbox.wake`)."""
        sb = self.sandbox
        have = {row["logical_port"] for row in sb.rows(sb.ic_sb, IC_SB, "Port_Binding", ["logical_port"])}
        zones = {z.spec.name for z in self.zones}
        missing = [az for az in (self.azs if azs is None else azs)
                   if any(f"{ts}-{az}" not in have for ts in (sb.switches if az in zones else sb.switches[:1]))]
        for az in missing:
            sb.wake(az)
        return not missing

    def _remotes_bound(self) -> bool:
        zones = [z.spec.name for z in self.zones]
        return all(self.sandbox.remotes_bound(az, self.azs, zones) for az in self.azs)

    # -------------------------------------------------------------- tracing
    def endpoints(self) -> list[tuple[Endpoint, kubeovn.Backbone]]:
        out = []
        for az in self.azs:
            networks = self.networks.get(az, [])
            for network in networks:
                label = az if len(networks) == 1 else f"{az} {network.cidr}"
                out.append((Endpoint(az, network.cidr, label), network))
        return out


def host_script(build: Build, deployment: str, host: str) -> str | None:
    """A deployment host's rendered `configure-ovn-host.sh`, None when it has none."""
    out = build.files.get(PurePosixPath(build.site, "_host", deployment, "chassis", host, HOST_SCRIPT))
    return out.text if out is not None else None


def host_encap_ip(script: str) -> IPv4Address | None:
    """The tunnel address a rendered `configure-ovn-host.sh` expects on its tunnel interface."""
    for line in script.splitlines():
        if line.startswith("expected="):
            with contextlib.suppress(ValueError):
                return IPv4Address(line.split("=", 1)[1].strip().strip("'\""))
    return None


def lab_chassis(build: Build, zones: Sequence[_ZoneSetup]) -> tuple[dict[str, list[ChassisSpec]], dict[str, str]]:
    """The simulated chassis of every AZ, and which one hosts its VMs.

    A zone gets its gateway nodes (from the rendered `gw-nodes`) as IC gateways and one VM host,
    tunnelling with the fabric's encapsulation from lab addresses in 198.18.0.0/15 (the
    clusters' own node addresses and Kube-OVN tunnel type are not in the rendered output). A
    deployment gets its hosts, set up by their rendered `configure-ovn-host.sh` (encap type and
    IP, `ovn-is-interconn`): its gateway chassis, and one more host for the VMs when it has
    one, else its last gateway chassis hosts them."""
    ic = build.plan.interconnection
    chassis: dict[str, list[ChassisSpec]] = {}
    hosts: dict[str, str] = {}
    addresses = (UNDERLAY_BASE + n for n in itertools.count())  # one after another, whatever a zone's size
    for zone in zones:
        az = zone.spec.name
        names = [zone.spec.gateway, *zone.spec.standby]
        chassis[az] = [ChassisSpec(n, az, ic.encapsulation, next(addresses), gateway=True) for n in names]
        chassis[az].append(ChassisSpec(f"{az}-vm-host", az, ic.encapsulation, next(addresses)))
        hosts[az] = chassis[az][-1].name
    for join in build.plan.joins:
        deployment = join.deployment
        gateways = [name for name, _priority in join.gateway_chassis]
        others = [h.chassis_name for h in deployment.hosts if h.chassis_name not in gateways]
        wanted = gateways + others[:1]
        specs = []
        for name in wanted:
            script = host_script(build, deployment.name, name)
            address = host_encap_ip(script) if script is not None else None
            if script is None or address is None:
                raise ProofError(f"deployment {deployment.name}: no rendered {HOST_SCRIPT} with a tunnel address "
                                 f"for chassis {name}")
            specs.append(ChassisSpec(name, join.az, deployment.encapsulation, address, gateway=name in gateways,
                                     mtu=deployment.underlay_mtu, host_script=script))
        chassis[join.az] = specs
        hosts[join.az] = wanted[-1]
    return chassis, hosts


def underlay_network(chassis: Mapping[str, Sequence[ChassisSpec]]) -> IPv4Network:
    """The smallest network holding every tunnel endpoint: the lab's underlay is one L2 network."""
    addresses = [c.encap_ip for specs in chassis.values() for c in specs]
    network = IPv4Network(f"{addresses[0]}/32")
    while not all(a in network for a in addresses):
        network = network.supernet()
    return network


@contextlib.contextmanager
def running(build: Build, actual: Mapping[str, IPv4Address] | None = None, *,
            data_plane: bool = False, programs: Programs | None = None, final: bool = False) -> Iterator[Lab]:
    """The started lab of a build; every daemon is stopped and the directory removed on exit,
    also when starting fails or is interrupted. `actual`: live transit addresses per AZ name.
    `data_plane`: with simulated chassis (ovs-vswitchd and ovn-controller) on a simulated
    underlay, the gateways' ports claimed by their own ovn-controller. `programs`: the OVN
    programs to run (default: `FABRICGEN_OVN_PREFIX`, else the system's). `final`: the caller only
    traces, so the logical lab stops northd and ovn-ic once every SB is complete."""
    ic = build.plan.interconnection
    zones = _zones(build, actual or {})
    with workdir() as path:
        sandbox = Sandbox(path, (), ic.transit_switch.name, ic.transit_switch.subnet, ic.encapsulation,
                          programs or Programs.from_environment(), tuple(ic.transit_switch.names()[1:]))
        lab = Lab(build, sandbox, zones, build.plan.joins, final=final)
        if data_plane:
            lab.chassis, lab.vm_hosts = lab_chassis(build, zones)
            lab.underlay = Underlay(sandbox, underlay_network(lab.chassis))
            lab.tracing = False
        try:
            lab.start()
            yield lab
        finally:
            if lab.underlay is not None:
                lab.underlay.close()
            sandbox.stop()
