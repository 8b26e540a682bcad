"""The rendered AdminNetworkPolicy judged by OVN: the rows OVN-Kubernetes v1.3.0 writes for it and
for the NetworkPolicies (`fabricgen.lab.platforms.ovn_kubernetes`, modelled on
`go-controller/pkg/ovn/controller/admin_network_policy/`: tier 1, 30000 - 100 x priority - index,
Pass as `pass`, Deny as `drop`) in a real northbound DB of OVN 25.03 (ACL tiers), compiled by
ovn-northd and traced by ovn-trace.

A namespace owner's NetworkPolicy that admits every pod into the protected pods opens them to a pod
of another namespace; with the rendered AdminNetworkPolicy that pod is dropped in tier 1, before
any NetworkPolicy, while the group's own members still pass to the NetworkPolicies and get in.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

import pytest
import yaml

from fabricgen.lab.ovn.sandbox import Sandbox, workdir
from fabricgen.lab.platforms import kubeovn, ovn_kubernetes
from fabricgen.lab.platforms.ovn_kubernetes import Pod
from support.fabrics import REPO, build_file
from support.lab_programs import DEBIAN13, needs_25_03

pytestmark = [pytest.mark.lab, needs_25_03]  # starts ovsdb-server, ovn-northd, ovn-ic; runs ovn-nbctl, ovn-trace

POLICIES = PurePosixPath("openstack-k8s/k8s-prod/stage-0/network-policies.yaml")
WEB = Pod("shop", (("app", "web"),), "pod-web", "10.128.0.10")
PEER = Pod("shop", (("app", "web"),), "pod-web-2", "10.128.0.11")  # the group's own member
OTHER = Pod("other", (("app", "client"),), "pod-other", "10.128.2.10")
PODS = (WEB, PEER, OTHER)
# a namespace owner's own NetworkPolicy: every pod may reach the web pods
OWNERS = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
          "metadata": {"name": "allow-everyone", "namespace": "shop"},
          "spec": {"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": ["Ingress"], "ingress": [{}]}}


def _rendered() -> list[dict[str, Any]]:
    build = build_file(REPO / "sites" / "openstack-k8s" / "fabric.yaml")
    return [o for o in yaml.safe_load_all(build.files[POLICIES].text) if o["kind"] != "Namespace"]


@pytest.fixture(scope="module")
def lab() -> Iterator[Sandbox]:
    with workdir() as path:
        sandbox = Sandbox(path, programs=DEBIAN13)
        try:
            sandbox.start_ic_databases()
            rendered = _rendered()
            network_policies = [o for o in rendered if o["kind"] == "NetworkPolicy"]
            for az, objects in (("np", [*network_policies, OWNERS]), ("anp", [*rendered, OWNERS])):
                sandbox.start_az(az, az_name=az)
                commands: list[list[str]] = [["ls-add", "node"]]
                for i, pod in enumerate(PODS):
                    commands += [["lsp-add", "node", pod.port],
                                 ["lsp-set-addresses", pod.port, f"00:00:00:00:00:{i + 10:02x} {pod.address}"]]
                _acls, rows = ovn_kubernetes.commands(objects, PODS, tiers=sandbox.acl_tiers, version="v1.3.0")
                sandbox.nb(az, *kubeovn.batch([*commands, *rows]))
                sandbox.sync(az)
            yield sandbox
        finally:
            sandbox.stop()


def _delivered(sandbox: Sandbox, az: str, source: Pod, port: int) -> bool:
    src, dst = PODS.index(source), PODS.index(WEB)
    flow = (f'inport == "{source.port}" && eth.src == 00:00:00:00:00:{src + 10:02x} && '
            f"eth.dst == 00:00:00:00:00:{dst + 10:02x} && ip4.src == {source.address} && "
            f"ip4.dst == {WEB.address} && ip.ttl == 64 && tcp && tcp.src == 40000 && tcp.dst == {port}")
    out = sandbox.trace(az, "node", flow, "--minimal", "--ct=new", "--ct=new")
    return "output" in out


def test_the_acl_tiers_are_there(lab: Sandbox) -> None:
    assert lab.acl_tiers


def test_a_namespace_owners_policy_opens_the_pods_to_every_pod_without_it(lab: Sandbox) -> None:
    assert _delivered(lab, "np", OTHER, 5000)
    assert _delivered(lab, "np", PEER, 5000)


def test_the_admin_network_policy_drops_the_other_pod_and_passes_the_groups_own(lab: Sandbox) -> None:
    assert not _delivered(lab, "anp", OTHER, 5000)
    assert _delivered(lab, "anp", PEER, 5000)


def test_the_rows_are_in_tier_1_at_the_priorities_ovn_kubernetes_uses(lab: Sandbox) -> None:
    rows = lab.nb("anp", "--format=csv", "--data=bare", "--no-headings", "--columns=tier,priority,action,name",
                  "list", "ACL").splitlines()
    anp = sorted((r for r in rows if ",ANP:" in r), reverse=True)
    # priority 20: 30000 - 100 x 20 - rule index
    assert anp == ["1,28000,pass,ANP:fabricgen-shop-web-shop:Ingress:0",
                   "1,27999,drop,ANP:fabricgen-shop-web-shop:Ingress:1"], anp
