"""Located diagnostics of the FG5xx (deployments, hosts) and FG6xx (consumers) rules.

Each case breaks the CloudStack sample or a small OpenStack/Kubernetes fabric in one
place and expects the exact `FILE:LINE:COL: path: message [CODE]` line.
"""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from support.deployment_fabrics import BASE, NAME, SHARED
from support.fabrics import build_text, diagnostic_lines
from support.fabrics import edit as edit_text


def diagnostics(text: str) -> list[str]:
    return diagnostic_lines(text, NAME)


def test_base_is_valid() -> None:
    assert diagnostics(BASE) == []


CASES = [
    ("FG502", ("          interface: eth1.2000\n", "          interface: eth9\n"),
     "sites/t/fabric.yaml:32:11: ovnDeployments[0].hosts[0].tunnelEndpoint.interface: interface 'eth9' is "
     "not declared on host 'kvm01'; declare it under ethernets or vlans (with its address) [FG502]"),
    ("FG503", ("          interface: eth1.2000\n", "          interface: cloudbr1\n"),
     "sites/t/fabric.yaml:32:11: ovnDeployments[0].hosts[0].tunnelEndpoint.interface: 'cloudbr1' is an OVS "
     "bridge: it switches guest and provider traffic and is no routed host interface; put the tunnel "
     "endpoint on a VLAN sub-interface (e.g. eth1.2000 with link eth1) or a loopback [FG503]"),
    ("FG504", ("            addresses: [10.250.0.21/20]\n", ""),
     "sites/t/fabric.yaml:31:11: ovnDeployments[0].hosts[0].tunnelEndpoint.interface: interface 'eth1.2000' "
     "has no address, so ovn-encap-ip would be empty; add the routed tunnel address (e.g. 10.250.0.11/20) "
     "to its addresses [FG504]"),
    ("FG505", ("            id: 2000\n", "            id: 4095\n"),
     "sites/t/fabric.yaml:28:13: ovnDeployments[0].hosts[0].vlans[0].id: VLAN id 4095 is outside 1-4094 "
     "(0 means untagged, 4095 is reserved); use the tag the switch trunks [FG505]"),
    ("FG506", ("            link: eth1\n", "            link: eth7\n"),
     "sites/t/fabric.yaml:29:13: ovnDeployments[0].hosts[0].vlans[0].link: link 'eth7' is not a declared "
     "ethernet of host 'kvm01'; declare it under ethernets (declared: eth0, eth1) [FG506]"),
    ("FG507", ("      - name: kvm02\n", "      - name: kvm02\n        systemId: kvm01\n"),
     "sites/t/fabric.yaml:37:9: ovnDeployments[0].hosts[1].systemId: system-id 'kvm01' is also the "
     "system-id of host 'kvm01'; the two chassis would replace each other in the southbound database; "
     "make it unique [FG507]"),
    ("FG508", ("          loopback: 10.255.0.2/32\n", "          loopback: 10.250.0.21/32\n"),
     "sites/t/fabric.yaml:40:11: ovnDeployments[0].hosts[1].tunnelEndpoint.loopback: tunnel address "
     "10.250.0.21 is also the tunnel address of host 'kvm01'; tunnels to both would end at one of them; "
     "give every chassis its own address [FG508]"),
    ("FG509", ("            bridge: cloudbr1\n", "            bridge: br-ex\n"),
     "sites/t/fabric.yaml:35:13: ovnDeployments[0].hosts[0].bridgeMappings[0].bridge: bridge 'br-ex' is "
     "not declared on host 'kvm01'; ovn-controller would map physnet1 to nothing; declare it under "
     "bridges (declared: cloudbr0, cloudbr1) [FG509]"),
    ("FG511", ("        bgp:\n          asn: 65002\n          uplinks: [eth0]\n", ""),
     "sites/t/fabric.yaml:40:11: ovnDeployments[0].hosts[1].tunnelEndpoint.loopback: loopback "
     "10.255.0.2/32 is only reachable if BGP announces it; add bgp (asn, uplinks) to the host [FG511]"),
    ("FG515", ("          - name: eth1\n        bridges:", "          - name: eth1\n          - name: eth1\n"
                                                                "            mtu: 9000\n        bridges:"),
     "sites/t/fabric.yaml:20:13: ovnDeployments[0].hosts[0].ethernets[2].name: 'eth1' is already declared on "
     "host 'kvm01' as an ethernet; netplan keeps one definition per interface name (two ethernets merge, an "
     "ethernet and a bridge or VLAN of one name fail netplan generate); declare it once or rename it [FG515]"),
    ("FG515", ("          - name: cloudbr1\n", "          - name: eth0\n"),
     "sites/t/fabric.yaml:24:13: ovnDeployments[0].hosts[0].bridges[1].name: 'eth0' is already declared on "
     "host 'kvm01' as an ethernet; netplan keeps one definition per interface name (two ethernets merge, an "
     "ethernet and a bridge or VLAN of one name fail netplan generate); declare it once or rename it [FG515]"),
    ("FG515", ("          - name: eth1.2000\n", "          - name: eth1\n"),
     "sites/t/fabric.yaml:27:13: ovnDeployments[0].hosts[0].vlans[0].name: 'eth1' is already declared on "
     "host 'kvm01' as an ethernet; netplan keeps one definition per interface name (two ethernets merge, an "
     "ethernet and a bridge or VLAN of one name fail netplan generate); declare it once or rename it [FG515]"),
    ("FG516", ("          - name: cloudbr1\n", "          - name: br-int\n"),
     "sites/t/fabric.yaml:24:13: ovnDeployments[0].hosts[0].bridges[1].name: bridge 'br-int' is the "
     "integration bridge ovn-controller creates and owns: it sets its ports, flows and fail-mode, and "
     "netplan's OVS units would fight it; do not declare it; remove it or use another name [FG516]"),
    ("FG516", ("        ethernets:\n          - name: eth0\n        tunnelEndpoint:",
               "        ethernets:\n          - name: eth0\n          - name: lo\n"
               "            addresses: [10.255.0.9/32]\n        tunnelEndpoint:"),
     "sites/t/fabric.yaml:39:13: ovnDeployments[0].hosts[1].ethernets[1].name: ethernet 'lo' is the loopback "
     "interface; a loopback tunnel endpoint (tunnelEndpoint.loopback) is written on it by fabricgen itself; "
     "do not declare it; remove it or use another name [FG516]"),
    ("FG605", ("      - name: kvm02\n", "      - name: kvm02\n        gatewayChassis: true\n"),
     "sites/t/fabric.yaml:37:9: ovnDeployments[0].hosts[1].gatewayChassis: host 'kvm02' is no OpenStack "
     "chassis: enable-chassis-as-gw is read only by Neutron, which would schedule its router gateways "
     "here; remove gatewayChassis or add the host to an OpenStack consumer [FG605]"),
    ("FG603", ("        hosts: [kvm01]\n", "        hosts: [kvm01]\n        overlayMTU: 1450\n"),
     "sites/t/fabric.yaml:48:9: ovnDeployments[0].consumers[0].overlayMTU: overlay MTU 1450 does not fit a "
     "1500 underlay: geneve needs 58 bytes, so at most 1442; lower it or raise underlayMTU [FG603]"),
    ("FG602", ("        hosts: [kvm01]\n", "        hosts: [kvm01]\n        encapsulation: vxlan\n"),
     "sites/t/fabric.yaml:48:9: ovnDeployments[0].consumers[0].encapsulation: 'zone1' uses vxlan but the "
     "deployment's chassis use geneve; chassis only build tunnels over a common type (one vxlan chassis "
     "puts the whole deployment in VXLAN mode); use the deployment's encapsulation [FG602]"),
    ("FG517", ("      clientNetworks: [10.0.0.0/24]\n", "      clientNetworks: [10.0.0.0/24]\n      sbPort: 6641\n"),
     "sites/t/fabric.yaml:12:7: ovnDeployments[0].databases.sbPort: port 6641 is also nbPort: the northbound "
     "and southbound ovsdb-servers of a controller cannot both listen on it; give each its own port "
     "(defaults 6641 and 6642) [FG517]"),
    ("FG517", ("        - host: mgmt2\n          address: 10.0.0.10\n      clientNetworks: [10.0.0.0/24]\n",
               "        - host: mgmt2\n          address: 10.0.0.10\n        - host: mgmt3\n"
               "          address: 10.0.0.11\n        - host: mgmt4\n          address: 10.0.0.12\n"
               "      clientNetworks: [10.0.0.0/24]\n      nbPort: 6644\n"),
     "sites/t/fabric.yaml:16:7: ovnDeployments[0].databases.nbPort: port 6644 is a raft port: the 3 "
     "members connect to each other on 6643 (northbound) and 6644 (southbound), which ovn-central.nft opens "
     "to the members alone; use another port [FG517]"),
    ("FG517", ("      - platform: cloudstack\n        name: zone1\n        hosts: [kvm01]\n",
               "      - platform: cloudstack\n        name: zone1\n        hosts: [kvm01]\n  - name: dc2\n"
               "    databases:\n      members:\n        - host: mgmt2\n          address: 10.0.0.99\n"
               "      clientNetworks: [10.0.0.0/24]\n      nbPort: 6642\n      sbPort: 6652\n"),
     "sites/t/fabric.yaml:54:7: ovnDeployments[1].databases.nbPort: port 6642 is also the southbound port of "
     "deployment 'dc' on controller mgmt2 (10.0.0.10): two ovsdb-servers on one host cannot both listen on "
     "it; give this deployment other ports [FG517]"),
    ("FG518", ("      - name: public\n        physicalNetwork: physnet1\n",
               "      - name: public\n        physicalNetwork: physnet1\n      - name: public\n"
               "        port: public-2\n        physicalNetwork: physnet1\n"),
     "sites/t/fabric.yaml:15:9: ovnDeployments[0].providerNetworks[1].name: provider network 'public' is "
     "already declared; configure-ovn-central.sh makes one logical switch per name: rename it or merge the "
     "two [FG518]"),
    ("FG518", ("      - name: public\n        physicalNetwork: physnet1\n",
               "      - name: public\n        physicalNetwork: physnet1\n      - name: storage\n"
               "        port: public-external\n        physicalNetwork: physnet1\n"),
     "sites/t/fabric.yaml:16:9: ovnDeployments[0].providerNetworks[1].port: port 'public-external' is "
     "already the port of provider network 'public'; a logical switch port sits on one switch: give this "
     "network another port name [FG518]"),
    # netplan writes ethernets as a mapping; the fabric takes a list of named items
    ("FG003", ("          - name: eth0\n          - name: eth1\n        bridges:",
               "          eth0: {}\n          eth1: {}\n        bridges:"),
     "sites/t/fabric.yaml:18:11: ovnDeployments[0].hosts[0].ethernets: expected a list, found a mapping "
     "keyed by name; write one list item per entry, with the key as its name: '- name: eth0' [FG003]"),
    ("FG608", ("        hosts: [kvm01]\n", "        hosts: [kvm01]\n        publicNetworkDevice: eth1\n"),
     "sites/t/fabric.yaml:48:9: ovnDeployments[0].consumers[0].publicNetworkDevice: 'eth1' is not a bridge "
     "on host 'kvm01' (bridges: cloudbr0, cloudbr1); the CloudStack agent plugs the public network into "
     "this device, so it must be an OVS bridge: name a declared bridge, or declare 'eth1' under the "
     "host's bridges [FG608]"),
    ("FG601", ("      - platform: cloudstack\n        name: zone1\n        hosts: [kvm01]\n",
               "      - platform: cloudstack\n        name: zone1\n        hosts: [kvm01]\n"
               "      - platform: openstack\n        name: region-one\n        hosts: [kvm01]\n"),
     "sites/t/fabric.yaml:50:17: ovnDeployments[0].consumers[1].hosts[0]: host 'kvm01' already belongs to 'zone1'; "
     "a chassis serves one platform: each platform's agent (nova-compute and Neutron's OVN agents, the CloudStack "
     "agent, ovnkube-node) owns the host's Open vSwitch settings (bridge mappings, gateway options, the VM or pod "
     "ports), and configure-ovn-host.sh writes one platform's; give each platform hosts of its own [FG601]"),
    ("FG601", ("        hosts: [kvm01]\n", "        hosts: [kvm01, kvm09]\n"),
     "sites/t/fabric.yaml:47:24: ovnDeployments[0].consumers[0].hosts[1]: host 'kvm09' is not a host of "
     "deployment 'dc'; declare it under hosts (declared: kvm01, kvm02) [FG601]"),
]


@pytest.mark.parametrize(("code", "edit", "expected"), CASES, ids=[c[0] for c in CASES])
def test_located_message(code: str, edit: tuple[str, str], expected: str) -> None:
    old, new = edit
    assert old in BASE
    found = diagnostics(BASE.replace(old, new, 1))
    assert expected in found, "\n".join(found)
    assert all(f"[{code}]" in line for line in found if line == expected)


def test_consumer_platform_typo_is_located_with_a_suggestion() -> None:
    """The platform tag selects the consumer's fields: its own line, and a near miss suggested."""
    found = diagnostics(BASE.replace("      - platform: cloudstack\n", "      - platform: cloudstak\n", 1))
    line = next(i for i, text in enumerate(BASE.splitlines(), 1) if text == "      - platform: cloudstack")
    assert found == [
        f"sites/t/fabric.yaml:{line}:19: ovnDeployments[0].consumers[0].platform: 'cloudstak' is not allowed; "
        "did you mean 'cloudstack'? expected one of 'cloudstack', 'openstack', 'kubernetes' [FG003]"]



FG604_ERROR = (
    "sites/t/fabric.yaml:48:9: ovnDeployments[0].consumers[1].platform: OVN-Kubernetes 'k8s' shares this "
    "NB/SB pair with 'region-one': it deletes every logical switch it does not own at startup (Neutron's "
    "included) and every chassis that is not a Kubernetes node every 5 minutes; give each platform its own "
    "deployment and join them with OVN interconnection by setting interconnect on each, or set "
    "sharedDatabaseAcknowledged: \"<your reason>\" on the deployment to run it anyway [FG604]")


def test_shared_database_refused() -> None:
    assert diagnostics(SHARED) == [FG604_ERROR]


def test_shared_database_acknowledged_is_a_warning() -> None:
    text = SHARED.replace("    providerNetworks:\n",
                          "    sharedDatabaseAcknowledged: \"lab only, rebuilt every night\"\n"
                          "    providerNetworks:\n")
    assert diagnostics(text) == [
        "sites/t/fabric.yaml:49:9: ovnDeployments[0].consumers[1].platform: warning: OVN-Kubernetes 'k8s' "
        "shares this NB/SB pair with 'region-one': it deletes every logical switch it does not own at startup "
        "(Neutron's included) and every chassis that is not a Kubernetes node every 5 minutes; give each "
        "platform its own deployment and join them with OVN interconnection by setting interconnect on each "
        "(accepted by sharedDatabaseAcknowledged) [FG604]"]


def test_ovn_kubernetes_version_pinned() -> None:
    text = SHARED.replace("        apiServer:", "        version: v1.4.0\n        apiServer:")
    assert (
        "sites/t/fabric.yaml:51:9: ovnDeployments[0].consumers[1].version: OVN-Kubernetes v1.4.0 removed "
        "central mode (--nb-address, --sb-address): it runs its own databases per node; pin v1.3.0 (the last "
        "release with central mode) to use this deployment's databases [FG606]"
    ) in diagnostics(text)


def test_kubernetes_directory_cannot_be_a_zone() -> None:
    zones = """interconnection:
  database:
    members:
      - node: k8s-node
        address: 10.10.10.11
zones:
  - name: k8s
    gatewayNodes: [k8s-node]
    transitAddress: 169.254.100.71
    backbone:
      cidr: 172.30.10.0/24
"""
    text = SHARED.replace("ovnDeployments:\n", zones + "ovnDeployments:\n")
    found = diagnostics(text)
    assert any(line.endswith("ovnDeployments[0].consumers[1].name: 'k8s' is already the name of a zone; "
                             "both would write rendered/<site>/k8s/; rename the cluster [FG607]")
               for line in found), "\n".join(found)


def test_empty_fabric() -> None:
    text = "apiVersion: fabricgen.io/v1alpha1\nkind: Fabric\nmetadata:\n  name: t\n"
    assert diagnostics(text) == [
        "sites/t/fabric.yaml:3:1: metadata: the fabric declares nothing to render; add zones (Kube-OVN "
        "interconnection) or ovnDeployments (an OVN with its hosts and platforms) [FG500]"]


def test_provider_network_named_like_the_transit_switch() -> None:
    """ovn-ic copies the transit switch `ts` into an interconnected deployment's NB (ovn-org/ovn
    ic/ovn-ic.c, ts_run): a provider network of that name would be a second switch `ts`."""
    from test_deployment_interconnect_rules import BASE as JOINED

    text = JOINED.replace("    hosts:\n      - name: net1\n",
                          "    providerNetworks:\n      - name: ts\n        physicalNetwork: physnet1\n"
                          "    hosts:\n      - name: net1\n        bridges:\n          - name: br-ex\n"
                          "        bridgeMappings:\n          - physicalNetwork: physnet1\n"
                          "            bridge: br-ex\n", 1)
    line = text.splitlines().index("      - name: ts") + 1
    assert diagnostics(text) == [
        f"sites/t/fabric.yaml:{line}:9: ovnDeployments[0].providerNetworks[0].name: provider network 'ts' is "
        "named like the transit switch, which ovn-ic copies into this deployment's northbound database; "
        "rename it [FG518]"]


def test_two_raft_clusters_on_one_controller_are_refused() -> None:
    """Raft takes 6643 and 6644 on every member, with no field to move it: two raft deployments
    on one controller cannot both run (FG519); ovn-central.nft would open both to each's members."""
    three = ("        - host: mgmt2\n          address: 10.0.0.10\n"
             "        - host: mgmt3\n          address: 10.0.0.11\n"
             "        - host: mgmt4\n          address: 10.0.0.12\n"
             "      clientNetworks: [10.0.0.0/24]\n")
    text = edit_text(BASE, "        - host: mgmt2\n          address: 10.0.0.10\n      clientNetworks: [10.0.0.0/24]\n",
                     three)
    text = edit_text(text, "      - platform: cloudstack\n        name: zone1\n        hosts: [kvm01]\n",
                     "      - platform: cloudstack\n        name: zone1\n        hosts: [kvm01]\n  - name: dc2\n"
                     "    databases:\n      members:\n        - host: mgmt5\n          address: 10.0.0.13\n"
                     "        - host: mgmt6\n          address: 10.0.0.14\n        - host: mgmt3\n"
                     "          address: 10.0.0.11\n      clientNetworks: [10.0.0.0/24]\n      nbPort: 6651\n"
                     "      sbPort: 6652\n")
    assert diagnostic_lines(text, NAME) == [
        "sites/t/fabric.yaml:59:11: ovnDeployments[1].databases.members[2].host: controller mgmt3 (10.0.0.11) is "
        "also a member of deployment 'dc', and both run a raft cluster: raft takes ports 6643 and 6644 on every "
        "member, which ovn-ctl gives no field to change; put this deployment's members on other hosts [FG519]"]


def test_two_deployments_on_one_controller_get_a_table_each() -> None:
    """A controller that serves two single-member deployments (their own NB/SB ports): each
    deployment's ovn-central.nft has a table of its own, so loading one never deletes the other's,
    and each removes the one-deployment table a host may hold from before."""
    text = edit_text(BASE, "      - platform: cloudstack\n        name: zone1\n        hosts: [kvm01]\n",
                     "      - platform: cloudstack\n        name: zone1\n        hosts: [kvm01]\n  - name: dc2\n"
                     "    databases:\n      members:\n        - host: mgmt2\n          address: 10.0.0.10\n"
                     "      clientNetworks: [10.0.0.0/24]\n      nbPort: 6651\n      sbPort: 6652\n")
    assert diagnostic_lines(text, NAME) == []
    files = build_text(text, NAME).files
    tables = {}
    for deployment in ("dc", "dc2"):
        nft = files[PurePosixPath("t", "_host", deployment, "controllers", "mgmt2", "ovn-central.nft")].text
        tables[deployment] = [line for line in nft.splitlines() if line.startswith(("table", "delete"))]
    assert tables["dc2"] == ["table inet fabricgen_ovn_central", "delete table inet fabricgen_ovn_central",
                             "table inet fabricgen_ovn_central_dc2", "delete table inet fabricgen_ovn_central_dc2",
                             "table inet fabricgen_ovn_central_dc2 {"]
    assert tables["dc"][2:] == ["table inet fabricgen_ovn_central_dc", "delete table inet fabricgen_ovn_central_dc",
                                "table inet fabricgen_ovn_central_dc {"]
    single = build_text(BASE, NAME).files[PurePosixPath("t", "_host", "dc", "controllers", "mgmt2", "ovn-central.nft")]
    assert "table inet fabricgen_ovn_central {" in single.text
