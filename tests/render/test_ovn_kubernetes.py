"""OVN-Kubernetes output as upstream ovn-org/ovn-kubernetes reads it.

Each node keeps its tunnel endpoint, whatever launches ovnkube.

ovnkube sets `external_ids:ovn-encap-ip` itself: to `--encap-ip` when given, else to the
node's primary address (`setupOVNNode` in go-controller/pkg/node/default_node_network_controller.go
of ovn-org/ovn-kubernetes). Only upstream's dist/images/ovnkube.sh passes the value that
configure-ovn-host.sh pre-set, or `OVN_ENCAP_IP`, as that flag. Every node of a Kubernetes
consumer gets `ovnkube-node.env` with `OVN_ENCAP_IP`; here it is read by a real shell, fed
to the excerpt of ovnkube.sh that builds the flag (copied below with its source), and the
resulting effective address is the tunnel endpoint, not the primary address.

Host-network traffic is classified into a namespace of its own: upstream's launchers
(dist/images/ovnkube.sh, daemonset.sh) default `host_network_namespace` to `ovn-host-network`
and dist/templates/ovn-setup.yaml.j2 creates that Namespace beside `ovn-config`.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest

from fabricgen.model.consumers import KubernetesCluster
from fabricgen.pipeline import Build
from fabricgen.plan.deployments import chassis
from support.fabrics import REPO, SITES, build_file, diagnostic_lines, edit

# ovn-org/ovn-kubernetes dist/images/ovnkube.sh (commit 6c366bb49d6f, lines 1884-1895, ovn-node):
# how the DaemonSet's launcher turns OVN_ENCAP_IP (or the pre-set OVS value) into --encap-ip.
OVNKUBE_SH_ENCAP = r"""
ovn_encap_ip=${OVN_ENCAP_IP:-}
  ovn_encap_ip_flag=
  if [[ ${ovn_encap_ip} != "" ]]; then
    ovn_encap_ip_flag="--encap-ip=${ovn_encap_ip}"
  else
    ovn_encap_ip=$(ovs-vsctl --if-exists get Open_vSwitch . external_ids:ovn-encap-ip)
    if [[ $? == 0 ]]; then
      ovn_encap_ip=$(echo ${ovn_encap_ip} | tr -d '\"')
      if [[ "${ovn_encap_ip}" != "" ]]; then
        ovn_encap_ip_flag="--encap-ip=${ovn_encap_ip}"
      fi
    fi
  fi
printf '%s' "$ovn_encap_ip_flag"
"""
PRIMARY = "192.0.2.10"  # the node's InternalIP, as the Kubernetes Node object would list it


def effective_encap_ip(args: list[str], node_primary_ip: str) -> str:
    """`config.Default.EffectiveEncapIP` as setupOVNNode sets it: --encap-ip, else the primary IP."""
    flags = [a.removeprefix("--encap-ip=") for a in args if a.startswith("--encap-ip=")]
    return flags[-1] if flags else node_primary_ip


def kubernetes_sites() -> list[Build]:
    return [build_file(s) for s in SITES if "platform: kubernetes" in s.read_text(encoding="utf-8")]


def test_the_samples_have_kubernetes_nodes() -> None:
    assert [b.site for b in kubernetes_sites()] == ["openstack-k8s"]


@pytest.mark.lab
@pytest.mark.parametrize("launcher", ["ovnkube.sh", "direct"])
def test_every_kubernetes_node_keeps_its_tunnel_endpoint(tmp_path: Path, launcher: str) -> None:
    if shutil.which("bash") is None:
        pytest.skip("bash not installed")
    checked = 0
    for build in kubernetes_sites():
        for deployment in build.plan.fabric.ovn_deployments:
            clusters = [c for c in deployment.consumers if isinstance(c, KubernetesCluster)]
            nodes = {h for c in clusters for h in c.hosts}
            for item in chassis(deployment):
                path = PurePosixPath(build.site, "_host", deployment.name, "chassis", item.host.name,
                                     "ovnkube-node.env")
                if item.host.name not in nodes:
                    assert path not in build.files
                    continue
                env_file = tmp_path / f"{item.host.name}.env"
                env_file.write_text(build.files[path].text, encoding="utf-8")
                # What the launcher does: read the file, then build ovnkube's arguments.
                if launcher == "ovnkube.sh":
                    script = f"set -a; . {env_file}; set +a\n{OVNKUBE_SH_ENCAP}"
                else:  # systemd EnvironmentFile= and ExecStart=ovnkube ... --encap-ip=${{OVN_ENCAP_IP}}
                    script = f"set -a; . {env_file}; set +a\nprintf '%s' \"--encap-ip=$OVN_ENCAP_IP\""
                # No ovs-vsctl on PATH: a launcher that relied on the pre-set OVS value gets nothing.
                flag = subprocess.run(["bash", "-c", script], env={"PATH": "/nonexistent"},
                                      executable=shutil.which("bash"), capture_output=True, text=True,
                                      check=True).stdout
                assert effective_encap_ip([flag], PRIMARY) == str(item.address)
                assert str(item.address) != PRIMARY
                checked += 1
    assert checked == 2


def test_without_the_flag_ovnkube_takes_the_primary_address() -> None:
    """The model of setupOVNNode that the test above relies on."""
    assert effective_encap_ip(["--config-file=/etc/openvswitch/ovn_k8s.conf"], PRIMARY) == PRIMARY
    assert effective_encap_ip(["--encap-ip=10.255.1.1"], PRIMARY) == "10.255.1.1"



def test_host_network_namespace_is_a_dedicated_one() -> None:
    for build in kubernetes_sites():
        for directory in build.manifests:
            objects = build.objects(directory)
            (config,) = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "ovn-config"]
            host_network = config["data"]["host_network_namespace"]
            assert host_network == "ovn-host-network"
            assert host_network != config["metadata"]["namespace"]
            namespaces = {o["metadata"]["name"]: i for i, o in enumerate(objects) if o["kind"] == "Namespace"}
            # the host network's, and those of the pods the policy protects (network-policies.yaml)
            policy = {o["metadata"]["namespace"] for o in objects if o["kind"] == "NetworkPolicy"}
            assert set(namespaces) == {host_network} | policy
            assert namespaces[host_network] < objects.index(config)  # exists before anything names it


def test_host_network_namespace_is_not_ovn_kubernetes_own() -> None:
    name = "sites/openstack-k8s/fabric.yaml"
    text = (REPO / "sites" / "openstack-k8s" / "fabric.yaml").read_text(encoding="utf-8")
    text = edit(text, "        gatewayMode: shared\n",
                "        gatewayMode: shared\n        hostNetworkNamespace: ovn-kubernetes\n")
    (line,) = diagnostic_lines(text, name)
    at = text.splitlines().index("      - platform: kubernetes") + 1  # the consumer's `kubernetes:` tag
    assert line.startswith(f"{name}:{at}:9: ovnDeployments[1].consumers[0]: hostNetworkNamespace is "
                           "OVN-Kubernetes' own namespace ovn-kubernetes")
