"""The policy's AdminNetworkPolicies (render/policy_admin), where a cluster asks for them: one per
protected namespace member, passing what the policy admits from the cluster's pods to the
NetworkPolicies and denying every other pod; validated against network-policy-api v0.1.5's CRD
(tests/crds) by tests/render/test_k8s_schemas.py."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

import yaml

from fabricgen.render.policy_admin import RULE_NAME_MAX
from support.fabrics import REPO, build_text, diagnostic_lines, edit

OSK = REPO / "sites" / "openstack-k8s" / "fabric.yaml"
NAME = "sites/openstack-k8s/fabric.yaml"
POLICIES = PurePosixPath("openstack-k8s/k8s-prod/stage-0/network-policies.yaml")
CONFIG = PurePosixPath("openstack-k8s/_host/kubernetes/kubernetes/k8s-prod/ovn_k8s.conf")
SETTING = "        adminNetworkPolicies: {priority: 20}\n"
SHOP = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "shop"}}}


def _admin(text: str) -> list[dict[str, Any]]:
    build = build_text(text, NAME)
    return [o for o in yaml.safe_load_all(build.files[POLICIES].text) if o["kind"] == "AdminNetworkPolicy"]


def _with_api_group(text: str, *rules: str) -> str:
    """shop-api pods (app=api), protected, and `rules` after the sample's."""
    text = edit(text, "    - name: shop-db\n",
                "    - name: shop-api\n      members:\n        - namespace: {cluster: k8s-prod, name: shop, "
                "podSelector: {app: api}}\n      defaultDeny: true\n    - name: shop-db\n")
    last = '    - {from: shop-db, to: shop-web, protocol: tcp, ports: ["8443"]}\n'
    return edit(text, last, last + "".join(f"    - {r}\n" for r in rules))


def test_the_sample_passes_its_own_members_and_denies_every_other_pod() -> None:
    (anp,) = _admin(OSK.read_text())
    subject = {"pods": {**SHOP, "podSelector": {"matchLabels": {"app": "web"}}}}
    assert anp["metadata"]["name"] == "fabricgen-shop-web-shop" and "namespace" not in anp["metadata"]
    assert anp["spec"] == {"priority": 20, "subject": subject, "ingress": [
        {"name": "fabricgen-shop-web: its own members", "action": "Pass", "from": [subject]},
        # the database VMs' tcp/8443 is no pod: the NetworkPolicy's ipBlock alone decides it
        {"name": "fabricgen-shop-web: every other pod", "action": "Deny", "from": [{"namespaces": {}}]}]}
    conf = build_text(OSK.read_text(), NAME).files[CONFIG].text
    assert "\nenable-admin-network-policy=true\n" in conf


def test_rules_from_the_clusters_pods_pass_on_their_ports_and_priorities_count_up() -> None:
    text = _with_api_group(OSK.read_text(),
                           '{from: shop-web, to: shop-api, protocol: tcp, ports: ["8080", "9000-9100"]}',
                           "{from: shop-web, to: shop-api, protocol: udp}",
                           "{from: shop-db, to: shop-api, protocol: any}")
    api, web = _admin(text)
    assert (api["spec"]["priority"], web["spec"]["priority"]) == (20, 21)  # by group name
    web_pods = {"pods": {**SHOP, "podSelector": {"matchLabels": {"app": "web"}}}}
    rules = api["spec"]["ingress"]
    assert [r["action"] for r in rules] == ["Pass", "Pass", "Pass", "Deny"]
    assert rules[1] == {"name": "fabricgen shop-web-to-shop-api", "action": "Pass", "from": [web_pods], "ports": [
        {"portNumber": {"protocol": "TCP", "port": 8080}},
        {"portRange": {"protocol": "TCP", "start": 9000, "end": 9100}}]}
    # a protocol on every port is its whole range: a port names a number or a range
    assert rules[2]["ports"] == [{"portRange": {"protocol": "UDP", "start": 1, "end": 65535}}]
    assert all(len(r["name"]) <= RULE_NAME_MAX for r in rules)


def test_a_cluster_that_does_not_ask_gets_none() -> None:
    text = edit(OSK.read_text(), SETTING, "")
    assert _admin(text) == []
    assert "admin-network-policy" not in build_text(text, NAME).files[CONFIG].text


def test_priorities_past_what_ovn_kubernetes_takes_are_refused_where_they_start() -> None:
    """Two protected members from 99: OVN-Kubernetes ignores an AdminNetworkPolicy above 99
    (`ovnkSupportedPriorityUpperBound`, event ANPWithUnsupportedPriority)."""
    text = _with_api_group(edit(OSK.read_text(), SETTING, "        adminNetworkPolicies: {priority: 99}\n"))
    line = OSK.read_text().splitlines().index(SETTING.rstrip("\n")) + 1
    found = [x for x in diagnostic_lines(text, NAME) if "[FG916]" in x]
    column = SETTING.index("priority") + 1
    assert found == [f"{NAME}:{line}:{column}: ovnDeployments[1].consumers[0].adminNetworkPolicies.priority: "
                     "2 protected member(s) of cluster k8s-prod take priorities 99 to 100, and OVN-Kubernetes "
                     "ignores an AdminNetworkPolicy above 99; start at 98 or lower [FG916]"], found


def test_icmp_into_pods_is_refused_with_what_to_do_instead() -> None:
    """Neither object names ICMP (network-policy-api v0.1.5 ports are TCP, UDP, SCTP; OVN-Kubernetes
    `ConvertK8sProtocolToOVNProtocol` maps no other): the refusal says what to do, not only `any`."""
    text = edit(OSK.read_text(), '    - {from: shop-db, to: shop-web, protocol: tcp, ports: ["8443"]}\n',
                '    - {from: shop-db, to: shop-web, protocol: tcp, ports: ["8443"]}\n'
                "    - {from: shop-db, to: shop-web, protocol: icmp}\n")
    (line,) = [x for x in diagnostic_lines(text, NAME) if "[FG904]" in x]
    assert line.endswith("ICMP alone cannot be allowed into pods; drop the rule (pods then answer no ping: check "
                         "them over TCP), or use protocol any if the source may reach every port [FG904]"), line
