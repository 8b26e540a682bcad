"""Per site with `delivery`: the Argo CD and Flux objects that apply the rendered clusters.

Written under `<site>/_delivery/`, each directory with a `kustomization.yaml`:

- `argocd/`: one Application per zone and OVN-Kubernetes cluster, rendered by the fabricgen
  plugin from the fabric at the synced commit; the objects carry their stage as sync wave, so
  one Application per cluster is enough. Plus the Application `fabric-<site>` that applies this
  directory itself (app of apps): a zone added to the fabric gets its Application, a removed
  zone's Application is pruned. No Application carries the resources finalizer, so deleting
  one leaves the cluster's objects in place.
- `flux/`: the GitRepository `fabric-<site>` (ignoring everything but `rendered/<site>/`, less
  host files and the Argo CD directory), one Kustomization per stage directory of each cluster,
  each `dependsOn` the stage below it (and, for the stage that joins the interconnection, the
  stage of the zone that runs the IC database) with `wait: true`: kustomize-controller dry-runs
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
from fabricgen.render import kustomization
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


def application(plan: Plan, delivery: Delivery, directory: str, dest: Destination, namespace: str) -> KubeObject:
    source_dir = fabric_dir(plan, delivery)
    target: dict[str, str] = (
        {"server": dest.argocd_server} if dest.argocd_server is not None
        else {"name": dest.argocd_cluster or directory}
    )
    return {
        "apiVersion": ARGOCD_API,
        "kind": "Application",
        # No resources finalizer: deleting the Application leaves the cluster's objects.
        "metadata": _meta(app_name(plan, directory), delivery.argocd_namespace, plan, **{
            "argocd.argoproj.io/manifest-generate-paths": f"/{source_dir}"}),
        "spec": {
            "project": delivery.argocd_project,
            "source": {
                "repoURL": delivery.repo_url,
                "targetRevision": delivery.branch,
                "path": source_dir,
                "plugin": {"name": PLUGIN, "env": [{"name": "ZONE", "value": directory}]},
            },
            "destination": {**target, "namespace": namespace},
            "syncPolicy": {
                "automated": {"prune": True, "selfHeal": True},
                # Only out-of-sync objects are applied (ovn-ic-config, Replace=true, is not
                # re-sent); server-side apply leaves Kube-OVN's own fields alone.
                "syncOptions": ["ApplyOutOfSyncOnly=true", "ServerSideApply=true"],
            },
        },
    }


def root_application(plan: Plan, delivery: Delivery) -> KubeObject:
    return {
        "apiVersion": ARGOCD_API,
        "kind": "Application",
        "metadata": _meta(f"fabric-{plan.site}", delivery.argocd_namespace, plan),
        "spec": {
            "project": delivery.argocd_project,
            "source": {
                "repoURL": delivery.repo_url,
                "targetRevision": delivery.branch,
                "path": f"{delivery.rendered_path}/{plan.site}/{DIRECTORY}/argocd",
            },
            "destination": {"server": "https://kubernetes.default.svc", "namespace": delivery.argocd_namespace},
            "syncPolicy": {"automated": {"prune": True, "selfHeal": True}},
        },
    }


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
                       dest: tuple[str, Destination] | None) -> KubeObject:
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
            out.append(flux_kustomization(plan, delivery, name, path, deps, dest))
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

    return [
        TextFile(base / "argocd" / "applications.yaml", doc([root_application(plan, delivery), *apps])),
        TextFile(base / "argocd" / "kustomization.yaml", kustomization.text(["applications.yaml"], top)),
        TextFile(base / "flux" / "gitrepository.yaml", doc([git_repository(plan, delivery)])),
        TextFile(base / "flux" / "kustomizations.yaml", doc([root_kustomization(plan, delivery), *flux])),
        TextFile(base / "flux" / "kustomization.yaml",
                 kustomization.text(["gitrepository.yaml", "kustomizations.yaml"], top)),
    ]
