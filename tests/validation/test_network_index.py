"""The overlap index the rules use instead of comparing every pair of ranges.

Checked against the pairwise comparison it replaces: on random networks (nested,
equal, disjoint, /0 and /32 included), and through the rules that use it (FG201,
FG202, FG303, FG405, FG707) on fabrics whose ranges nest and repeat. FG705 (AZ
names), which now looks names up in dictionaries, is checked the same way.
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fabricgen.model import Fabric
from fabricgen.validation.network_index import NetworkIndex
from fabricgen.validation.rules import addressing, deployment_interconnect, routing, tenancy

# A small space, so that random networks often nest, repeat and overlap.
networks = st.builds(
    lambda address, prefix: IPv4Network((address << 24 | address << 16, prefix), strict=False),
    st.integers(0, 3), st.sampled_from([0, 1, 6, 7, 8, 9, 15, 16, 17, 24, 30, 32]),
)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(networks, max_size=12), networks)
def test_overlapping_is_every_overlapping_network_in_order(added: list[IPv4Network], query: IPv4Network) -> None:
    index = NetworkIndex(added)
    assert index.overlapping(query) == [k for k, n in enumerate(added) if n.overlaps(query)]


@settings(max_examples=100, derandomize=True, deadline=None)
@given(st.lists(networks, max_size=8), st.lists(networks, max_size=8), networks)
def test_networks_added_later_are_found_too(first: list[IPv4Network], later: list[IPv4Network],
                                            query: IPv4Network) -> None:
    index = NetworkIndex(first)
    assert [index.add(n) for n in later] == list(range(len(first), len(first) + len(later)))
    assert index.overlapping(query) == [k for k, n in enumerate(first + later) if n.overlaps(query)]
    assert len(index) == len(first) + len(later)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(networks, max_size=12))
def test_overlapping_earlier_is_every_overlapping_pair_once(added: list[IPv4Network]) -> None:
    pairs = [(i, j) for i, a in enumerate(added) for j, b in enumerate(added[:i]) if a.overlaps(b)]
    assert list(NetworkIndex(added).overlapping_earlier()) == pairs


BACKBONES = ["172.16.0.0/16", "172.16.0.0/24", "172.16.1.0/24", "172.16.0.0/12", "10.54.3.0/24", "172.17.0.0/24"]
PODS = ["10.54.0.0/16", "10.54.0.0/24", "172.16.0.0/20", "10.60.0.0/16"]


def _fabric(zones: list[tuple[str, str]], advertise: list[str], subnets: list[str]) -> Fabric:
    doc: dict[str, Any] = {
        "apiVersion": "fabricgen.io/v1alpha1", "kind": "Fabric", "metadata": {"name": "t"},
        "interconnection": {"autoRoute": True, "database": {"members": [{"node": "n1", "address": "10.0.0.1"}]}},
        "zones": [{"name": f"z{i}", "gatewayNodes": ["n1"], "cluster": {"podCIDR": pod},
                   "backbone": {"cidr": backbone},
                   "vpcs": [{"name": "a", "subnets": [{"name": f"a{k}", "cidr": c} for k, c in enumerate(subnets)]},
                            {"name": "b", "subnets": [{"name": f"b{k}", "cidr": c} for k, c in enumerate(subnets)]}],
                   "peerings": [{"vpcs": ["a", "b"], "connectCIDR": "192.168.0.0/30"}]}
                  for i, (backbone, pod) in enumerate(zones)],
        "ovnDeployments": [{"name": f"d{d}", "databases": {"members": [{"host": "h", "address": "10.0.0.2"}],
                                                           "clientNetworks": ["10.0.0.0/24"]},
                            "interconnect": {"transitAddress": "169.254.100.200", "gatewayChassis": ["h"],
                                             "advertise": advertise}} for d in range(2)],
    }
    return Fabric.model_validate(doc)


def _pairwise(fabric: Fabric) -> dict[str, list[tuple[Any, ...]]]:
    """What the rules found when they compared every pair: (path, the other range) per finding."""
    zones = fabric.zones
    found: dict[str, list[tuple[Any, ...]]] = {"FG201": [], "FG202": [], "FG303": [], "FG405": [], "FG707": []}
    ranges = [(z.name, c) for z in zones for c in (z.cluster.pod_cidr, z.cluster.join_cidr, z.cluster.service_cidr)]
    for i, zone in enumerate(zones):
        found["FG201"] += [(i, zones[j].name) for j in range(i) if zone.backbone.cidr.overlaps(zones[j].backbone.cidr)]
        found["FG202"] += [(i, o, str(c)) for o, c in ranges if zone.backbone.cidr.overlaps(c)]
        found["FG303"] += [(i, zones[j].name) for j in range(i)
                           if zone.cluster.pod_cidr.overlaps(zones[j].cluster.pod_cidr)]
        a, b = zone.vpcs
        found["FG405"] += [(i, "in", s, a.subnets[t].name) for s, sub in enumerate(a.subnets)
                           for t in range(s) if sub.cidr.overlaps(a.subnets[t].cidr)]
        found["FG405"] += [(i, "in", s, b.subnets[t].name) for s, sub in enumerate(b.subnets)
                           for t in range(s) if sub.cidr.overlaps(b.subnets[t].cidr)]
        found["FG405"] += [(i, "peer", sa.name, sb.name) for sa in a.subnets for sb in b.subnets
                           if sa.cidr.overlaps(sb.cidr)]
    owned = [(z.backbone.cidr, z.name) for z in zones] + [(IPv4Network("169.254.100.0/24"), "transit")]
    for d, deployment in enumerate(fabric.ovn_deployments):
        assert deployment.interconnect is not None
        for a_, cidr in enumerate(deployment.interconnect.advertise):
            clash = next((what for other, what in owned if cidr.overlaps(other)), None)
            if clash is not None:
                found["FG707"].append((d, a_, clash))
            owned.append((cidr, f"{cidr}@d{d}"))
    return found


def _reported(fabric: Fabric) -> dict[str, list[tuple[Any, ...]]]:
    found: dict[str, list[tuple[Any, ...]]] = {}
    found["FG201"] = [(f.path[1], f.message.split("of zone ")[1].split("'")[1])
                      for f in addressing.backbone_overlap(fabric)]
    found["FG202"] = [(f.path[1], f.message.split("of zone ")[1].split("'")[1], f.message.split()[5])
                      for f in addressing.backbone_cluster_overlap(fabric)]
    found["FG303"] = [(f.path[1], f.message.split("of zone ")[1].split("'")[1])
                      for f in routing.auto_route_overlap(fabric)]
    fg405 = []
    for f in tenancy.tenant_overlap(fabric):
        if f.path[2] == "vpcs":
            fg405.append((f.path[1], "in", f.path[5], f.message.split("'")[1]))
        else:
            words = f.message.split()
            fg405.append((f.path[1], "peer", words[3].split("/")[1], words[6].split("/")[1]))
    found["FG405"] = fg405
    fg707 = []
    for f in deployment_interconnect.advertise_overlap(fabric):
        clash = f.message.split(" overlaps ")[1].split("; the other AZs")[0]
        if clash.startswith("the backbone of zone "):
            clash = clash.split("'")[1]
        elif clash.startswith("the transit subnet"):
            clash = "transit"
        else:
            clash = clash.replace(", advertised by deployment 'd", "@d").rstrip("'")
        fg707.append((f.path[1], f.path[4], clash))
    found["FG707"] = fg707
    return found


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(BACKBONES), st.sampled_from(PODS)), min_size=1, max_size=7),
       st.lists(st.sampled_from([*BACKBONES, "169.254.0.0/16", "192.168.7.0/24"]), max_size=4),
       st.lists(st.sampled_from(["10.1.0.0/24", "10.1.0.0/16", "10.1.1.0/24", "10.2.0.0/24"]), max_size=4))
def test_rules_report_what_comparing_every_pair_reports(zones: list[tuple[str, str]], advertise: list[str],
                                                        subnets: list[str]) -> None:
    fabric = _fabric(zones, advertise, subnets)
    assert _reported(fabric) == _pairwise(fabric)


def _az_fabric(zones: list[str], deployments: list[tuple[str, bool, str | None]]) -> Fabric:
    members = [{"host": "h", "address": "10.0.0.2"}]
    doc: dict[str, Any] = {
        "apiVersion": "fabricgen.io/v1alpha1", "kind": "Fabric", "metadata": {"name": "t"},
        "interconnection": {"database": {"members": [{"node": "n1", "address": "10.0.0.1"}]}},
        "zones": [{"name": z, "gatewayNodes": ["n1"], "backbone": {"cidr": f"172.30.{i}.0/24"}}
                  for i, z in enumerate(zones)],
        "ovnDeployments": [
            {"name": name, "databases": {"members": members, "clientNetworks": ["10.0.0.0/24"]},
             **({"interconnect": {"transitAddress": "169.254.100.200", "gatewayChassis": ["h"],
                                  **({"azName": az} if az is not None else {})}} if joins else {})}
            for name, joins, az in deployments],
    }
    return Fabric.model_validate(doc)


def _az_pairwise(fabric: Fabric) -> list[tuple[int, str]]:
    """FG705 as it compared every pair of deployments: (deployment, what its AZ name clashes with)."""
    zones = {z.name for z in fabric.zones}
    deployments = fabric.ovn_deployments
    found = []
    for d, deployment in enumerate(deployments):
        az = deployment.az_name
        if az is None:
            continue
        earlier = (o.name for o in deployments[:d] if az in (o.name, o.az_name))
        later = (o.name for o in deployments[d + 1:] if o.name == az and o.az_name != o.name)
        clash = f"zone {az!r}" if az in zones else next((f"deployment {n!r}" for n in (*earlier, *later)), None)
        if clash is not None:
            found.append((d, clash))
    return found


NAMES = ["a", "b", "c"]


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
       st.lists(st.tuples(st.sampled_from(NAMES), st.booleans(), st.sampled_from([None, *NAMES])), max_size=6))
def test_az_name_rule_reports_what_comparing_every_pair_reports(
        zones: list[str], deployments: list[tuple[str, bool, str | None]]) -> None:
    fabric = _az_fabric(zones, deployments)
    reported = [(f.path[1], f.message.split("already taken by ")[1].split("; ovn-ic")[0])
                for f in deployment_interconnect.az_name(fabric)]
    assert reported == _az_pairwise(fabric)
