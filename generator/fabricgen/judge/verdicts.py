"""Every check of one `fabricgen status` run, in a stable order: the IC database, then each AZ
(zones in fabric order, then deployments) with its objects, interconnection, routes and raft,
then the raft of deployments that do not interconnect."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fabricgen.judge import (
    admin_network_policies,
    interconnection,
    network_policies,
    objects,
    raft_health,
    routes,
    security_groups,
    subnet_ports,
)
from fabricgen.judge.checks import UNREACHABLE, Check, Verdict, worst
from fabricgen.judge.expected import AzIntent, intents
from fabricgen.judge.raft_readings import MemberReading
from fabricgen.observe.live_fabric import AzLive, LiveFabric
from fabricgen.observe.sources import Database, Kubectl, Member
from fabricgen.pipeline import Build


@dataclass(frozen=True)
class Report:
    fabric: str  # the fabric as given
    site: str
    checks: tuple[Check, ...]
    notes: tuple[str, ...] = field(default=())
    members: tuple[MemberReading, ...] = field(default=())  # each raft member as it answered

    @property
    def verdict(self) -> Verdict:
        return worst(self.checks)

    def counts(self) -> dict[str, int]:
        out = {"ok": 0, "drift": 0, "unknown": 0, "unhealthy": 0, "unreachable": 0}
        for c in self.checks:
            out[c.verdict] += 1
        return out


def sync_hint(build: Build, intent: AzIntent) -> str:
    """How an AZ's rendered output is applied again."""
    return _sync(build, intent.kind, intent.name)


def _sync(build: Build, kind: str, name: str) -> str:
    """How the rendered output of a zone, deployment or Kubernetes consumer (`cluster`) is applied again."""
    site = build.plan.site
    if kind == "deployment":
        return f"run rendered/{site}/_host/{name}/controllers/*/configure-ovn-ic.sh on a controller"
    if build.plan.fabric.delivery is not None:
        return (f"sync it: argocd app sync fabric-{site}-{name}, or flux reconcile kustomization "
                f"fabric-{site}-{name}-stage-N (or kubectl apply --server-side -k "
                f"rendered/{site}/{name})")
    return f"apply it: kubectl apply --server-side -k rendered/{site}/{name}"


def judge(build: Build, live: LiveFabric, fabric: str) -> Report:
    wanted = intents(build)
    by_az = {i.az: i for i in wanted}
    checks: list[Check] = []
    members: list[MemberReading] = []
    fabric_model = build.plan.fabric
    ic_live = live.ic
    addresses: dict[str, str] = {}
    if ic_live is not None and fabric_model.interconnection is not None:
        ts = fabric_model.interconnection.transit_switch.name
        checks += interconnection.ic_checks(fabric_model, ic_live, wanted)
        addresses = interconnection.live_addresses(ic_live.show, ts)
        declared = [(m.node, str(m.address)) for m in fabric_model.interconnection.database.members]
        checks += raft_health.checks("IC database", ic_live.raft, declared, ic_live.pods_error, ic=True,
                                     overrides=_overrides(ic_live.source.members))
        members += raft_health.readings("IC database", ic_live.raft, declared, ic=True)
    for az in live.azs:
        intent = by_az.get(az.source.az)
        if intent is None:
            continue
        checks += _az(build, intent, az, live, wanted, addresses, fabric)
        members += raft_health.readings(intent.subject, az.raft, _deployment_members(build, intent), ic=False)
    for db in live.databases:
        deployment = next(d for d in fabric_model.ovn_deployments if d.name == db.source.name)
        declared = [(m.host, str(m.address)) for m in deployment.databases.members]
        checks += raft_health.checks(db.source.subject, db.raft, declared, None, ic=False,
                                     protocol=deployment.databases.protocol, overrides=_overrides(db.source.members))
        checks += security_groups.check(build, db, db.source.subject)
        members += raft_health.readings(db.source.subject, db.raft, declared, ic=False)
    for cluster in live.clusters:
        rendered = build.objects_within(cluster.source.name)
        checks += objects.check(cluster, rendered, _sync(build, "cluster", cluster.source.name))
        checks += network_policies.check(build, cluster, rendered)
        checks += admin_network_policies.check(build, cluster, rendered)
    return Report(fabric, build.plan.site, tuple(checks), tuple(live.notes), tuple(members))


def _deployment_members(build: Build, intent: AzIntent) -> list[tuple[str, str]] | None:
    """The raft members a deployment declares (a Kube-OVN zone declares none)."""
    if intent.kind != "deployment":
        return None
    deployment = next(d for d in build.plan.fabric.ovn_deployments if d.name == intent.name)
    return [(m.host, str(m.address)) for m in deployment.databases.members]


def _az(build: Build, intent: AzIntent, az: AzLive, live: LiveFabric, wanted: Sequence[AzIntent],
        addresses: dict[str, str], fabric: str) -> list[Check]:
    sync = sync_hint(build, intent)
    if isinstance(az.source.access, Kubectl) and az.pods_error is not None and az.objects is None:
        # Nothing of the cluster could be read: one line, not one per check.
        return [Check(intent.subject, "cluster.read", UNREACHABLE, f"its cluster could not be read: {az.pods_error}",
                      f"check kubectl's context {az.source.access.context!r} (the zone's destination.kubeContext) "
                      "and access to the cluster, or give the zone direct remotes in --endpoints")]
    out: list[Check] = []
    if az.objects is not None or az.objects_error is not None:
        out += objects.check(az, build.objects_within(intent.name), sync)
        out += subnet_ports.check(az, build.objects_within(intent.name))
    out += interconnection.az_checks(build.plan.fabric, intent, az, live.ic, fabric)
    out += routes.check(intent, az, addresses, fabric, sync)
    out += routes.check_learned(intent, az, wanted)
    out += security_groups.check(build, az, intent.subject)
    declared, protocol = _deployment_members(build, intent), "tcp"
    if intent.kind == "deployment":
        protocol = next(d for d in build.plan.fabric.ovn_deployments if d.name == intent.name).databases.protocol
    out += raft_health.checks(intent.subject, az.raft, declared, az.pods_error, ic=False, protocol=protocol,
                              overrides=_overrides(az.source.members))
    return out


def _overrides(members: Sequence[Member]) -> dict[Database, dict[str, str]]:
    out: dict[Database, dict[str, str]] = {}
    for m in members:
        for db, address in m.raft_address.items():
            out.setdefault(db, {})[m.name] = address
    return out
