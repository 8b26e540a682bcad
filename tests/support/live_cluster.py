"""What a cluster returns for objects applied to it by hand, modelled on the upstream code that
changes them, so that a sample fabric's rendered objects can stand in for a hand-built fabric.

No API server can run here. Each change below is the one the named upstream code makes:

- the API server: `uid`, `resourceVersion`, `creationTimestamp`, `generation`, `managedFields`;
  `kubectl apply` leaves `kubectl.kubernetes.io/last-applied-configuration`; null values of
  fields without `nullable` are dropped (apiextensions structural defaulting).
- Kube-OVN v1.16.2: `pkg/controller/subnet.go` formatSubnet (provider `ovn`, VPC `ovn-cluster`,
  `gatewayType: distributed` there, `enableLb` from --enable-lb, `excludeIps` holding the gateway,
  sorted, `protocol` from the CIDR) writes the Subnet back from its Go struct
  (`pkg/apis/kubeovn/v1/subnet.go`: `default`, `gatewayNode`, `natOutgoing`, `private` without
  omitempty, zero values of the others dropped, `u2oFeatures` always written);
  `pkg/controller/vpc.go` formatVpc adds the finalizer and writes the Vpc back (`StaticRoute`'s
  `ecmpMode`, `bfdId`, `routeTable` without omitempty, empty lists dropped);
  `pkg/controller/vpc_nat_gw_eip.go` allocates an elastic IP's address and MAC into its spec and
  labels it; `vpc_nat_gateway.go` and `vpc_nat_gw_nat.go` label gateways and rules; every
  controller keeps a status.
- SUSE Virtualization's network controller (harvester/network-controller-harvester
  `pkg/controller/manager/nad/controller.go` ensureLabels): a kube-ovn NAD gets
  `network.harvesterhci.io/type: OverlayNetwork`, `clusternetwork: mgmt` and `ready`.
- the kubeovn-operator (harvester/kubeovn-operator `api/v1/configuration_types.go`): the
  Configuration holds every default of its CRD; `enableNATGateway` defaults to true.

fabricgen's own labels and annotations are removed first: a hand-built cluster has none.
"""

from __future__ import annotations

import copy
import hashlib
import json
from ipaddress import IPv4Network, ip_network
from typing import Any

BOOKKEEPING = ("fabricgen.io/", "argocd.argoproj.io/", "kustomize.toolkit.fluxcd.io/")


def _uid(*parts: str) -> str:
    h = hashlib.sha256("/".join(parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def hand_applied(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as an operator would have written it: without fabricgen's labels and annotations."""
    out = copy.deepcopy(obj)
    meta = out["metadata"]
    labels = {k: v for k, v in meta.pop("labels", {}).items() if k != "app.kubernetes.io/managed-by"}
    notes = {k: v for k, v in meta.pop("annotations", {}).items() if not k.startswith(BOOKKEEPING)}
    if labels:
        meta["labels"] = labels
    if notes:
        meta["annotations"] = notes
    return out


def server_metadata(obj: dict[str, Any], cluster: str, *, applied: bool = True, finalizer: str | None = None) -> None:
    meta = obj["metadata"]
    if applied:
        last = json.dumps({k: v for k, v in obj.items() if k != "status"}, separators=(",", ":"), sort_keys=True)
        meta.setdefault("annotations", {})["kubectl.kubernetes.io/last-applied-configuration"] = last + "\n"
    meta.update({"uid": _uid(cluster, obj["kind"], meta["name"]), "resourceVersion": "4711",
                 "creationTimestamp": "2025-08-20T11:40:00Z", "generation": 2,
                 "managedFields": [{"manager": "kubectl-client-side-apply", "operation": "Update",
                                    "apiVersion": obj["apiVersion"], "fieldsType": "FieldsV1", "fieldsV1": {}}]})
    if finalizer:
        meta["finalizers"] = [finalizer]


def _zero(value: Any) -> bool:
    return value is None or value is False or value == "" or (type(value) is int and value == 0) \
        or value == [] or value == {}


def _drop_zero(spec: dict[str, Any], keep: tuple[str, ...]) -> None:
    """What a Go struct with omitempty fields writes back: zero values of the other fields dropped."""
    for key in list(spec):
        if key not in keep and _zero(spec[key]):
            del spec[key]


def subnet(obj: dict[str, Any], *, enable_lb: bool = True) -> None:
    spec = obj["spec"]
    spec.setdefault("provider", "ovn")
    spec.setdefault("vpc", "ovn-cluster")
    if spec["vpc"] == "ovn-cluster" and obj["metadata"]["name"] != "join":
        spec.setdefault("gatewayType", "distributed")
    spec.setdefault("enableLb", enable_lb)
    gateways = str(spec["gateway"]).split(",")
    spec["excludeIps"] = sorted({*spec.get("excludeIps", []), *gateways})
    versions = {ip_network(c, strict=False).version for c in spec["cidrBlock"].split(",")}
    spec["protocol"] = "Dual" if versions == {4, 6} else "IPv6" if versions == {6} else "IPv4"
    for key, zero in (("default", False), ("gatewayNode", ""), ("natOutgoing", False), ("private", False)):
        spec.setdefault(key, zero)
    _drop_zero(spec, ("default", "gatewayNode", "natOutgoing", "private", "cidrBlock", "gateway"))
    spec["u2oFeatures"] = {}
    cidr = IPv4Network(spec["cidrBlock"])
    obj["status"] = {"v4availableIPs": cidr.num_addresses - 3, "v4usingIPs": 0, "v6availableIPs": 0,
                     "v6usingIPs": 0, "activateGateway": "", "dhcpV4OptionsUUID": _uid("dhcp", obj["metadata"]["name"]),
                     "conditions": [{"type": "Ready", "status": "True", "reason": "SetPrivateLogicalSwitchSuccess"}]}


def vpc(obj: dict[str, Any]) -> None:
    spec = obj["spec"]
    for route in spec.get("staticRoutes", []):
        route.setdefault("policy", "policyDst")
        for key in ("ecmpMode", "bfdId", "routeTable"):
            route.setdefault(key, "")
    _drop_zero(spec, ())
    name = obj["metadata"]["name"]
    obj["status"] = {"default": name == "ovn-cluster", "router": name, "standby": True, "enableBfd": False,
                     "enableExternal": False, "bfdPort": {}, "tcpLoadBalancer": f"vpc-{name}-tcp-load",
                     "conditions": [{"type": "Ready", "status": "True"}]}


def nad(obj: dict[str, Any], harvester: bool) -> None:
    if harvester and json.loads(obj["spec"]["config"]).get("type") == "kube-ovn":
        labels = obj["metadata"].setdefault("labels", {})
        labels.update({"network.harvesterhci.io/type": "OverlayNetwork",
                       "network.harvesterhci.io/clusternetwork": labels.get("network.harvesterhci.io/clusternetwork",
                                                                             "mgmt"),
                       "network.harvesterhci.io/ready": "true"})


def eip(obj: dict[str, Any], allocate: str) -> None:
    spec = obj["spec"]
    spec.setdefault("v4ip", allocate)
    spec.update(macAddress="00:00:00:4a:1b:2c", v6ip="", qosPolicy=spec.get("qosPolicy", ""))
    obj["metadata"].setdefault("labels", {}).update({
        "ovn.kubernetes.io/subnet": spec["externalSubnet"], "ovn.kubernetes.io/vpc-nat-gw-name": spec["natGwDp"],
        "ovn.kubernetes.io/eip_v4_ip": spec["v4ip"]})
    obj["status"] = {"ready": True, "ip": spec["v4ip"], "nat": "", "redo": "", "qosPolicy": ""}


def nat_gateway(obj: dict[str, Any]) -> None:
    spec = obj["spec"]
    spec.update(qosPolicy="", noDefaultEIP=False, affinity={},
                bgpSpeaker={"enabled": False, "asn": 0, "remoteAsn": 0, "holdTime": "0s", "routerId": "",
                            "password": "", "enableGracefulRestart": False})
    obj["metadata"].setdefault("labels", {}).update({"ovn.kubernetes.io/subnet": spec["subnet"],
                                                     "ovn.kubernetes.io/vpc": spec["vpc"], "ovn.kubernetes.io/qos": ""})
    obj["status"] = {"qosPolicy": "", "externalSubnets": spec["externalSubnets"]}


def nat_rule(obj: dict[str, Any]) -> None:
    obj["metadata"].setdefault("labels", {})["ovn.kubernetes.io/eip_v4_ip"] = "203.0.113.10"
    obj["metadata"].setdefault("annotations", {})["ovn.kubernetes.io/vpc_eip"] = obj["spec"]["eip"]
    obj["status"] = {"ready": True, "v4ip": "203.0.113.10", "redo": ""}


OPERATOR_SPEC: dict[str, Any] = {
    "components": {"enableIC": False, "enableLB": True, "enableNATGateway": True, "enableNP": True},
    "networking": {"tunnelType": "vxlan", "networkType": "geneve", "nodeSubnet": "join",
                   "defaultSubnet": "ovn-default", "defaultVPC": "ovn-cluster"},
    "masterNodesLabel": "kube-ovn/role=master",
}


def configuration(obj: dict[str, Any], pod: str, join: str, service: str) -> None:
    spec = copy.deepcopy(OPERATOR_SPEC)
    spec["components"].update(obj["spec"]["components"])
    spec["ipv4"] = {"podCIDR": pod, "joinCIDR": join, "serviceCIDR": service,
                    "podGateway": str(IPv4Network(pod).network_address + 1)}
    obj["spec"] = spec
    obj["status"] = {"status": "Deployed"}


def live(objects: list[dict[str, Any]], cluster: str, *, harvester: bool, pod: str = "10.54.0.0/16",
         join: str = "100.64.0.0/16", service: str = "10.55.0.0/16") -> list[dict[str, Any]]:
    """The rendered objects of one zone as its cluster returns them, after a hand-applied install."""
    out = []
    for rendered in objects:
        if rendered["kind"] in ("Deployment", "Job") or rendered["metadata"]["name"] in ("fabricgen-ic-db-setup",
                                                                                        "fabricgen-watch"):
            continue  # fabricgen's own (the IC server, the watch's RBAC): a hand-built cluster has none
        obj = hand_applied(rendered)
        kind = obj["kind"]
        finalizer = "kubeovn.io/kube-ovn-controller" if obj["apiVersion"] == "kubeovn.io/v1" else None
        if kind == "Subnet":
            subnet(obj)
        elif kind == "Vpc":
            vpc(obj)
        elif kind == "NetworkAttachmentDefinition":
            nad(obj, harvester)
        elif kind == "IptablesEIP":
            eip(obj, "203.0.113.10")
        elif kind == "VpcNatGateway":
            nat_gateway(obj)
        elif kind in ("IptablesSnatRule", "IptablesDnatRule"):
            nat_rule(obj)
        elif kind == "Configuration":
            configuration(obj, pod, join, service)
            finalizer = "finalizer.kubeovn.io/configuration"
        elif kind == "ProviderNetwork":
            obj["status"] = {"ready": True, "readyNodes": [f"{cluster}-node-1"], "vlans": ["vpc-external"]}
        elif kind == "Vlan":
            obj["status"] = {"subnets": ["ovn-vpc-external-network"], "conflict": False}
        server_metadata(obj, cluster, applied=kind not in ("Vpc",) or obj["metadata"]["name"] != "ovn-cluster",
                        finalizer=finalizer)
        out.append(obj)
    for name, cidr in (("ovn-default", pod), ("join", join)):
        own = {"apiVersion": "kubeovn.io/v1", "kind": "Subnet", "metadata": {"name": name},
               "spec": {"cidrBlock": cidr, "gateway": str(IPv4Network(cidr).network_address + 1),
                        "default": name == "ovn-default", "natOutgoing": name == "ovn-default"}}
        subnet(own, enable_lb=name != "join")
        server_metadata(own, cluster, applied=False, finalizer="kubeovn.io/kube-ovn-controller")
        out.append(own)
    return out


def node(cluster: str, name: str, address: str, *, master: bool = True) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    if master:
        labels["kube-ovn/role"] = "master"
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
           "spec": {"podCIDR": "10.52.0.0/24"},
           "status": {"addresses": [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": name}]}}
    server_metadata(obj, cluster, applied=False)
    return obj


def kubectl_list(items: list[dict[str, Any]]) -> str:
    """`kubectl get ... -o json` of these objects."""
    return json.dumps({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}},
                      indent=4, sort_keys=True) + "\n"


def show(zones: dict[str, tuple[str, str]], encap: str = "vxlan") -> str:
    """`ovn-ic-sbctl show` (its layout as OVN 23.03 prints it) for zone -> (gateway, transit address)."""
    lines = []
    for i, (zone, (gateway, address)) in enumerate(zones.items()):
        a, b, c, d = (int(x) for x in address.split("."))
        lines += [f"availability-zone {zone}", f"    gateway {gateway}", f"        hostname: {gateway}",
                  f"        type: {encap}", f"            ip: 10.10.{10 + i}.11", f"        port ts-{zone}",
                  "            transit switch: ts",
                  f'            address: ["00:00:{a:02x}:{b:02x}:{c:02x}:{d:02x} {address}/24"]']
    return "\n".join(lines) + "\n"


def ic_server(cluster: str, node_ips: list[str], *, ts_num: int = 3, version: str = "v1.16.2",
              replicas: int | None = None, probe_interval: int = 5) -> dict[str, Any]:
    """The IC server Deployment Kube-OVN's `dist/images/install-ic-server.sh` (v1.16.2) applies, as
    `kubectl get -o json` returns it. The script writes `replicas: $count` (the nodes labelled
    `kube-ovn/role=master`) and `NODE_IPS` (their InternalIPs joined with commas), `TS_NUM`
    (default 3) and `OVN_LEADER_PROBE_INTERVAL` (default 5); its image is `$REGISTRY/kube-ovn:$VERSION`
    with `REGISTRY="kubeovn"` (Docker Hub, no registry host) and `VERSION` as the docs tell the operator
    to `sed` it. The API server adds the defaults of `pkg/apis/apps/v1/defaults.go` and
    `pkg/apis/core/v1/defaults.go` (progressDeadlineSeconds, revisionHistoryLimit, the probes'
    thresholds, terminationMessagePath, dnsPolicy, schedulerName) and the Deployment controller
    its status. `replicas` differs from the node count only where an operator scaled it by hand."""
    image = f"kubeovn/kube-ovn:{version}"
    mounts = [{"mountPath": "/var/run/ovn", "name": "host-run-ovn"},
              {"mountPath": "/etc/ovn", "name": "host-config-ovn"},
              {"mountPath": "/var/log/ovn", "name": "host-log-ovn"}]
    probe = {"exec": {"command": ["bash", "/kube-ovn/ovn-ic-healthcheck.sh"]}, "failureThreshold": 3,
             "periodSeconds": 15, "successThreshold": 1, "timeoutSeconds": 45}
    count = len(node_ips) if replicas is None else replicas
    container_defaults = {"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
    obj: dict[str, Any] = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "ovn-ic-server", "namespace": "kube-system",
                     "annotations": {"kubernetes.io/description": "OVN IC Server\n",
                                     "deployment.kubernetes.io/revision": "1"}},
        "spec": {
            "progressDeadlineSeconds": 600, "replicas": count, "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "ovn-ic-server"}},
            "strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}, "type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {"app": "ovn-ic-server", "component": "network", "type": "infra"}},
                "spec": {
                    "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": "ovn-ic-server"}},
                         "topologyKey": "kubernetes.io/hostname"}]}},
                    "automountServiceAccountToken": True,
                    "containers": [{
                        "command": ["/kube-ovn/start-ic-db.sh"],
                        "env": [{"name": "ENABLE_SSL", "value": "false"}, {"name": "TS_NUM", "value": str(ts_num)},
                                {"name": "NODE_IPS", "value": ",".join(node_ips)},
                                {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                                              "fieldPath": "status.podIP"}}},
                                {"name": "OVN_LEADER_PROBE_INTERVAL", "value": str(probe_interval)},
                                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                                                "fieldPath": "metadata.name"}}},
                                {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {
                                    "apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
                                {"name": "POD_IPS", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                                               "fieldPath": "status.podIPs"}}}],
                        "image": image, "imagePullPolicy": "IfNotPresent",
                        "livenessProbe": {**probe, "failureThreshold": 5, "initialDelaySeconds": 30,
                                          "timeoutSeconds": 4},
                        "name": "ovn-ic-server",
                        "readinessProbe": probe,
                        "resources": {"limits": {"cpu": "3", "memory": "1Gi"},
                                      "requests": {"cpu": "300m", "memory": "200Mi"}},
                        "securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE", "SYS_NICE"]},
                                            "privileged": False, "runAsUser": 65534},
                        **container_defaults,
                        "volumeMounts": [*mounts, {"mountPath": "/etc/localtime", "name": "localtime"},
                                         {"mountPath": "/var/run/tls", "name": "kube-ovn-tls"}]}],
                    "dnsPolicy": "ClusterFirst", "hostNetwork": True,
                    "initContainers": [{
                        "command": ["sh", "-c", "chown -R nobody: /var/run/ovn /etc/ovn /var/log/ovn"],
                        "image": image, "imagePullPolicy": "IfNotPresent", "name": "hostpath-init",
                        "resources": {},
                        "securityContext": {"allowPrivilegeEscalation": True, "capabilities": {"drop": ["ALL"]},
                                            "privileged": True, "runAsUser": 0},
                        **container_defaults, "volumeMounts": mounts}],
                    "nodeSelector": {"kube-ovn/role": "master", "kubernetes.io/os": "linux"},
                    "priorityClassName": "system-cluster-critical", "restartPolicy": "Always",
                    "schedulerName": "default-scheduler",
                    "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                    "serviceAccount": "ovn", "serviceAccountName": "ovn", "terminationGracePeriodSeconds": 30,
                    "tolerations": [{"effect": "NoSchedule", "operator": "Exists"},
                                    {"effect": "NoExecute", "operator": "Exists"},
                                    {"key": "CriticalAddonsOnly", "operator": "Exists"}],
                    "volumes": [{"hostPath": {"path": "/run/ovn", "type": ""}, "name": "host-run-ovn"},
                                {"hostPath": {"path": "/etc/origin/ovn", "type": ""}, "name": "host-config-ovn"},
                                {"hostPath": {"path": "/var/log/ovn", "type": ""}, "name": "host-log-ovn"},
                                {"hostPath": {"path": "/etc/localtime", "type": ""}, "name": "localtime"},
                                {"name": "kube-ovn-tls", "secret": {"defaultMode": 420, "optional": True,
                                                                     "secretName": "kube-ovn-tls"}}]}}},
        "status": {"availableReplicas": count, "observedGeneration": 1, "readyReplicas": count, "replicas": count,
                   "updatedReplicas": count},
    }
    server_metadata(obj, cluster)
    obj["metadata"]["generation"] = 1
    return obj
