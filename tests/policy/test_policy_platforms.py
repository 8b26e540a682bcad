"""The policy across platforms and zones in real OVN: `fabricgen verify` of `sites/openstack-k8s`
builds, in each deployment's AZ, a VM (Neutron) or pod (OVN-Kubernetes) per policy member and the
rows each platform's controller writes from the rendered objects, and sends the policy's
connections between them across the two AZs over OVN-IC; a policy on a zone's backbone is sent
between two Kube-OVN zones the same way, the backbone Subnet's ACLs as Kube-OVN writes them
(kubeovn/kube-ovn v1.16.2 `pkg/ovs/ovn-nb-acl.go` `UpdateLogicalSwitchACL`).

The rows are modelled on the upstream code each test names: openstack/neutron 28.0.1
`neutron/common/ovn/acl.py` (`_add_sg_rule_acl_for_port_group`, `add_acls_for_drop_port_group`),
`neutron/common/ovn/utils.py` (`ovn_port_group_name`, `create_neutron_pg_drop`); ovn-org/
ovn-kubernetes v1.0.0 `go-controller/pkg/ovn/gress_policy.go` (`buildLocalPodACLs`,
`getMatchFromIPBlock`), `base_network_controller_policy.go` (`buildDenyACLs`),
`pkg/libovsdb/util/acl.go` (`getL4Match`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from fabricgen.lab import assembly
from fabricgen.lab import verify as report
from fabricgen.lab.ovn.programs import Programs
from fabricgen.lab.platforms import neutron, ovn_kubernetes, platform_policy
from fabricgen.lab.provers import member_flows, proof
from fabricgen.platform_rows import neutron as neutron_rows
from fabricgen.platform_rows.acls import Acl
from support.fabrics import REPO, build_file, build_text, edit
from support.lab_programs import BOTH, DEBIAN13, fabricgen, needs_25_03, prefix_args

OPENSTACK_K8S = REPO / "sites" / "openstack-k8s" / "fabric.yaml"
PG = "pg_0f0e"


# ---------------------------------------------------------------- the rows, as upstream builds them
@pytest.mark.parametrize(("rule", "match"), [
    # acl.py: direction, `&& ip4`, the remote prefix, the remote group, then the protocol
    ({"direction": "ingress", "protocol": "tcp", "port_range_min": 5432, "port_range_max": 5432,
      "remote_ip_prefix": "10.128.0.0/14"}, "outport == @pg_0f0e && ip4 && ip4.src == 10.128.0.0/14 && tcp && "
                                            "tcp.dst == 5432"),
    ({"direction": "ingress", "protocol": "any", "remote_ip_prefix": "10.128.0.0/14"},
     "outport == @pg_0f0e && ip4 && ip4.src == 10.128.0.0/14"),
    ({"direction": "ingress", "protocol": "any", "remote_group": "web"},
     "outport == @pg_0f0e && ip4 && ip4.src == $pg_1a2b_ip4"),
    ({"direction": "egress", "protocol": "any"}, "inport == @pg_0f0e && ip4"),
    ({"direction": "ingress", "protocol": "tcp", "port_range_min": 100, "port_range_max": 200},
     "outport == @pg_0f0e && ip4 && tcp && tcp.dst >= 100 && tcp.dst <= 200"),
    ({"direction": "ingress", "protocol": "udp"}, "outport == @pg_0f0e && ip4 && udp"),
    ({"direction": "ingress", "protocol": "icmp"}, "outport == @pg_0f0e && ip4 && icmp4"),
    ({"direction": "egress", "protocol": "tcp", "port_range_min": 443, "port_range_max": 443,
      "remote_ip_prefix": "10.0.0.1/8"}, "inport == @pg_0f0e && ip4 && ip4.dst == 10.0.0.0/8 && tcp && "
                                         "tcp.dst == 443"),
])
def test_a_neutron_rule_is_the_match_neutron_builds(rule: dict[str, Any], match: str) -> None:
    assert neutron_rows.rule_match(PG, rule, {"web": "1a2b"}) == match


def test_neutron_names_a_security_groups_port_group_by_its_id() -> None:
    name = neutron_rows.port_group_name("5d0c2e9e-1b2a-4c1e-9f00-0123456789ab")
    assert name == "pg_5d0c2e9e_1b2a_4c1e_9f00_0123456789ab"


def test_neutron_pg_drop_drops_ip_both_ways_at_1001() -> None:
    assert [(a.direction, a.priority, a.action, a.match) for a in neutron_rows.drop_acls()] == [
        ("to-lport", 1001, "drop", "outport == @neutron_pg_drop && ip"),
        ("from-lport", 1001, "drop", "inport == @neutron_pg_drop && ip")]


def test_an_ovn_kubernetes_policy_is_the_rows_ovn_kubernetes_writes() -> None:
    policy = {"metadata": {"name": "web", "namespace": "shop"},
              "spec": {"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": ["Ingress"],
                       "ingress": [{"from": [{"ipBlock": {"cidr": "10.100.20.0/24"}}],
                                    "ports": [{"protocol": "TCP", "port": 8443}, {"protocol": "TCP", "port": 8000,
                                                                                   "endPort": 8080}]},
                                   {"from": [{"podSelector": {"matchLabels": {"app": "web"}}}]}]}}
    pods = [ovn_kubernetes.Pod("shop", (("app", "web"),), "pod-a", "10.128.0.10"),
            ovn_kubernetes.Pod("shop", (("app", "db"),), "pod-b", "10.128.0.11")]
    acls, commands = ovn_kubernetes.commands([policy], pods, tiers=True)
    deny = ovn_kubernetes.hash_for_ovn("default-network-controller:NetpolNamespace:shop:Ingress")
    group = ovn_kubernetes.hash_for_ovn("default-network-controller:NetworkPolicy:shop:web")
    rows = [(a.direction, a.priority, a.action, a.match) for a in acls]
    assert ("to-lport", 1000, "drop", f"outport == @{deny}") in rows
    assert ("to-lport", 1001, "allow", f"outport == @{deny} && (arp || nd)") in rows
    # getL4Match: one term `tcp && tcp.dst==N`, several `tcp && (... || ...)`, a range `N<=tcp.dst<=M`
    assert ("to-lport", 1001, "allow-related", f"ip4.src == 10.100.20.0/24 && tcp && (tcp.dst==8443 || "
                                               f"8000<=tcp.dst<=8080) && outport == @{group}") in rows
    selector = next(m for _d, _p, _a, m in rows if m.startswith("ip4.src == {$"))
    assert selector.endswith(f"}} && outport == @{group}")
    # the selected pod, alone, in the groups and the peer's address set
    assert ["pg-add", deny, "pod-a"] in commands and ["pg-add", group, "pod-a"] in commands
    assert any(c[:2] == ["create", "Address_Set"] and 'addresses=["10.128.0.10"]' in c for c in commands)
    assert all("tier=2" in c for c in commands if c[1:3] == ["create", "ACL"])


def test_ovn_kubernetes_rows_are_those_of_the_declared_release() -> None:
    """Two ipBlocks (one with an except) on TCP 5432 and 8443: v1.0.0 writes one ACL per block,
    v1.3.0 one for both (commit fd2701582, `gress_policy.go` `getMatchFromIPBlock`); both list the
    ports as `tcp.dst=={5432,8443}` (`getL4Match`) and name the ACL NP:<namespace>:<policy>:Ingress:<rule>."""
    policy = {"metadata": {"name": "db", "namespace": "shop"},
              "spec": {"podSelector": {}, "policyTypes": ["Ingress"],
                       "ingress": [{"from": [{"ipBlock": {"cidr": "10.100.20.0/24"}},
                                             {"ipBlock": {"cidr": "10.200.0.0/16", "except": ["10.200.1.0/24"]}}],
                                    "ports": [{"protocol": "TCP", "port": 5432}, {"protocol": "TCP", "port": 8443}]}]}}
    pods = [ovn_kubernetes.Pod("shop", (("app", "db"),), "pod-a", "10.128.0.10")]
    group = ovn_kubernetes.hash_for_ovn("default-network-controller:NetworkPolicy:shop:db")

    def allows(version: str) -> tuple[list[str], list[list[str]]]:
        acls, commands = ovn_kubernetes.commands([policy], pods, tiers=True, version=version)
        return [a.match for a in acls if a.action == "allow-related"], commands

    old, _ = allows("v1.0.0")
    assert old == [f"ip4.src == 10.100.20.0/24 && tcp && tcp.dst=={{5432,8443}} && outport == @{group}",
                   f"ip4.src == 10.200.0.0/16 && ip4.src != {{10.200.1.0/24}} && tcp && tcp.dst=={{5432,8443}} && "
                   f"outport == @{group}"]
    new, commands = allows("v1.3.0")
    assert new == [f"(ip4.src == 10.100.20.0/24 || (ip4.src == 10.200.0.0/16 && ip4.src != {{10.200.1.0/24}})) && "
                   f"tcp && tcp.dst=={{5432,8443}} && outport == @{group}"]
    created = next(c for c in commands if c[1:3] == ["create", "ACL"] and "action=allow-related" in c)
    assert 'name="NP:shop:db:Ingress:0"' in created
    assert 'external_ids:"k8s.ovn.org/id"="default-network-controller:NetworkPolicy:shop:db:Ingress:0:tcp:-2"' \
        in created and 'external_ids:"ip-block-index"="-2"' in created, created


# ---------------------------------------------------------------- in the lab, with packets
@pytest.mark.lab
@pytest.mark.parametrize("programs", BOTH)
def test_vms_and_pods_across_two_azs_as_the_policy_says(programs: Programs) -> None:
    done = fabricgen("verify", "sites/openstack-k8s/fabric.yaml", "--format", "json", *prefix_args(programs))
    doc = json.loads(done.stdout)
    assert done.returncode == 0 and doc["mode"] == "data-plane", done.stdout + done.stderr
    flows = {(f["policy"], f["source"], f["destination"], f["protocol"], f["port"]): f for f in doc["flows"]}
    pod, vm = "k8s-prod-az/shop-web", "openstack/shop-db"
    into_vm = flows[("shop-web-to-shop-db", pod, vm, "tcp", 5432)]
    assert (into_vm["expected"], into_vm["observed"], into_vm["reply"]) == ("allow", "delivered", "delivered")
    assert into_vm["decidedBy"].startswith("Neutron security group fabricgen-shop-db: ACL to-lport 1002 "
                                           "allow-related `outport == @pg_")
    into_pod = flows[("shop-db-to-shop-web", vm, pod, "tcp", 8443)]
    assert (into_pod["expected"], into_pod["observed"], into_pod["reply"]) == ("allow", "delivered", "delivered")
    assert into_pod["decidedBy"].startswith("OVN-Kubernetes NetworkPolicy shop/fabricgen-shop-web: ACL to-lport 1001 "
                                            "allow-related `ip4.src == 10.100.20.0/24 && tcp && tcp.dst==8443")
    denied = {key: f for key, f in flows.items() if f["expected"] == "deny"}
    assert len(denied) == 6 and all(f["observed"] == "dropped" for f in denied.values())
    stranger = flows[("shop-web-to-shop-db: another source", "openstack/10.100.0.5", vm, "tcp", 5432)]
    assert stranger["decidedBy"] == ("Neutron's neutron_pg_drop: ACL to-lport 1001 drop "
                                     "`outport == @neutron_pg_drop && ip`")
    reverse = flows[("shop-web-to-shop-db: the reverse direction", vm, pod, "tcp", 5432)]
    assert reverse["decidedBy"].startswith("OVN-Kubernetes default deny of namespace shop (Ingress): ACL to-lport "
                                           "1000 drop")
    assert doc["pairs"] and all(p["outcome"] == "delivered" for p in doc["pairs"])


@pytest.fixture
def an_allow_all_security_group_on_the_vm(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second security group on the database VM's port, as an operator attaches one: Neutron's
    groups add up, so its rule lets in what fabricgen's group does not."""
    made = neutron.commands

    def with_another_group(cloud: str, playbook: list[Mapping[str, Any]], ports: Mapping[str, tuple[str, str]]
                           ) -> tuple[list[Acl], list[list[str]]]:
        acls, commands = made(cloud, playbook, ports)
        extra = {"name": "allow-all", "security_group_rules": [
            {"direction": "ingress", "protocol": "any", "remote_ip_prefix": "0.0.0.0/0"}]}
        ids = {"allow-all": neutron.group_id(cloud, "allow-all")}
        group = neutron_rows.port_group_name(ids["allow-all"])
        port = next(iter(ports.values()))[0]
        commands += [["pg-add", group, port]]
        for i, acl in enumerate(neutron_rows.group_acls(extra, ids)):
            commands += [[f"--id=@extra{i}", "create", "ACL", f"direction={acl.direction}", f"priority={acl.priority}",
                          f"match={json.dumps(acl.match)}", f"action={acl.action}"],
                         ["add", "Port_Group", group, "acls", f"@extra{i}"]]
        return acls, commands  # the extra group's ACLs are not fabricgen's: verify must name them as another's

    monkeypatch.setattr(neutron, "commands", with_another_group)


@pytest.mark.lab
@needs_25_03
def test_another_security_group_on_the_port_fails_verify_and_is_named(
        an_allow_all_security_group_on_the_vm: None) -> None:
    with assembly.running(build_file(OPENSTACK_K8S), data_plane=True, programs=DEBIAN13) as lab:
        flows = member_flows.prove_member_flows(lab)
    wrong = [f for f in flows if not f.ok]
    assert {f.policy for f in wrong} == {"shop-web-to-shop-db: another port", "shop-web-to-shop-db: another source",
                                         "shop-db-to-shop-web: the reverse direction"}, flows
    stranger = next(f for f in wrong if f.policy == "shop-web-to-shop-db: another source")
    assert (stranger.expected, stranger.observed) == ("deny", "delivered")
    assert stranger.decided_by.startswith("another ACL, priority 1002: `outport == @pg_")
    assert stranger.decided_by.endswith("&& ip4 && ip4.src == 0.0.0.0/0`")


def test_each_member_gets_a_vm_in_its_range_on_its_deployments_network() -> None:
    build = build_file(OPENSTACK_K8S)
    joins = {j.az: j for j in build.plan.joins}
    from fabricgen.lab.platforms import kubeovn

    network, _ = kubeovn.network_commands("openstack", "advertised-0", joins["openstack"].deployment.interconnect
                                          .advertise[0], joins["openstack"].deployment.interconnect.advertise[0]
                                          .network_address + 1, vm="vm-openstack-0")
    found = platform_policy.members(build, joins["openstack"], [network], tiers=True)
    vm = found.vms["shop-db"]
    assert (str(vm.vm_ip), vm.switch, vm.vm) == ("10.100.20.10", "advertised-0", "vm-openstack-shop-db")
    assert "shop-web" not in found.vms  # pods of the other deployment's cluster
    owners = {a.owner for a in found.acls}
    assert owners == {"Neutron's neutron_pg_drop", "Neutron security group fabricgen-shop-db"}


# ---------------------------------------------------------------- across two Kube-OVN zones
LAB = REPO / "sites" / "lab" / "fabric.yaml"
BACKBONES = ("    - name: hq-backbone\n      members: [{backbone: hq}]\n      defaultDeny: true\n"
             "    - name: ai-backbone\n      members: [{backbone: ai}]\n")


def backbone_policy() -> str:
    """sites/lab with hq's backbone protected: ai's backbone may reach it on tcp/22, nothing else."""
    text = edit(LAB.read_text(), "    - name: shared\n", BACKBONES + "    - name: shared\n")
    return edit(text, '    - {from: shared, to: prod-db, protocol: tcp, ports: ["5432"]}\n',
                '    - {from: shared, to: prod-db, protocol: tcp, ports: ["5432"]}\n'
                '    - {from: ai-backbone, to: hq-backbone, protocol: tcp, ports: ["22"]}\n')


@pytest.mark.lab
@needs_25_03
def test_a_policy_across_two_kube_ovn_zones_with_packets() -> None:
    """hq's backbone Subnet carries the policy's ACLs as Kube-OVN writes them; ai's backbone opens
    tcp/22 on it across the transit switch, its reply comes back through conntrack; another port,
    and dr's backbone, are dropped by hq's default deny. The pairs into hq that the policy denies
    (ICMP from ai, edge and dr) are `denied`, as the policy says, and every other pair delivered."""
    result = proof.prove(build_text(backbone_policy(), "sites/lab/fabric.yaml"), data_plane=True,
                         programs=DEBIAN13)
    flows = {(f.policy, f.source, f.destination, f.protocol, f.port): f for f in result.flows}
    allowed = flows[("ai-backbone-to-hq-backbone", "ai/ai-backbone", "hq/hq-backbone", "tcp", 22)]
    assert (allowed.expected, allowed.observed, allowed.reply) == ("allow", "delivered", "delivered"), \
        report.text(result, "sites/lab/fabric.yaml")
    assert allowed.decided_by == ("Kube-OVN Subnet backbone-hq: ACL to-lport 1200 allow-related "
                                  "`ip4.src == 172.30.20.0/24 && ip4.dst == 172.30.10.0/24 && tcp.dst == 22`")
    other_port = flows[("ai-backbone-to-hq-backbone: another port", "ai/ai-backbone", "hq/hq-backbone", "tcp", 23)]
    assert (other_port.expected, other_port.observed) == ("deny", "dropped")
    assert other_port.decided_by == "Kube-OVN Subnet backbone-hq: ACL to-lport 1100 drop `ip4.dst == 172.30.10.0/24`"
    stranger = next(f for f in result.flows if f.policy == "ai-backbone-to-hq-backbone: another source")
    assert (stranger.expected, stranger.observed) == ("deny", "dropped") and stranger.source != "ai/ai-backbone"
    assert all(f.ok for f in result.flows) and result.ok
    denied = {(p.source.az, p.target.az) for p in result.pairs if p.outcome == "denied"}
    assert denied == {("ai", "hq"), ("edge", "hq"), ("dr", "hq")}
    assert all(p.delivered for p in result.pairs if (p.source.az, p.target.az) not in denied)
    assert report.summary(result) == "9/12 pairs delivered, 3 denied by the policy"


# ---------------------------------------------------------------- Neutron and OVN-Kubernetes in one NB
def one_northbound_db() -> str:
    """sites/openstack-k8s with the shop's pods in a cluster of the OpenStack deployment itself (its
    own host k8s-node-3): one NB for Neutron and OVN-Kubernetes (the shared-overlay design, one NB/SB
    for VMs and pods), accepted with its reason (FG604 a warning), on OVN 24.03."""
    text = OPENSTACK_K8S.read_text()
    text = edit(text, "    consumers:\n      - platform: openstack\n",
                "    sharedDatabaseAcknowledged: \"lab: one NB for Neutron and OVN-Kubernetes\"\n"
                "    consumers:\n      - platform: openstack\n")
    # OVN-Kubernetes v1.3.0 writes ACL tiers: the shared deployment runs an OVN that has them (FG912)
    text = edit(text, '    ovnVersion: "23.03"', '    ovnVersion: "24.03"')
    text = edit(text, "          asn: 65111\n          uplinks: [eth0, eth1]\n",
                "          asn: 65111\n          uplinks: [eth0, eth1]\n      - name: k8s-node-3\n        ethernets:\n"
                "          - name: eth0\n          - name: eth1\n        tunnelEndpoint:\n"
                "          loopback: 10.255.0.12/32\n        bgp:\n          asn: 65112\n"
                "          uplinks: [eth0, eth1]\n")
    text = edit(text, "        distributedFloatingIps: false\n",
                "        distributedFloatingIps: false\n      - platform: kubernetes\n        name: k8s-shared\n"
                "        hosts: [k8s-node-3]\n        version: v1.3.0\n        apiServer: https://10.20.0.5:6443\n"
                "        clusterSubnet: 10.100.128.0/17\n        hostPrefix: 23\n        serviceCIDR: 172.31.0.0/16\n"
                "        gatewayMode: shared\n")
    return edit(text, "{cluster: k8s-prod, name: shop, podSelector: {app: web}, cidr: 10.128.0.0/14}",
                "{cluster: k8s-shared, name: shop, podSelector: {app: web}, cidr: 10.100.128.0/17}")


@pytest.mark.lab
@needs_25_03
def test_neutron_and_ovn_kubernetes_in_one_northbound_db() -> None:
    """Neutron's rows in tier 0 and OVN-Kubernetes' in tier 2 side by side in one NB: a VM and a pod
    of the same AZ reach each other exactly as the policy says, each direction decided by the
    destination's platform, the replies by conntrack."""
    from fabricgen.lab.ovn.databases import NB

    with assembly.running(build_text(one_northbound_db(), "sites/openstack-k8s/fabric.yaml"), data_plane=True,
                          programs=DEBIAN13) as lab:
        rows = lab.sandbox.rows(lab.sandbox.nb_db("openstack"), NB, "ACL", ["_uuid", "tier"])
        flows = member_flows.prove_member_flows(lab)
    assert sorted(int(r["tier"]) for r in rows) == [0] * 6 + [2] * 6
    assert len(flows) == 8 and all(f.ok for f in flows), flows
    by = {(f.policy, f.source, f.destination): f for f in flows}
    into_vm = by[("shop-web-to-shop-db", "openstack/shop-web", "openstack/shop-db")]
    into_pod = by[("shop-db-to-shop-web", "openstack/shop-db", "openstack/shop-web")]
    assert (into_vm.observed, into_vm.reply, into_pod.observed, into_pod.reply) == ("delivered",) * 4
    assert into_vm.decided_by.startswith("Neutron security group fabricgen-shop-db: ")
    assert into_pod.decided_by.startswith("OVN-Kubernetes NetworkPolicy shop/fabricgen-shop-web: ")
