"""`fabricgen graph FABRIC [--format mermaid|dot|svg]`: the fabric's topology as a picture.

Mermaid renders in GitHub and GitLab comments and in Markdown files; DOT is Graphviz's
input; SVG is DOT laid out by Graphviz `dot` (which must be installed).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from fabricgen import report
from fabricgen.errors import FabricgenError
from fabricgen.pipeline import load
from fabricgen.review import topology

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
        sys.stdout.write(svg(topology.dot(picture)))
    return 0
