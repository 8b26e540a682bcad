"""Every zone of the samples converges first time, each wave and stage waiting for the health of
the one before, and no zone joins the interconnection before the IC database has `vxlan_mode`.

`test_apply_order.py` replays what admission allows in each engine's order; this replays the
whole site over time, with the objects' status written as Kube-OVN's controllers write it and
judged by the health checks fabricgen delivers, run in real interpreters (`support/health.py`:
the Lua from the rendered `argocd-cm`, in lua5.1; the CEL from the rendered Kustomizations, in
Google's CEL runtime). An object whose status is still empty holds its wave or stage.

The engines, from their code:
- Argo CD (argoproj/argo-cd, gitops-engine `pkg/sync/sync_context.go`): a sync applies one wave,
  one kind at a time in `kindOrder`, then waits while any task of the wave is running; a task
  whose kind has no health check succeeds at once (`GetResourceHealth` nil), Healthy succeeds,
  Degraded fails the sync; then the next wave. Deployment health is built in
  (gitops-engine `pkg/health/health_deployment.go`: every replica updated and available). The
  root Application waits in the same way for its child Applications, judged by the
  `argoproj.io/Application` check it delivers; an Application's own health is the worst of its
  resources' (argo-cd `controller/health.go`), Missing while one does not exist yet.
- Flux (fluxcd/kustomize-controller, fluxcd/pkg `ssa/manager_apply.go` `ApplyAllStaged`): a
  Kustomization starts when each `dependsOn` is Ready; it applies its Namespaces first and
  waits for them, dry-runs the rest through admission, applies it, and with `wait: true` is
  Ready once every object is Current (its `healthCheckExprs`, else kstatus).

Kube-OVN's controllers, from kubeovn/kube-ovn v1.16.2: `pkg/controller/vpc.go` (standby once the
router exists), `provider_network.go` (per-node Ready conditions), `vlan.go` (the Vlan joins its
ProviderNetwork's status.vlans), `subnet.go` and `subnet_status.go` (Ready once the Vpc is
standby and, on a Vlan, the ProviderNetwork lists it: `validateSubnetVlan`), `vpc_nat_gateway.go`
(the StatefulSet, then the status echo), `vpc_nat_gw_eip.go` and `vpc_nat_gw_nat.go` (ready once
the gateway pod runs). The IC database: the IC server's pods serve once started; its sidecar
runs the rendered `configure-ic-db.sh` (`vxlan_mode` as the script sets it) and its readiness
probe (`--check`) holds each pod unready until then; a zone joins when its `ovn-ic-config` is
applied (`pkg/ovn_ic_controller` resyncs every second).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from test_apply_order import KIND_ORDER, WAVE, built, denies, ident, load_stream, platforms

from fabricgen.pipeline import load
from support.fabrics import REPO
from support.health import Cel, kstatus, lua_binary, run_lua

pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(lua_binary() is None, reason="lua5.1 not installed (scripts/setup.sh --test)"),
]

Obj = dict[str, Any]
Identity = tuple[str, str, str]
TICKS = 400  # steps of simulated time before a rollout counts as stuck
NODES = ("node-1", "node-2")
KUBE_SYSTEM = "kube-system"
IC_SERVER = ("Deployment", KUBE_SYSTEM, "ovn-ic-server")
SIDECAR_ROUND = 3  # ticks from the server's start to the sidecar's first write (its round, the raft leader)


def group_kind(obj: Obj) -> tuple[str, str]:
    return str(obj.get("apiVersion", "")).rpartition("/")[0], obj["kind"]


# ------------------------------------------------------------------------------- the clusters
@dataclass
class IcDatabase:
    """The IC northbound database, in the cluster that runs the IC server."""

    serving: int = 0  # ticks since the server came up
    vxlan_mode: bool = False


@dataclass
class Live:
    """One cluster: live objects with their status, and what its controllers do each tick."""

    name: str
    platform: str
    objects: dict[Identity, Obj] = field(default_factory=dict)
    applied: set[Identity] = field(default_factory=set)
    joined: bool | None = None  # None: never joined; else whether vxlan_mode was set then

    def __post_init__(self) -> None:
        pre: list[Obj] = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}
            for n in ("default", KUBE_SYSTEM, "kube-public", "ovn-kubernetes")
        ]
        if self.platform != "kubernetes":
            pre += [
                {"apiVersion": "kubeovn.io/v1", "kind": "Vpc", "metadata": {"name": "ovn-cluster"}, "spec": {},
                 "status": {"standby": True, "default": True, "router": "ovn-cluster"}},
                {"apiVersion": "kubeovn.io/v1", "kind": "Subnet", "metadata": {"name": "ovn-default"},
                 "spec": {"provider": "ovn", "vpc": "ovn-cluster"}, "status": {"conditions": [
                     {"type": "Ready", "status": "True"}]}},
                {"apiVersion": "kubeovn.io/v1", "kind": "Subnet", "metadata": {"name": "join"},
                 "spec": {"provider": "ovn", "vpc": "ovn-cluster"}, "status": {"conditions": [
                     {"type": "Ready", "status": "True"}]}},
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ovn-vpc-nat-config",
                                                                       "namespace": KUBE_SYSTEM}, "data": {}},
                # SUSE Virtualization's kubeovn-operator has deployed Kube-OVN (its healthcheck controller).
                {"apiVersion": "kubeovn.io/v1", "kind": "Configuration",
                 "metadata": {"name": "kubeovn", "namespace": KUBE_SYSTEM}, "spec": {},
                 "status": {"status": "Deployed", "conditions": [
                     {"type": t, "status": "True"} for t in ("waitingForMatchignNodes", "ovnNorthDBLeaderFound",
                                                             "ovnSouthDBLeaderFound", "ovnNBDBHealth",
                                                             "ovnSBDBHealth")]}},
            ]
            pre[-1]["status"]["conditions"][0]["status"] = "False"
        for obj in pre:
            self.objects[ident(obj)] = obj

    # the admission model of test_apply_order reads these
    @property
    def live(self) -> dict[Identity, Obj]:
        return self.objects

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        return self.objects.get((kind, namespace, name))

    def namespace_missing(self, obj: Obj) -> str | None:
        """The API server's NamespaceLifecycle admission."""
        ns = obj["metadata"].get("namespace")
        if ns and ("Namespace", "", ns) not in self.objects:
            return f"namespaces {ns!r} not found"
        return None

    def admit(self, obj: Obj) -> str | None:
        return self.namespace_missing(obj) or denies(obj, self)  # type: ignore[arg-type]

    def apply(self, obj: Obj) -> None:
        """Server-side apply: the spec and metadata are ours, the status stays the controllers'."""
        key = ident(obj)
        before = self.objects.get(key)
        new = copy.deepcopy(obj)
        if before is not None and "status" in before:
            new["status"] = before["status"]
        new.setdefault("metadata", {})["generation"] = 1
        self.objects[key] = new
        self.applied.add(key)

    # --------------------------------------------------------------------- controllers
    def step(self, ic_db: IcDatabase | None, hosts_db: bool) -> None:
        """One round of every controller; each writes what the upstream code writes."""
        objs = self.objects
        for key, obj in list(objs.items()):
            kind, spec, status = obj["kind"], obj.get("spec", {}), obj.get("status")
            name = obj["metadata"]["name"]
            if kind == "Vpc" and status is None:
                obj["status"] = {"standby": True, "default": False, "router": name, "subnets": []}
            elif kind == "ProviderNetwork" and status is None:
                obj["status"] = {"ready": True, "readyNodes": list(NODES), "conditions": [
                    {"type": "Ready", "status": "True", "reason": "InitOVSBridgeSucceeded", "node": n}
                    for n in NODES]}
            elif kind == "Vlan":
                pn = self.get("ProviderNetwork", "", spec.get("provider", ""))
                if pn is not None and pn.get("status") is not None:
                    vlans = pn["status"].setdefault("vlans", [])
                    if name not in vlans:
                        vlans.append(name)
            elif kind == "Subnet" and key in self.applied and not _ready(obj):
                vpc = self.get("Vpc", "", spec.get("vpc") or "ovn-cluster")
                ok = vpc is not None and (vpc.get("status") or {}).get("standby") is True
                if spec.get("vlan"):
                    vlan = self.get("Vlan", "", spec["vlan"])
                    pn = self.get("ProviderNetwork", "", vlan["spec"]["provider"]) if vlan else None
                    ok = ok and pn is not None and spec["vlan"] in (pn.get("status") or {}).get("vlans", [])
                    if ok and vlan is not None:
                        vlan.setdefault("status", {}).setdefault("subnets", [])
                        if name not in vlan["status"]["subnets"]:
                            vlan["status"]["subnets"].append(name)
                obj["status"] = {"conditions": [
                    {"type": "Ready", "status": "True" if ok else "Unknown", "reason": "Init"},
                    {"type": "Validated", "status": "True" if ok else "Unknown", "reason": "Init"},
                    {"type": "Error", "status": "Unknown", "reason": "Init"}]}
            elif kind == "VpcNatGateway" and status is None:
                config = self.get("ConfigMap", KUBE_SYSTEM, "ovn-vpc-nat-gw-config")
                if (config is not None and config.get("data", {}).get("enable-vpc-nat-gw") == "true"
                        and self.get("Vpc", "", spec["vpc"]) and self.get("Subnet", "", spec["subnet"])):
                    obj["status"] = {"externalSubnets": list(spec.get("externalSubnets", [])),
                                     "selector": list(spec.get("selector", [])), "qosPolicy": ""}
            elif kind == "IptablesEIP" and not (status or {}).get("ready"):
                gw = self.get("VpcNatGateway", "", spec["natGwDp"])
                if gw is not None and gw.get("status") is not None and _gateway_pod_runs(self, gw):
                    # createOrUpdateEipCR (pkg/controller/vpc_nat_gw_eip.go): ready, ip, qosPolicy
                    obj["status"] = {"ready": True, "ip": spec.get("v4ip", ""), "redo": "", "nat": "",
                                     "qosPolicy": spec.get("qosPolicy", "")}
            elif kind in ("IptablesSnatRule", "IptablesDnatRule") and not (status or {}).get("ready"):
                eip = self.get("IptablesEIP", "", spec["eip"])
                if eip is not None and (eip.get("status") or {}).get("ready"):
                    # patchSnatStatus / patchDnatStatus (pkg/controller/vpc_nat_gw_nat.go) copy what
                    # they applied into the status
                    applied = (["internalCIDR"] if kind == "IptablesSnatRule"
                               else ["protocol", "internalIp", "internalPort", "externalPort"])
                    obj["status"] = {"ready": True, "v4ip": eip["status"]["ip"],
                                     **{f: spec.get(f, "") for f in applied}}
            elif kind == "Deployment" and key == IC_SERVER and hosts_db and ic_db is not None:
                _ic_server_pods(self, obj, ic_db)
            elif kind == "ConfigMap" and name == "ovn-ic-config" and self.joined is None and ic_db is not None:
                self.joined = ic_db.vxlan_mode


def _ready(obj: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions", []))


def _gateway_pod_runs(cluster: Live, gw: Obj) -> bool:
    """The gateway pod attaches to its subnet and the external subnet: both must be ready."""
    subnets = [gw["spec"]["subnet"], *gw["spec"].get("externalSubnets", [])]
    return all((s := cluster.get("Subnet", "", n)) is not None and _ready(s) for n in subnets)


def _ic_server_pods(cluster: Live, deployment: Obj, db: IcDatabase) -> None:
    """The IC server's pods: they start once their volumes exist; the server serves; a
    container with a `--check` readiness probe is ready once the script's setting is in."""
    template = deployment["spec"]["template"]["spec"]
    volumes_there = all(cluster.get("ConfigMap", KUBE_SYSTEM, v["configMap"]["name"]) is not None
                        for v in template.get("volumes", []) if "configMap" in v)
    if not volumes_there:
        return
    wants_vxlan = False
    for volume in template.get("volumes", []):
        if "configMap" in volume:
            script = next(iter(cluster.get("ConfigMap", KUBE_SYSTEM, volume["configMap"]["name"])["data"].values()))
            wants_vxlan = "options:vxlan_mode=true" in script
    db.serving += 1
    started = db.serving > 1
    sidecar_runs = any("--every" in c.get("command", []) for c in template["containers"])
    if db.serving > SIDECAR_ROUND and sidecar_runs and wants_vxlan:
        db.vxlan_mode = True
    ready = True
    for container in template["containers"]:
        probe = container.get("readinessProbe", {}).get("exec", {}).get("command", [])
        if "--check" in probe and wants_vxlan and not db.vxlan_mode:
            ready = False
    ready = ready and started
    replicas = deployment["spec"].get("replicas", 1)
    count = replicas if ready else 0
    deployment["status"] = {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
                            "readyReplicas": count, "availableReplicas": count}


# ------------------------------------------------------------------------------- health
class Judge:
    """Argo CD's and Flux's verdicts on live objects, from the rendered health checks."""

    def __init__(self, site: str) -> None:
        base = REPO / "rendered" / site / "_delivery"
        [config] = load_stream((base / "argocd" / "bootstrap" / "argocd-cm.yaml").read_text(encoding="utf-8"))
        prefix = "resource.customizations.health."
        self.lua = {tuple(k[len(prefix):].split("_", 1)): v for k, v in config["data"].items()
                    if k.startswith(prefix)}
        self.cel = Cel()

    def argocd(self, objects: list[Obj]) -> list[tuple[str, str] | None]:
        """Per object: (status, message), or None where Argo CD has no health check."""
        out: list[tuple[str, str] | None] = [None] * len(objects)
        lua_cases = [(i, self.lua[group_kind(o)], o) for i, o in enumerate(objects) if group_kind(o) in self.lua]
        for (i, _s, _o), result in zip(lua_cases, run_lua([(s, o) for _i, s, o in lua_cases]), strict=True):
            out[i] = result
        for i, o in enumerate(objects):
            if group_kind(o) == ("apps", "Deployment"):
                out[i] = _deployment_health(o)
        return out

    def flux(self, obj: Obj, exprs: list[dict[str, str]]) -> str:
        for check in exprs:
            if (check["apiVersion"].rpartition("/")[0], check["kind"]) == group_kind(obj):
                return self.cel.status(check, obj)
        return kstatus(obj)


def _deployment_health(obj: Obj) -> tuple[str, str]:
    """gitops-engine pkg/health/health_deployment.go."""
    status, replicas = obj.get("status") or {}, obj["spec"].get("replicas", 1)
    if status.get("updatedReplicas", 0) < replicas or status.get("availableReplicas", 0) < replicas:
        return "Progressing", (f"Waiting for rollout to finish: {status.get('availableReplicas', 0)} of "
                               f"{replicas} updated replicas are available...")
    return "Healthy", ""


# ------------------------------------------------------------------------------- the site
@dataclass
class Site:
    name: str
    clusters: dict[str, Live]
    db_zone: str | None
    ic_db: IcDatabase = field(default_factory=IcDatabase)
    log: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, site: str) -> Site:
        """The site before its rollout. An IC database that runs in no zone is configured first
        by its operator, as FG113 and docs/delivery.md say, with the script fabricgen renders for it."""
        kinds = platforms(REPO / "sites" / site / "fabric.yaml")
        clusters = {name: Live(name, platform) for name, platform in kinds.items()}
        db_zone = next((n for n in clusters if (REPO / "rendered" / site / n / "ic-db").is_dir()), None)
        external = REPO / "rendered" / site / "_host" / "_ic-db" / "configure-ic-db.sh"
        ic_db = IcDatabase(vxlan_mode=external.is_file()
                           and "set IC_NB_Global . options:vxlan_mode=true" in external.read_text(encoding="utf-8"))
        return cls(site, clusters, db_zone, ic_db)

    def tick(self) -> None:
        for name, cluster in self.clusters.items():
            cluster.step(self.ic_db, name == self.db_zone)

    def zone_objects(self, cluster: str) -> list[Obj]:
        return built(REPO / "rendered" / self.name / cluster)


class Stuck(AssertionError):
    pass


def wait_for(site: Site, done: Callable[[], str | None], what: str) -> None:
    """Tick until `done()` returns None (it returns what still holds); fail when it never does."""
    for _ in range(TICKS):
        holding = done()
        if holding is None:
            return
        if holding.startswith("FAILED"):
            raise AssertionError(f"{what}: {holding}")
        site.tick()
    raise Stuck(f"{what} never became healthy: {done()}")


# ------------------------------------------------------------------------------- Argo CD
@dataclass
class App:
    name: str
    cluster: str
    objects: list[Obj]
    wave: int
    synced: bool = False


def argocd_rollout(site: Site, judge: Judge, *, use_app_health: bool = True, bootstrap: str = "bootstrap") -> list[str]:
    """Argo CD from what a person applies once: the root Application (`bootstrap`, the directory
    under `_delivery/argocd` given to `kubectl apply -k`), whose sync creates the zone
    Applications wave by wave, each wave once the Applications of the one before are healthy
    (judged by the `argoproj.io/Application` check; without it, `use_app_health=False`, a wave
    of Applications succeeds once created). Every Application created syncs its own waves
    from then on, concurrently with the others (`concurrently`). Applications that the
    bootstrap itself creates start at once."""
    base = REPO / "rendered" / site.name / "_delivery" / "argocd"
    created = {o["metadata"]["name"] for o in built(base / bootstrap) if o["kind"] == "Application"}
    apps = []
    for app in built(base / "applications"):
        if app["kind"] != "Application" or app["metadata"]["name"] == f"fabric-{site.name}":
            continue
        path = Path(app["spec"]["source"]["path"])
        cluster = path.name if path.parts[0] == "rendered" else app["spec"]["source"]["plugin"]["env"][0]["value"]
        apps.append(App(app["metadata"]["name"], cluster, site.zone_objects(cluster),
                        int(app["metadata"]["annotations"].get(WAVE, "0"))))
    running = [sync_application(site, judge, a) for a in apps if a.name in created]
    for wave in sorted({a.wave for a in apps if a.name not in created}):
        batch = [a for a in apps if a.wave == wave and a.name not in created]
        running += [sync_application(site, judge, a) for a in batch]
        if use_app_health:  # the root waits for each child's health before its next wave
            running = concurrently(site, running, [
                (lambda app=app: application_holds(site, judge, app), f"Application {app.name}") for app in batch])
    concurrently(site, running, [])
    return site.log


Sync = Iterator[str]  # an Application's sync: yields what it waits for, one tick at a time


def concurrently(site: Site, syncs: list[Sync], gates: list[tuple[Callable[[], str | None], str]]) -> list[Sync]:
    """Advance every sync a step per tick, until each gate holds no more (`gates` empty: until
    every sync is done); returns the syncs still running. A gate that never opens is `Stuck`."""
    syncs, waits = list(syncs), []
    for _ in range(TICKS):
        steps = [(s, next(s, None)) for s in syncs]
        syncs, waits = [s for s, step in steps if step is not None], [step for _s, step in steps if step is not None]
        open_gates = [(what, h) for gate, what in gates if (h := gate()) is not None]
        for what, holding in open_gates:
            if holding.startswith("FAILED"):
                raise AssertionError(f"{what}: {holding}")
        if not open_gates and (gates or not syncs):
            return syncs
        site.tick()
    raise Stuck(f"never became healthy: {[*waits, *(f'{what}: {gate()}' for gate, what in gates)]}")


def sync_application(site: Site, judge: Judge, app: App) -> Sync:
    """One Application's sync, as a generator the caller advances tick by tick."""
    cluster = site.clusters[app.cluster]
    waves = sorted({int(o["metadata"]["annotations"].get(WAVE, "0")) for o in app.objects})
    for wave in waves:
        tasks = sorted((o for o in app.objects if int(o["metadata"]["annotations"].get(WAVE, "0")) == wave),
                       key=lambda o: (KIND_ORDER.get(o["kind"], 0), o["metadata"]["name"]))
        for obj in tasks:
            denied = cluster.admit(obj)
            if denied:
                raise AssertionError(f"{app.name} wave {wave}: {obj['kind']} {obj['metadata']['name']}: {denied}")
            cluster.apply(obj)
            site.log.append(f"argocd {app.cluster} wave {wave}: {obj['kind']} {obj['metadata']['name']}")

        def holds(tasks: list[Obj] = tasks) -> str | None:
            live = [cluster.objects[ident(o)] for o in tasks]
            for obj, verdict in zip(live, judge.argocd(live), strict=True):
                if verdict is None or verdict[0] == "Healthy":
                    continue
                prefix = "FAILED " if verdict[0] == "Degraded" else ""
                return f"{prefix}{obj['kind']} {obj['metadata']['name']}: {verdict[0]} {verdict[1]}"
            return None

        for _ in range(TICKS):
            holding = holds()
            if holding is None:
                break
            if holding.startswith("FAILED"):
                raise AssertionError(f"{app.name} wave {wave}: {holding}")
            yield f"{app.name} wave {wave}: {holding}"
        else:
            raise Stuck(f"{app.name} wave {wave} never became healthy: {holds()}")
    app.synced = True


def application_holds(site: Site, judge: Judge, app: App) -> str | None:
    cluster = site.clusters[app.cluster]
    live = [cluster.objects.get(ident(o)) for o in app.objects]
    if any(o is None for o in live):
        health = "Missing"
    else:
        verdicts = [v[0] for v in judge.argocd([o for o in live if o is not None]) if v is not None]
        health = "Degraded" if "Degraded" in verdicts else "Progressing" if "Progressing" in verdicts \
            else "Healthy"
    application = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                   "metadata": {"name": app.name}, "status": {"health": {"status": health}}}
    [verdict] = judge.argocd([application])
    assert verdict is not None
    return None if verdict[0] == "Healthy" else f"{verdict[0]}"


# ------------------------------------------------------------------------------- Flux
def flux_rollout(site: Site, judge: Judge) -> list[str]:
    pending = {k["metadata"]["name"]: k for k in load_stream(
        (REPO / "rendered" / site.name / "_delivery" / "flux" / "kustomizations.yaml").read_text(encoding="utf-8"))
        if not k["spec"]["path"].endswith("/_delivery/flux")}
    ready: set[str] = set()
    while pending:
        runnable = [k for n, k in pending.items() if all(d["name"] in ready for d in k["spec"].get("dependsOn", []))]
        assert runnable, f"Kustomizations that never start: {sorted(pending)}"
        for k in runnable:
            reconcile(site, judge, k)
            ready.add(k["metadata"]["name"])
            del pending[k["metadata"]["name"]]
    return site.log


def reconcile(site: Site, judge: Judge, kustomization: Obj) -> None:
    name, spec = kustomization["metadata"]["name"], kustomization["spec"]
    path = REPO / spec["path"]
    cluster = site.clusters[path.relative_to(REPO / "rendered" / site.name).parts[0]]
    objects = built(path)
    exprs = spec.get("healthCheckExprs", [])
    first = [o for o in objects if o["kind"] in ("Namespace", "CustomResourceDefinition", "ClusterRole")]
    rest = [o for o in objects if o not in first]
    for group in (first, rest):
        denied = [f"{o['kind']} {o['metadata']['name']}: {why}" for o in group if (why := cluster.admit(o))]
        assert denied == [], f"{name} (dry run): {denied}"
        for obj in group:
            cluster.apply(obj)
            site.log.append(f"flux {name}: {obj['kind']} {obj['metadata']['name']}")

        def holds(group: list[Obj] = group) -> str | None:
            for obj in group:
                verdict = judge.flux(cluster.objects[ident(obj)], exprs)
                if verdict == "Failed":
                    return f"FAILED {obj['kind']} {obj['metadata']['name']}"
                if verdict != "Current":
                    return f"{obj['kind']} {obj['metadata']['name']}: {verdict}"
            return None

        wait_for(site, holds, f"Kustomization {name}")


# ------------------------------------------------------------------------------- the tests
SITES = ("lab", "nat", "openstack-k8s")


def vxlan_wanted(site: str) -> bool:
    """What the fabric says, not what was rendered: a fabric that wants vxlan_mode and whose
    output sets it nowhere fails the check."""
    parsed, _source, _warnings = load(REPO / "sites" / site / "fabric.yaml")
    return parsed.interconnection is not None and parsed.interconnection.vxlan_mode


def check_joins(site: Site) -> None:
    for name, cluster in site.clusters.items():
        if cluster.platform == "kubernetes":
            continue
        assert cluster.joined is not None, f"{name} never joined"
        if vxlan_wanted(site.name):
            assert cluster.joined, f"{name} joined the interconnection before vxlan_mode was set"


@pytest.mark.parametrize("site", SITES)
def test_argocd_rollout_converges_with_readiness(site: str) -> None:
    rollout = Site.of(site)
    log = argocd_rollout(rollout, Judge(site))
    check_joins(rollout)
    for name, cluster in rollout.clusters.items():
        assert {ident(o) for o in rollout.zone_objects(name)} <= cluster.applied
    if site == "lab":
        assert vxlan_wanted(site)
        first_other = min(i for i, line in enumerate(log) if not line.startswith("argocd hq "))
        assert all(line.startswith("argocd hq ") for line in log[:first_other])


@pytest.mark.parametrize("site", SITES)
def test_flux_rollout_converges_with_readiness(site: str) -> None:
    rollout = Site.of(site)
    flux_rollout(rollout, Judge(site))
    check_joins(rollout)
    for name, cluster in rollout.clusters.items():
        assert {ident(o) for o in rollout.zone_objects(name)} <= cluster.applied


def test_a_wave_waits_for_a_subnet_without_status() -> None:
    """With Kube-OVN's subnet controller stopped, the wave after the Subnets never starts."""
    rollout = Site.of("nat")
    cluster = rollout.clusters["hq"]
    original = cluster.step

    def no_subnet_controller(ic_db: IcDatabase | None, hosts_db: bool) -> None:
        original(ic_db, hosts_db)
        for obj in cluster.objects.values():
            if obj["kind"] == "Subnet" and obj["metadata"]["name"] == "prod-app":
                obj.pop("status", None)

    cluster.step = no_subnet_controller  # type: ignore[method-assign]
    with pytest.raises(Stuck, match="Subnet prod-app: Progressing Waiting for Kube-OVN to reconcile the subnet"):
        argocd_rollout(rollout, Judge("nat"))
    assert not any(line.endswith("VpcNatGateway gw-prod") for line in rollout.log)


def test_flux_stage_waits_for_a_subnet_without_status() -> None:
    rollout = Site.of("nat")
    cluster = rollout.clusters["hq"]
    original = cluster.step

    def no_subnet_controller(ic_db: IcDatabase | None, hosts_db: bool) -> None:
        original(ic_db, hosts_db)
        for obj in cluster.objects.values():
            if obj["kind"] == "Subnet" and obj["metadata"]["name"] == "prod-app":
                obj.pop("status", None)

    cluster.step = no_subnet_controller  # type: ignore[method-assign]
    with pytest.raises(Stuck, match="Subnet prod-app: Unknown"):
        flux_rollout(rollout, Judge("nat"))


def test_without_the_readiness_gate_zones_join_before_vxlan_mode() -> None:
    """The check can fail: with the sidecar's readiness probe gone, hq's IC server is available
    at once, and the other zones join before vxlan_mode is set (in both engines)."""
    for engine in (argocd_rollout, flux_rollout):
        rollout = Site.of("lab")
        hq = rollout.clusters["hq"]
        original = hq.apply

        def apply_without_probe(obj: Obj, original: Callable[[Obj], None] = original) -> None:
            if ident(obj) == IC_SERVER:
                obj = copy.deepcopy(obj)
                for container in obj["spec"]["template"]["spec"]["containers"]:
                    container.pop("readinessProbe", None)
            original(obj)

        hq.apply = apply_without_probe  # type: ignore[method-assign]
        engine(rollout, Judge("lab"))
        early = [n for n, c in rollout.clusters.items() if c.joined is False]
        assert early, engine.__name__


def test_without_application_health_the_root_does_not_wait() -> None:
    """Argo CD waits on a child Application only with the `argoproj.io/Application` check:
    without it every zone's Application starts at once, and a zone joins before vxlan_mode."""
    rollout = Site.of("lab")
    argocd_rollout(rollout, Judge("lab"), use_app_health=False)
    early = sorted(n for n, c in rollout.clusters.items() if c.joined is False)
    assert early == ["ai", "dr", "edge"]


def test_an_external_database_left_unconfigured_fails_the_check() -> None:
    """sites/nat's IC database runs in no zone: were its operator not to run the rendered script
    first, its zone would join before vxlan_mode, and the replay says so."""
    rollout = Site.of("nat")
    assert rollout.ic_db.vxlan_mode and rollout.db_zone is None
    rollout.ic_db.vxlan_mode = False
    flux_rollout(rollout, Judge("nat"))
    with pytest.raises(AssertionError, match="hq joined the interconnection before vxlan_mode was set"):
        check_joins(rollout)


def test_zone_applications_applied_by_hand_join_before_vxlan_mode() -> None:
    """Why the bootstrap holds the root alone: applying the zone Applications too (the whole
    `applications/` directory) starts every zone's sync at once, waves or not."""
    rollout = Site.of("lab")
    argocd_rollout(rollout, Judge("lab"), bootstrap="applications")
    early = sorted(n for n, c in rollout.clusters.items() if c.joined is False)
    assert early == ["ai", "dr", "edge"]
