"""For the zone hosting the IC database: the IC server and its configuration.

- Deployment `kube-system/ovn-ic-server` with `interconnection.transitSwitch.count`
  transit switches (`TS_NUM`, 1 by default): Vpc static routes cannot express ECMP, so
  explicit routing goes over `ts`; a fabric whose live IC database has more keeps them all, as
  the IC server deletes every switch beyond `TS_NUM`.
  Replicas are the raft members, pinned to their nodes by hostname, with
  `NODE_IPS` in member order (the first member bootstraps the raft cluster). Its
  privileges are upstream's (kubeovn/kube-ovn `dist/images/install-ic-server.sh`): the
  server runs as 65534 with NET_BIND_SERVICE and SYS_NICE after a privileged init
  container hands it the host paths, under the runtime's default seccomp profile.
- `configure-ic-db.sh`: sets (or clears) `options:vxlan_mode` on the IC northbound
  database, idempotently. Operators run it by hand; in the Deployment it runs as the
  sidecar `ic-db-setup` (`--every`), from ConfigMap `fabricgen-ic-db-setup`, and its
  readiness probe (`--check`) holds every IC server pod unready until the database has
  the setting. So the Deployment is available only once `vxlan_mode` is set, which is what
  every zone's join waits for (Argo CD: the IC database zone's Application before the
  others; Flux: the other zones' `ovn-ic-config` stage `dependsOn` this stage); a database
  rebuilt from scratch is configured again within one period, without a person; and a
  changed script applies without restarting the database, since each round reads the
  mounted ConfigMap afresh (the kubelet refreshes it in place).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from fabricgen.model.interconnect import Database, stream
from fabricgen.plan.zones import Plan, ZonePlan
from fabricgen.render import host_tree
from fabricgen.render import metadata as md
from fabricgen.render.artifacts import Artifact, KubeObject, Manifest, TextFile
from fabricgen.render.header import header
from fabricgen.render.templating import render_template

SCRIPT = "configure-ic-db.sh"
SCRIPT_CONFIGMAP = "fabricgen-ic-db-setup"
SIDECAR = "ic-db-setup"
SCRIPT_DIR = "/fabricgen"
PERIOD = 10  # seconds between the sidecar's checks
HOST_PATHS = (("host-run-ovn", "/var/run/ovn"), ("host-config-ovn", "/etc/ovn"), ("host-log-ovn", "/var/log/ovn"))


def nb_remote(db: Database) -> str:
    """The IC northbound at its members (the sidecar runs beside one of them)."""
    return ",".join(stream("tcp", m.address, db.nb_port) for m in db.members)


def script(plan: Plan) -> str:
    db = plan.interconnection.database
    return render_template(
        "configure-ic-db.sh.j2",
        header=header(plan),
        site=plan.site,
        nb_remote=nb_remote(db),
        vxlan_mode=plan.interconnection.vxlan_mode,
        timeout=60,
        check_timeout=5,
    )


def _env(name: str, value: str) -> dict[str, str]:
    return {"name": name, "value": value}


def _field_env(name: str, path: str) -> dict[str, object]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _host_path(name: str, path: str) -> dict[str, object]:
    return {"name": name, "hostPath": {"path": path}}


def _mounts(names: tuple[tuple[str, str], ...]) -> list[dict[str, object]]:
    return [{"mountPath": path, "name": name} for name, path in names]


def sidecar(plan: Plan) -> dict[str, object]:
    """Keeps the IC database configured and the pod unready until it is."""
    command = ["/bin/sh", f"{SCRIPT_DIR}/{SCRIPT}"]
    return {
        "name": SIDECAR,
        "image": plan.interconnection.ic_image,
        "imagePullPolicy": "IfNotPresent",
        "command": [*command, "--every", str(PERIOD)],
        "securityContext": {"privileged": False, "runAsUser": 65534, "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]}},
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"cpu": "200m", "memory": "128Mi"}},
        "volumeMounts": [{"mountPath": SCRIPT_DIR, "name": SIDECAR, "readOnly": True}],
        "readinessProbe": {"exec": {"command": [*command, "--check"]}, "periodSeconds": PERIOD,
                           "timeoutSeconds": 10},
    }


def ic_server(plan: Plan) -> KubeObject:
    db = plan.interconnection.database
    image = plan.interconnection.ic_image
    labels = {"app": "ovn-ic-server", "component": "network", "type": "infra"}
    probe_cmd = {"exec": {"command": ["bash", "/kube-ovn/ovn-ic-healthcheck.sh"]}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": md.metadata("ovn-ic-server", "kube-system", plan.source_name),
        "spec": {
            "replicas": len(db.members),
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
            "selector": {"matchLabels": {"app": "ovn-ic-server"}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "tolerations": [
                        {"effect": "NoSchedule", "operator": "Exists"},
                        {"effect": "NoExecute", "operator": "Exists"},
                        {"key": "CriticalAddonsOnly", "operator": "Exists"},
                    ],
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {
                                                "key": "kubernetes.io/hostname",
                                                "operator": "In",
                                                "values": [m.node for m in db.members],
                                            }
                                        ]
                                    }
                                ]
                            }
                        },
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "labelSelector": {"matchLabels": {"app": "ovn-ic-server"}},
                                    "topologyKey": "kubernetes.io/hostname",
                                }
                            ]
                        },
                    },
                    "priorityClassName": "system-cluster-critical",
                    "serviceAccountName": "ovn",
                    "automountServiceAccountToken": True,
                    "hostNetwork": True,
                    "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                    "initContainers": [
                        {
                            "name": "hostpath-init",
                            "image": image,
                            "imagePullPolicy": "IfNotPresent",
                            "command": ["sh", "-c", "chown -R nobody: " + " ".join(p for _n, p in HOST_PATHS)],
                            "securityContext": {"allowPrivilegeEscalation": True, "capabilities": {"drop": ["ALL"]},
                                                "privileged": True, "runAsUser": 0},
                            "volumeMounts": _mounts(HOST_PATHS),
                        }
                    ],
                    "containers": [
                        {
                            "name": "ovn-ic-server",
                            "image": image,
                            "imagePullPolicy": "IfNotPresent",
                            "command": ["/kube-ovn/start-ic-db.sh"],
                            "securityContext": {"privileged": False, "runAsUser": 65534,
                                                "capabilities": {"add": ["NET_BIND_SERVICE", "SYS_NICE"]}},
                            "env": [
                                _env("ENABLE_SSL", "false"),
                                _env("TS_NUM", str(plan.interconnection.transit_switch.count)),
                                _env("NODE_IPS", ",".join(str(m.address) for m in db.members)),
                                _field_env("POD_IP", "status.podIP"),
                                _env("OVN_LEADER_PROBE_INTERVAL", str(db.leader_probe_interval)),
                                _field_env("POD_NAME", "metadata.name"),
                                _field_env("POD_NAMESPACE", "metadata.namespace"),
                                _field_env("POD_IPS", "status.podIPs"),
                            ],
                            "resources": {
                                "requests": {"cpu": "300m", "memory": "200Mi"},
                                "limits": {"cpu": "3", "memory": "1Gi"},
                            },
                            "volumeMounts": _mounts(
                                (*HOST_PATHS, ("localtime", "/etc/localtime"), ("kube-ovn-tls", "/var/run/tls"))),
                            "readinessProbe": {**probe_cmd, "periodSeconds": 15, "timeoutSeconds": 45},
                            "livenessProbe": {
                                **probe_cmd,
                                "initialDelaySeconds": 30,
                                "periodSeconds": 15,
                                "failureThreshold": 5,
                                "timeoutSeconds": 4,
                            },
                        },
                        sidecar(plan),
                    ],
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "volumes": [
                        _host_path("host-run-ovn", "/run/ovn"),
                        _host_path("host-config-ovn", "/etc/origin/ovn"),
                        _host_path("host-log-ovn", "/var/log/ovn"),
                        _host_path("localtime", "/etc/localtime"),
                        {
                            "name": "kube-ovn-tls",
                            "secret": {"optional": True, "secretName": "kube-ovn-tls"},
                        },
                        {"name": SIDECAR, "configMap": {"name": SCRIPT_CONFIGMAP}},
                    ],
                },
            },
        },
    }


def script_configmap(plan: Plan, text: str) -> KubeObject:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": md.metadata(SCRIPT_CONFIGMAP, "kube-system", plan.source_name, md.NO_SUBSTITUTE),
        "data": {SCRIPT: text},
    }


def render_zone(plan: Plan, zone: ZonePlan) -> list[Artifact]:
    text = script(plan)
    objects = (ic_server(plan), script_configmap(plan, text))
    return [
        Manifest(zone.name, "ic-server.yaml", objects),
        TextFile(PurePosixPath(zone.name, "ic-db", SCRIPT), text, executable=True),
    ]


def render(plan: Plan) -> list[Artifact]:
    """The IC server and its script in the zone hosting the IC database."""
    return [a for zone in plan.zones if zone.hosts_ic_database for a in render_zone(plan, zone)]


def render_external(plan: Plan) -> list[Artifact]:
    """For a database that runs outside every zone and needs `vxlan_mode`: the script alone, for
    its operator to run before the first zone joins (`_host/_ic-db/`, FG113). Text only."""
    ic = plan.fabric.interconnection
    if ic is None or ic.database.zone is not None or not ic.vxlan_mode or not plan.zones:
        return []
    return [TextFile(host_tree.ic_database_dir() / SCRIPT, script(plan), executable=True)]
