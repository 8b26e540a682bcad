"""Located diagnostics of the FG7xx rules (OVN deployments joined to the interconnection),
and what the plan derives from `interconnect:` (routes, names, MAC).

Each case breaks a small fabric (one Kube-OVN zone, two interconnected deployments) in
one place and expects the exact `FILE:LINE:COL: path: message [CODE]` lines.
"""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from fabricgen.pipeline import Build
from fabricgen.plan.joins import transit_mac
from support.fabrics import build_text, diagnostic_lines, edit

NAME = "sites/t/fabric.yaml"

BASE = """\
apiVersion: fabricgen.io/v1alpha1
kind: Fabric
metadata:
  name: t
interconnection:
  database:
    members:
      - node: ic-db1
        address: 10.20.2.11
zones:
  - name: hq
    platform: kube-ovn
    gatewayNodes: [hq-gw1]
    transitAddress: 169.254.100.23
    backbone:
      cidr: 172.30.10.0/24
ovnDeployments:
  - name: os
    databases:
      members:
        - host: ctl1
          address: 10.20.0.11
      clientNetworks: [10.20.0.0/24]
    hosts:
      - name: net1
        ethernets:
          - name: eth0
        tunnelEndpoint:
          loopback: 10.255.0.1/32
        bgp:
          asn: 65101
          uplinks: [eth0]
    interconnect:
      transitAddress: 169.254.100.200
      gatewayChassis: [net1]
      advertise: [10.100.0.0/16]
  - name: k8s
    databases:
      members:
        - host: k8s-db1
          address: 10.20.1.10
      clientNetworks: [10.20.1.0/24]
    hosts:
      - name: node1
        systemId: node1-chassis
        ethernets:
          - name: eth0
        tunnelEndpoint:
          loopback: 10.255.1.1/32
        bgp:
          asn: 65201
          uplinks: [eth0]
      - name: node2
        ethernets:
          - name: eth0
        tunnelEndpoint:
          loopback: 10.255.1.2/32
        bgp:
          asn: 65202
          uplinks: [eth0]
    interconnect:
      azName: k8s-az
      transitAddress: 169.254.100.201
      gatewayChassis: [node2, node1]
      advertise: [10.128.0.0/14, 10.96.0.0/16]
"""


def diagnostics(text: str) -> list[str]:
    return diagnostic_lines(text, NAME)


def test_base_is_valid() -> None:
    assert diagnostics(BASE) == []


OS_TRANSIT = "      transitAddress: 169.254.100.200\n"
K8S_TRANSIT = "      transitAddress: 169.254.100.201\n"

FG710_WARNING = (
    "sites/t/fabric.yaml:68:9: ovnDeployments[1].consumers[0].platform: warning: OVN-Kubernetes in "
    "central mode deletes, at start-up, logical switches it does not own that carry other_config (the "
    "transit switch among them), and every 5 minutes SB chassis that are not its nodes (the remote IC "
    "gateways ovn-ic registers); ovn-ic restores both, but cross-AZ traffic drops meanwhile; re-run "
    "configure-ovn-ic.sh after each ovnkube restart and monitor the transit switch, or keep this "
    "cluster out of the interconnection [FG710]")

CASES = [
    pytest.param(
        BASE.split("zones:\n")[0].split("interconnection:\n")[0] + "zones:\n" + BASE.split("zones:\n")[1], [
        "sites/t/fabric.yaml:5:1: zones: zones are joined by OVN interconnection, but there is no "
        "interconnection section; add interconnection (with its database), or remove zones for a "
        "platform-only fabric [FG110]",
        "sites/t/fabric.yaml:28:5: ovnDeployments[0].interconnect: deployment 'os' joins the OVN "
        "interconnection, but the fabric has no interconnection section; add interconnection (its IC "
        "database and transit switch; database.zone may be left out for an IC database outside the "
        "fabric) [FG701]",
        "sites/t/fabric.yaml:56:5: ovnDeployments[1].interconnect: deployment 'k8s' joins the OVN "
        "interconnection, but the fabric has no interconnection section; add interconnection (its IC "
        "database and transit switch; database.zone may be left out for an IC database outside the "
        "fabric) [FG701]",
    ], id="FG701"),
    pytest.param(edit(BASE, OS_TRANSIT, "      transitAddress: 169.254.101.200\n"), [
        "sites/t/fabric.yaml:34:7: ovnDeployments[0].interconnect.transitAddress: transit address "
        "169.254.101.200 is outside the transit subnet 169.254.100.0/24; pick an unused address from "
        "169.254.100.128-169.254.100.254 [FG702]",
    ], id="FG702-outside"),
    pytest.param(edit(BASE, OS_TRANSIT, "      transitAddress: 169.254.100.255\n"), [
        "sites/t/fabric.yaml:34:7: ovnDeployments[0].interconnect.transitAddress: transit address "
        "169.254.100.255 is the broadcast address of 169.254.100.0/24; pick an unused address from "
        "169.254.100.128-169.254.100.254 [FG702]",
    ], id="FG702-broadcast"),
    pytest.param(edit(BASE, OS_TRANSIT, "      transitAddress: 169.254.100.50\n"), [
        "sites/t/fabric.yaml:34:7: ovnDeployments[0].interconnect.transitAddress: transit address "
        "169.254.100.50 is in 169.254.100.0-169.254.100.127, where Kube-OVN picks its zones' addresses "
        "at random, so a zone may take it on its next join; set an address from "
        "169.254.100.128-169.254.100.254 [FG703]",
    ], id="FG703"),
    pytest.param(edit(BASE, OS_TRANSIT, "      transitAddress: 169.254.100.23\n"), [
        "sites/t/fabric.yaml:34:7: ovnDeployments[0].interconnect.transitAddress: transit address "
        "169.254.100.23 is in 169.254.100.0-169.254.100.127, where Kube-OVN picks its zones' addresses "
        "at random, so a zone may take it on its next join; set an address from "
        "169.254.100.128-169.254.100.254 [FG703]",
        "sites/t/fabric.yaml:34:7: ovnDeployments[0].interconnect.transitAddress: transit address "
        "169.254.100.23 is already the address of zone 'hq'; every AZ has its own port on the transit "
        "switch; pick another address [FG704]",
    ], id="FG704-zone"),
    pytest.param(edit(BASE, K8S_TRANSIT, "      transitAddress: 169.254.100.200\n"), [
        "sites/t/fabric.yaml:63:7: ovnDeployments[1].interconnect.transitAddress: transit address "
        "169.254.100.200 is already the address of deployment 'os'; every AZ has its own port on the "
        "transit switch; pick another address [FG704]",
    ], id="FG704-deployment"),
    pytest.param(edit(BASE, "      azName: k8s-az\n", "      azName: hq\n"), [
        "sites/t/fabric.yaml:62:7: ovnDeployments[1].interconnect.azName: AZ name 'hq' is already taken "
        "by zone 'hq'; ovn-ic registers every AZ by name in the IC database and the transit port is "
        "named after it; set a unique interconnect.azName [FG705]",
    ], id="FG705-zone"),
    pytest.param(edit(BASE, "  - name: os\n", "  - name: hq\n"), [
        "sites/t/fabric.yaml:18:5: ovnDeployments[0].name: AZ name 'hq' is already taken by zone 'hq'; "
        "ovn-ic registers every AZ by name in the IC database and the transit port is named after it; set a "
        "unique interconnect.azName [FG705]",
    ], id="FG705-default-name"),
    pytest.param(edit(BASE, "      azName: k8s-az\n", "      azName: os\n"), [
        "sites/t/fabric.yaml:62:7: ovnDeployments[1].interconnect.azName: AZ name 'os' is already taken "
        "by deployment 'os'; ovn-ic registers every AZ by name in the IC database and the transit port "
        "is named after it; set a unique interconnect.azName [FG705]",
    ], id="FG705-deployment"),
    pytest.param(edit(BASE, "      gatewayChassis: [node2, node1]\n", "      gatewayChassis: [node2, net1, node2]\n"), [
        "sites/t/fabric.yaml:64:31: ovnDeployments[1].interconnect.gatewayChassis[1]: 'net1' is not a "
        "host of deployment 'k8s'; the transit port can only be bound on its own chassis (hosts: node1, "
        "node2) [FG706]",
        "sites/t/fabric.yaml:64:37: ovnDeployments[1].interconnect.gatewayChassis[2]: 'node2' is listed "
        "twice; list each gateway chassis once [FG706]",
    ], id="FG706"),
    pytest.param(edit(BASE, "      advertise: [10.128.0.0/14, 10.96.0.0/16]\n",
                      "      advertise: [172.30.10.0/25, 10.100.128.0/17, 10.96.0.0/16, 10.96.1.0/24, "
                      "169.254.0.0/16]\n"), [
        "sites/t/fabric.yaml:65:19: ovnDeployments[1].interconnect.advertise[0]: 172.30.10.0/25 overlaps "
        "the backbone of zone 'hq'; the other AZs could not tell where to send it; advertise only ranges "
        "that live in this AZ alone [FG707]",
        "sites/t/fabric.yaml:65:35: ovnDeployments[1].interconnect.advertise[1]: 10.100.128.0/17 "
        "overlaps 10.100.0.0/16, advertised by deployment 'os'; the other AZs could not tell where to "
        "send it; advertise only ranges that live in this AZ alone [FG707]",
        "sites/t/fabric.yaml:65:66: ovnDeployments[1].interconnect.advertise[3]: 10.96.1.0/24 overlaps "
        "10.96.0.0/16, advertised by deployment 'k8s'; the other AZs could not tell where to send it; "
        "advertise only ranges that live in this AZ alone [FG707]",
        "sites/t/fabric.yaml:65:80: ovnDeployments[1].interconnect.advertise[4]: 169.254.0.0/16 overlaps "
        "the transit subnet; the other AZs could not tell where to send it; advertise only ranges that "
        "live in this AZ alone [FG707]",
    ], id="FG707"),
    pytest.param(edit(edit(BASE, "      cidr: 172.30.10.0/24\n",
                           "      cidr: 172.30.10.0/24\n    cluster: {podCIDR: 10.128.0.0/16}\n"),
                      "      advertise: [10.128.0.0/14, 10.96.0.0/16]\n",
                      "      advertise: [10.128.0.0/14, 100.64.7.0/24, 10.55.0.0/17, 10.96.0.0/16]\n"), [
        "sites/t/fabric.yaml:66:19: ovnDeployments[1].interconnect.advertise[0]: 10.128.0.0/14 overlaps the pod "
        "CIDR 10.128.0.0/16 of zone 'hq', which its router reaches directly: the longer prefix wins, so "
        "traffic from 'hq' to this AZ stays in 'hq', or 'hq' loses its own addresses to the route; advertise a "
        "range no zone uses for pods, join or services [FG711]",
        "sites/t/fabric.yaml:66:34: ovnDeployments[1].interconnect.advertise[1]: 100.64.7.0/24 overlaps the join "
        "CIDR 100.64.0.0/16 of zone 'hq', which its router reaches directly: the longer prefix wins, so "
        "traffic from 'hq' to this AZ stays in 'hq', or 'hq' loses its own addresses to the route; advertise a "
        "range no zone uses for pods, join or services [FG711]",
        "sites/t/fabric.yaml:66:49: ovnDeployments[1].interconnect.advertise[2]: 10.55.0.0/17 overlaps the "
        "service CIDR 10.55.0.0/16 of zone 'hq', which its router reaches directly: the longer prefix wins, "
        "so traffic from 'hq' to this AZ stays in 'hq', or 'hq' loses its own addresses to the route; advertise "
        "a range no zone uses for pods, join or services [FG711]",
    ], id="FG711"),
    pytest.param(edit(BASE, "  - name: k8s\n", "  - name: k8s\n    encapsulation: vxlan\n"), [
        "sites/t/fabric.yaml:38:5: ovnDeployments[1].encapsulation: the interconnection uses geneve, but "
        "deployment 'k8s' uses vxlan; IC gateways of every AZ tunnel to each other over one type; use "
        "the same encapsulation [FG708]",
    ], id="FG708"),
    pytest.param(edit(BASE, "      cidr: 172.30.10.0/24\n",
                      "      cidr: 172.30.10.0/24\n    defaultVpc:\n      staticRoutes:\n"
                      "        - cidr: 10.100.0.0/16\n          nextHopIP: 169.254.100.200\n"), [
        "sites/t/fabric.yaml:19:11: zones[0].defaultVpc.staticRoutes[0].cidr: 10.100.0.0/16 is advertised by "
        "deployment 'os', which fabricgen already routes; Kube-OVN keeps one next hop per prefix, so the two "
        "would replace each other; remove this route [FG307]",
    ], id="FG307-advertised"),
    pytest.param(edit(edit(edit(BASE, "interconnection:\n", "interconnection:\n  encapsulation: vxlan\n"),
                           "  - name: os\n", "  - name: os\n    encapsulation: vxlan\n    ovnVersion: '25.03'\n"),
                      "  - name: k8s\n", "  - name: k8s\n    encapsulation: vxlan\n"), [
        "sites/t/fabric.yaml:7:3: interconnection.database: warning: the IC database runs outside every zone, so "
        "nothing in the zones' rollout sets vxlan_mode or waits for it, and a zone that joins first gets a transit "
        "switch keyed outside VXLAN's range; before the first zone joins (and after every rebuild of the "
        "database), run rendered/t/_host/_ic-db/configure-ic-db.sh where it reaches the IC northbound database, "
        "or run the database in a zone (database.zone); `fabricgen status` reports a database without it [FG113]",
        "sites/t/fabric.yaml:40:5: ovnDeployments[1].ovnVersion: OVN 23.03 has no vxlan_mode for "
        "interconnection (it came in 25.03): its ovn-ic would give the transit switch a tunnel key VXLAN "
        "cannot carry; run OVN 25.03 or later on this deployment (and set ovnVersion), or use geneve for "
        "the whole interconnection [FG709]",
    ], id="FG709"),
    pytest.param(edit(BASE, "      advertise: [10.128.0.0/14, 10.96.0.0/16]\n",
                      "      advertise: [10.128.0.0/14, 10.96.0.0/16]\n    consumers:\n      - name: k8s\n"
                      "        platform: kubernetes\n        hosts: [node1, node2]\n"
                      "        apiServer: https://10.20.1.5:6443\n        version: v1.2.0\n"), [
        FG710_WARNING,
    ], id="FG710"),
    # The consumer's version defaults to v1.3.0 and the deployment's OVN to 23.03: a pair that
    # cannot run, named at the consumer (its defaulted version has no line of its own).
    pytest.param(edit(BASE, "      advertise: [10.128.0.0/14, 10.96.0.0/16]\n",
                      "      advertise: [10.128.0.0/14, 10.96.0.0/16]\n    consumers:\n      - name: k8s\n"
                      "        platform: kubernetes\n        hosts: [node1, node2]\n"
                      "        apiServer: https://10.20.1.5:6443\n"), [
        "sites/t/fabric.yaml:67:9: ovnDeployments[1].consumers[0].version: OVN-Kubernetes v1.3.0 writes every "
        "ACL with a tier (its northbound model has the ACL `tier` column, which OVN has from 23.06), and this "
        "deployment runs OVN 23.03: its client refuses a database without the column; run OVN 23.06 or later "
        "(ovnVersion) or an OVN-Kubernetes release before v1.3.0 [FG912]",
        FG710_WARNING,
    ], id="FG912"),
    pytest.param(edit(BASE, "      gatewayChassis: [net1]\n", "      gatewayChassis: []\n"), [
        "sites/t/fabric.yaml:35:23: ovnDeployments[0].interconnect.gatewayChassis: list should have at "
        "least 1 item after validation, not 0 [FG003]",
    ], id="FG003-no-gateway"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_diagnostic(text: str, expected: list[str]) -> None:
    assert diagnostics(text) == expected


def test_every_fg7xx_code_has_a_case() -> None:
    from fabricgen.validation.rules import catalogue

    codes = {code for code, _n, _s in catalogue() if code.startswith("FG7")}
    covered = {str(p.id).split("-")[0] for p in CASES}
    assert codes and codes <= covered


# ---------------------------------------------------------------- plan and output
def test_zone_routes_reach_every_advertised_range_in_fabric_order() -> None:
    build = build_text(BASE, NAME)
    (hq,) = build.plan.zones
    assert [(str(r.cidr), str(r.next_hop), r.via_zone) for r in hq.routes] == [
        ("10.100.0.0/16", "169.254.100.200", "os"),
        ("10.128.0.0/14", "169.254.100.201", "k8s-az"),
        ("10.96.0.0/16", "169.254.100.201", "k8s-az"),
    ]


def test_deployment_joins_route_to_backbones_and_other_deployments() -> None:
    build = build_text(BASE, NAME)
    os_join, k8s_join = build.plan.joins
    assert (os_join.az, os_join.router_port, os_join.switch_port) == ("os", "os-ts", "ts-os")
    assert [(str(r.cidr), str(r.next_hop)) for r in os_join.routes] == [
        ("172.30.10.0/24", "169.254.100.23"),
        ("10.128.0.0/14", "169.254.100.201"),
        ("10.96.0.0/16", "169.254.100.201"),
    ]
    assert [(str(r.cidr), str(r.next_hop)) for r in k8s_join.routes] == [
        ("172.30.10.0/24", "169.254.100.23"),
        ("10.100.0.0/16", "169.254.100.200"),
    ]
    # Gateway chassis by system-id, priority 100, 99 in list order.
    assert k8s_join.gateway_chassis == (("node2", 100), ("node1-chassis", 99))
    assert str(k8s_join.network) == "169.254.100.201/24"


def test_auto_route_sets_route_exchange_instead_of_routes() -> None:
    text = edit(BASE, "interconnection:\n", "interconnection:\n  autoRoute: true\n")
    build = build_text(text, NAME)
    assert all(not j.routes for j in build.plan.joins)
    assert all(not z.routes for z in build.plan.zones)
    script = build.files[PurePosixPath("t", "_host", "os", "controllers", "ctl1", "configure-ovn-ic.sh")].text
    assert 'set_value options "$key" true "option-$key"' in script
    assert "lr-route-add" not in script


def test_transit_mac_is_stable_locally_administered_unicast() -> None:
    mac = transit_mac("os")
    assert mac == transit_mac("os") != transit_mac("k8s-az")
    first = int(mac.split(":")[0], 16)
    assert first & 0b10 and not first & 0b01
    assert len(mac.split(":")) == 6


def test_gateway_chassis_get_ovn_is_interconn_and_others_lose_it() -> None:
    build = build_text(BASE, NAME)
    host = build.files[PurePosixPath("t", "_host", "k8s", "chassis", "node1", "configure-ovn-host.sh")].text
    assert "'external_ids:ovn-is-interconn=\"true\"'" in host
    text = edit(BASE, "      gatewayChassis: [node2, node1]\n", "      gatewayChassis: [node2]\n")
    host = build_text(text, NAME).files[
        PurePosixPath("t", "_host", "k8s", "chassis", "node1", "configure-ovn-host.sh")].text
    assert "-- remove Open_vSwitch . external_ids ovn-is-interconn" in host


def test_ovn_ic_drop_in_points_at_both_databases() -> None:
    build = build_text(BASE, NAME)
    text = build.files[PurePosixPath("t", "_host", "k8s", "controllers", "k8s-db1", "ovn-ic.service.d",
                                     "10-fabricgen.conf")].text
    assert "[Service]\nExecStart=\nExecStart=/usr/share/ovn/scripts/ovn-ctl start_ic --no-monitor \\\n" in text
    for option in ("--ovn-northd-nb-db=tcp:10.20.1.10:6641", "--ovn-northd-sb-db=tcp:10.20.1.10:6642",
                   "--ovn-ic-nb-db=tcp:10.20.2.11:6645", "--ovn-ic-sb-db=tcp:10.20.2.11:6646"):
        assert option in text


def test_an_ic_gateways_firewall_admits_the_other_azs_gateways() -> None:
    """The AZs' IC gateways tunnel to each other: each one's ovn-tunnel.nft admits the other
    deployments' IC gateways beside its own deployment's chassis (it once admitted only the
    latter, and cut every packet between the AZs; the kernel underlay in test_underlay.py shows
    it). Where a Kube-OVN zone joins too, its gateway nodes' addresses are not in the fabric: the
    port is open to every address, and the file says why."""
    zones = BASE[BASE.index("zones:\n"):BASE.index("ovnDeployments:\n")]
    build = build_text(BASE.replace(zones, ""), NAME)

    def rules(deployment: str, host: str, site: Build = build) -> list[str]:
        text = site.files[PurePosixPath("t", "_host", deployment, "chassis", host, "ovn-tunnel.nft")].text
        return [line.strip() for line in text.splitlines() if "udp dport" in line]

    assert rules("os", "net1") == ["udp dport 6081 ip saddr { 10.255.1.1, 10.255.1.2 } accept", "udp dport 6081 drop"]
    assert rules("k8s", "node1") == ["udp dport 6081 ip saddr { 10.255.1.2 } accept",
                                     "udp dport 6081 ip saddr { 10.255.0.1 } accept", "udp dport 6081 drop"]
    with_zone = build_text(BASE, NAME)
    assert rules("os", "net1", with_zone) == ["udp dport 6081 accept"]
    text = with_zone.files[PurePosixPath("t", "_host", "os", "chassis", "net1", "ovn-tunnel.nft")].text
    assert "from every address: as an IC gateway of\n# OVN deployment os it exchanges tunnels with the gateway " \
        "nodes of zone(s)\n# hq, whose addresses the fabric does not name." in text


def test_two_interconnected_deployments_on_one_controller_are_refused() -> None:
    """One host has one ovn-ic.service: two interconnected deployments cannot share a controller."""
    text = edit(BASE, "        - host: k8s-db1\n          address: 10.20.1.10\n      clientNetworks: [10.20.1.0/24]\n",
                "        - host: ctl1\n          address: 10.20.1.10\n      clientNetworks: [10.20.1.0/24]\n"
                "      nbPort: 6651\n      sbPort: 6652\n")
    assert diagnostics(text) == [
        "sites/t/fabric.yaml:40:11: ovnDeployments[1].databases.members[0].host: controller ctl1 (10.20.1.10) is "
        "also a member of deployment 'os', and both join the interconnection: each needs its own ovn-ic, and a "
        "host has one ovn-ic.service (its drop-in, ovn-ic.service.d/10-fabricgen.conf, would name one "
        "deployment's databases); put this deployment's members on other hosts [FG519]"]
