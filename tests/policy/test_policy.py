"""One policy for pods and VMs: fabric.yaml's `policy` and the raw ACL fields of tenant subnets,
validated with located errors, and rendered as each platform's own objects.

The readers: OVN's match grammar (`fabricgen.model.acl_match`, after ovn-org/ovn `lib/expr.c`
and `lib/lex.c` v25.03.0), Kube-OVN's Subnet CRD (tests/crds) and Kubernetes' NetworkPolicy
schema (tests/render/test_k8s_schemas.py validates every rendered object), the apply-order replay
(tests/delivery/test_apply_order.py), and the import round trip (tests/day2/test_import.py, whose lab capture
holds the Subnets' acls as Kube-OVN stores them).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

import pytest
import yaml

from fabricgen.model import acl_match
from fabricgen.render import policy_kubeovn
from support.deployment_fabrics import shop_api_into_shop_db
from support.fabrics import REPO, build_file, build_text, diagnostic_lines, edit

LAB = REPO / "sites" / "lab" / "fabric.yaml"
OSK = REPO / "sites" / "openstack-k8s" / "fabric.yaml"
NAME = "sites/lab/fabric.yaml"


def subnet(build: Any, zone: str, name: str) -> dict[str, Any]:
    return next(o for o in build.objects(zone) if o["kind"] == "Subnet" and o["metadata"]["name"] == name)


# ---------------------------------------------------------------- OVN's match grammar
@pytest.mark.parametrize("text", [
    "ip4.src == 10.0.0.0/24 && tcp.dst == 5432",
    "ip4.dst == {10.1.0.0/16, 10.2.0.0/16,} && 8000 <= tcp.dst <= 8080",
    "outport == @ovn.sg.web && ip",
    "inport == \"vm-1\" && eth.src == 00:11:22:33:44:55",
    "ip6.src == fe80::1/64 || ip6.dst == ::1",
    "!(ip4.src == $as_ip4) && (tcp || udp)",
    "reg0[0..3] == 1 && ct.est && !ct.rel",
    "ip4.src == 10.0.0.0/255.255.0.0",
])
def test_ovn_accepts_these_matches(text: str) -> None:
    acl_match.parse(text)


@pytest.mark.parametrize(("text", "why"), [
    ("", "the match is empty"),
    ("ip4.src == ", "at character 12: syntax error at the end expecting constant"),
    ("(ip4", "at character 5: syntax error at the end expecting `)'"),
    ("ip4.src == 1.2.3.4 && ip || tcp", "&& and || must be parenthesized when used together"),
    ("ip4.src == 1.2.3.4; drop", "syntax error at `;' expecting end of input"),
    ("ip\n- direction: to-lport", "at character 4: syntax error at `-' expecting end of input"),
    ("ip4.src == \"unterminated", "Input ends inside quoted string."),
    ("1 < tcp.dst > 5", "range expressions must have the form `x < field < y' or `x > field > y'"),
    ("ip4.dst == 10.0.0.1 ip", "syntax error at `ip' expecting end of input"),
    ("x" * 5000, "at most 4096"),
])
def test_ovn_refuses_these_matches(text: str, why: str) -> None:
    with pytest.raises(acl_match.MatchError, match=re.escape(why)):
        acl_match.parse(text)


def test_a_field_ovn_does_not_have_is_refused_with_the_nearest() -> None:
    """OVN refuses a match naming a field its symbol table lacks (northd skips the ACL): an error,
    no longer a warning, with the field it most resembles."""
    with pytest.raises(acl_match.MatchError, match=re.escape("`tcp.dport' is no field of OVN 25.03 (lib/logical-"
                                                             "fields.c), so OVN refuses the match; did you mean "
                                                             "`tcp.dst'?")):
        acl_match.parse("ip4.src == 1.1.1.1 && tcp.dport == 5 && xxreg0 == 1")


# ---------------------------------------------------------------- rendering
def test_the_lab_tiers_become_subnet_acls() -> None:
    """prod-db admits its own subnet, prod-app and the shared services on 5432, and drops the rest."""
    build = build_file(LAB)
    assert subnet(build, "hq", "prod-db")["spec"]["acls"] == [
        {"direction": "to-lport", "priority": 1200, "match": "ip4.src == 10.100.1.0/24 && ip4.dst == 10.100.1.0/24",
         "action": "allow-related"},
        {"direction": "to-lport", "priority": 1200,
         "match": "ip4.src == 10.100.2.0/24 && ip4.dst == 10.100.1.0/24 && tcp.dst == 5432", "action": "allow-related"},
        {"direction": "to-lport", "priority": 1200,
         "match": "ip4.src == 10.100.10.0/24 && ip4.dst == 10.100.1.0/24 && tcp.dst == 5432",
         "action": "allow-related"},
        {"direction": "to-lport", "priority": 1100, "match": "ip4.dst == 10.100.1.0/24", "action": "drop"},
    ]
    assert "acls" not in subnet(build, "hq", "prod-web")["spec"]  # an open group: nothing to filter
    for zone in ("hq", "ai", "edge", "dr"):
        for obj in build.objects(zone):
            for acl in obj.get("spec", {}).get("acls", []) if obj["kind"] == "Subnet" else []:
                acl_match.parse(acl["match"])


def test_ranges_sets_and_protocols_as_ovn_writes_them() -> None:
    text = edit(LAB.read_text(), '- {from: prod-web, to: prod-app, protocol: tcp, ports: ["8080"]}',
                '- {from: prod-web, to: prod-app, protocol: tcp, ports: ["8080", "9000-9100"]}\n'
                '    - {from: shared, to: prod-app, protocol: icmp}\n'
                '    - {from: shared, to: prod-app, protocol: udp}')
    matches = [a["match"] for a in subnet(build_text(text, NAME), "hq", "prod-app")["spec"]["acls"]]
    assert matches == [
        "ip4.src == 10.100.2.0/24 && ip4.dst == 10.100.2.0/24",
        "ip4.src == 10.100.3.0/24 && ip4.dst == 10.100.2.0/24 && tcp.dst == 8080",
        "ip4.src == 10.100.3.0/24 && ip4.dst == 10.100.2.0/24 && 9000 <= tcp.dst <= 9100",
        "ip4.src == 10.100.10.0/24 && ip4.dst == 10.100.2.0/24 && icmp4",
        "ip4.src == 10.100.10.0/24 && ip4.dst == 10.100.2.0/24 && udp",
        "ip4.dst == 10.100.2.0/24",
    ]


def test_a_backbone_admits_its_nodes_as_kube_ovn_private_subnets_do() -> None:
    text = edit(LAB.read_text(), "    - name: shared\n", "    - name: hq-backbone\n"
                "      members: [{backbone: hq}, {backbone: ai}]\n      defaultDeny: true\n    - name: shared\n")
    acls = subnet(build_text(text, NAME), "hq", "backbone-hq")["spec"]["acls"]
    assert acls[0]["match"] == "ip4.src == {172.30.10.0/24, 172.30.20.0/24, 100.64.0.0/16} && ip4.dst == 172.30.10.0/24"
    assert acls[-1] == {"direction": "to-lport", "priority": policy_kubeovn.ACL_DENY_PRIORITY,
                        "match": "ip4.dst == 172.30.10.0/24", "action": "drop"}


def test_vms_and_pods_share_one_policy() -> None:
    """The shop's pods (OVN-Kubernetes) reach the database VMs (Neutron) on 5432, the VMs the pods on
    8443: a security group and a NetworkPolicy, each naming the other platform by address."""
    build = build_file(OSK)
    (policy,) = [o for o in build.objects("k8s-prod") if o["kind"] == "NetworkPolicy"]
    assert any(o["kind"] == "Namespace" and o["metadata"]["name"] == "shop" for o in build.objects("k8s-prod"))
    assert policy["spec"] == {
        "podSelector": {"matchLabels": {"app": "web"}},
        "policyTypes": ["Ingress"],
        "ingress": [
            {"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "shop"}},
                       "podSelector": {"matchLabels": {"app": "web"}}}]},
            {"from": [{"ipBlock": {"cidr": "10.100.20.0/24"}}], "ports": [{"protocol": "TCP", "port": 8443}]},
        ],
    }
    where = PurePosixPath("openstack-k8s/_host/openstack/openstack/region-one/security-groups.yml")
    playbook = yaml.safe_load(build.files[where].text)
    (task,) = playbook[0]["tasks"]
    group = task["openstack.cloud.security_group"]
    assert group["name"] == "fabricgen-shop-db" and group["cloud"] == "region-one"
    rules = group["security_group_rules"]
    assert {"description": "fabricgen shop-web-to-shop-db: tcp/5432 from 10.128.0.0/14", "direction": "ingress",
            "ether_type": "IPv4",
            "protocol": "tcp", "port_range_min": 5432, "port_range_max": 5432,
            "remote_ip_prefix": "10.128.0.0/14"} in rules
    assert {"description": "fabricgen shop-db: every egress", "direction": "egress", "ether_type": "IPv4",
            "protocol": "any"} in rules  # listed, or the module deletes Neutron's default egress rules
    # the module matches on the fields a rule gives and fails when two existing rules match one:
    # no listed rule may be a subset of another (openstack.cloud `security_group.py` 365-391)
    for i, a in enumerate(rules):
        for b in rules[i + 1:]:
            assert not (a.items() <= b.items() or b.items() <= a.items()), (a, b)


def test_a_network_policy_never_admits_every_source() -> None:
    """An empty `from` admits everything (Kubernetes NetworkPolicy): no rendered ingress has one."""
    for obj in build_file(OSK).objects("k8s-prod"):
        if obj["kind"] == "NetworkPolicy":
            assert all(entry["from"] for entry in obj["spec"]["ingress"])


def test_ten_thousand_rules_render_and_every_match_parses() -> None:
    rules = "".join(f'    - {{from: prod-web, to: prod-db, protocol: tcp, ports: ["{p}"]}}\n'
                    for p in range(10000, 20000))
    text = edit(LAB.read_text(), "  rules:\n", "  rules:\n" + rules)
    acls = subnet(build_text(text, NAME), "hq", "prod-db")["spec"]["acls"]
    assert len(acls) == 10000 + 4
    for acl in acls:
        acl_match.parse(acl["match"])


# ---------------------------------------------------------------- validation
BAD = """\
policy:
  groups:
    - name: prod-app
      members: [{tenantSubnet: {zone: hq, name: prod-app}}]
      defaultDeny: true
    - name: prod-db
      members: [{tenantSubnet: {zone: hq, name: prod-db}}, {cidr: 192.0.2.0/24}]
      defaultDeny: true
    - name: ghosts
      members: [{tenantSubnet: {zone: nowhere, name: x}}, {tenantSubnet: {zone: hq, name: nosuch}}]
    - name: open
      members: [{backbone: ai}]
    - name: twice
      members: [{tenantSubnet: {zone: hq, name: prod-app}}]
      defaultDeny: true
  rules:
    - {from: prod-app, to: prod-db, protocol: tcp, ports: ["5432"]}
    - {from: prod-app, to: prod-db, protocol: tcp, ports: ["5432"]}
    - {from: nobody, to: prod-db, protocol: tcp}
    - {from: prod-app, to: open, protocol: tcp}
    - {from: prod-db, to: prod-db, protocol: any}
    - {from: prod-app, to: prod-db, protocol: icmp, ports: ["1"]}
    - {from: open, to: prod-db, protocol: tcp, ports: ["9000-8000", "70000"]}

"""


def test_every_policy_problem_is_located_at_once() -> None:
    text = LAB.read_text()
    start = text.index("policy:\n")
    end = text.index("# How Argo CD and Flux deliver")
    text = text[:start] + BAD + text[end:]
    lines = diagnostic_lines(text, NAME)
    found = {(line.split(": ")[1], line.rsplit("[", 1)[1].rstrip("]")) for line in lines}
    assert found >= {
        ("policy.groups[1].members[1].cidr", "FG904"),
        ("policy.groups[2].members[0].tenantSubnet.zone", "FG901"),
        ("policy.groups[2].members[1].tenantSubnet.name", "FG901"),
        ("policy.groups[4].members[0]", "FG907"),
        ("policy.rules[1]", "FG906"),
        ("policy.rules[2].from", "FG901"),
        ("policy.rules[3].to", "FG902"),
        ("policy.rules[4].to", "FG902"),
        ("policy.rules[5].ports", "FG903"),
        ("policy.rules[6].ports[0]", "FG903"),  # backwards
        ("policy.rules[6].ports[1]", "FG903"),
    }, lines
    assert all(re.match(rf"{re.escape(NAME)}:\d+:\d+: ", line) for line in lines)
    assert "the rules before it already allow all of prod-app-to-prod-db; drop this one" in "\n".join(lines)


def test_a_member_is_one_thing() -> None:
    text = edit(LAB.read_text(), "      members: [{tenantSubnet: {zone: hq, name: prod-web}}]",
                "      members: [{tenantSubnet: {zone: hq, name: prod-web}, backbone: hq}, {}]")
    lines = diagnostic_lines(text, NAME)
    assert any("policy.groups[0].members[0]: a member is exactly one of tenantSubnet, backbone, cidr, namespace "
               "or openstack; this one has tenantSubnet and backbone: make each a member of its own" in line
               for line in lines), lines
    assert any("policy.groups[0].members[1]: a member is exactly one of" in line for line in lines), lines


RAW = """\
          - name: legacy
            cidr: 10.100.4.0/24
            private: false
            allowSubnets: [10.100.1.0/24]
            allowEWTraffic: true
            acls:
              - {direction: to-lport, priority: 1001, match: "ip4.src == 10.100.1.0/24", action: allow-related}
              - {direction: to-lport, priority: 1001, match: "ip4.src == 10.100.1.0/24", action: allow-related}
              - {direction: inbound, priority: 40000, match: "ip4.src == (", action: permit}
              - {direction: to-lport, priority: 1000, match: "ip4.sorce == 10.0.0.1", action: drop}
"""


def test_raw_subnet_acls_are_checked_as_kube_ovn_and_ovn_read_them() -> None:
    text = edit(LAB.read_text(), "          - {name: prod-web, cidr: 10.100.3.0/24}\n",
                "          - {name: prod-web, cidr: 10.100.3.0/24}\n" + RAW)
    lines = diagnostic_lines(text, NAME)
    at = "zones[0].vpcs[0].subnets[3]"
    joined = "\n".join(lines)
    for expected in (f"{at}.acls[1]: the same direction, priority and match as an earlier ACL",
                     f"{at}.acls[2].direction: 'inbound' is not allowed", f"{at}.acls[2].priority: ",
                     f"{at}.acls[2].action: 'permit' is not allowed",
                     f"{at}.acls[2].match: at character 12: syntax error at `(' expecting constant",
                     f"{at}.acls[3].match: at character 1: `ip4.sorce' is no field of OVN 25.03"):
        assert expected in joined, joined
    # without the schema errors, the warnings (which the second pass over a refused fabric leaves out)
    clean = "\n".join(line for line in text.splitlines() if "inbound" not in line).replace("ip4.sorce", "ip4.src")
    lines = diagnostic_lines(clean, NAME)
    joined = "\n".join(lines)
    for expected in (f"{at}.allowSubnets: warning: Kube-OVN reads allowSubnets only on a private subnet",):
        assert expected in joined, joined


def test_raw_acls_with_a_policy_on_the_same_subnet_are_refused() -> None:
    text = edit(LAB.read_text(), "          - {name: prod-db, cidr: 10.100.1.0/24}\n",
                "          - name: prod-db\n            cidr: 10.100.1.0/24\n            private: true\n")
    lines = diagnostic_lines(text, NAME)
    assert any("zones[0].vpcs[0].subnets[0].private: subnet prod-db is in group prod-db" in line and "[FG908]" in line
               for line in lines), lines


def test_raw_acls_render_as_written_and_survive_yaml() -> None:
    """A match is one YAML string whatever it holds: quotes and braces cannot add a key."""
    raw = ('          - name: legacy\n            cidr: 10.100.4.0/24\n            acls:\n'
           '              - {direction: from-lport, priority: 0, match: "inport == \\"a: b\\" && ip4.dst == {1.1.1.1, '
           '2.2.2.2}", action: reject}\n')
    text = edit(LAB.read_text(), "          - {name: prod-web, cidr: 10.100.3.0/24}\n",
                "          - {name: prod-web, cidr: 10.100.3.0/24}\n" + raw)
    build = build_text(text, NAME)
    acl = subnet(build, "hq", "legacy")["spec"]["acls"]
    assert acl == [{"direction": "from-lport", "priority": 0, "action": "reject",
                    "match": 'inport == "a: b" && ip4.dst == {1.1.1.1, 2.2.2.2}'}]
    (written,) = [d for d in yaml.safe_load_all(build.files[PurePosixPath("lab/hq/stage-2/tenant-vpcs.yaml")].text)
                  if d and d["metadata"]["name"] == "legacy"]
    assert written["spec"]["acls"] == acl


def test_ovn_kubernetes_before_1_1_beside_neutron_is_refused() -> None:
    """One NB for Neutron and OVN-Kubernetes v1.0: its start-up ACLSyncer would empty Neutron's
    security groups (the fabric is the shared one of tests/validation/test_platform_rules.py)."""
    from support.deployment_fabrics import SHARED

    text = SHARED.replace("    providerNetworks:\n", "    sharedDatabaseAcknowledged: \"lab\"\n    providerNetworks:\n")
    text = text.replace("        apiServer: https://10.0.0.5:6443\n", "        apiServer: https://10.0.0.5:6443\n"
                        "        version: v1.0.0\n")
    policy = ("policy:\n  groups:\n    - name: db\n      members: [{openstack: {cloud: region-one, cidr: "
              "10.9.0.0/24}}]\n      defaultDeny: true\n")
    lines = diagnostic_lines(text + policy, "sites/t/fabric.yaml")
    assert any("ovnDeployments[0].consumers[1].version: OVN-Kubernetes v1.0.0 shares this northbound database with "
               "Neutron" in line and "[FG910]" in line for line in lines), lines
    assert not any("[FG910]" in line for line in diagnostic_lines(text, "sites/t/fabric.yaml"))  # no policy


def office_and_dev() -> str:
    """sites/lab with a group office (10.100.0.0/16, outside every platform: it covers prod-app,
    prod-web and shared-svc) and a group dev (vpc-dev's dev-app, which reuses prod-app's range and
    has no route to vpc-prod), each allowed into prod-db."""
    text = edit(LAB.read_text(), "  rules:\n",
                "    - name: dev\n      members: [{tenantSubnet: {zone: hq, name: dev-app}}]\n"
                "    - name: office\n      members: [{cidr: 10.100.0.0/16}]\n  rules:\n")
    return edit(text, '    - {from: shared, to: prod-db, protocol: tcp, ports: ["5432"]}\n',
                '    - {from: shared, to: prod-db, protocol: tcp, ports: ["5432"]}\n'
                '    - {from: dev, to: prod-db, protocol: tcp, ports: ["5432"]}\n'
                '    - {from: office, to: prod-db, protocol: tcp, ports: ["5432"]}\n')


def test_a_source_range_another_workload_holds_or_a_source_without_a_route_is_named() -> None:
    """Kube-OVN admits a source into a subnet by `ip4.src`: prod-app holds dev's range and office's,
    prod-web and shared-svc office's, and each reaches prod-db (prod-db itself is not named: its
    own traffic is allowed); dev-app has no route to prod-db (FG911). tests/policy/test_policy_lab.py sends
    each of them."""
    assert [line for line in diagnostic_lines(office_and_dev(), "sites/t/fabric.yaml") if "[FG911]" in line] == [
        "sites/t/fabric.yaml:138:8: policy.rules[3].from: warning: rule dev-to-prod-db admits group dev by "
        "its addresses, which subnet prod-app (zone hq, VPC vpc-prod) holds too, and it reaches group "
        "prod-db: admitted as well, as no platform tells them apart; give the workloads distinct ranges "
        "[FG911]",
        "sites/t/fabric.yaml:138:8: policy.rules[3].from: warning: rule dev-to-prod-db: group dev in VPC "
        "vpc-dev of zone hq has no route to group prod-db (another VPC, not peered; a tenant VPC stays in its "
        "zone), so the rule opens nothing for it; peer the VPCs (zones[].peerings) or drop the rule [FG911]",
        "sites/t/fabric.yaml:139:8: policy.rules[4].from: warning: rule office-to-prod-db admits group office "
        "by its addresses, which subnet prod-app (zone hq, VPC vpc-prod), subnet prod-web (zone hq, VPC "
        "vpc-prod), subnet shared-svc (zone hq, VPC vpc-shared) hold too, and they reach group prod-db: "
        "admitted as well, as no platform tells them apart; give the workloads distinct ranges [FG911]",
    ]
    assert not any("[FG911]" in line for line in diagnostic_lines(LAB.read_text(), "sites/t/fabric.yaml"))


def test_members_are_compared_by_what_they_select() -> None:
    """Every pod of shop (shop-all) holds shop-web's app=web pods; app=api pods are shop-all's too,
    and not app=web's (one label, two values); a /16 of region-one holds shop-db's /24 (FG907);
    0.0.0.0/0 lets everything in (FG913); a protected kube-system is named (FG914)."""
    groups = ("    - name: shop-all\n      members:\n        - namespace: {cluster: k8s-prod, name: shop}\n"
              "      defaultDeny: true\n"
              "    - name: shop-api\n      members:\n"
              "        - namespace: {cluster: k8s-prod, name: shop, podSelector: {app: api}}\n"
              "      defaultDeny: true\n"
              "    - name: db-wide\n      members:\n        - openstack: {cloud: region-one, cidr: 10.100.0.0/16}\n"
              "      defaultDeny: true\n"
              "    - name: everything\n      members:\n        - openstack: {cloud: region-one, cidr: 0.0.0.0/0}\n"
              "      defaultDeny: true\n"
              "    - name: system\n      members:\n"
              "        - namespace: {cluster: k8s-prod, name: kube-system, cidr: 10.128.0.0/14}\n"
              "      defaultDeny: true\n"
              "  rules:\n")
    lines = diagnostic_lines(edit(OSK.read_text(), "  rules:\n", groups), NAME)
    assert [line for line in lines if "[FG710]" not in line] == [
        "sites/lab/fabric.yaml:172:11: policy.groups[2].members[0]: pods of namespace shop in cluster "
        "k8s-prod labelled app=web are selected by group shop-web too, which has defaultDeny: the platforms "
        "add both groups' rules up, so a rule into either opens both; make the selections disjoint (put the "
        "endpoints in one protected group, and let rules name it) [FG907]",
        "sites/lab/fabric.yaml:176:11: policy.groups[3].members[0]: pods of namespace shop in cluster "
        "k8s-prod labelled app=api are selected by group shop-all too, which has defaultDeny: the platforms "
        "add both groups' rules up, so a rule into either opens both; make the selections disjoint (put the "
        "endpoints in one protected group, and let rules name it) [FG907]",
        "sites/lab/fabric.yaml:180:11: policy.groups[4].members[0]: VMs of cloud region-one in "
        "10.100.20.0/24 are selected by group shop-db too, which has defaultDeny: the platforms add both "
        "groups' rules up, so a rule into either opens both; make the selections disjoint (put the "
        "endpoints in one protected group, and let rules name it) [FG907]",
        "sites/lab/fabric.yaml:184:11: policy.groups[5].members[0]: VMs of cloud region-one in "
        "10.100.20.0/24 are selected by group shop-db too, which has defaultDeny: the platforms add both "
        "groups' rules up, so a rule into either opens both; make the selections disjoint (put the "
        "endpoints in one protected group, and let rules name it) [FG907]",
        "sites/lab/fabric.yaml:184:42: policy.groups[5].members[0].openstack.cidr: group everything lets "
        "its own members in by their addresses, and 0.0.0.0/0 is every address: its defaultDeny would admit "
        "everything; give the range of the members' subnet [FG913]",
        "sites/lab/fabric.yaml:188:42: policy.groups[6].members[0].namespace.name: warning: group system "
        "denies by default into every pod of kube-system in cluster k8s-prod (DNS, the network's own "
        "agents, the API server's webhooks): every client the policy does not name is cut off; protect your "
        "own namespaces, or name each client in a rule [FG914]",
    ]
    assert not [line for line in diagnostic_lines(OSK.read_text(), NAME) if "[FG9" in line]


def _office(ranges: int, ports: int) -> str:
    """sites/openstack-k8s with a group of `ranges` outside /24s allowed into shop-db on `ports` ports."""
    members = ", ".join(f"{{cidr: 192.0.{i // 256}.{i % 256}/32}}" for i in range(ranges))
    text = edit(OSK.read_text(), "  rules:\n", f"    - name: office\n      members: [{members}]\n  rules:\n")
    opened = ", ".join(f'"{p}"' for p in range(8000, 8000 + ports))
    return text + f"    - {{from: office, to: shop-db, protocol: tcp, ports: [{opened}]}}\n"


def test_a_security_group_past_neutrons_quota_is_named_and_past_the_bound_refused() -> None:
    """One Neutron rule per source range and port range: 11 x 9 passes Neutron's default quota of
    100 (a warning), 101 x 100 the bound fabricgen renders (an error, nothing rendered); 10 x 9 is
    neither (FG915)."""
    def fg915(text: str) -> list[str]:
        return [line for line in diagnostic_lines(text, NAME) if "[FG915]" in line]

    assert fg915(_office(11, 9)) == [
        "sites/lab/fabric.yaml:166:7: policy.groups[1].name: warning: group shop-db's security group holds 103 "
        "rules (99 from rule office-to-shop-db: 11 source range(s) x 9 port range(s)); Neutron's default quota is "
        "100 per project (quota_security_group_rule), past which the playbook stops half-way: raise the "
        "project's quota, or use fewer, wider ranges [FG915]"]
    assert fg915(_office(101, 100)) == [
        "sites/lab/fabric.yaml:166:7: policy.groups[1].name: group shop-db's security group would hold 10104 "
        "rules (10100 from rule office-to-shop-db: 101 source range(s) x 100 port range(s)), more than the 10000 "
        "fabricgen renders; give wider source ranges or port ranges, or split the group [FG915]"]
    assert fg915(_office(10, 9)) == []
    # what the warning counts is what the playbook holds: 2 + 1 + 99 + 1, none merged away
    from fabricgen.render import policy_neutron

    build = build_text(_office(11, 9), NAME)
    assert len(policy_neutron.group_rules(build.plan, "shop-db")) == 103


# ---------------------------------------------------------------- review
def test_diff_words_policy_changes_as_a_reviewer_reads_them() -> None:
    from fabricgen.review.semantic_diff import review

    base = build_file(LAB)
    text = edit(LAB.read_text(), '- {from: shared, to: prod-db, protocol: tcp, ports: ["5432"]}',
                '- {from: prod-web, to: prod-db, protocol: tcp, ports: ["5432"]}')
    text = edit(text, "      members: [{tenantSubnet: {zone: hq, name: prod-app}}]\n      defaultDeny: true\n",
                "      members: [{tenantSubnet: {zone: hq, name: prod-app}}]\n")
    text = edit(text, '    - {from: prod-web, to: prod-app, protocol: tcp, ports: ["8080"]}\n', "")
    lines = [c.line() for c in review(base, build_text(text, NAME), NAME).cautions]
    assert "policy: now allowed: prod-web → prod-db tcp/5432" in lines, lines
    assert ("policy: no longer allowed: shared → prod-db tcp/5432: connections that use it are dropped once this "
            "syncs") in lines, lines
    assert "policy: prod-app loses defaultDeny: everything reaches it once this syncs" in lines, lines
    assert not any("prod-web → prod-app" in line for line in lines), lines  # open now: nothing is lost
    window = next(line for line in lines if "change: Kube-OVN deletes every ACL" in line)
    assert window.startswith("hq: the acls of Subnets hq/prod-app, hq/prod-db change"), window


def test_diff_names_only_the_ports_a_change_opens_or_closes() -> None:
    """Opening 5433 beside 5432 allows 5433, and takes nothing away; a range that replaces a port
    allows the rest of the range; closing one port of a range names that port alone."""
    from fabricgen.review.semantic_diff import review

    def policy_lines(old: str, new: str) -> list[str]:
        rule = '- {from: shop-web, to: shop-db, protocol: tcp, ports: [%s]}'
        base = build_text(edit(OSK.read_text(), rule % '"5432"', rule % old), NAME)
        head = build_text(edit(OSK.read_text(), rule % '"5432"', rule % new), NAME)
        return [c.line() for c in review(base, head, NAME).cautions if c.line().startswith("policy:")]

    assert policy_lines('"5432"', '"5432", "5433"') == ["policy: now allowed: shop-web → shop-db tcp/5433"]
    assert policy_lines('"5432"', '"5430-5440"') == ["policy: now allowed: shop-web → shop-db tcp/5430-5431,5433-5440"]
    assert policy_lines('"5430-5440"', '"5430-5434", "5436-5440"') == [
        "policy: no longer allowed: shop-web → shop-db tcp/5435: connections that use it are dropped once this syncs"]
    assert policy_lines('"5432", "5433"', '"5433", "5432"') == []


# ---------------------------------------------------------------- the playbook's reader
@pytest.mark.lab
def test_the_security_group_playbook_is_what_the_module_accepts(tmp_path: Any) -> None:
    """The `openstack.cloud.security_group` task validated against the module's own argument spec
    (openstack.cloud 2.5.0 as the `ansible` package ships it: `SecurityGroupModule.argument_spec`
    through `openstack_full_argument_spec`), and the playbook through `ansible-playbook
    --syntax-check`, which resolves the module."""
    import subprocess
    import sys
    from pathlib import Path

    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    from ansible_collections.openstack.cloud.plugins.module_utils.openstack import openstack_full_argument_spec
    from ansible_collections.openstack.cloud.plugins.modules.security_group import SecurityGroupModule

    spec = openstack_full_argument_spec(**SecurityGroupModule.argument_spec)
    build = build_file(OSK)
    where = PurePosixPath("openstack-k8s/_host/openstack/openstack/region-one/security-groups.yml")
    text = build.files[where].text
    for task in yaml.safe_load(text)[0]["tasks"]:
        args = task["openstack.cloud.security_group"]
        assert ArgumentSpecValidator(spec).validate(args).error_messages == []
    wrong = dict(args, security_group_rules=[{"ethertype": "IPv4"}])  # Neutron's spelling, not the module's
    assert ArgumentSpecValidator(spec).validate(wrong).error_messages
    book = tmp_path / "security-groups.yml"
    book.write_text(text)
    ansible = Path(sys.executable).with_name("ansible-playbook")
    done = subprocess.run([str(ansible), "-i", "localhost,", "--syntax-check", str(book)], capture_output=True,
                          text=True, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_a_misspelt_name_gets_the_nearest_one() -> None:
    text = edit(LAB.read_text(), '    - {from: shared, to: prod-db, protocol: tcp, ports: ["5432"]}',
                '    - {from: sharedd, to: prod-db, protocol: tcp, ports: ["5432"]}')
    text = edit(text, "      members: [{tenantSubnet: {zone: hq, name: prod-web}}]",
                "      members: [{tenantSubnet: {zone: hqq, name: prod-web}},\n"
                "                {tenantSubnet: {zone: hq, name: prod-dbb}}]")
    lines = "\n".join(diagnostic_lines(text, NAME))
    assert "policy.rules[2].from: no group 'sharedd' (did you mean 'shared'?); the groups are: prod-app, prod-db, " \
           "prod-web, shared [FG901]" in lines
    assert "tenantSubnet.zone: no zone 'hqq' in the fabric (did you mean 'hq'?)" in lines
    assert "tenantSubnet.name: zone hq has no tenant subnet 'prod-dbb' (did you mean 'prod-db'?)" in lines


@pytest.mark.parametrize(("written", "column"), [
    ("'ip4.src == 10.0.0.0/8 && tcp.dst == = 80'", "at"),     # quoted: the column of the '=' at fault
    ("ip4.src == 10.0.0.0/8 && tcp.dst == = 80", "at"),       # plain
    ('"ip4.src == 10.0.0.0/8 \\u0026\\u0026 tcp.dst == = 80"', "start"),  # escapes: the value's own column
])
def test_a_bad_match_is_located_at_the_character_at_fault(written: str, column: str) -> None:
    acl = f"              - {{direction: to-lport, priority: 1000, action: drop, match: {written}}}\n"
    text = edit(LAB.read_text(), "          - {name: prod-web, cidr: 10.100.3.0/24}\n",
                "          - name: prod-web\n            cidr: 10.100.3.0/24\n            acls:\n" + acl)
    (line,) = [x for x in diagnostic_lines(text, NAME) if ".match: " in x]
    number = text.splitlines().index(acl.rstrip("\n")) + 1
    start = acl.index(written) + 1
    expected = acl.index("= 80") + 1 if column == "at" else start
    assert line.startswith(f"{NAME}:{number}:{expected}: ") and "at character 37" in line, (line, expected)


def test_security_group_rules_are_written_as_neutron_stores_them() -> None:
    """Two pod groups both given as the cluster's pod range into shop-db tcp/5432 are one Neutron
    rule (its duplicate check, `securitygroups_db._rule_to_key`, leaves the description out: two
    would be refused with DuplicateSecurityGroupRuleInPost after the module's deletions), whose
    description names both; the whole port range is written as no range, as Neutron stores it
    (`_make_canonical_port_range`), so a second run changes nothing; a tcp and an `any` rule between
    the same groups each have a description of their own (the module leaves `protocol: any` out of
    what it matches on, and fails when two live rules match)."""
    text = shop_api_into_shop_db(OSK.read_text(),
                                 '{from: shop-api, to: shop-db, protocol: tcp, ports: ["5432", "1-65535"]}',
                                 "{from: shop-api, to: shop-db, protocol: any}")
    build = build_text(text, "sites/openstack-k8s/fabric.yaml")
    where = PurePosixPath("openstack-k8s/_host/openstack/openstack/region-one/security-groups.yml")
    (task,) = yaml.safe_load(build.files[where].text)[0]["tasks"]
    rules = [r for r in task["openstack.cloud.security_group"]["security_group_rules"]
             if r.get("remote_ip_prefix") == "10.128.0.0/14"]
    assert [(r["description"], r["protocol"], r.get("port_range_min"), r.get("port_range_max")) for r in rules] == [
        ("fabricgen shop-web-to-shop-db: tcp/5432 from 10.128.0.0/14; "
         "fabricgen shop-api-to-shop-db: tcp/5432 from 10.128.0.0/14", "tcp", 5432, 5432),
        ("fabricgen shop-api-to-shop-db: tcp from 10.128.0.0/14", "tcp", None, None),
        ("fabricgen shop-api-to-shop-db: any from 10.128.0.0/14", "any", None, None)]
    descriptions = [r["description"] for r in task["openstack.cloud.security_group"]["security_group_rules"]]
    assert len(descriptions) == len(set(descriptions))


def test_a_rule_a_later_rule_of_every_port_allows_is_named_in_either_order() -> None:
    """tcp/5432 then `any` between the same groups: the first allows nothing the second does not
    (FG906 said so only in the other order), and as two security group rules they would overlap."""
    text = OSK.read_text()
    text = edit(text, '    - {from: shop-web, to: shop-db, protocol: tcp, ports: ["5432"]}\n',
                '    - {from: shop-web, to: shop-db, protocol: tcp, ports: ["5432"]}\n'
                '    - {from: shop-web, to: shop-db, protocol: udp, ports: ["53"]}\n'
                '    - {from: shop-web, to: shop-db, protocol: any}\n')
    lines = [line for line in diagnostic_lines(text, "sites/openstack-k8s/fabric.yaml") if "[FG906]" in line]
    assert [line.split(": ")[1] for line in lines] == ["policy.rules[0]", "policy.rules[1]"], lines
    assert lines[0].endswith("rules[2] (shop-web-to-shop-db, any, every port) allows all of shop-web-to-shop-db "
                             "too; drop this one (the security group's rules would also overlap) [FG906]"), lines
    swapped = edit(text, '    - {from: shop-web, to: shop-db, protocol: any}\n', "")
    swapped = edit(swapped, '    - {from: shop-web, to: shop-db, protocol: tcp, ports: ["5432"]}\n',
                   '    - {from: shop-web, to: shop-db, protocol: any}\n'
                   '    - {from: shop-web, to: shop-db, protocol: tcp, ports: ["5432"]}\n')
    lines = [line for line in diagnostic_lines(swapped, "sites/openstack-k8s/fabric.yaml") if "[FG906]" in line]
    assert [line.split(": ")[1] for line in lines] == ["policy.rules[1]", "policy.rules[2]"], lines
