"""`fabricgen graph`: the topology as Mermaid, Graphviz DOT and SVG (laid out by the real `dot`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fabricgen.review import topology
from support.fabrics import REPO, SITES, build_file

pytestmark = pytest.mark.lab  # starts real programs: dot, python

LAB = REPO / "sites" / "lab" / "fabric.yaml"
STACK = REPO / "sites" / "openstack-k8s" / "fabric.yaml"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` needed (apt-get install graphviz)")


def fabricgen(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabricgen", "graph", *args], capture_output=True, text=True,
                          cwd=REPO, env=env, check=False)


def test_mermaid_of_the_lab_shows_zones_transit_addresses_ic_database_and_local_vpcs() -> None:
    result = fabricgen("sites/lab/fabric.yaml")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("flowchart LR\n")
    assert 'ts__ts(("transit switch ts<br/>169.254.100.0/24<br/>encapsulation vxlan"))' in out
    assert 'icdb[("IC database<br/>hq-node-1 10.10.10.11<br/>hq-node-2 10.10.10.12<br/>hq-node-3 10.10.10.13' in out
    assert 'icdb -.-|"hosted in hq"| ts__ts' in out
    fabric = build_file(LAB).plan.fabric
    for zone in fabric.zones:
        assert f'subgraph zone__{zone.name}["zone {zone.name} (harvester)"]' in out
        assert f'zone__{zone.name}__router ---|"{zone.transit_address}"| ts__ts' in out
        assert f"gateways: {', '.join(zone.gateway_nodes)}" in out
        assert f"<br/>{zone.backbone.cidr}" in out
    assert 'zone__hq__vpc__vpc_prod["tenant VPC vpc-prod (local)<br/>prod-db 10.100.1.0/24' in out
    assert "zone__hq__vpc__vpc_prod ---" not in out  # tenant VPCs never reach the transit switch


def test_dot_of_deployments_shows_hosts_consumers_and_advertised_ranges() -> None:
    out = fabricgen("sites/openstack-k8s/fabric.yaml", "--format", "dot").stdout
    assert out.startswith("graph fabric {\n")
    assert 'dep__openstack__router -- ts__ts [label="169.254.100.200"];' in out
    assert ('dep__kubernetes__router [label="ic-router (AZ k8s-prod-az)\\ngateway chassis: k8s-node-1, k8s-node-2"'
            in out)
    assert 'dep__openstack__consumer__region_one [label="openstack region-one\\nhosts: net1, cmp1"' in out
    assert 'dep__kubernetes__advertise [label="advertised\\n10.128.0.0/14"' in out


@needs_dot
@pytest.mark.parametrize("site", SITES, ids=[s.parent.name for s in SITES])
def test_svg_of_every_sample_parses_as_xml(site: Path) -> None:
    result = fabricgen(str(site.relative_to(REPO)), "--format", "svg")
    assert result.returncode == 0, result.stderr
    root = ET.fromstring(result.stdout)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    titles = {t.text for t in root.iter("{http://www.w3.org/2000/svg}title")}
    fabric = build_file(site).plan.fabric
    assert {f"zone__{z.name}__router" for z in fabric.zones} <= titles
    assert {f"dep__{d.name}__hosts" for d in fabric.ovn_deployments} <= titles


def test_svg_without_graphviz_names_the_install_command(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}
    result = fabricgen("sites/lab/fabric.yaml", "--format", "svg", env=env)
    assert result.returncode == 1
    assert "apt-get install graphviz" in result.stderr and "Traceback" not in result.stderr


def test_labels_are_escaped_for_each_syntax() -> None:
    node = topology.Node("n", ('a"b<c>&d', "x\\y"))
    assert topology._mermaid_node(node, None) == 'n["a#quot;b#lt;c#gt;#amp;d<br/>x\\y"]'
    assert topology._dot_node(node, None) == 'n [label="a\\"b<c>&d\\nx\\\\y", shape=box];'
    edge = topology.Edge("a", "b", 'l"]; x --> y')
    text = topology.mermaid(topology.Topology(nodes=[node], edges=[edge]))
    assert 'a ---|"l#quot;]; x --#gt; y"| b' in text


@needs_dot
def test_marked_topology_is_valid_dot() -> None:
    base = topology.build(build_file(LAB).plan.fabric)
    text = LAB.read_text()
    from support.fabrics import build_text

    head_build = build_text(text[: text.index("  - name: dr")], "sites/lab/fabric.yaml")
    marked, picture = topology.marks(base, topology.build(head_build.plan.fabric))
    assert marked == {"zone__dr__router": "removed", "zone__dr__backbone": "removed"}
    proc = subprocess.run(["dot", "-Tsvg"], input=topology.dot(picture, marked), capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    ET.fromstring(proc.stdout)
