"""`fabricgen graph FABRIC [--format mermaid|dot|svg]`: the fabric's topology as a picture.

Mermaid renders in GitHub and GitLab comments and in Markdown files; DOT is Graphviz's
input; SVG is DOT laid out by Graphviz `dot` (which must be installed).
"""

from __future__ import annotations

import sys
from pathlib import Path

from fabricgen import report
from fabricgen.pipeline import load
from fabricgen.review import topology


def run(*, fabric: Path, fmt: str) -> int:
    model, _source, warnings = load(fabric)
    for d in warnings:
        sys.stderr.write(report.text_line(d) + "\n")
    picture = topology.build(model)
    if fmt == "mermaid":
        sys.stdout.write(topology.mermaid(picture))
    elif fmt == "dot":
        sys.stdout.write(topology.dot(picture))
    else:
        sys.stdout.write(topology.svg(topology.dot(picture)))
    return 0
