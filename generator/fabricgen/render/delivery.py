"""Per site with `delivery`: the Argo CD and Flux objects that apply the rendered clusters.

Written under `<site>/_delivery/`, each directory with a `kustomization.yaml`:

- `argocd/applications/`: one Application per zone and OVN-Kubernetes cluster. By default it
  syncs the committed `<rendered>/<site>/<zone>` directory as a plain kustomize directory (what
  reviewers saw and CI compared is what is applied); with `delivery.argocdSource: plugin` the
  fabricgen plugin renders the zone from the fabric at the synced commit. The objects carry
  their stage as sync wave, so one Application per cluster is enough. The Application
  `fabric-<site>` (app of apps) syncs this directory, which also holds `../bootstrap`: a zone
  added to the fabric gets its Application, a removed zone's Application is pruned, and the
  root and the health checks follow the fabric too. No Application carries the resources
  finalizer, so deleting one leaves the cluster's objects in place. The root syncs the zone
  hosting the IC database first (wave 0) and the other zones once its Application is healthy
  (wave 1), so no zone joins before the IC database has `vxlan_mode`; `argocd-cm.yaml` holds
  the health checks that make "healthy" mean something (`render.health_checks`), including
  Argo CD's documented one for Applications, without which the root would not wait.
- `argocd/bootstrap/`: what a person applies once, `argocd-cm.yaml` and the root Application
  alone. Waves order only what one sync creates: were the zone Applications applied beside
  the root, each would start syncing at once, and the zones would join before the IC
  database has `vxlan_mode`. (kustomize refuses a directory that includes the directory
  holding it, so the two are siblings.)
  Every Application retries a failed sync with backoff (argo-cd `controller/appcontroller.go`
  `autoSync` does not retry a failed automated sync otherwise) and compares with server-side
  diff, which Argo CD reads only on the Application (`controller/state.go`).
- `flux/`: the GitRepository `fabric-<site>` (ignoring everything but `rendered/<site>/`, less
  host files and the Argo CD directory), one Kustomization per stage directory of each cluster,
  each `dependsOn` the stage below it (and, for the stage that joins the interconnection, the
  stage of the zone that runs the IC database, whose server is ready only once `vxlan_mode` is
  set) with `wait: true` and the `healthCheckExprs` of its kinds: kustomize-controller dry-runs
  every object of one Kustomization before applying any (fluxcd/pkg `ssa` `ApplyAll`), so
  objects that need each other cannot share one. Plus the Kustomization `fabric-<site>` that
  applies this directory itself. `deletionPolicy: Orphan`: a Kustomization pruned with its zone
  leaves the cluster's objects in place.

Destinations come from each zone's (or cluster's) `destination`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from fabricgen.errors import FabricgenError
from fabricgen.model.consumers import KubernetesCluster
from fabricgen.model.delivery import PLAIN_PATH, Delivery, Destination
from fabricgen.plan import apply_order
from fabricgen.plan.zones import Plan
from fabricgen.render import health_checks, kustomization
from fabricgen.render.artifacts import KubeObject, Manifest, TextFile
from fabricgen.render.header import header
from fabricgen.serialise.manifest_yaml import dump_all

DIRECTORY = "_delivery"
PLUGIN = "fabricgen-v1"
ZONE_NAMESPACE = "kube-system"
ARGOCD_API = "argoproj.io/v1alpha1"
FLUX_API = "kustomize.toolkit.fluxcd.io/v1"
SOURCE_API = "source.toolkit.fluxcd.io/v1"
LABELS = {"app.kubernetes.io/managed-by": "fabricgen"}
WAVE = apply_order.WAVE
ARGOCD_CM = "argocd-cm"
# Argo CD reads ServerSideDiff only from the Application (argo-cd controller/state.go).
COMPARE_OPTIONS = {"argocd.argoproj.io/compare-options": "ServerSideDiff=true"}
# A failed automated sync is retried only with syncPolicy.retry (argo-cd controller/appcontroller.go
# autoSync): 10 tries, 10 s doubling to at most 5 min, about half an hour in all.
RETRY = {"limit": 10, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "5m"}}


# What `delivery.fabricPath` accepts: a path Argo CD and Flux can name as it is.
_PLAIN_DIRECTORY = re.compile(PLAIN_PATH)


class DeliveryPathError(FabricgenError):
    """The fabric's directory cannot be named by an Application without guessing."""


def fabric_dir(plan: Plan, delivery: Delivery) -> str:
    """The fabric's directory relative to the repository root (the Application's source path).

    Taken from the fabric's name, which is relative to its repository; outside a repository
    (a bare file name) it is `sites/<site>`, the layout `fabricgen init` writes. A directory
    whose name is not a plain path (characters the name had to escape, blanks, quotes) is
    never written escaped, which would name a directory that does not exist: the user sets
    `delivery.fabricPath`."""
    if delivery.fabric_path is not None:
        return delivery.fabric_path.strip("/")
    source = PurePosixPath(plan.source_name)
    if source.is_absolute() or ".." in source.parts or len(source.parts) < 2:
        return f"sites/{plan.site}"
    directory = source.parent.as_posix()
    if not _PLAIN_DIRECTORY.fullmatch(directory):
        raise DeliveryPathError(
            f"{plan.source_name}: delivery: the Argo CD Applications need the fabric's directory "
            f"in its repository, and {directory!r} is not a plain relative path; set "
            "delivery.fabricPath (for example sites/" + plan.site + ")")
    return directory


def destinations(plan: Plan) -> dict[str, tuple[Destination, str]]:
    """Per Kubernetes directory: its destination and the namespace of its objects."""
    out: dict[str, tuple[Destination, str]] = {z.name: (z.zone.destination, ZONE_NAMESPACE) for z in plan.zones}
    for deployment in plan.fabric.ovn_deployments:
        for consumer in deployment.consumers:
            if isinstance(consumer, KubernetesCluster):
                out[consumer.name] = (consumer.destination, consumer.namespace)
    return out


def _meta(name: str, namespace: str, plan: Plan, **annotations: str) -> dict[str, Any]:
    notes = {"fabricgen.io/source": plan.source_name, **annotations}
    return {"name": name, "namespace": namespace, "labels": dict(LABELS), "annotations": notes}


def app_name(plan: Plan, directory: str) -> str:
    return f"fabric-{plan.site}-{directory}"


def application_wave(plan: Plan, directory: str) -> int:
    """0 for the zone hosting the IC database and for clusters that do not join it; 1 for the
    zones that join: they start once the IC database zone's Application is healthy."""
    hosts = [z.name for z in plan.zones if z.hosts_ic_database]
    joins = {z.name for z in plan.zones}
    return 1 if hosts and directory in joins and directory not in hosts else 0


def rendered_dir(plan: Plan, delivery: Delivery, directory: str) -> str:
    return f"{delivery.rendered_path}/{plan.site}/{directory}"


def application(plan: Plan, delivery: Delivery, directory: str, dest: Destination, namespace: str) -> KubeObject:
    target: dict[str, str] = (
        {"server": dest.argocd_server} if dest.argocd_server is not None
        else {"name": dest.argocd_cluster or directory}
    )
    source: dict[str, Any] = {"repoURL": delivery.repo_url, "targetRevision": delivery.branch}
    if delivery.argocd_source == "rendered":
        # What the Application reads is the zone's directory and nothing else.
        source["path"] = rendered_dir(plan, delivery, directory)
        reads = f"/{source['path']}"
    else:
        # The plugin reads the fabric; what it prints it renders (or answers from its private cache).
        source_dir = fabric_dir(plan, delivery)
        source["path"] = source_dir
        source["plugin"] = {"name": PLUGIN, "env": [{"name": "ZONE", "value": directory}]}
        reads = f"/{source_dir}"
    return {
        "apiVersion": ARGOCD_API,
        "kind": "Application",
        # No resources finalizer: deleting the Application leaves the cluster's objects.
        "metadata": _meta(app_name(plan, directory), delivery.argocd_namespace, plan, **{
            WAVE: str(application_wave(plan, directory)),
            "argocd.argoproj.io/manifest-generate-paths": reads, **COMPARE_OPTIONS}),
        "spec": {
            "project": delivery.argocd_project,
            "source": source,
            "destination": {**target, "namespace": namespace},
            "syncPolicy": {
                "automated": {"prune": True, "selfHeal": True},
                # Only out-of-sync objects are applied (ovn-ic-config, Replace=true, is not
                # re-sent); server-side apply leaves Kube-OVN's own fields alone.
                "syncOptions": ["ApplyOutOfSyncOnly=true", "ServerSideApply=true"],
                "retry": RETRY,
            },
        },
    }


def root_application(plan: Plan, delivery: Delivery) -> KubeObject:
    return {
        "apiVersion": ARGOCD_API,
        "kind": "Application",
        "metadata": _meta(f"fabric-{plan.site}", delivery.argocd_namespace, plan, **COMPARE_OPTIONS),
        "spec": {
            "project": delivery.argocd_project,
            "source": {
                "repoURL": delivery.repo_url,
                "targetRevision": delivery.branch,
                "path": f"{delivery.rendered_path}/{plan.site}/{DIRECTORY}/argocd/applications",
            },
            "destination": {"server": "https://kubernetes.default.svc", "namespace": delivery.argocd_namespace},
            "syncPolicy": {"automated": {"prune": True, "selfHeal": True}, "retry": RETRY},
        },
    }


def argocd_health(plan: Plan, delivery: Delivery) -> KubeObject:
    """The health checks as keys of Argo CD's `argocd-cm`, merged server-side into the live
    ConfigMap (Argo CD's own keys stay its installer's), in the wave before the Applications,
    and never pruned or deleted with this directory."""
    meta = _meta(ARGOCD_CM, delivery.argocd_namespace, plan, **{
        WAVE: "-1", "argocd.argoproj.io/sync-options": "ServerSideApply=true,Prune=false,Delete=false"})
    # The labels Argo CD's settings informer selects argocd-cm by, should this create it.
    meta["labels"] = {**meta["labels"], "app.kubernetes.io/name": ARGOCD_CM, "app.kubernetes.io/part-of": "argocd"}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": health_checks.argocd_data()}


def repository_name(plan: Plan) -> str:
    return f"fabric-{plan.site}"


def git_repository(plan: Plan, delivery: Delivery) -> KubeObject:
    rendered = delivery.rendered_path
    ignore = "\n".join((
        "/*",
        f"!/{rendered}/",
        f"/{rendered}/*",
        f"!/{rendered}/{plan.site}/",
        f"/{rendered}/{plan.site}/_host/",
        f"/{rendered}/{plan.site}/{DIRECTORY}/argocd/",
    )) + "\n"
    return {
        "apiVersion": SOURCE_API,
        "kind": "GitRepository",
        "metadata": _meta(repository_name(plan), delivery.flux_namespace, plan),
        "spec": {"interval": "5m", "url": delivery.repo_url, "ref": {"branch": delivery.branch}, "ignore": ignore},
    }


def stage_kustomization_name(plan: Plan, directory: str, stage: str) -> str:
    return f"fabric-{plan.site}-{directory}-{stage}"


def flux_kustomization(plan: Plan, delivery: Delivery, name: str, path: str, depends_on: Sequence[str],
                       dest: tuple[str, Destination] | None,
                       health: Sequence[dict[str, str]] = ()) -> KubeObject:
    """`dest`: the cluster directory and its destination; None for Flux's own cluster."""
    spec: dict[str, Any] = {
        "interval": "10m",
        "retryInterval": "2m",
        "sourceRef": {"kind": "GitRepository", "name": repository_name(plan)},
        "path": path,
        "prune": True,
        "wait": True,
        "timeout": "5m",
        "deletionPolicy": "Orphan",
    }
    if dest is not None and not dest[1].flux_local:
        secret = dest[1].flux_kube_config_secret or f"cluster-{dest[0]}-kubeconfig"
        spec["kubeConfig"] = {"secretRef": {"name": secret}}
    if depends_on:
        spec["dependsOn"] = [{"name": d} for d in depends_on]
    if health:
        spec["healthCheckExprs"] = list(health)
    return {"apiVersion": FLUX_API, "kind": "Kustomization",
            "metadata": _meta(name, delivery.flux_namespace, plan), "spec": spec}


def stages(manifests: Sequence[Manifest]) -> list[str]:
    out: list[str] = []
    for m in manifests:
        stage = PurePosixPath(m.filename).parts[0]
        if stage not in out:
            out.append(stage)
    return out


def flux_kustomizations(plan: Plan, delivery: Delivery, manifests: Mapping[str, Sequence[Manifest]],
                        dests: Mapping[str, tuple[Destination, str]]) -> list[KubeObject]:
    # Where each object lives: (directory, stage). A reference the cluster itself does not
    # hold is looked up in the site's other clusters (the IC server of another zone).
    home: dict[apply_order.Identity, tuple[str, str]] = {}
    own: dict[str, set[apply_order.Identity]] = {}
    for directory, items in manifests.items():
        for m in items:
            for obj in m.objects:
                home.setdefault(apply_order.identity(obj), (directory, PurePosixPath(m.filename).parts[0]))
                own.setdefault(directory, set()).add(apply_order.identity(obj))
    out: list[KubeObject] = []
    for directory, items in manifests.items():
        dest = (directory, dests[directory][0])
        previous: str | None = None
        for stage in stages(items):
            deps: list[str] = [previous] if previous else []
            in_stage = [o for m in items if PurePosixPath(m.filename).parts[0] == stage for o in m.objects]
            for m in items:
                if PurePosixPath(m.filename).parts[0] != stage:
                    continue
                for obj in m.objects:
                    for target, _ref in apply_order.references(obj):
                        where = home.get(target)
                        if where is not None and target not in own[directory] \
                                and target not in apply_order.PREINSTALLED:
                            dep = stage_kustomization_name(plan, *where)
                            if dep not in deps:
                                deps.append(dep)
            name = stage_kustomization_name(plan, directory, stage)
            path = f"./{delivery.rendered_path}/{plan.site}/{directory}/{stage}"
            out.append(flux_kustomization(plan, delivery, name, path, deps, dest,
                                          health_checks.flux_health_checks(in_stage)))
            previous = name
    return out


def root_kustomization(plan: Plan, delivery: Delivery) -> KubeObject:
    path = f"./{delivery.rendered_path}/{plan.site}/{DIRECTORY}/flux"
    return flux_kustomization(plan, delivery, f"fabric-{plan.site}", path, (), None)


def render(plan: Plan, manifests: Mapping[str, Sequence[Manifest]]) -> list[TextFile]:
    delivery = plan.fabric.delivery
    if delivery is None or not manifests:
        return []
    dests = destinations(plan)
    top = header(plan)
    base = PurePosixPath(DIRECTORY)
    apps = [application(plan, delivery, d, *dests[d]) for d in manifests]
    flux = flux_kustomizations(plan, delivery, manifests, dests)

    def doc(objects: Sequence[KubeObject]) -> str:
        return top + "---\n" + dump_all(objects)

    bootstrap, applications = base / "argocd" / "bootstrap", base / "argocd" / "applications"
    return [
        TextFile(bootstrap / "argocd-cm.yaml", doc([argocd_health(plan, delivery)])),
        TextFile(bootstrap / "root.yaml", doc([root_application(plan, delivery)])),
        TextFile(bootstrap / "kustomization.yaml", kustomization.text(["argocd-cm.yaml", "root.yaml"], top)),
        TextFile(applications / "applications.yaml", doc(apps)),
        TextFile(applications / "kustomization.yaml",
                 kustomization.text(["../bootstrap", "applications.yaml"], top)),
        TextFile(base / "flux" / "gitrepository.yaml", doc([git_repository(plan, delivery)])),
        TextFile(base / "flux" / "kustomizations.yaml", doc([root_kustomization(plan, delivery), *flux])),
        TextFile(base / "flux" / "kustomization.yaml",
                 kustomization.text(["gitrepository.yaml", "kustomizations.yaml"], top)),
    ]
