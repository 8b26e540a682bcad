"""Per Kubernetes cluster running OVN-Kubernetes (central mode, pinned <= v1.3):

- `_host/<deployment>/kubernetes/<cluster>/ovn_k8s.conf`: the gcfg config file with
  the deployment's NB/SB addresses, encapsulation and MTU.
- `_host/<deployment>/chassis/<host>/ovnkube-node.env`: per node `OVN_ENCAP_IP`, the
  tunnel address, for the launcher to pass as `--encap-ip` (without it ovnkube sets
  `ovn-encap-ip` to the node's primary address).
- `<cluster>/ovn-kubernetes.yaml` (a Kubernetes directory with its kustomization):
  the Namespace `host_network_namespace` names (`ovn-host-network`, as upstream's
  ovn-setup.yaml creates it), ConfigMap `ovn-config` (the keys the upstream DaemonSets
  read: `mtu`, `net_cidr`, `svc_cidr`, `k8s_apiserver`, `host_network_namespace`),
  ConfigMap `ovnkube-config` holding the same
  `ovn_k8s.conf`, and the selector-less Service `ovnkube-db` with its Endpoints
  listing the external database members, from which ovnkube.sh derives the
  NB/SB addresses.
"""

from __future__ import annotations

from fabricgen.model.consumers import KubernetesCluster
from fabricgen.model.ovn import TUNNEL_PORT, OvnDeployment
from fabricgen.plan.deployments import chassis, consumer_encapsulation, consumer_mtu, nb_remote, sb_remote
from fabricgen.plan.zones import Plan
from fabricgen.render import metadata as md
from fabricgen.render.artifacts import Artifact, KubeObject, Manifest, TextFile
from fabricgen.render.header import header
from fabricgen.render.host_tree import chassis_dir, platform_dir
from fabricgen.render.templating import render_template

CONFIG_FILE = "ovn_k8s.conf"
NODE_ENV = "ovnkube-node.env"
MANIFEST = "ovn-kubernetes.yaml"


def cluster_subnets(cluster: KubernetesCluster) -> str:
    """`cluster-subnets` / `net_cidr`: the pod network with the per-node prefix length."""
    return f"{cluster.cluster_subnet}/{cluster.host_prefix}"


def config_file(plan: Plan, deployment: OvnDeployment, cluster: KubernetesCluster) -> str:
    db = deployment.databases
    encapsulation = consumer_encapsulation(deployment, cluster)
    return render_template(
        "ovn_k8s.conf.j2",
        header=header(plan),
        cluster=cluster.name,
        version=cluster.version,
        deployment=deployment.name,
        mtu=consumer_mtu(deployment, cluster),
        encapsulation=encapsulation,
        encap_port=TUNNEL_PORT[encapsulation],
        cluster_subnets=cluster_subnets(cluster),
        api_server=cluster.api_server,
        service_cidr=str(cluster.service_cidr),
        host_network_namespace=cluster.host_network_namespace,
        nb=nb_remote(deployment),
        sb=sb_remote(deployment),
        ssl=db.ssl_in_use,
        gateway_mode=cluster.gateway_mode,
        gateway_interface=cluster.gateway_interface,
        admin_network_policies=cluster.admin_network_policies is not None,
    )


def node_env(plan: Plan, deployment: OvnDeployment, cluster: KubernetesCluster) -> list[Artifact]:
    """`ovnkube-node.env` for each host of the cluster: its tunnel address as OVN_ENCAP_IP."""
    return [
        TextFile(chassis_dir(deployment.name, item.host.name) / NODE_ENV, render_template(
            "ovnkube-node.env.j2",
            header=header(plan),
            host=item.host.name,
            cluster=cluster.name,
            deployment=deployment.name,
            address=str(item.address),
        ))
        for item in chassis(deployment)
        if item.host.name in cluster.hosts
    ]


def objects(
    plan: Plan, deployment: OvnDeployment, cluster: KubernetesCluster, conf: str
) -> tuple[KubeObject, ...]:
    ns = cluster.namespace
    db = deployment.databases

    def meta(name: str) -> dict[str, object]:
        return md.metadata(name, ns, plan.source_name)

    host_network: KubeObject = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": md.metadata(cluster.host_network_namespace, None, plan.source_name),
    }
    ovn_config: KubeObject = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta("ovn-config"),
        "data": {
            "net_cidr": cluster_subnets(cluster),
            "svc_cidr": str(cluster.service_cidr),
            "k8s_apiserver": cluster.api_server,
            "mtu": str(consumer_mtu(deployment, cluster)),
            "host_network_namespace": cluster.host_network_namespace,
        },
    }
    ovnkube_config: KubeObject = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta("ovnkube-config"),
        "data": {CONFIG_FILE: conf},
    }
    ports = [{"name": "north", "port": db.nb_port, "protocol": "TCP"},
             {"name": "south", "port": db.sb_port, "protocol": "TCP"}]
    service: KubeObject = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta("ovnkube-db"),
        "spec": {"clusterIP": "None", "ports": ports},
    }
    endpoints: KubeObject = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": meta("ovnkube-db"),
        "subsets": [{"addresses": [{"ip": str(m.address)} for m in db.members], "ports": ports}],
    }
    return host_network, ovn_config, ovnkube_config, service, endpoints


def render(plan: Plan) -> list[Artifact]:
    out: list[Artifact] = []
    for deployment in plan.fabric.ovn_deployments:
        for cluster in deployment.consumers:
            if not isinstance(cluster, KubernetesCluster):
                continue
            conf = config_file(plan, deployment, cluster)
            out.append(TextFile(platform_dir(deployment.name, "kubernetes", cluster.name) / CONFIG_FILE, conf))
            out.extend(node_env(plan, deployment, cluster))
            out.append(Manifest(cluster.name, MANIFEST, objects(plan, deployment, cluster, conf)))
    return out
