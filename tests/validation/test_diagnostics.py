# ruff: noqa: E501 - expected diagnostics are whole lines, compared exactly
"""Invalid input: every diagnostic code, as the exact `FILE:LINE:COL: path: message [CODE]` line.

Each case edits a valid base fabric (each edit's old text must occur exactly once)
and lists every diagnostic the result yields, in the order they are reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from fabricgen import report
from fabricgen.cli import main
from fabricgen.validation.rules import catalogue
from support.fabrics import REPO, diagnostic_lines, edit

NAME = "sites/t/fabric.yaml"

BASE = """\
apiVersion: fabricgen.io/v1alpha1
kind: Fabric
metadata:
  name: t
interconnection:
  encapsulation: vxlan
  database:
    zone: a
    members:
      - {node: a-1, address: 10.0.0.11}
zones:
  - name: a
    gatewayNodes: [a-1, a-2]
    transitAddress: 169.254.100.1
    backbone:
      cidr: 172.30.10.0/24
      gateway: 172.30.10.1
      network: {name: vsw-backbone}
    defaultVpc:
      staticRoutes:
        - {cidr: 192.168.0.0/24, nextHopIP: 172.30.10.254}
      policyRoutes:
        - {priority: 30000, match: "ip4.dst == 192.168.1.0/24", action: drop}
    vpcs:
      - name: vpc-1
        subnets:
          - {name: s1, cidr: 10.100.1.0/24}
      - name: vpc-2
        subnets:
          - {name: s2, cidr: 10.100.2.0/24}
    peerings:
      - vpcs: [vpc-1, vpc-2]
        connectCIDR: 169.254.0.0/30
  - name: b
    gatewayNodes: [b-1]
    transitAddress: 169.254.100.2
    cluster: {podCIDR: 10.56.0.0/16}
    backbone:
      cidr: 172.30.20.0/24
"""


@dataclass(frozen=True)
class Case:
    id: str
    edits: list[tuple[str, str]]
    expected: tuple[str, ...]

    def text(self) -> str:
        return edits(BASE, self.edits)


def case(id: str, edits: list[tuple[str, str]], *expected: str) -> Case:
    return Case(id, edits, expected)


def edits(text: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        text = edit(text, old, new)
    return text


def diagnose(text: str) -> list[str]:
    return diagnostic_lines(text, NAME)


# VPC NAT gateways (FG41x): the zone's external network, and a gateway on vpc-1 (or, with
# `after=S2_LINE`, on vpc-2) with extra lines under it.
EXTERNAL = ('    vpcs:\n', '    externalNetwork: {interface: eth1, cidr: 192.0.2.0/24, gateway: 192.0.2.1, excludeIps: [192.0.2.2..192.0.2.9]}\n    vpcs:\n')
S1_LINE = '          - {name: s1, cidr: 10.100.1.0/24}\n'
S2_LINE = '          - {name: s2, cidr: 10.100.2.0/24}\n'
NAT_OK = ('eips: [{name: eip-1, address: 192.0.2.10}]', 'snat: [{name: snat-1, eip: eip-1, internalCIDR: 10.100.1.0/24}]')


def nat_gateway(*lines: str, after: str = S1_LINE, subnet: str = "s1", lan: str = "10.100.1.254") -> tuple[str, str]:
    body = f"        natGateway:\n          name: gw-1\n          subnet: {subnet}\n          lanIp: {lan}\n"
    return after, after + body + "".join(f"          {line}\n" for line in lines)


CASES = [
    case('FG001-syntax', [('  name: t\n', '  name: [t\n')],
         "sites/t/fabric.yaml:5:16: (document): YAML syntax error: expected ',' or ']', but got ':'; fix the syntax at this position [FG001]",
         ),
    case('FG001-two-docs', [('kind: Fabric\n', 'kind: Fabric\n---\nkind: Fabric\n')],
         'sites/t/fabric.yaml:1:1: (document): expected exactly one YAML document, found 2; keep one Fabric per file [FG001]',
         ),
    case('FG002', [('  name: t\n', '  name: t\n  name: u\n')],
         "sites/t/fabric.yaml:5:3: metadata.name: duplicate key 'name': each key may appear once in a mapping; remove or merge the repeated entry [FG002]",
         ),
    case('FG002-nested', [('          - {name: s2, cidr: 10.100.2.0/24}\n', '          - {name: s2, cidr: 10.100.2.0/24, name: s3}\n')],
         "sites/t/fabric.yaml:30:45: zones[0].vpcs[1].subnets[0].name: duplicate key 'name': each key may appear once in a mapping; remove or merge the repeated entry [FG002]",
         ),
    case('FG003-unknown', [('  encapsulation: vxlan\n', '  encapsulation: vxlan\n  autoroute: true\n')],
         "sites/t/fabric.yaml:7:3: interconnection.autoroute: unknown field 'autoroute'; did you mean 'autoRoute'? allowed fields: autoRoute, database, encapsulation, kubeOvnVersion, transitSwitch [FG003]",
         ),
    case('FG003-label', [('  - name: b\n', '  - name: B_zone\n')],
         "sites/t/fabric.yaml:34:11: zones[1].name: 'B_zone' is not a valid name: use lower-case letters, digits and '-', starting and ending with a letter or digit [FG003]",
         ),
    case('FG003-path', [('  - name: b\n', '  - name: ../x\n')],
         "sites/t/fabric.yaml:34:11: zones[1].name: '../x' is not a valid name: use lower-case letters, digits and '-', starting and ending with a letter or digit [FG003]",
         ),
    case('FG003-cidr', [('      cidr: 172.30.20.0/24\n', '      cidr: 172.30.20.1/24\n')],
         "sites/t/fabric.yaml:39:13: zones[1].backbone.cidr: '172.30.20.1/24' has host bits set, but this field takes a network; did you mean 172.30.20.0/24? [FG003]",
         ),
    case('FG003-missing', [('      cidr: 172.30.20.0/24\n', '      gateway: 172.30.20.1\n')],
         "sites/t/fabric.yaml:38:5: zones[1].backbone.cidr: required field 'cidr' is missing; add it [FG003]",
         ),
    case('FG003-literal', [('  encapsulation: vxlan\n', '  encapsulation: stt\n')],
         "sites/t/fabric.yaml:6:18: interconnection.encapsulation: 'stt' is not allowed; expected 'geneve' or 'vxlan' [FG003]",
         ),
    case('FG003-literal-typo', [('  encapsulation: vxlan\n', '  encapsulation: vxlam\n')],
         "sites/t/fabric.yaml:6:18: interconnection.encapsulation: 'vxlam' is not allowed; did you mean 'vxlan'? expected 'geneve' or 'vxlan' [FG003]",
         ),
    case('FG003-literal-typo-platform', [('  - name: b\n', '  - name: b\n    platform: kubeovn\n')],
         "sites/t/fabric.yaml:35:15: zones[1].platform: 'kubeovn' is not allowed; did you mean 'kube-ovn'? expected 'harvester' or 'kube-ovn' [FG003]",
         ),
    case('FG003-type', [('    gatewayNodes: [b-1]\n', '    gatewayNodes: b-1\n')],
         "sites/t/fabric.yaml:35:19: zones[1].gatewayNodes: expected a list, found 'b-1'; write it as a list: [b-1] [FG003]",
         ),
    case('FG003-port', [('    zone: a\n', '    zone: a\n    nbPort: 70000\n')],
         'sites/t/fabric.yaml:9:13: interconnection.database.nbPort: input should be less than or equal to 65535 [FG003]',
         ),
    case('FG003-toplevel', [('apiVersion: fabricgen.io/v1alpha1\n', 'apiVersion: fabricgen.io/v1\n')],
         "sites/t/fabric.yaml:1:13: apiVersion: 'fabricgen.io/v1' is not allowed; expected 'fabricgen.io/v1alpha1' [FG003]",
         ),
    case('FG101', [('  - name: b\n', '  - name: a\n')],
         "sites/t/fabric.yaml:34:5: zones[1].name: zone name 'a' is already used by zones[0]; give every zone a unique name (it becomes the OVN az-name) [FG101]",
         ),
    case('FG102', [('    gatewayNodes: [b-1]\n', '    gatewayNodes: []\n')],
         'sites/t/fabric.yaml:35:5: zones[1].gatewayNodes: no gateway nodes: list at least one node (gw-nodes) that carries traffic to the transit switch, two or more for failover [FG102]',
         ),
    case('FG103', [('      - {node: a-1, address: 10.0.0.11}\n', '      - {node: a-1, address: 10.0.0.11}\n      - {node: a-2, address: 10.0.0.12}\n')],
         'sites/t/fabric.yaml:9:5: interconnection.database.members: 2 raft members: a raft cluster of 2 needs 2 to elect a leader, so it survives no more failures than 1 would; use 1 member or an odd number of at least 3 [FG103]',
         ),
    case('FG104', [('    zone: a\n', '    zone: a\n    vxlanMode: false\n')],
         "sites/t/fabric.yaml:9:5: interconnection.database.vxlanMode: vxlanMode is false with vxlan encapsulation: transit switches then get tunnel key 16711682, which VXLAN's 12 bits cannot carry, and packets vanish; set vxlanMode: true (or leave it out) [FG104]",
         ),
    case('FG104-geneve', [('  encapsulation: vxlan\n  database:\n', '  encapsulation: geneve\n  database:\n    vxlanMode: true\n')],
         'sites/t/fabric.yaml:8:5: interconnection.database.vxlanMode: warning: vxlanMode has no effect with geneve encapsulation and caps local datapath keys at 1023 once a vxlan gateway registers; remove it or switch to vxlan [FG104]',
         ),
    case('FG105', [('    zone: a\n', '    zone: hq\n')],
         "sites/t/fabric.yaml:8:5: interconnection.database.zone: zone 'hq' is not declared; use one of: a, b, or leave zone out for an IC database outside the fabric's clusters [FG105]",
         ),
    case('FG106', [('    transitAddress: 169.254.100.2\n', '')],
         "sites/t/fabric.yaml:34:5: zones[1].name: warning: zone 'b' has no transitAddress, so no other zone routes to its backbone; after it joins, read its address from `ovn-ic-sbctl show` (or run `fabricgen transit`) and set transitAddress [FG106]",
         ),
    case('FG107', [('  encapsulation: vxlan\n', '  encapsulation: vxlan\n  transitSwitch: {name: ts2, subnet: 169.254.200.0/24}\n')],
         "sites/t/fabric.yaml:7:19: interconnection.transitSwitch.name: Kube-OVN's IC server names its first transit switch 'ts'; 'ts2' would never exist; use 'ts' [FG107]",
         "sites/t/fabric.yaml:7:30: interconnection.transitSwitch.subnet: Kube-OVN's IC server gives 'ts' the subnet 169.254.100.0/24; 169.254.200.0/24 cannot take effect; use 169.254.100.0/24 [FG107]",
         "sites/t/fabric.yaml:15:5: zones[0].transitAddress: transit address 169.254.100.1 is outside the transit subnet 169.254.200.0/24; copy the zone's address from `ovn-ic-sbctl show` [FG206]",
         "sites/t/fabric.yaml:37:5: zones[1].transitAddress: transit address 169.254.100.2 is outside the transit subnet 169.254.200.0/24; copy the zone's address from `ovn-ic-sbctl show` [FG206]",
         ),
    case('FG108', [('    gatewayNodes: [a-1, a-2]\n', '    gatewayNodes: [a-1, a-2, a-1]\n')],
         "sites/t/fabric.yaml:13:30: zones[0].gatewayNodes[2]: gateway node 'a-1' is listed twice; list each node once [FG108]",
         ),
    case('FG109', [('      - {node: a-1, address: 10.0.0.11}\n', '      - {node: a-1, address: 10.0.0.11}\n      - {node: a-1, address: 10.0.0.11}\n      - {node: a-3, address: 10.0.0.13}\n')],
         "sites/t/fabric.yaml:11:10: interconnection.database.members[1].node: node 'a-1' is already a member; each raft member needs its own node [FG109]",
         "sites/t/fabric.yaml:11:21: interconnection.database.members[1].address: address 10.0.0.11 is already a member's; each raft member needs its own address [FG109]",
         ),
    case('FG110', [('interconnection:\n  encapsulation: vxlan\n  database:\n    zone: a\n    members:\n      - {node: a-1, address: 10.0.0.11}\n', '')],
         'sites/t/fabric.yaml:5:1: zones: zones are joined by OVN interconnection, but there is no interconnection section; add interconnection (with its database), or remove zones for a platform-only fabric [FG110]',
         ),
    case('FG201', [('      cidr: 172.30.20.0/24\n', '      cidr: 172.30.0.0/16\n')],
         "sites/t/fabric.yaml:39:7: zones[1].backbone.cidr: backbone 172.30.0.0/16 overlaps the backbone 172.30.10.0/24 of zone 'a'; give every zone its own non-overlapping range [FG201]",
         ),
    case('FG202', [('      cidr: 172.30.20.0/24\n', '      cidr: 10.56.1.0/24\n')],
         "sites/t/fabric.yaml:39:7: zones[1].backbone.cidr: backbone 10.56.1.0/24 overlaps the podCIDR 10.56.0.0/16 of zone 'b'; traffic for it would stay inside that cluster; pick a range outside every zone's pod, join and service CIDRs [FG202]",
         ),
    case('FG203', [('      cidr: 172.30.20.0/24\n', '      cidr: 169.254.100.128/25\n')],
         'sites/t/fabric.yaml:39:7: zones[1].backbone.cidr: backbone 169.254.100.128/25 overlaps the transit subnet 169.254.100.0/24; link-local ranges cannot be Kube-OVN subnets; pick another range [FG203]',
         ),
    case('FG204', [('      gateway: 172.30.10.1\n', '      gateway: 172.30.11.1\n')],
         'sites/t/fabric.yaml:17:7: zones[0].backbone.gateway: gateway 172.30.11.1 is outside 172.30.10.0/24; use an address inside it, e.g. 172.30.10.1 [FG204]',
         ),
    case('FG205', [('      gateway: 172.30.10.1\n', '      gateway: 172.30.10.255\n')],
         'sites/t/fabric.yaml:17:7: zones[0].backbone.gateway: gateway 172.30.10.255 is the broadcast address of 172.30.10.0/24; use a host address, e.g. 172.30.10.1 [FG205]',
         ),
    case('FG206', [('    transitAddress: 169.254.100.2\n', '    transitAddress: 169.254.101.2\n')],
         "sites/t/fabric.yaml:36:5: zones[1].transitAddress: transit address 169.254.101.2 is outside the transit subnet 169.254.100.0/24; copy the zone's address from `ovn-ic-sbctl show` [FG206]",
         ),
    case('FG207', [('    transitAddress: 169.254.100.2\n', '    transitAddress: 169.254.100.1\n')],
         "sites/t/fabric.yaml:36:5: zones[1].transitAddress: transit address 169.254.100.1 is also the address of zone 'a'; each zone has its own port on the transit switch; re-read both from `ovn-ic-sbctl show` [FG207]",
         ),
    case('FG208', [('    transitAddress: 169.254.100.2\n', '    transitAddress: 169.254.100.200\n')],
         "sites/t/fabric.yaml:36:5: zones[1].transitAddress: Kube-OVN picks its transit address at random from 169.254.100.0-169.254.100.127, so 169.254.100.200 cannot be the address of zone 'b'; copy the real address from `ovn-ic-sbctl show` [FG208]",
         ),
    case('FG209', [('    cluster: {podCIDR: 10.56.0.0/16}\n', '    cluster: {podCIDR: 10.56.0.0/16, primaryPodCIDR: 10.56.128.0/17}\n')],
         "sites/t/fabric.yaml:37:15: zones[1].cluster.podCIDR: podCIDR 10.56.0.0/16 overlaps the primary CNI's 10.56.128.0/17; with natOutgoing on ovn-default this masquerades cross-node traffic; renumber Kube-OVN (add-on, then Configuration, then the subnet) [FG209]",
         ),
    case('FG301', [('      cidr: 172.30.20.0/24\n', '      cidr: 172.30.20.0/24\n      natOutgoing: true\n')],
         'sites/t/fabric.yaml:40:7: zones[1].backbone.natOutgoing: natOutgoing: true on a backbone masquerades traffic to other zones, whose replies then never find the way back; set natOutgoing: false [FG301]',
         ),
    case('FG302', [('  encapsulation: vxlan\n', '  encapsulation: vxlan\n  autoRoute: true\n')],
         "sites/t/fabric.yaml:21:7: zones[0].defaultVpc.staticRoutes: explicit static routes with autoRoute: true: ovn-ic re-advertises them with this zone's transit address as next hop; turn autoRoute off or drop the routes [FG302]",
         ),
    case('FG303', [('  encapsulation: vxlan\n', '  encapsulation: vxlan\n  autoRoute: true\n'), ('        - {cidr: 192.168.0.0/24, nextHopIP: 172.30.10.254}\n', '        []\n'), ('    cluster: {podCIDR: 10.56.0.0/16}\n', '    cluster: {podCIDR: 10.54.0.0/17}\n'), ('    backbone:\n      cidr: 172.30.10.0/24\n', '    cluster: {podCIDR: 10.54.0.0/16}\n    backbone:\n      cidr: 172.30.10.0/24\n')],
         "sites/t/fabric.yaml:39:15: zones[1].cluster.podCIDR: podCIDR 10.54.0.0/17 overlaps the podCIDR 10.54.0.0/16 of zone 'a': with autoRoute: true both are learned as equal-cost routes; renumber, or set autoRoute: false (explicit routes) [FG303]",
         ),
    case('FG304', [('{priority: 30000,', '{priority: 29500,')],
         "sites/t/fabric.yaml:23:12: zones[0].defaultVpc.policyRoutes[0].priority: priority 29500 is Kube-OVN's IC policy priority; ovn-ic-controller deletes such policies without an origin every 5 s; use 31000 for allow rules [FG304]",
         ),
    case('FG305', [('{priority: 30000, match: "ip4.dst == 192.168.1.0/24", action: drop}', '{priority: 31000, match: "ip4.dst == 172.30.10.0/24", action: allow}')],
         'sites/t/fabric.yaml:23:29: zones[0].defaultVpc.policyRoutes[0].match: `ip4.dst == 172.30.10.0/24` at 31000 is the policy Kube-OVN installs for its own subnet; both would be deleted together; drop it (Kube-OVN adds it) or use another priority [FG305]',
         ),
    case('FG306', [('action: drop}', 'action: reroute}')],
         'sites/t/fabric.yaml:23:65: zones[0].defaultVpc.policyRoutes[0].action: reroute needs nextHopIP; add it [FG306]',
         ),
    case('FG307', [('        - {cidr: 192.168.0.0/24,', '        - {cidr: 172.30.20.0/24,')],
         "sites/t/fabric.yaml:21:12: zones[0].defaultVpc.staticRoutes[0].cidr: 172.30.20.0/24 is the backbone of zone 'b', which fabricgen already routes; Kube-OVN keeps one next hop per prefix, so the two would replace each other; remove this route [FG307]",
         ),
    case('FG401', [('      - name: vpc-2\n', '      - name: vpc-2\n        interconnect: true\n')],
         'sites/t/fabric.yaml:29:9: zones[0].vpcs[1].interconnect: Kube-OVN attaches only the default VPC ovn-cluster to the transit switch; tenant VPCs stay local; put cross-zone workloads on the backbone and set interconnect: false [FG401]',
         ),
    case('FG402', [('      - vpcs: [vpc-1, vpc-2]\n', '      - vpcs: [vpc-1, ovn-cluster]\n')],
         'sites/t/fabric.yaml:32:23: zones[0].peerings[0].vpcs[1]: custom VPCs cannot peer with the default VPC ovn-cluster; attach the workload to the backbone instead, or peer two tenant VPCs [FG402]',
         ),
    case('FG403', [('      network: {name: vsw-backbone}\n', '      network: {name: vsw-backbone, clusterNetwork: data}\n')],
         "sites/t/fabric.yaml:18:37: zones[0].backbone.network.clusterNetwork: overlay network 'vsw-backbone' is on cluster network 'data', but SUSE Virtualization labels every Kube-OVN NAD of the zone with the cluster network that carries Kube-OVN's tunnel, here 'mgmt' (overlayClusterNetwork); leave clusterNetwork out or set overlayClusterNetwork [FG403]",
         ),
    case('FG404', [('      network: {name: vsw-backbone}\n', '      network: {name: vsw.backbone}\n')],
         "sites/t/fabric.yaml:18:17: zones[0].backbone.network.name: network name 'vsw.backbone' contains a dot: the provider vsw.backbone.default.ovn would not have three fields and Kube-OVN would not treat it as OVN; use '-' [FG404]",
         ),
    case('FG405', [('{name: s2, cidr: 10.100.2.0/24}', '{name: s2, cidr: 10.100.0.0/16}')],
         'sites/t/fabric.yaml:32:9: zones[0].peerings[0].vpcs: peered VPCs overlap: vpc-1/s1 10.100.1.0/24 and vpc-2/s2 10.100.0.0/16; routes between them would be ambiguous [FG405]',
         ),
    case('FG406', [('      - vpcs: [vpc-1, vpc-2]\n', '      - vpcs: [vpc-1, vpc-9]\n')],
         "sites/t/fabric.yaml:32:23: zones[0].peerings[0].vpcs[1]: VPC 'vpc-9' is not declared in zone 'a'; declare it under vpcs [FG406]",
         ),
    case('FG407', [('{name: s2, cidr: 10.100.2.0/24}', '{name: s2, cidr: 10.100.2.0/24, network: {name: s1}}')],
         'sites/t/fabric.yaml:30:55: zones[0].vpcs[1].subnets[0].network.name: network default/s1 is already used by another subnet; Kube-OVN maps one NAD to one Subnet; give this subnet its own network [FG407]',
         ),
    case('FG408', [('{name: s2, cidr: 10.100.2.0/24}', '{name: s1, cidr: 10.100.2.0/24, network: {name: s1b}}')],
         "sites/t/fabric.yaml:30:14: zones[0].vpcs[1].subnets[0].name: Subnet 's1' already exists in zone 'a'; Subnet names are cluster-wide; rename it [FG408]",
         ),
    case('FG409', [('    peerings:\n', '      - name: vpc-1\n    peerings:\n')],
         "sites/t/fabric.yaml:31:9: zones[0].vpcs[2].name: VPC 'vpc-1' is declared twice in zone 'a'; merge them [FG409]",
         ),
    case('FG409-default', [('    peerings:\n', '      - name: ovn-cluster\n    peerings:\n')],
         'sites/t/fabric.yaml:31:9: zones[0].vpcs[2].name: ovn-cluster is the default VPC, which fabricgen manages itself; rename the tenant VPC [FG409]',
         ),
    # vpc-3 beside vpc-2 (the same range), both peered with vpc-1: vpc-1's routes go both ways
    case('FG405-peers-of-one-vpc', [('          - {name: s2, cidr: 10.100.2.0/24}\n', '          - {name: s2, cidr: 10.100.2.0/24}\n      - name: vpc-3\n        subnets:\n          - {name: s3, cidr: 10.100.2.0/25}\n'),
                                    ('        connectCIDR: 169.254.0.0/30\n', '        connectCIDR: 169.254.0.0/30\n      - vpcs: [vpc-1, vpc-3]\n        connectCIDR: 169.254.0.4/30\n')],
         "sites/t/fabric.yaml:37:9: zones[0].peerings[1].vpcs: VPC vpc-1 peers with vpc-2 and vpc-3, whose subnets overlap (vpc-2/s2 10.100.2.0/24, vpc-3/s3 10.100.2.0/25): vpc-1's routes to the range would go both ways, and replies reach either VPC; use disjoint ranges [FG405]"),
    case('FG405-same-vpc', [('          - {name: s2, cidr: 10.100.2.0/24}\n', '          - {name: s2, cidr: 10.100.2.0/24}\n          - {name: s3, cidr: 10.100.2.128/25}\n')],
         "sites/t/fabric.yaml:31:24: zones[0].vpcs[1].subnets[1].cidr: 10.100.2.128/25 overlaps 's2' (10.100.2.0/24) in the same VPC 'vpc-2'; use disjoint ranges [FG405]",
         ),
    case('FG406-self', [('[vpc-1, vpc-2]', '[vpc-1, vpc-1]')],
         'sites/t/fabric.yaml:32:9: zones[0].peerings[0].vpcs: a VPC cannot peer with itself; name two different VPCs [FG406]',
         ),
    case('FG406-small', [('connectCIDR: 169.254.0.0/30', 'connectCIDR: 169.254.0.0/31')],
         'sites/t/fabric.yaml:33:9: zones[0].peerings[0].connectCIDR: 169.254.0.0/31 is too small; use a /30 (connect IPs .1 and .2) [FG406]',
         ),
    case('FG306-next-hop', [('action: drop}', 'action: drop, nextHopIP: 172.30.10.9}')],
         'sites/t/fabric.yaml:23:79: zones[0].defaultVpc.policyRoutes[0].nextHopIP: nextHopIP only applies to reroute; Kube-OVN clears it for drop; remove it [FG306]',
         ),
    case('FG003-zone-path-dots', [('  - name: b\n', '  - name: ..\n')],
         "sites/t/fabric.yaml:34:11: zones[1].name: '..' is not a valid name: use lower-case letters, digits and '-', starting and ending with a letter or digit [FG003]",
         ),
    case('FG003-network-path', [('      network: {name: vsw-backbone}\n', '      network: {name: ../etc}\n')],
         "sites/t/fabric.yaml:18:23: zones[0].backbone.network.name: '../etc' is not a valid name: use lower-case letters, digits and '-', starting and ending with a letter or digit [FG003]",
         ),

    case('FG410', [nat_gateway(*NAT_OK)],
         "sites/t/fabric.yaml:28:9: zones[0].vpcs[0].natGateway: NAT gateway 'gw-1' needs the zone's external network; declare zones[0].externalNetwork (the dedicated NIC, its CIDR and gateway) [FG410]",
         ),
    case('FG411', [EXTERNAL, nat_gateway(lan="10.100.2.5")],
         "sites/t/fabric.yaml:32:11: zones[0].vpcs[0].natGateway.lanIp: lanIp 10.100.2.5 is outside subnet 's1' (10.100.1.0/24); pick a free host address of the subnet, e.g. its last one [FG411]",
         ),
    case('FG411-gateway', [EXTERNAL, nat_gateway(lan="10.100.1.1")],
         "sites/t/fabric.yaml:32:11: zones[0].vpcs[0].natGateway.lanIp: lanIp 10.100.1.1 is the gateway of subnet 's1'; pick a free host address of the subnet, e.g. its last one [FG411]",
         ),
    case('FG411-broadcast', [EXTERNAL, nat_gateway(lan="10.100.1.255")],
         'sites/t/fabric.yaml:32:11: zones[0].vpcs[0].natGateway.lanIp: lanIp 10.100.1.255 is the broadcast address of 10.100.1.0/24; pick a free host address of the subnet, e.g. its last one [FG411]',
         ),
    case('FG411-subnet', [EXTERNAL, nat_gateway(subnet="s2")],
         "sites/t/fabric.yaml:31:11: zones[0].vpcs[0].natGateway.subnet: subnet 's2' is not a subnet of VPC 'vpc-1' (its subnets: s1); put the gateway on one of them [FG411]",
         ),
    case('FG412', [EXTERNAL, nat_gateway('eips: [{name: eip-1, address: 198.51.100.5}]')],
         "sites/t/fabric.yaml:33:32: zones[0].vpcs[0].natGateway.eips[0].address: elastic IP 'eip-1': 198.51.100.5 is outside the external network 192.0.2.0/24; use a free address of 192.0.2.0/24, or omit address and let Kube-OVN pick one [FG412]",
         ),
    case('FG412-excluded', [EXTERNAL, nat_gateway('eips: [{name: eip-1, address: 192.0.2.5}]')],
         "sites/t/fabric.yaml:33:32: zones[0].vpcs[0].natGateway.eips[0].address: elastic IP 'eip-1': 192.0.2.5 is in the external network's excludeIps; use a free address of 192.0.2.0/24, or omit address and let Kube-OVN pick one [FG412]",
         ),
    case('FG412-duplicate', [EXTERNAL, nat_gateway('eips: [{name: eip-1, address: 192.0.2.10}, {name: eip-2, address: 192.0.2.10}]')],
         "sites/t/fabric.yaml:33:68: zones[0].vpcs[0].natGateway.eips[1].address: elastic IP 'eip-2': 192.0.2.10 is already elastic IP 'eip-1'; use a free address of 192.0.2.0/24, or omit address and let Kube-OVN pick one [FG412]",
         ),
    case('FG413', [EXTERNAL, nat_gateway('eips: [{name: eip-1}]', 'snat: [{name: snat-1, eip: eip-9, internalCIDR: 10.100.1.0/24}]')],
         "sites/t/fabric.yaml:34:33: zones[0].vpcs[0].natGateway.snat[0].eip: elastic IP 'eip-9' is not declared by NAT gateway 'gw-1'; add it under eips [FG413]",
         ),
    case('FG414', [EXTERNAL, nat_gateway('eips: [{name: eip-1}]', 'snat: [{name: snat-1, eip: eip-1, internalCIDR: 10.100.0.0/16}]')],
         "sites/t/fabric.yaml:34:45: zones[0].vpcs[0].natGateway.snat[0].internalCIDR: 10.100.0.0/16 is not inside a subnet of VPC 'vpc-1'; the gateway only sees the VPC's traffic; use a subnet's CIDR or part of it [FG414]",
         ),
    case('FG415', [EXTERNAL, nat_gateway('eips: [{name: eip-1}]', 'dnat: [{name: dnat-1, eip: eip-1, externalPort: 80, internalIp: 10.100.2.10, internalPort: 8080}]')],
         "sites/t/fabric.yaml:34:63: zones[0].vpcs[0].natGateway.dnat[0].internalIp: 10.100.2.10 is not inside a subnet of VPC 'vpc-1'; point the rule at an address of the VPC [FG415]",
         ),
    case('FG416', [EXTERNAL, nat_gateway('eips: [{name: eip-1}]', 'dnat:', '  - {name: dnat-1, eip: eip-1, externalPort: 80, internalIp: 10.100.1.10, internalPort: 8080}', '  - {name: dnat-2, eip: eip-1, externalPort: 80, internalIp: 10.100.1.11, internalPort: 80}')],
         "sites/t/fabric.yaml:36:42: zones[0].vpcs[0].natGateway.dnat[1].externalPort: tcp/80 on elastic IP 'eip-1' is already published by DNAT rule 'dnat-1'; use another port or EIP [FG416]",
         ),
    case('FG417', [('    vpcs:\n', '    externalNetwork: {interface: eth1, cidr: 10.100.0.0/16, gateway: 10.100.255.254}\n    vpcs:\n'), nat_gateway()],
         'sites/t/fabric.yaml:24:40: zones[0].externalNetwork.cidr: external network 10.100.0.0/16 overlaps vpc-1/s1 (10.100.1.0/24); the NAT gateway could not tell the two sides apart; use disjoint ranges [FG417]',
         ),
    case('FG418', [EXTERNAL, nat_gateway(), nat_gateway(after=S2_LINE, subnet="s2", lan="10.100.2.254")],
         "sites/t/fabric.yaml:37:11: zones[0].vpcs[1].natGateway.name: VpcNatGateway 'gw-1' already exists in zone 'a'; VpcNatGateway names are cluster-wide; rename it [FG418]",
         ),
    case('FG111', [('  encapsulation: vxlan\n', '  encapsulation: vxlan\n  kubeOvnVersion: v1.14.3\n')],
         "sites/t/fabric.yaml:7:3: interconnection.kubeOvnVersion: Kube-OVN 1.14 runs OVN 24.03, which has no vxlan_mode: its ovn-ic ignores the setting and gives transit switches tunnel keys VXLAN cannot carry, so cross-zone traffic is dropped; run Kube-OVN 1.15 or later (and say so in kubeOvnVersion) or use geneve [FG111]",
         ),
    case('FG111-image-tag', [('    zone: a\n', '    zone: a\n    image: docker.io/kubeovn/kube-ovn:v1.13.2\n')],
         "sites/t/fabric.yaml:9:5: interconnection.database.image: Kube-OVN 1.13 runs OVN 24.03, which has no vxlan_mode: its ovn-ic ignores the setting and gives transit switches tunnel keys VXLAN cannot carry, so cross-zone traffic is dropped; run Kube-OVN 1.15 or later (and say so in kubeOvnVersion) or use geneve [FG111]",
         ),
    case('FG111-unknown', [('    zone: a\n', '    zone: a\n    image: registry.example/kube-ovn@sha256:0123456789abcdef\n')],
         "sites/t/fabric.yaml:9:5: interconnection.database.image: warning: cannot tell the zones' Kube-OVN version from image 'registry.example/kube-ovn@sha256:0123456789abcdef'; VXLAN interconnection needs Kube-OVN 1.15 or later (OVN 25.03, vxlan_mode); state it as interconnection.kubeOvnVersion, e.g. v1.15.0 [FG111]",
         ),
    case('FG112', [('  encapsulation: vxlan\n', '  encapsulation: vxlan\n  kubeOvnVersion: v1.15.3\n'),
                   ('    zone: a\n', '    zone: a\n    image: docker.io/kubeovn/kube-ovn:v1.16.2\n')],
         "sites/t/fabric.yaml:10:5: interconnection.database.image: warning: the IC server runs 'docker.io/kubeovn/kube-ovn:v1.16.2', a Kube-OVN 1.16 image, while kubeOvnVersion says the zones run v1.15.3; use the zones' release (or leave image out: it follows kubeOvnVersion) [FG112]",
         ),
    case('FG112-no-patch', [('  encapsulation: vxlan\n', '  encapsulation: vxlan\n  kubeOvnVersion: v1.15\n')],
         "sites/t/fabric.yaml:7:3: interconnection.kubeOvnVersion: warning: kubeOvnVersion v1.15 names no patch release, so the IC server runs the default 'docker.io/kubeovn/kube-ovn:v1.16.2'; give the full version (e.g. v1.15.0) or set interconnection.database.image [FG112]",
         ),
    case('FG113', [('    zone: a\n', '')],
         "sites/t/fabric.yaml:7:3: interconnection.database: warning: the IC database runs outside every zone, so nothing in the zones' rollout sets vxlan_mode or waits for it, and a zone that joins first gets a transit switch keyed outside VXLAN's range; before the first zone joins (and after every rebuild of the database), run rendered/t/_host/_ic-db/configure-ic-db.sh where it reaches the IC northbound database, or run the database in a zone (database.zone); `fabricgen status` reports a database without it [FG113]",
         ),
    case('FG114', [('    zone: a\n', '    zone: a\n    nbPort: 16645\n')],
         "sites/t/fabric.yaml:9:5: interconnection.database.nbPort: nbPort 16645: the IC server fabricgen runs in zone a is Kube-OVN's start-ic-db.sh, which always listens on 6645, while every zone's ovn-ic-config would send its ovn-ic to 16645, so no zone joins; use 6645, or leave database.zone out and run the IC database yourself on the ports you choose [FG114]",
         ),
    case('FG115', [('      - {node: a-1, address: 10.0.0.11}\n', '      - {node: a-1, address: 10.0.0.11}\n      - {node: a-2, address: 10.0.0.12}\n      - {node: a-3, address: 10.0.0.13}\n    hosts: [10.0.0.11]\n')],
         "sites/t/fabric.yaml:13:5: interconnection.database.hosts: warning: ic-db-host names 1 of the 3 members (10.0.0.11): every zone's ovn-ic reaches the IC database only there, so it loses it while those are down, though 10.0.0.12, 10.0.0.13 still run it; list every member (or leave hosts out), and know that changing ic-db-host rebuilds every zone's interconnection (fabricgen diff says so) [FG115]",
         ),
    case('FG003-ic-host', [('      - {node: a-1, address: 10.0.0.11}\n', '      - {node: a-1, address: 10.0.0.11}\n    hosts: [IC_DB]\n')],
         "sites/t/fabric.yaml:11:13: interconnection.database.hosts[0]: 'IC_DB' is neither an IP address nor a DNS name (lower-case letters, digits, '-' and '.'); give the address or the name the zones reach the IC database at [FG003]",
         ),
    case('FG420', [('{name: s1, cidr: 10.100.1.0/24}', '{name: s1, cidr: 10.100.1.0/24, namespaces: [prod]}')],
         "sites/t/fabric.yaml:27:58: zones[0].vpcs[0].subnets[0].namespaces[0]: namespace 'prod' is not one of VPC 'vpc-1''s namespaces, and Kube-OVN refuses the Subnet (\"out of range to custom vpc\"); add it to the VPC's namespaces or remove it here [FG420]"),
    case('FG419', [('{name: s2, cidr: 10.100.2.0/24}', '{name: join, cidr: 10.100.2.0/24, network: {name: s2}}')],
         "sites/t/fabric.yaml:30:14: zones[0].vpcs[1].subnets[0].name: 'join' is Kube-OVN's join subnet between nodes and pods (--node-switch); a Subnet of this name would overwrite it in zone 'a'; choose another name [FG419]",
         ),
    case('FG419-backbone', [('      gateway: 172.30.10.1\n', '      gateway: 172.30.10.1\n      subnetName: ovn-default\n')],
         "sites/t/fabric.yaml:18:7: zones[0].backbone.subnetName: 'ovn-default' is Kube-OVN's default pod subnet (--default-ls); a Subnet of this name would overwrite it in zone 'a'; choose another name [FG419]",
         ),
    case('FG419-transit-switch', [('{name: s1, cidr: 10.100.1.0/24}', '{name: ts, cidr: 10.100.1.0/24, network: {name: s1}}')],
         "sites/t/fabric.yaml:27:14: zones[0].vpcs[0].subnets[0].name: 'ts' is the transit switch 'ts', which ovn-ic creates as a logical switch in every zone; a Subnet of this name would overwrite it in zone 'a'; choose another name [FG419]",
         ),
    case('FG003-selector-key', [EXTERNAL, nat_gateway('selector: {"zone: a": b, kubernetes.io/hostname: a-1}')],
         "sites/t/fabric.yaml:33:22: zones[0].vpcs[0].natGateway.selector['zone: a']: 'zone: a' is not a node label key: a name of letters, digits, '-', '_' and '.', at most 63, starting and ending with a letter or digit; Kube-OVN splits each selector entry at ':' and drops what does not fit; a prefix, if any, is a DNS subdomain followed by '/', e.g. kubernetes.io/hostname [FG003]",
         ),
    case('FG003-selector-value', [EXTERNAL, nat_gateway('selector: {node-role: "a:b", empty: ""}')],
         "sites/t/fabric.yaml:33:33: zones[0].vpcs[0].natGateway.selector.node-role: 'a:b' is not a node label value: empty, or letters, digits, '-', '_' and '.', at most 63, starting and ending with a letter or digit; Kube-OVN splits each selector entry at ':' and drops what does not fit [FG003]",
         ),
    case('FG003-vlan-interface', [('    vpcs:\n', '    externalNetwork: {interface: enp129s0f1np1, vlanId: 300, cidr: 192.0.2.0/24, gateway: 192.0.2.1}\n    vpcs:\n')],
         "sites/t/fabric.yaml:24:22: zones[0].externalNetwork: the VLAN sub-interface enp129s0f1np1.300 is longer than the 15 characters Linux allows in an interface name; use a NIC with a shorter name [FG003]",
         ),
]

# Codes that need more than one file or no file at all; tested through the CLI below.
CLI_CODES = {"FG000", "FG004"}
# The core rule families: loading and schema, interconnection, addressing, routing, tenancy.
CORE_FAMILIES = {"FG0", "FG1", "FG2", "FG3", "FG4"}


def test_base_is_valid() -> None:
    assert diagnose(BASE) == []


def test_every_code_has_an_exact_message_case() -> None:
    covered = {c.id.split("-")[0] for c in CASES} | CLI_CODES
    core = [code for code, _name, _summary in catalogue() if code[:3] in CORE_FAMILIES]
    assert len(core) >= 40
    missing = sorted(code for code in core if code not in covered)
    assert not missing, f"add a Case for {missing} to tests/validation/test_diagnostics.py"


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_diagnostic(c: Case) -> None:
    assert diagnose(c.text()) == list(c.expected)
    code = c.id.split("-")[0]
    assert any(line.endswith(f"[{code}]") for line in c.expected)


def test_not_a_mapping() -> None:
    assert diagnose("- apiVersion: fabricgen.io/v1alpha1\n- kind: Fabric\n") == [
        f"{NAME}:1:1: (document): expected a mapping with apiVersion, kind, metadata, interconnection and zones [FG003]",
    ]


def test_schema_errors_are_all_reported() -> None:
    text = edits(BASE, [
        ("  encapsulation: vxlan\n", "  encapsulation: stt\n"),
        ("  - name: b\n", "  - name: B\n"),
        ("      cidr: 172.30.20.0/24\n", "      cidr: 172.30.20.0/33\n"),
    ])
    lines = diagnose(text)
    assert [line.split(": ", 2)[:2] for line in lines] == [
        [f"{NAME}:6:18", "interconnection.encapsulation"],
        [f"{NAME}:34:11", "zones[1].name"],
        [f"{NAME}:39:13", "zones[1].backbone.cidr"],
    ]


def test_one_run_shows_the_schema_errors_and_the_rules_errors_beside_them() -> None:
    """A schema error no longer hides the semantic rules' errors elsewhere: the refused value is
    taken out (zone a's routes: the list item; b's gatewayNodes the item too) and the rest is judged;
    positions stay the file's, and no error echoes what was taken out."""
    text = edits(BASE, [
        ("        - {cidr: 192.168.0.0/24, nextHopIP: 172.30.10.254}\n",
         "        - {cidr: 192.168.0.0/33, nextHopIP: 172.30.10.254}\n"),
        ("    gatewayNodes: [a-1, a-2]\n", "    gatewayNodes: [a-1, a-1]\n"),
        ("      cidr: 172.30.20.0/24\n", "      cidr: 172.30.20.0/24\n      natOutgoing: true\n"),
        ("  - name: b\n", "  - name: b\n    colour: red\n"),
    ])
    lines = diagnose(text)
    assert [line.split(": ", 2)[:2] for line in lines] == [
        [f"{NAME}:13:25", "zones[0].gatewayNodes[1]"],
        [f"{NAME}:21:18", "zones[0].defaultVpc.staticRoutes[0].cidr"],
        [f"{NAME}:35:5", "zones[1].colour"],
        [f"{NAME}:41:7", "zones[1].backbone.natOutgoing"],
    ]
    assert [line.rsplit(" ", 1)[1] for line in lines] == ["[FG108]", "[FG003]", "[FG003]", "[FG301]"]
    # A zone taken out whole (its required backbone refused) leaves the other zones judged, at their
    # own indexes in the file, and nothing said of the zone itself or of what names it.
    text = edits(BASE, [("    backbone:\n      cidr: 172.30.10.0/24\n", "    backbone:\n      cidr: 300.30.10.0/24\n"),
                        ("      cidr: 172.30.20.0/24\n", "      cidr: 172.30.20.0/24\n      natOutgoing: true\n")])
    lines = diagnose(text)
    assert [line.split(": ", 2)[1] for line in lines] == ["zones[0].backbone.cidr", "zones[1].backbone.natOutgoing"]


def test_an_unknown_field_of_a_consumer_lists_its_fields_at_its_path_in_the_file() -> None:
    text = (REPO / "sites" / "openstack-k8s" / "fabric.yaml").read_text(encoding="utf-8")
    text = edit(text, "      - platform: openstack\n", "      - colour: blue\n        platform: openstack\n")
    (line,) = diagnostic_lines(text, "sites/openstack-k8s/fabric.yaml")
    at = text.splitlines().index("      - colour: blue") + 1
    assert line.startswith(f"sites/openstack-k8s/fabric.yaml:{at}:9: ovnDeployments[0].consumers[0].colour: "
                           "unknown field 'colour'; allowed fields: distributedFloatingIps, encapsulation, hosts, ")
    assert "platform, release, vniRanges [FG003]" in line


def test_a_refused_optional_field_of_a_consumer_resets_that_field_not_the_whole_consumer() -> None:
    """The model of a consumer's field is found through its platform tag, so a refused optional
    value goes back to its default and the rules judge the rest of the consumer: its unknown host
    is said, and no rule speaks as if the consumer were gone (no false FG605 on its gateway host)."""
    text = (REPO / "sites" / "openstack-k8s" / "fabric.yaml").read_text(encoding="utf-8")
    text = edit(text, "        hosts: [net1, cmp1]\n        metadata: true\n",
                "        hosts: [net1, cmp9]\n        metadata: maybe\n")
    lines = diagnostic_lines(text, "sites/openstack-k8s/fabric.yaml")
    assert [(line.split(": ", 2)[1], line.rsplit(" ", 1)[1]) for line in lines] == [
        ("ovnDeployments[0].consumers[0].hosts[1]", "[FG601]"),
        ("ovnDeployments[0].consumers[0].metadata", "[FG003]"),
    ], lines


# --- through the CLI: every problem at once, exit 1, nothing written, all formats ---

MANY = [
    ("    gatewayNodes: [b-1]\n", "    gatewayNodes: []\n"),
    ("    zone: a\n", "    zone: a\n    vxlanMode: false\n"),
    ("      gateway: 172.30.10.1\n", "      gateway: 172.30.11.1\n"),
    ("      cidr: 172.30.20.0/24\n", "      cidr: 172.30.20.0/24\n      natOutgoing: true\n"),
    ("    transitAddress: 169.254.100.2\n", ""),
]
MANY_LINES = [
    f"{NAME}:9:5: interconnection.database.vxlanMode: vxlanMode is false with vxlan encapsulation: transit switches then get tunnel key 16711682, which VXLAN's 12 bits cannot carry, and packets vanish; set vxlanMode: true (or leave it out) [FG104]",
    f"{NAME}:18:7: zones[0].backbone.gateway: gateway 172.30.11.1 is outside 172.30.10.0/24; use an address inside it, e.g. 172.30.10.1 [FG204]",
    f"{NAME}:35:5: zones[1].name: warning: zone 'b' has no transitAddress, so no other zone routes to its backbone; after it joins, read its address from `ovn-ic-sbctl show` (or run `fabricgen transit`) and set transitAddress [FG106]",
    f"{NAME}:36:5: zones[1].gatewayNodes: no gateway nodes: list at least one node (gw-nodes) that carries traffic to the transit switch, two or more for failover [FG102]",
    f"{NAME}:40:7: zones[1].backbone.natOutgoing: natOutgoing: true on a backbone masquerades traffic to other zones, whose replies then never find the way back; set natOutgoing: false [FG301]",
]


@pytest.fixture
def bad_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory with an invalid sites/t/fabric.yaml and a previous rendered/ tree."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sites" / "t").mkdir(parents=True)
    (tmp_path / NAME).write_text(edits(BASE, MANY), encoding="utf-8")
    old = tmp_path / "rendered" / "t" / "a"
    old.mkdir(parents=True)
    (old / "backbone.yaml").write_text("previous\n", encoding="utf-8")
    return tmp_path


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_render_reports_everything_and_writes_nothing(bad_site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(bad_site)
    assert main(["render", NAME, "--format", "text"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "\n".join(MANY_LINES) + "\nfabricgen: 4 error(s), 1 warning(s); nothing written\n"
    assert "Traceback" not in err
    assert snapshot(bad_site) == before


def test_validate_json(bad_site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", NAME, "--format", "json"]) == 1
    out, _err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["errors"] == 4 and doc["warnings"] == 1
    assert doc["diagnostics"][0] == {
        "file": NAME, "line": 9, "column": 5, "path": "interconnection.database.vxlanMode",
        "code": "FG104", "severity": "error",
        "message": "vxlanMode is false with vxlan encapsulation: transit switches then get tunnel key 16711682, which VXLAN's 12 bits cannot carry, and packets vanish; set vxlanMode: true (or leave it out)",
    }
    assert [(d["line"], d["column"], d["code"], d["severity"]) for d in doc["diagnostics"]] == [
        (9, 5, "FG104", "error"), (18, 7, "FG204", "error"), (35, 5, "FG106", "warning"),
        (36, 5, "FG102", "error"), (40, 7, "FG301", "error"),
    ]


def test_validate_github(bad_site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", NAME, "--format", "github"]) == 1
    _out, err = capsys.readouterr()
    lines = err.splitlines()
    assert lines[0] == (
        "::error file=sites/t/fabric.yaml,line=9,col=5,title=fabricgen FG104::interconnection.database.vxlanMode: "
        "vxlanMode is false with vxlan encapsulation: transit switches then get tunnel key 16711682, which VXLAN's "
        "12 bits cannot carry, and packets vanish; set vxlanMode: true (or leave it out)"
    )
    assert lines[2].startswith("::warning file=sites/t/fabric.yaml,line=35,col=5,title=fabricgen FG106::")
    assert len([line for line in lines if line.startswith("::")]) == 5


def test_auto_format_is_github_under_actions(bad_site: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert main(["validate", NAME]) == 1
    assert capsys.readouterr().err.startswith("::error file=sites/t/fabric.yaml,line=9,col=5,")


def test_github_escapes_newlines_and_property_separators() -> None:
    from fabricgen.diagnostics import Diagnostic

    d = Diagnostic("a,b:c.yaml", 1, 2, "x", "two\nlines 100%", "FG003")
    assert report.github_line(d) == "::error file=a%2Cb%3Ac.yaml,line=1,col=2,title=fabricgen FG003::x: two%0Alines 100%25"


def test_fg000_missing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "sites/none/fabric.yaml", "--format", "text"]) == 1
    assert capsys.readouterr().err.splitlines()[0] == "sites/none/fabric.yaml:1:1: (document): file not found [FG000]"


def test_fg004_two_fabrics_one_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "fabric.yaml").write_text(BASE, encoding="utf-8")
    assert main(["render", "one/fabric.yaml", "two/fabric.yaml", "--format", "text"]) == 1
    err = capsys.readouterr().err
    line = next(i for i, text in enumerate(BASE.splitlines(), 1) if text.strip().startswith("name: t"))
    assert err.splitlines()[0] == (
        f"two/fabric.yaml:{line}:9: metadata.name: site 't' is also rendered by one/fabric.yaml; "
        "both would own rendered/t/; give each fabric its own metadata.name [FG004]"
    )
    assert not (tmp_path / "rendered").exists()


def test_fg004_validate_reports_it_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "fabric.yaml").write_text(BASE, encoding="utf-8")
    assert main(["validate", "one/fabric.yaml", "two/fabric.yaml", "--format", "text"]) == 1
    err = capsys.readouterr().err
    line = next(i for i, text in enumerate(BASE.splitlines(), 1) if text.strip().startswith("name: t"))
    assert err.splitlines()[0] == (
        f"two/fabric.yaml:{line}:9: metadata.name: site 't' is also rendered by one/fabric.yaml; "
        "both would own rendered/t/; give each fabric its own metadata.name [FG004]"
    )
    assert not (tmp_path / "rendered").exists()


@pytest.mark.parametrize(("lines", "ok"), [
    ("  kubeOvnVersion: '1.15'\n", True),  # stated, wins over the image tag below
    ("", False),
    ("  encapsulation: geneve\n", True),  # geneve needs no vxlan_mode
])
def test_kube_ovn_version_for_vxlan(lines: str, ok: bool) -> None:
    text = edits(BASE, [("    zone: a\n", "    zone: a\n    image: registry.example:5000/kube-ovn:v1.14.9@sha256:01ab\n"),
                        ("  encapsulation: vxlan\n", "  encapsulation: vxlan\n" + lines if "encapsulation" not in lines
                         else lines)])
    found = [line for line in diagnose(text) if "[FG111]" in line]
    assert (found == []) == ok, found


def test_a_zone_may_hold_the_transit_subnets_first_address() -> None:
    """Kube-OVN draws a zone's transit address from offsets 0-127 of the subnet, 0 included
    (kubeovn/kube-ovn pkg/util/net.go GenerateRandomIP: rand.Int below 2^(host bits - 1), added to
    the network address; pkg/ovn_ic_controller acquireLrpAddress): 169.254.100.0 is an address a
    zone can really have, unlike a deployment's, which is set by hand (FG702)."""
    text = (REPO / "sites" / "lab" / "fabric.yaml").read_text()
    found = diagnose(text.replace("transitAddress: 169.254.100.71", "transitAddress: 169.254.100.0"))
    assert not [line for line in found if "warning:" not in line]
