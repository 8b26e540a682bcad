"""The fabric's watch as workloads: `fabricgen status --serve` running all the time.

With `watch` in the fabric:

- every zone gets `watch-rbac.yaml`: a ServiceAccount `fabricgen-watch` in `kube-system` and
  what it may do, read-only, and no more than `fabricgen status` reads
  (`fabricgen.observe.read_commands`, `fabricgen.observe.live_fabric`):
  - a ClusterRole: `list` (and `get`) of the kinds status lists whole in every namespace, the
    kinds `fabricgen import` reads and Nodes; `get` of the kinds it reads by name in this zone
    (the zone's rendered objects, `ovn-ic-config`, RKE2's Canal HelmChart), and of no other;
    never Secrets, never a write;
  - a Role in `kube-system`: `get` and `list` of Pods (the ovn-central and ovn-ic-server pods,
    by label) and `get` and `create` of `pods/exec`, which `kubectl exec` needs to run the OVN tools
    inside them (`kubectl ko`'s way). Exec cannot be narrowed to those pods: their names are
    generated, and RBAC matches names, not labels.
  The exporter reads each zone as that ServiceAccount, through a kubeconfig you make from
  tokens (`kubectl create token`) and keep in a Secret: fabricgen never writes a token.
- `_monitoring/watch.yaml`, the exporter itself: a ConfigMap holding the fabric (the
  validated model as JSON, which is YAML, every value as validated: comments and the file's
  layout are left out), a Deployment of one replica running the image's `fabricgen status
  --serve 0.0.0.0:9477 --interval N /etc/fabricgen/fabric/fabric.json`, non-root, read-only root
  filesystem, no service account token mounted, bounded CPU and memory, and a Service
  `fabricgen-watch` on port `metrics`: in `kube-system` of the cluster of the zone `watch.zone`
  names, else in namespace `fabricgen-watch` (with its Namespace) of the cluster Argo CD or Flux
  runs in. It is never delivered with a zone: Argo CD's sync waves and Flux's `wait` hold a
  zone's later objects until every earlier one is healthy, and an exporter whose image cannot
  be pulled or whose kubeconfig Secret is not there yet must never hold back the network;
- `_monitoring/servicemonitor.yaml`: a ServiceMonitor for the Prometheus operator, next to the
  PrometheusRule, applied with it where Prometheus runs (never delivered into a zone: a zone
  without the operator's CRDs would fail its sync on it).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from fabricgen.model.names import KUBE_SYSTEM
from fabricgen.model.watch import Watch
from fabricgen.plan.zones import Plan, ZonePlan
from fabricgen.render import metadata as md
from fabricgen.render import namespaces
from fabricgen.render.alerts import DIRECTORY
from fabricgen.render.artifacts import Artifact, KubeObject, Manifest, TextFile
from fabricgen.render.header import header
from fabricgen.serialise import manifest_yaml

NAME = "fabricgen-watch"
OWN_NAMESPACE = "fabricgen-watch"  # where the exporter runs outside the zones
PORT = 9477  # fabricgen's exporter port
FABRIC_KEY = "fabric.json"
FABRIC_DIR = "/etc/fabricgen/fabric"
KUBECONFIG_DIR = "/etc/fabricgen/kubeconfig"
USER = 65532  # the image's user (Containerfile): no root, no name needed
RBAC_FILE = "watch-rbac.yaml"
EXPORTER_FILE = "watch.yaml"
SERVICE_MONITOR_FILE = "servicemonitor.yaml"
LABELS = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/part-of": "fabricgen"}

# What `fabricgen status` lists whole in every namespace (`live_fabric.LISTED`), by API group.
LISTED: dict[str, tuple[str, ...]] = {
    "kubeovn.io": ("configurations", "vpcs", "subnets", "provider-networks", "vlans", "vpc-nat-gateways",
                   "iptables-eips", "iptables-snat-rules", "iptables-dnat-rules"),
    "k8s.cni.cncf.io": ("network-attachment-definitions",),
    "": ("nodes",),
}
# What it reads by name in every zone: `ovn-ic-config`, `ovn-vpc-nat-gw-config` and the IC
# server's Deployment (`live_fabric.NAMED`), RKE2's Canal HelmChart (`CANAL`), and these objects
# themselves.
ALWAYS_NAMED: dict[str, tuple[str, ...]] = {
    "": ("configmaps", "serviceaccounts"),
    "apps": ("deployments",),
    "rbac.authorization.k8s.io": ("clusterroles", "clusterrolebindings", "roles", "rolebindings"),
    "helm.cattle.io": ("helmcharts",),
}


def named_reads(plan: Plan, zone: ZonePlan) -> dict[str, tuple[str, ...]]:
    """Per API group, the resources status gets by name in `zone`: what every zone has, and the
    kinds this zone's other objects add (its Namespaces). A test holds them against status's
    requests."""
    out = {group: list(resources) for group, resources in ALWAYS_NAMED.items()}
    if namespaces.names(zone):
        out[""].append("namespaces")
    return {group: tuple(resources) for group, resources in out.items()}


def _meta(plan: Plan, name: str, namespace: str | None) -> dict[str, Any]:
    return md.metadata(name, namespace, plan.source_name, labels=dict(LABELS))


def rbac(plan: Plan, zone: ZonePlan) -> tuple[KubeObject, ...]:
    """The ServiceAccount the exporter reads a zone as, and its read-only rights there."""
    reads = [{"apiGroups": [group], "resources": list(resources), "verbs": ["get", "list"]}
             for group, resources in LISTED.items()]
    reads += [{"apiGroups": [group], "resources": list(resources), "verbs": ["get"]}
              for group, resources in named_reads(plan, zone).items()]
    pods = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
            # kubectl 1.30 and later exec over WebSockets, an HTTP GET authorized as `get`; SPDY
            # (older kubectl, the fallback) POSTs, `create`; Kubernetes 1.35's
            # AuthorizePodWebsocketUpgradeCreatePermission asks both (KEP-4006, kubernetes #133515)
            {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["get", "create"]}]
    rbac_api = "rbac.authorization.k8s.io/v1"

    def role(kind: str, namespace: str | None, rules: list[dict[str, Any]]) -> tuple[KubeObject, KubeObject]:
        """A role and its binding to the ServiceAccount."""
        binding = {"apiVersion": rbac_api, "kind": f"{kind}Binding", "metadata": _meta(plan, NAME, namespace),
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": NAME},
                   "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": KUBE_SYSTEM}]}
        return {"apiVersion": rbac_api, "kind": kind, "metadata": _meta(plan, NAME, namespace), "rules": rules}, binding

    return (
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(plan, NAME, KUBE_SYSTEM),
         "automountServiceAccountToken": False},
        *role("ClusterRole", None, reads),
        *role("Role", KUBE_SYSTEM, pods),
    )


def fabric_document(plan: Plan) -> str:
    """The fabric the exporter reads: the validated model as JSON (what was set, by its
    fabric.yaml names), which `fabricgen status` reads back to the same model."""
    data = plan.fabric.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def command(watch: Watch) -> list[str]:
    """The container's arguments, after the image's entry point `fabricgen`."""
    return ["status", "--serve", f"0.0.0.0:{PORT}", "--interval", str(watch.interval),
            f"{FABRIC_DIR}/{FABRIC_KEY}"]


def exporter(plan: Plan, watch: Watch, namespace: str) -> tuple[KubeObject, ...]:
    """The exporter's ConfigMap, Deployment and Service in `namespace`."""
    document = fabric_document(plan)
    digest = hashlib.sha256(document.encode()).hexdigest()
    container = {
        "name": "exporter",
        "image": watch.image,
        "args": command(watch),
        "env": [{"name": "KUBECONFIG", "value": f"{KUBECONFIG_DIR}/config"},
                {"name": "HOME", "value": "/tmp"}],  # kubectl's cache: the only place written
        "ports": [{"name": "metrics", "containerPort": PORT, "protocol": "TCP"}],
        # 503 until the first reading is complete (`status --serve`): ready once it is
        "readinessProbe": {"httpGet": {"path": "/metrics", "port": "metrics"}, "periodSeconds": 15,
                           "failureThreshold": 3},
        "livenessProbe": {"tcpSocket": {"port": "metrics"}, "periodSeconds": 30, "failureThreshold": 4},
        "resources": {"requests": {"cpu": "50m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "runAsNonRoot": True, "runAsUser": USER, "runAsGroup": USER,
                            "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "fabric", "mountPath": FABRIC_DIR, "readOnly": True},
                         {"name": "kubeconfig", "mountPath": KUBECONFIG_DIR, "readOnly": True},
                         {"name": "tmp", "mountPath": "/tmp"}],
    }
    template = {
        "metadata": {"labels": dict(LABELS), "annotations": {"fabricgen.io/fabric-sha256": digest}},
        "spec": {
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "securityContext": {"runAsNonRoot": True, "runAsUser": USER, "runAsGroup": USER, "fsGroup": USER,
                                "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [container],
            "volumes": [{"name": "fabric", "configMap": {"name": NAME}},
                        {"name": "kubeconfig", "secret": {"secretName": watch.kubeconfig_secret}},
                        {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}],
        },
    }
    return (
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(plan, NAME, namespace),
         "data": {FABRIC_KEY: document}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(plan, NAME, namespace),
         "spec": {"replicas": 1, "strategy": {"type": "Recreate"},  # one reader at a time
                  "selector": {"matchLabels": dict(LABELS)}, "template": template}},
        {"apiVersion": "v1", "kind": "Service", "metadata": _meta(plan, NAME, namespace),
         "spec": {"selector": dict(LABELS),
                  "ports": [{"name": "metrics", "port": PORT, "targetPort": "metrics", "protocol": "TCP"}]}},
    )


def service_monitor(plan: Plan, namespace: str) -> KubeObject:
    """The Prometheus operator's scrape of the exporter (monitoring.coreos.com/v1), labelled as
    the PrometheusRule is, for the same selectors."""
    meta = _meta(plan, NAME, namespace)
    meta["labels"]["release"] = "rancher-monitoring"
    return {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": meta,
            "spec": {"selector": {"matchLabels": dict(LABELS)}, "namespaceSelector": {"matchNames": [namespace]},
                     "endpoints": [{"port": "metrics", "path": "/metrics", "interval": "30s",
                                    "scrapeTimeout": "10s"}]}}


def namespace_of(watch: Watch) -> str:
    return KUBE_SYSTEM if watch.zone is not None else OWN_NAMESPACE


def render(plan: Plan) -> list[Artifact]:
    """The Kubernetes objects delivered into the zones: the watch's RBAC, in every zone."""
    if plan.fabric.watch is None:
        return []
    return [Manifest(zone.name, RBAC_FILE, rbac(plan, zone)) for zone in plan.zones]


def render_monitoring(plan: Plan) -> list[Artifact]:
    """What is applied where Prometheus and the exporter run, never with a zone's rollout."""
    watch = plan.fabric.watch
    if watch is None or not plan.zones:
        return []
    namespace = namespace_of(watch)
    objects = exporter(plan, watch, namespace)
    if watch.zone is None:
        objects = ({"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(plan, OWN_NAMESPACE, None)},
                   *objects)
    return [TextFile(DIRECTORY / SERVICE_MONITOR_FILE,
                     header(plan) + "---\n" + manifest_yaml.dump(service_monitor(plan, namespace))),
            TextFile(DIRECTORY / EXPORTER_FILE, header(plan) + "".join("---\n" + manifest_yaml.dump(obj)
                                                                         for obj in objects))]
