"""The fabric as a picture: Mermaid (renders in GitHub and GitLab comments), Graphviz DOT and SVG.

One topology is derived from the validated model: the transit switch with each AZ's
address on it, the IC database and its raft members, per zone its `ovn-cluster` router
with the gateway nodes, its backbone and its tenant VPCs (local: never on the transit
switch), and per OVN deployment its router (when interconnected), advertised ranges,
hosts and consumers. `marks` compares it with another topology (the base of a diff):
nodes added, changed or removed are marked.

Every label is data from fabric.yaml, so each syntax gets its own escaping: Mermaid
labels are quoted with `"` written as `#quot;` (and `<`, `>` as entities, so no label
carries markup); DOT strings are quoted with `\\` and `"` escaped.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field

from fabricgen.errors import FabricgenError
from fabricgen.model import Fabric

ADDED, CHANGED, REMOVED = "added", "changed", "removed"
_ID = re.compile(r"[^A-Za-z0-9_]")


@dataclass(frozen=True)
class Node:
    id: str
    lines: tuple[str, ...]
    group: str = ""  # the id of the subgraph it belongs to
    shape: str = "box"  # box | switch | database


@dataclass(frozen=True)
class Edge:
    a: str
    b: str
    label: str = ""
    dashed: bool = False


@dataclass
class Topology:
    groups: dict[str, str] = field(default_factory=dict)  # id -> label
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)

    def node(self, id_: str) -> Node | None:
        return next((n for n in self.nodes if n.id == id_), None)


def ident(*parts: str) -> str:
    """A node id: parts joined by `__`, every other character `_` (names are DNS labels: no `_`)."""
    return "__".join(_ID.sub("_", p) for p in parts)


def build(fabric: Fabric) -> Topology:
    t = Topology()
    ic = fabric.interconnection
    ts = ""
    if ic is not None:
        ts = ident("ts", ic.transit_switch.name)
        t.nodes.append(Node(ts, (f"transit switch {ic.transit_switch.name}", str(ic.transit_switch.subnet),
                                 f"encapsulation {ic.encapsulation}"), shape="switch"))
        db = ident("icdb")
        members = tuple(f"{m.node} {m.address}" for m in ic.database.members)
        t.nodes.append(Node(db, ("IC database", *members, f"NB {ic.database.nb_port}, SB {ic.database.sb_port}"),
                            shape="database"))
        t.edges.append(Edge(db, ts, f"hosted in {ic.database.zone}" if ic.database.zone else "external",
                            dashed=True))
    for zone in fabric.zones:
        group = ident("zone", zone.name)
        t.groups[group] = f"zone {zone.name} ({zone.platform})"
        router = ident("zone", zone.name, "router")
        t.nodes.append(Node(router, ("ovn-cluster", f"gateways: {', '.join(zone.gateway_nodes) or 'none'}"), group))
        backbone = ident("zone", zone.name, "backbone")
        t.nodes.append(Node(backbone, (f"backbone {zone.backbone.subnet_name or 'backbone-' + zone.name}",
                                       str(zone.backbone.cidr)), group))
        t.edges.append(Edge(backbone, router))
        if ts:
            t.edges.append(Edge(router, ts, str(zone.transit_address) if zone.transit_address else "address unknown"))
        for vpc in zone.vpcs:
            node = ident("zone", zone.name, "vpc", vpc.name)
            subnets = tuple(f"{s.name} {s.cidr}" for s in vpc.subnets)
            t.nodes.append(Node(node, (f"tenant VPC {vpc.name} (local)", *subnets), group))
    for deployment in fabric.ovn_deployments:
        group = ident("dep", deployment.name)
        t.groups[group] = f"OVN deployment {deployment.name} ({deployment.encapsulation})"
        hosts = ident("dep", deployment.name, "hosts")
        t.nodes.append(Node(hosts, ("hosts", *(h.name for h in deployment.hosts)), group))
        for consumer in deployment.consumers:
            node = ident("dep", deployment.name, "consumer", consumer.name)
            t.nodes.append(Node(node, (f"{consumer.platform} {consumer.name}",
                                       f"hosts: {', '.join(consumer.hosts)}"), group))
            t.edges.append(Edge(node, hosts))
        spec = deployment.interconnect
        if spec is not None and ts:
            router = ident("dep", deployment.name, "router")
            t.nodes.append(Node(router, (f"{spec.router} (AZ {spec.az(deployment.name)})",
                                         f"gateway chassis: {', '.join(spec.gateway_chassis)}"), group))
            t.edges.append(Edge(router, ts, str(spec.transit_address)))
            t.edges.append(Edge(hosts, router))
            if spec.advertise:
                adv = ident("dep", deployment.name, "advertise")
                t.nodes.append(Node(adv, ("advertised", *(str(c) for c in spec.advertise)), group))
                t.edges.append(Edge(adv, router))
    return t


def marks(base: Topology | None, head: Topology) -> tuple[dict[str, str], Topology]:
    """Per node id of `head`: added or changed against `base`; removed nodes are added to a copy
    of `head` (without edges) so the picture shows them."""
    if base is None:
        return {}, head
    out: dict[str, str] = {}
    for node in head.nodes:
        before = base.node(node.id)
        if before is None:
            out[node.id] = ADDED
        elif before.lines != node.lines:
            out[node.id] = CHANGED
    edges_before = {(e.a, e.b): e.label for e in base.edges}
    for edge in head.edges:
        if (edge.a, edge.b) in edges_before and edges_before[(edge.a, edge.b)] != edge.label:
            out.setdefault(edge.a, CHANGED)
    merged = Topology(dict(head.groups), list(head.nodes), list(head.edges))
    for node in base.nodes:
        if head.node(node.id) is None:
            out[node.id] = REMOVED
            if node.group and node.group not in merged.groups:
                merged.groups[node.group] = base.groups.get(node.group, node.group) + " (removed)"
            merged.nodes.append(node)
    return out, merged


# ------------------------------------------------------------------ Mermaid
def _mermaid_text(text: str) -> str:
    return (text.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")
            .replace("\n", " "))


def _mermaid_node(node: Node, mark: str | None) -> str:
    lines = [*node.lines, f"({mark})"] if mark else list(node.lines)
    label = '"' + "<br/>".join(_mermaid_text(line) for line in lines) + '"'
    shape = {"switch": f"(({label}))", "database": f"[({label})]"}.get(node.shape, f"[{label}]")
    return f"{node.id}{shape}" + (f":::{mark}" if mark else "")


def mermaid(topology: Topology, marked: dict[str, str] | None = None) -> str:
    marked = marked or {}
    out = ["flowchart LR"]
    for node in (n for n in topology.nodes if not n.group):
        out.append("  " + _mermaid_node(node, marked.get(node.id)))
    for group, label in topology.groups.items():
        out.append(f'  subgraph {group}["{_mermaid_text(label)}"]')
        out += ["    " + _mermaid_node(n, marked.get(n.id)) for n in topology.nodes if n.group == group]
        out.append("  end")
    for edge in topology.edges:
        arrow = "-.-" if edge.dashed else "---"
        label = f'|"{_mermaid_text(edge.label)}"|' if edge.label else ""
        out.append(f"  {edge.a} {arrow}{label} {edge.b}")
    if marked:
        out += ["  classDef added fill:#e6ffec,stroke:#1a7f37",
                "  classDef changed fill:#fff8c5,stroke:#9a6700",
                "  classDef removed fill:#ffebe9,stroke:#cf222e,stroke-dasharray:5 5"]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ DOT
def _dot_text(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


_DOT_SHAPE = {"switch": "ellipse", "database": "cylinder", "box": "box"}
_DOT_MARK = {ADDED: 'style=filled, fillcolor="#e6ffec"', CHANGED: 'style=filled, fillcolor="#fff8c5"',
             REMOVED: 'style="filled,dashed", fillcolor="#ffebe9"'}


def _dot_node(node: Node, mark: str | None) -> str:
    lines = [*node.lines, f"({mark})"] if mark else list(node.lines)
    label = '"' + "\\n".join(_dot_text(line)[1:-1] for line in lines) + '"'
    extra = f", {_DOT_MARK[mark]}" if mark else ""
    return f"{node.id} [label={label}, shape={_DOT_SHAPE[node.shape]}{extra}];"


def dot(topology: Topology, marked: dict[str, str] | None = None) -> str:
    marked = marked or {}
    out = ["graph fabric {", "  rankdir=LR;", '  node [fontname="Helvetica", fontsize=10];',
           '  edge [fontname="Helvetica", fontsize=9];']
    out += ["  " + _dot_node(n, marked.get(n.id)) for n in topology.nodes if not n.group]
    for group, label in topology.groups.items():
        out.append(f"  subgraph cluster_{group} {{")
        out.append(f"    label={_dot_text(label)};")
        out += ["    " + _dot_node(n, marked.get(n.id)) for n in topology.nodes if n.group == group]
        out.append("  }")
    for edge in topology.edges:
        attrs = [f"label={_dot_text(edge.label)}"] if edge.label else []
        if edge.dashed:
            attrs.append("style=dashed")
        out.append(f"  {edge.a} -- {edge.b}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    out.append("}")
    return "\n".join(out) + "\n"


def legend(marked: dict[str, str]) -> Iterator[str]:
    for kind in (ADDED, CHANGED, REMOVED):
        n = sum(m == kind for m in marked.values())
        if n:
            yield f"{n} {kind}"


GRAPHVIZ_INSTALL = "apt-get install graphviz"


def svg(dot_text: str) -> str:
    """DOT laid out as SVG by Graphviz `dot`."""
    program = shutil.which("dot")
    if program is None:
        raise FabricgenError(f"--format svg needs Graphviz `dot`; install it ({GRAPHVIZ_INSTALL}) "
                             "or use --format dot")
    proc = subprocess.run([program, "-Tsvg"], input=dot_text, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise FabricgenError(f"Graphviz dot exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout

