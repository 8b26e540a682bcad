"""Every cluster of every sample applies first time, in Argo CD's order and in Flux's.

A replay of the two GitOps tools' apply order against a model of what the target cluster
admits. Both are written from the upstream code, not from fabricgen's dependency model
(`fabricgen.plan.apply_order`), which they check:

Apply order
- Argo CD, argoproj/gitops-engine `pkg/sync/sync_tasks.go` (`syncTasks.Less`: phase, then
  sync wave, then `kindOrder`, where every custom kind is 0, then name) and
  `pkg/sync/sync_context.go` (the dry run before a sync is client-side, so admission is not
  consulted; `runTasks` applies one wave, and within it each run of one kind concurrently
  (`processCreateTasks`); the next wave starts once no task of the previous one is running,
  and a task is running only while its object has a health check that does not say Healthy:
  without one, `health.GetResourceHealth` returns nil and the task succeeds at once). This
  file replays admission only; `test_readiness_replay.py` replays the waiting, with the health
  checks fabricgen delivers.
- Flux, fluxcd/pkg `ssa/manager_apply.go` (`ApplyAllStaged` then `ApplyAll`: every object of
  one Kustomization is dry-run server-side, so through admission, before any is applied) and
  fluxcd/kustomize-controller (a Kustomization waits for every `dependsOn` to be Ready, which
  with `wait: true` means its objects are ready). The Kustomizations replayed are the ones
  fabricgen writes to `rendered/<site>/_delivery/flux/`.

Admission and controller preconditions
- harvester/network-controller-harvester `pkg/webhook/nad/validator.go` (a NAD that is not
  `kube-ovn` must name a bridge, as `pkg/webhook/nad/mutator.go` `patchMTU` also requires; a
  kube-ovn NAD's provider is `<name>.<namespace>.<...>`),
  `pkg/webhook/subnet/validator.go` (the provider has three dot-separated parts and names an
  existing NAD labelled OverlayNetwork, used by no other Subnet; a custom Vpc must exist) and
  `pkg/utils/nad.go` (`GetNadNameFromProvider`). Only on `platform: harvester` zones.
- kubeovn/kube-ovn `pkg/webhook/subnet.go` and `vpc.go` (a Vpc and a Subnet never share a
  name), `pkg/webhook/vpc_nat_gateway.go` (ConfigMaps `ovn-vpc-nat-config` and
  `ovn-vpc-nat-gw-config` with `enable-vpc-nat-gw: "true"`; a VpcNatGateway's Vpc and Subnet,
  `lanIp` inside it; an IptablesEIP's external Subnet, `v4ip` inside it; a SNAT or DNAT rule's
  IptablesEIP).
- Controllers that wait for another object: kube-ovn `pkg/controller/vlan.go` (a Vlan's
  ProviderNetwork), `pkg/controller/subnet.go` (a Subnet's Vlan), `pkg/controller/
  vpc_nat_gw_eip.go` (an IptablesEIP's gateway pod), and the kubeovn-operator (`ovn-ic-config`
  is read once IC is enabled by fabricgen's Configuration).
  The replay asks them to hold before the object is applied, as admission does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.pipeline import load
from support.fabrics import REPO

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
WAVE = "argocd.argoproj.io/sync-wave"
KUBE_SYSTEM = "kube-system"
NAT_GW_CONFIG = ("ConfigMap", KUBE_SYSTEM, "ovn-vpc-nat-gw-config")
EXTERNAL_NETWORK = "ovn-vpc-external-network"  # kube-ovn util.GetExternalNetwork's default

# gitops-engine pkg/sync/sync_tasks.go kindOrder: custom kinds (not listed) are 0, after all these.
KINDS = ["Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
         "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass",
         "PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole",
         "ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList",
         "RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod", "ReplicationController",
         "ReplicaSet", "Deployment", "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob",
         "IngressClass", "Ingress", "APIService"]
KIND_ORDER = {kind: i - len(KINDS) for i, kind in enumerate(KINDS)}

Identity = tuple[str, str, str]
Obj = dict[str, Any]


def ident(obj: Obj) -> Identity:
    meta = obj["metadata"]
    return obj["kind"], meta.get("namespace", ""), meta["name"]


def preinstalled() -> dict[Identity, Obj]:
    """What a cluster with Kube-OVN (and, on SUSE Virtualization, its operator) already holds."""
    objs: list[Obj] = [
        {"kind": "Vpc", "metadata": {"name": "ovn-cluster"}, "spec": {}},
        {"kind": "Subnet", "metadata": {"name": "ovn-default"}, "spec": {"provider": "ovn", "vpc": "ovn-cluster"}},
        {"kind": "Subnet", "metadata": {"name": "join"}, "spec": {"provider": "ovn", "vpc": "ovn-cluster"}},
        {"kind": "ConfigMap", "metadata": {"name": "ovn-vpc-nat-config", "namespace": KUBE_SYSTEM}, "data": {}},
        {"kind": "Configuration", "metadata": {"name": "kubeovn", "namespace": KUBE_SYSTEM}, "spec": {}},
        *({"kind": "Namespace", "metadata": {"name": n}} for n in ("default", KUBE_SYSTEM, "ovn-kubernetes")),
    ]
    return {ident(o): o for o in objs}


@dataclass
class Cluster:
    platform: str  # harvester, kube-ovn, or kubernetes (OVN-Kubernetes: no Kube-OVN webhooks)
    live: dict[Identity, Obj] = field(default_factory=preinstalled)
    applied: set[Identity] = field(default_factory=set)  # what fabricgen's sync applied

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        return self.live.get((kind, namespace, name))

    def apply(self, obj: Obj) -> None:
        self.live[ident(obj)] = obj
        self.applied.add(ident(obj))


def _nad_of(provider: str) -> tuple[str, str] | None:
    """harvester pkg/utils/nad.go GetNadNameFromProvider: fewer than three parts is an error."""
    parts = provider.split(".")
    return (parts[0], parts[1]) if len(parts) >= 3 else None


def harvester_denies(obj: Obj, c: Cluster) -> str | None:
    kind, meta, spec = obj["kind"], obj["metadata"], obj.get("spec", {})
    if kind == "NetworkAttachmentDefinition":
        config = json.loads(spec["config"])
        if config.get("type") != "kube-ovn":
            if not config.get("bridge"):
                return "nad validator: not kube-ovn and no bridge name"
            return None
        nad = _nad_of(config.get("provider", ""))
        if nad is None or nad != (meta["name"], meta["namespace"]):
            return f"nad validator: invalid provider name {config.get('provider')!r}"
    if kind == "Subnet":
        nad = _nad_of(spec.get("provider", ""))
        if nad is None:
            return f"subnet validator: invalid provider length for provider {spec.get('provider')!r}"
        found = c.get("NetworkAttachmentDefinition", nad[1], nad[0])
        if found is None:
            return f"subnet validator: nad {nad[0]} not created in namespace {nad[1]}"
        if found["metadata"].get("labels", {}).get("network.harvesterhci.io/type") != "OverlayNetwork":
            return "subnet validator: network type of nad is not kubeovn"
        for other in c.live.values():
            if other["kind"] == "Subnet" and other["spec"].get("provider") == spec["provider"] \
                    and other["metadata"]["name"] != meta["name"]:
                return f"subnet validator: subnet {other['metadata']['name']} is using the provider already"
        if spec.get("vpc") and c.get("Vpc", "", spec["vpc"]) is None:
            return f"subnet validator: vpc {spec['vpc']} not created for subnet"
    return None


def _nat_configs(c: Cluster) -> str | None:
    if c.get("ConfigMap", KUBE_SYSTEM, "ovn-vpc-nat-config") is None:
        return "kube-ovn webhook: ConfigMap ovn-vpc-nat-config missing"
    gw_config = c.get(*NAT_GW_CONFIG)
    if gw_config is None or gw_config.get("data", {}).get("enable-vpc-nat-gw") != "true":
        return "kube-ovn webhook: ConfigMap ovn-vpc-nat-gw-config not configured"
    return None


def _in(cidr: str, address: str) -> bool:
    return IPv4Address(address) in IPv4Network(cidr)


def kube_ovn_denies(obj: Obj, c: Cluster) -> str | None:
    kind, meta, spec = obj["kind"], obj["metadata"], obj.get("spec", {})
    name = meta["name"]
    if kind == "Subnet" and c.get("Vpc", "", name) is not None:
        return "kube-ovn webhook: vpc and subnet cannot have the same name"
    if kind == "Vpc" and c.get("Subnet", "", name) is not None and name != "ovn-cluster":
        return "kube-ovn webhook: vpc and subnet cannot have the same name"
    if kind in ("VpcNatGateway", "IptablesEIP", "IptablesSnatRule", "IptablesDnatRule"):
        denied = _nat_configs(c)
        if denied:
            return denied
    if kind == "VpcNatGateway":
        if c.get("Vpc", "", spec["vpc"]) is None:
            return f"kube-ovn webhook: vpc {spec['vpc']} not found"
        subnet = c.get("Subnet", "", spec["subnet"])
        if subnet is None:
            return f"kube-ovn webhook: subnet {spec['subnet']} not found"
        if not _in(subnet["spec"]["cidrBlock"], spec["lanIp"]):
            return "kube-ovn webhook: lanIP not in the subnet"
    if kind == "IptablesEIP":
        subnet = c.get("Subnet", "", spec.get("externalSubnet") or EXTERNAL_NETWORK)
        if not spec.get("natGwDp"):
            return "kube-ovn webhook: natGwDp cannot be empty"
        if subnet is None:
            return f"kube-ovn webhook: external subnet {spec.get('externalSubnet')} not found"
        if spec.get("v4ip") and not _in(subnet["spec"]["cidrBlock"], spec["v4ip"]):
            return "kube-ovn webhook: v4ip not in the external subnet"
    if kind in ("IptablesSnatRule", "IptablesDnatRule") and c.get("IptablesEIP", "", spec["eip"]) is None:
        return f"kube-ovn webhook: eip {spec['eip']} not found"
    return None


def controller_waits(obj: Obj, c: Cluster) -> str | None:
    kind, meta, spec = obj["kind"], obj["metadata"], obj.get("spec", {})
    if kind == "Vlan" and c.get("ProviderNetwork", "", spec["provider"]) is None:
        return f"vlan controller: provider network {spec['provider']} not found"
    if kind == "Subnet" and spec.get("vlan") and c.get("Vlan", "", spec["vlan"]) is None:
        return f"subnet controller: vlan {spec['vlan']} not found"
    if kind == "IptablesEIP" and c.get("VpcNatGateway", "", spec["natGwDp"]) is None:
        return f"eip controller: gateway {spec['natGwDp']} not found"
    if kind == "ConfigMap" and meta["name"] == "ovn-ic-config" \
            and ("Configuration", KUBE_SYSTEM, "kubeovn") not in c.applied:
        return "kubeovn-operator: IC is not enabled yet (fabricgen's Configuration not applied)"
    return None


def namespace_lifecycle(obj: Obj, c: Cluster) -> str | None:
    """The API server admits no object into a namespace that does not exist."""
    ns = obj["metadata"].get("namespace")
    if ns and c.get("Namespace", "", ns) is None:
        return f"namespaces {ns!r} not found"
    return None


def denies(obj: Obj, c: Cluster) -> str | None:
    checks: list[Callable[[Obj, Cluster], str | None]] = [namespace_lifecycle, controller_waits]
    if c.platform in ("harvester", "kube-ovn"):
        checks.append(kube_ovn_denies)
    if c.platform == "harvester":
        checks.append(harvester_denies)
    for check in checks:
        reason = check(obj, c)
        if reason:
            return reason
    return None


def label(obj: Obj) -> str:
    return f"{obj['kind']} {obj['metadata']['name']}"


def replay_argocd(objects: list[Obj], platform: str, wave: Callable[[Obj], int] | None = None) -> list[str]:
    """Failures of one Application's first sync (empty: it converges first time)."""
    wave_of = wave or (lambda o: int(o["metadata"]["annotations"].get(WAVE, "0")))
    tasks = sorted(objects, key=lambda o: (wave_of(o), KIND_ORDER.get(o["kind"], 0), o["metadata"]["name"]))
    cluster = Cluster(platform)
    failures: list[str] = []
    runs: list[list[Obj]] = []
    for task in tasks:  # one wave at a time, each run of one kind at once
        if runs and wave_of(runs[-1][0]) == wave_of(task) and runs[-1][0]["kind"] == task["kind"]:
            runs[-1].append(task)
        else:
            runs.append([task])
    for run in runs:
        found = [(o, denies(o, cluster)) for o in run]
        failures += [f"{label(o)}: {why}" for o, why in found if why]
        for obj, _why in found:
            cluster.apply(obj)  # a retry would apply it later; the first sync has failed anyway
    return failures


def replay_flux(kustomizations: list[list[Obj]], platform: str) -> list[str]:
    """Failures of Kustomizations (in dependsOn order, each a list of objects) on one cluster."""
    cluster = Cluster(platform)
    failures: list[str] = []
    for objects in kustomizations:
        # ApplyAllStaged: Namespaces (and CRDs, ClusterRoles) are applied and waited for first.
        first = [o for o in objects if o["kind"] == "Namespace"]
        rest = [o for o in objects if o["kind"] != "Namespace"]
        for group in (first, rest):
            found = [(o, denies(o, cluster)) for o in group]  # the dry run: all before any apply
            denied = [f"{label(o)}: {why}" for o, why in found if why]
            if denied:
                return failures + denied  # nothing more is applied, and its dependents never start
            for obj in group:
                cluster.apply(obj)
    return failures


# ---------------------------------------------------------------------------------------------
# The rendered samples


def load_stream(text: str) -> list[Obj]:
    return [d for d in yaml.load_all(text, Loader=LOADER) if d is not None]


def built(directory: Path) -> list[Obj]:
    """The objects `kubectl kustomize directory` yields (kustomization order, stages included)."""
    kustomization = yaml.load((directory / "kustomization.yaml").read_text(encoding="utf-8"), Loader=LOADER)
    out: list[Obj] = []
    for name in kustomization["resources"]:
        path = directory / name
        out += built(path) if path.is_dir() else load_stream(path.read_text(encoding="utf-8"))
    return out


def platforms(fabric: Path) -> dict[str, str]:
    parsed, _source, _warnings = load(fabric)
    out = {z.name: z.platform for z in parsed.zones}
    for deployment in parsed.ovn_deployments:
        for consumer in deployment.consumers:
            if consumer.platform == "kubernetes":  # OVN-Kubernetes: a Kubernetes directory of its own
                out.setdefault(consumer.name, "kubernetes")
    return out


def clusters() -> list[tuple[str, Path, str]]:
    """(id, directory, platform) for every Kubernetes directory of the samples and golden cases."""
    roots = [(REPO / "sites", REPO / "rendered")]
    roots += [(case, case / "expected") for case in sorted((REPO / "tests" / "golden").iterdir())
              if (case / "fabric.yaml").is_file()]
    out = []
    for fabric_root, rendered in roots:
        fabrics = sorted(fabric_root.glob("*/fabric.yaml")) if fabric_root.name == "sites" \
            else [fabric_root / "fabric.yaml"]
        for fabric in fabrics:
            kinds = platforms(fabric)
            parsed, _s, _w = load(fabric)
            for directory in sorted((rendered / parsed.metadata.name).glob("*/kustomization.yaml")):
                name = directory.parent.name
                if name in kinds:
                    out.append((directory.parent.relative_to(REPO).as_posix(), directory.parent, kinds[name]))
    return out


CLUSTERS = clusters()


def test_every_sample_cluster_is_replayed() -> None:
    ids = {c[0] for c in CLUSTERS}
    assert {"rendered/lab/hq", "rendered/lab/ai", "rendered/lab/edge", "rendered/lab/dr", "rendered/nat/hq",
            "rendered/openstack-k8s/k8s-prod"} <= ids
    assert any(c[2] == "kube-ovn" for c in CLUSTERS)


@pytest.mark.parametrize(("directory", "platform"), [c[1:] for c in CLUSTERS], ids=[c[0] for c in CLUSTERS])
def test_argocd_first_sync_converges(directory: Path, platform: str) -> None:
    objects = built(directory)
    assert objects
    assert replay_argocd(objects, platform) == []


def flux_objects(site: str) -> list[Obj]:
    return load_stream((REPO / "rendered" / site / "_delivery" / "flux" / "kustomizations.yaml").read_text())


def dependency_order(kustomizations: Iterable[Obj]) -> list[Obj]:
    """kustomize-controller reconciles a Kustomization once every dependsOn is Ready."""
    pending = {k["metadata"]["name"]: k for k in kustomizations}
    ready: list[Obj] = []
    while pending:
        done = {k["metadata"]["name"] for k in ready}
        runnable = [k for k in pending.values()
                    if all(d["name"] in done for d in k["spec"].get("dependsOn", []))]
        assert runnable, f"Kustomizations that never start (cycle or unknown dependsOn): {sorted(pending)}"
        for k in runnable:
            ready.append(pending.pop(k["metadata"]["name"]))
    return ready


@pytest.mark.parametrize("site", ["lab", "nat", "openstack-k8s"])
def test_flux_first_reconciliation_converges(site: str) -> None:
    kinds = platforms(REPO / "sites" / site / "fabric.yaml")
    ordered = dependency_order(flux_objects(site))
    per_cluster: dict[str, list[list[Obj]]] = {}
    for k in ordered:
        path = REPO / k["spec"]["path"]
        cluster = path.relative_to(REPO / "rendered" / site).parts[0]
        if cluster.startswith("_"):
            continue  # the delivery directory itself
        per_cluster.setdefault(cluster, []).append(built(path))
    assert set(per_cluster) == set(kinds)
    for cluster, stages in per_cluster.items():
        assert replay_flux(stages, kinds[cluster]) == [], cluster
        # Every object of the cluster is applied by exactly one of its Kustomizations.
        assert sorted(map(ident, (o for s in stages for o in s))) == sorted(map(ident, built(
            REPO / "rendered" / site / cluster)))


# ---------------------------------------------------------------------------------------------
# The replay fails on the order fabricgen wrote before the dependency model


def old_waves(objects: list[Obj]) -> Callable[[Obj], int]:
    """The sync waves of the previous `render/metadata.py` (kind by kind, file by file)."""
    backbone_nads = {_nad_of(o["spec"]["provider"]) for o in objects if o["kind"] == "Subnet"
                     and o["spec"].get("vpc") == "ovn-cluster" and o["metadata"]["name"] != EXTERNAL_NETWORK}

    def wave(obj: Obj) -> int:
        kind, meta, spec = obj["kind"], obj["metadata"], obj.get("spec", {})
        name = meta["name"]
        if kind in ("Deployment", "Job", "Namespace") or name == "fabricgen-ic-db-setup":
            return -1
        if kind == "Configuration":
            return 0
        if name == "ovn-ic-config":
            return 1
        if name in (EXTERNAL_NETWORK, "ovn-vpc-nat-gw-config") or kind in ("ProviderNetwork", "Vlan"):
            return 5
        if kind == "Vpc" and name == "ovn-cluster":
            return 3
        if kind == "Subnet" and spec.get("vpc") == "ovn-cluster":
            return 2
        if kind == "NetworkAttachmentDefinition" and (name, meta["namespace"]) in backbone_nads:
            return 2
        # kinds the old waves never held (the watch's RBAC, rendered later) in wave 0, where Argo
        # CD puts an object without the annotation
        return {"Vpc": 4, "NetworkAttachmentDefinition": 4, "Subnet": 4, "VpcNatGateway": 6, "IptablesEIP": 7,
                "IptablesSnatRule": 8, "IptablesDnatRule": 8}.get(kind, 0)

    return wave


def test_old_argocd_waves_fail_the_first_sync() -> None:
    """Both waves held a Subnet and its NAD, and Argo CD applies custom kinds by name."""
    objects = built(REPO / "rendered" / "lab" / "hq")
    lab = replay_argocd(objects, "harvester", old_waves(objects))
    assert "Subnet backbone-hq: subnet validator: nad vsw-backbone not created in namespace default" in lab
    assert "Subnet prod-app: subnet validator: vpc vpc-prod not created for subnet" in lab
    objects = built(REPO / "rendered" / "nat" / "hq")
    nat = replay_argocd(objects, "harvester", old_waves(objects))
    assert "Subnet prod-app: subnet validator: nad prod-app-net not created in namespace prod" in nat
    # The same objects in fabricgen's waves converge.
    assert replay_argocd(objects, "harvester") == []


def test_old_flux_layout_fails_the_first_reconciliation() -> None:
    """One Kustomization per zone: the dry run sees the Subnet before its NAD exists."""
    for site in ("lab", "nat"):
        failures = replay_flux([built(REPO / "rendered" / site / "hq")], "harvester")
        assert any(f.startswith("Subnet backbone-hq: subnet validator: nad") for f in failures), failures


def test_without_its_namespace_the_whole_first_stage_fails() -> None:
    """A NAD in namespace prod and nothing that creates prod: Flux's dry run of stage 0 fails,
    which would hold interconnection too."""
    stage = built(REPO / "rendered" / "nat" / "hq" / "stage-0")
    assert ("Namespace", "", "prod") in {ident(o) for o in stage}
    without = [o for o in stage if o["kind"] != "Namespace"]
    failures = replay_flux([without], "harvester")
    assert "NetworkAttachmentDefinition prod-app-net: namespaces 'prod' not found" in failures
    assert replay_flux([stage], "harvester") == []


def test_macvlan_external_network_is_denied_by_suse_virtualization() -> None:
    """The Kube-OVN form of the external network passes Kube-OVN, not SUSE Virtualization's webhooks."""
    zone = REPO / "tests" / "golden" / "nat-gateway-kube-ovn" / "expected" / "natgw-kube-ovn" / "dc1"
    objects = built(zone)
    assert replay_argocd(objects, "kube-ovn") == []
    failures = replay_argocd(objects, "harvester")
    assert f"NetworkAttachmentDefinition {EXTERNAL_NETWORK}: nad validator: not kube-ovn and no bridge name" \
        in failures
    assert any(f.startswith(f"Subnet {EXTERNAL_NETWORK}: subnet validator: invalid provider length")
               for f in failures)


# ---------------------------------------------------------------------------------------------
# The dependency model itself


def test_stages_of_the_kinds() -> None:
    """The table in docs/delivery.md, section "Apply order and how GitOps tools treat each object"."""
    from fabricgen.plan.apply_order import role_stage

    assert {kind: role_stage(kind, None) for kind in ("Configuration", "NetworkAttachmentDefinition", "Vpc",
                                                      "ProviderNetwork", "Deployment", "Service", "Endpoints")} \
        == dict.fromkeys(("Configuration", "NetworkAttachmentDefinition", "Vpc", "ProviderNetwork", "Deployment",
                          "Service", "Endpoints"), 0)
    assert role_stage("ConfigMap", "ovn-ic-config") == role_stage("ConfigMap", "ovn-vpc-nat-gw-config") == 1
    assert role_stage("Vlan", None) == 1
    assert role_stage("Subnet", None) == role_stage("Vpc", "ovn-cluster") == 2
    assert role_stage("Namespace", None) == 0  # applied first within stage 0 by both engines
    assert [role_stage(k, None) for k in ("VpcNatGateway", "IptablesEIP", "IptablesSnatRule",
                                          "IptablesDnatRule")] == [3, 4, 5, 5]


def test_render_refuses_an_order_that_breaks_a_dependency() -> None:
    from fabricgen.pipeline import check_order
    from fabricgen.render.artifacts import Manifest

    zone = built(REPO / "rendered" / "lab" / "hq")
    flat = [{**o, "metadata": {**o["metadata"], "annotations": {**o["metadata"]["annotations"], WAVE: "0"}}}
            for o in zone]
    with pytest.raises(ValueError, match="needs"):
        check_order("hq", (Manifest("hq", "stage-0/all.yaml", tuple(flat)),))
    check_order("hq", (Manifest("hq", "stage-0/all.yaml", tuple(zone)),))


def test_an_unknown_kind_is_refused() -> None:
    from fabricgen.plan.apply_order import stage_of

    with pytest.raises(ValueError, match="does not know"):
        stage_of({"kind": "Secret", "metadata": {"name": "x"}})
