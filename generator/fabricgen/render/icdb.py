"""For the zone hosting the IC database: the IC server and its configuration.

- Deployment `kube-system/ovn-ic-server` with one transit switch (`TS_NUM=1`):
  Vpc static routes cannot express ECMP, so explicit routing wants exactly `ts`.
  Replicas are the raft members, pinned to their nodes by hostname, with
  `NODE_IPS` in member order (the first member bootstraps the raft cluster).
- `configure-ic-db.sh`: sets (or clears) `options:vxlan_mode` on the IC
  northbound database, idempotently. Operators run it by hand; GitOps runs the same
  script from a ConfigMap in a Job that Argo CD re-runs on every sync (hook) and
  Flux recreates when it changes (`force`).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from fabricgen.model.interconnect import Database
from fabricgen.plan.zones import Plan, ZonePlan
from fabricgen.render import metadata as md
from fabricgen.render.artifacts import Artifact, KubeObject, Manifest, TextFile
from fabricgen.render.header import header
from fabricgen.render.templating import render_template

SCRIPT = "configure-ic-db.sh"
SCRIPT_CONFIGMAP = "fabricgen-ic-db-setup"
TS_NUM = 1

JOB_HOOK = {
    "argocd.argoproj.io/hook": "Sync",
    "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation",
    "kustomize.toolkit.fluxcd.io/force": "enabled",
}


def nb_remote(db: Database) -> str:
    return ",".join(f"tcp:{m.address}:{db.nb_port}" for m in db.members)


def script(plan: Plan) -> str:
    db = plan.interconnection.database
    return render_template(
        "configure-ic-db.sh.j2",
        header=header(plan),
        site=plan.site,
        nb_remote=nb_remote(db),
        vxlan_mode=plan.interconnection.vxlan_mode,
        timeout=60,
    )


def _env(name: str, value: str) -> dict[str, str]:
    return {"name": name, "value": value}


def _field_env(name: str, path: str) -> dict[str, object]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _host_path(name: str, path: str) -> dict[str, object]:
    return {"name": name, "hostPath": {"path": path}}


def ic_server(plan: Plan) -> KubeObject:
    db = plan.interconnection.database
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
                    "hostNetwork": True,
                    "containers": [
                        {
                            "name": "ovn-ic-server",
                            "image": db.image,
                            "imagePullPolicy": "IfNotPresent",
                            "command": ["/kube-ovn/start-ic-db.sh"],
                            "securityContext": {"capabilities": {"add": ["SYS_NICE"]}},
                            "env": [
                                _env("ENABLE_SSL", "false"),
                                _env("TS_NUM", str(TS_NUM)),
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
                            "volumeMounts": [
                                {"mountPath": "/var/run/ovn", "name": "host-run-ovn"},
                                {"mountPath": "/etc/ovn", "name": "host-config-ovn"},
                                {"mountPath": "/var/log/ovn", "name": "host-log-ovn"},
                                {"mountPath": "/etc/localtime", "name": "localtime"},
                                {"mountPath": "/var/run/tls", "name": "kube-ovn-tls"},
                            ],
                            "readinessProbe": {**probe_cmd, "periodSeconds": 15, "timeoutSeconds": 45},
                            "livenessProbe": {
                                **probe_cmd,
                                "initialDelaySeconds": 30,
                                "periodSeconds": 15,
                                "failureThreshold": 5,
                                "timeoutSeconds": 4,
                            },
                        }
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
                    ],
                },
            },
        },
    }


def setup_objects(plan: Plan, text: str) -> list[KubeObject]:
    db = plan.interconnection.database
    configmap: KubeObject = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": md.metadata(
            SCRIPT_CONFIGMAP, "kube-system", plan.source_name, md.NO_SUBSTITUTE
        ),
        "data": {SCRIPT: text},
    }
    job: KubeObject = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": md.metadata(
            "fabricgen-ic-db-setup", "kube-system", plan.source_name, JOB_HOOK
        ),
        "spec": {
            "backoffLimit": 20,
            "template": {
                "metadata": {"labels": {"app": "fabricgen-ic-db-setup"}},
                "spec": {
                    "restartPolicy": "OnFailure",
                    "hostNetwork": True,
                    "automountServiceAccountToken": False,
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [
                        {
                            "name": "configure",
                            "image": db.image,
                            "command": ["/bin/sh", f"/fabricgen/{SCRIPT}"],
                            "volumeMounts": [{"name": "script", "mountPath": "/fabricgen", "readOnly": True}],
                        }
                    ],
                    "volumes": [{"name": "script", "configMap": {"name": SCRIPT_CONFIGMAP}}],
                },
            },
        },
    }
    return [configmap, job]


def render_zone(plan: Plan, zone: ZonePlan) -> list[Artifact]:
    text = script(plan)
    objects = (ic_server(plan), *setup_objects(plan, text))
    return [
        Manifest(zone.name, "ic-server.yaml", objects),
        TextFile(PurePosixPath(zone.name, "ic-db", SCRIPT), text, executable=True),
    ]


def render(plan: Plan) -> list[Artifact]:
    return [a for zone in plan.zones if zone.hosts_ic_database for a in render_zone(plan, zone)]
