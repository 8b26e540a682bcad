"""Settings whose right value the consuming upstream code decides, rendered as it reads them.

- Neutron: `[ml2] project_network_types` from OpenStack 2026.1 (Neutron 28), whose
  openstack/neutron `neutron/conf/plugins/ml2/config.py` still reads `tenant_network_types` as
  its deprecated name; older releases know only `tenant_network_types`. Read back with
  oslo.config, as Neutron reads it.
- SUSE Virtualization: the NAD label `network.harvesterhci.io/clusternetwork`, which its NAD
  mutator sets from the nodes' tunnel interface (harvester/network-controller-harvester
  `pkg/webhook/nad/mutator.go` `ensureLabels`), comes from the zone's `overlayClusterNetwork`.
- The IC server's image follows `interconnection.kubeOvnVersion`.
- The IC server's privileges are upstream's (kubeovn/kube-ovn `dist/images/install-ic-server.sh`).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from oslo_config import cfg

from fabricgen.errors import InvalidFabricError
from fabricgen.pipeline import Build
from support.fabrics import REPO, build_text, edit

OPENSTACK = REPO / "sites" / "openstack-k8s" / "fabric.yaml"
LAB = REPO / "sites" / "lab" / "fabric.yaml"
NAT = REPO / "sites" / "nat" / "fabric.yaml"
GATEWAYS = "    gatewayNodes: [hq-node-1]\n"


def ml2(build: Build, tmp_path: Path, release_option: str) -> list[str] | None:
    """What Neutron's ML2 reads for its project network types, registered as Neutron registers it."""
    [text] = [f.text for p, f in build.files.items() if p.name == "ml2_conf.ini"]
    path = tmp_path / "ml2_conf.ini"
    path.write_text(text, encoding="utf-8")
    conf = cfg.ConfigOpts()
    if release_option == "project_network_types":
        opt = cfg.ListOpt("project_network_types", deprecated_name="tenant_network_types", default=["local"])
    else:
        opt = cfg.ListOpt("tenant_network_types", default=["local"])
    conf.register_opts([opt], group="ml2")
    conf(args=[], default_config_files=[str(path)])
    value: list[str] = getattr(conf.ml2, release_option)
    return value


def release(text: str, series: str) -> str:
    return edit(text, "        name: region-one\n", f"        name: region-one\n        release: \"{series}\"\n")


def test_neutron_option_follows_the_release(tmp_path: Path) -> None:
    text = OPENSTACK.read_text(encoding="utf-8")
    unknown = build_text(text, "sites/openstack-k8s/fabric.yaml")
    assert ml2(unknown, tmp_path, "tenant_network_types") == ["geneve"]  # 2025.2 and older read it
    assert ml2(unknown, tmp_path, "project_network_types") == ["geneve"]  # 2026.1 too, with a warning
    new = build_text(release(text, "2026.1"), "sites/openstack-k8s/fabric.yaml")
    [ini] = [f.text for p, f in new.files.items() if p.name == "ml2_conf.ini"]
    assert "project_network_types = geneve" in ini and "tenant_network_types" not in ini
    assert ml2(new, tmp_path, "project_network_types") == ["geneve"]
    old = build_text(release(text, "2025.2"), "sites/openstack-k8s/fabric.yaml")
    [ini] = [f.text for p, f in old.files.items() if p.name == "ml2_conf.ini"]
    assert "tenant_network_types = geneve" in ini


def nads(build: Build, zone: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in build.objects(zone) if o["kind"] == "NetworkAttachmentDefinition"}


def test_nad_cluster_network_label_is_the_zones() -> None:
    text = NAT.read_text(encoding="utf-8")
    default = nads(build_text(text, "sites/nat/fabric.yaml"), "hq")
    assert {n["metadata"]["labels"]["network.harvesterhci.io/clusternetwork"] for n in default.values()} == {"mgmt"}
    moved = build_text(edit(text, GATEWAYS, GATEWAYS + "    overlayClusterNetwork: vm-net\n"), "sites/nat/fabric.yaml")
    labels = {name: n["metadata"]["labels"]["network.harvesterhci.io/clusternetwork"]
              for name, n in nads(moved, "hq").items()}
    assert set(labels) == set(default) and set(labels.values()) == {"vm-net"}  # backbone, tenant, external


def test_a_network_on_another_cluster_network_is_refused() -> None:
    text = edit(NAT.read_text(encoding="utf-8"), "network: {name: prod-app-net, namespace: prod}",
                "network: {name: prod-app-net, namespace: prod, clusterNetwork: vm-net}")
    with pytest.raises(InvalidFabricError) as exc:
        build_text(text, "sites/nat/fabric.yaml")
    assert [d.code for d in exc.value.diagnostics if d.is_error] == ["FG403"]
    build_text(text.replace(GATEWAYS, GATEWAYS + "    overlayClusterNetwork: vm-net\n"), "sites/nat/fabric.yaml")


def ic_server(build: Build, zone: str = "hq") -> dict[str, Any]:
    return next(o for o in build.objects(zone) if o["kind"] == "Deployment")


def test_ic_image_follows_kube_ovn_version() -> None:
    text = LAB.read_text(encoding="utf-8")
    default = ic_server(build_text(text, "sites/lab/fabric.yaml"))
    images = {c["image"] for c in (*default["spec"]["template"]["spec"]["containers"],
                                   *default["spec"]["template"]["spec"]["initContainers"])}
    assert images == {"docker.io/kubeovn/kube-ovn:v1.16.2"}
    older = text.replace("  encapsulation: vxlan\n", "  encapsulation: vxlan\n  kubeOvnVersion: v1.15.0\n", 1)
    server = ic_server(build_text(older, "sites/lab/fabric.yaml"))
    images = {c["image"] for c in (*server["spec"]["template"]["spec"]["containers"],
                                   *server["spec"]["template"]["spec"]["initContainers"])}
    assert images == {"docker.io/kubeovn/kube-ovn:v1.15.0"}


def test_ic_server_runs_with_upstreams_privileges() -> None:
    """kubeovn/kube-ovn dist/images/install-ic-server.sh at v1.16.2."""
    build = build_text(LAB.read_text(encoding="utf-8"), "sites/lab/fabric.yaml")
    spec = ic_server(build)["spec"]["template"]["spec"]
    assert spec["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    [init] = spec["initContainers"]
    assert init["command"] == ["sh", "-c", "chown -R nobody: /var/run/ovn /etc/ovn /var/log/ovn"]
    assert init["securityContext"]["privileged"] is True and init["securityContext"]["runAsUser"] == 0
    server, sidecar = spec["containers"]
    assert server["securityContext"] == {"privileged": False, "runAsUser": 65534,
                                         "capabilities": {"add": ["NET_BIND_SERVICE", "SYS_NICE"]}}
    assert sidecar["securityContext"]["runAsUser"] == 65534
    assert sidecar["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert sidecar["readinessProbe"]["exec"]["command"][-1] == "--check"
    assert sidecar["command"][-2:] == ["--every", "10"]
    # The sidecar runs the very script of the ConfigMap, which is the committed operator script.
    configmap = next(o for o in build.objects("hq") if o["kind"] == "ConfigMap"
                     and o["metadata"]["name"] == "fabricgen-ic-db-setup")
    script = build.files[PurePosixPath("lab", "hq", "ic-db", "configure-ic-db.sh")].text
    assert configmap["data"]["configure-ic-db.sh"] == script
    assert not [o for o in build.objects("hq") if o["kind"] == "Job"]
