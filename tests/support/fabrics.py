"""The tests' fabrics: repository paths, and fabric text validated, rendered and written in
process, as the CLI would from the repository root."""

from __future__ import annotations

import shutil
from pathlib import Path

from fabricgen.errors import InvalidFabricError
from fabricgen.output import emit
from fabricgen.pipeline import Build, load_text, render
from fabricgen.report import text_line

REPO = Path(__file__).resolve().parents[2]
# Upstream CRD schemas vendored with the tests (see tests/crds/README.md).
CRD_DIR = REPO / "tests" / "crds"
SITES = sorted(REPO.glob("sites/*/fabric.yaml"))


def rel(path: Path) -> str:
    """A repository path as fabricgen shows it when run from the repository root."""
    return path.resolve().relative_to(REPO).as_posix()


def build_text(text: str, name: str) -> Build:
    """Validate and render fabric text in memory; raises InvalidFabricError."""
    fabric, source, _warnings = load_text(text, name)
    return render(fabric, source.name)


def edit(text: str, old: str, new: str) -> str:
    """Replace `old`, which must occur exactly once, by `new`."""
    assert text.count(old) == 1, f"edit target must occur exactly once: {old!r}"
    return text.replace(old, new)


def diagnostic_lines(text: str, name: str) -> list[str]:
    """Every diagnostic of fabric text, errors and warnings, as `FILE:LINE:COL: path: message [CODE]`."""
    try:
        _fabric, _source, found = load_text(text, name)
    except InvalidFabricError as exc:
        found = list(exc.diagnostics)
    return [text_line(d) for d in found]


def build_file(path: Path) -> Build:
    """Render a fabric file in the repository, named as the CLI names it from the root."""
    return build_text(path.read_text(encoding="utf-8"), rel(path))


def write_tree(build: Build, root: Path) -> Path:
    """Write a build under `root` the way `fabricgen render -o root` does; returns root."""
    emit.write(root, build)
    return root


def tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every regular file under `root`: relative POSIX path -> (bytes, permission bits)."""
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def replace_tree(src: Path, dst: Path) -> None:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)


def zones_fabric(count: int) -> str:
    lines = ["apiVersion: fabricgen.io/v1alpha1", "kind: Fabric", "metadata:", "  name: many", "interconnection:",
             "  database:", "    members:", "      - {node: ic-db1, address: 10.10.10.11}", "zones:"]
    for i in range(count):
        lines += [f"  - name: z{i}", "    platform: kube-ovn", f"    gatewayNodes: [z{i}-gw]",
                  f"    transitAddress: 169.254.100.{10 + i}", "    backbone:", f"      cidr: 172.31.{i}.0/24"]
    return "\n".join(lines) + "\n"


def auto_route_fabric(count: int) -> str:
    """Zones with their own pod CIDRs (auto-route learns them all) and `autoRoute: true`."""
    text = zones_fabric(count).replace("interconnection:\n", "interconnection:\n  autoRoute: true\n")
    for i in range(count):
        text = text.replace(f"  - name: z{i}\n", f"  - name: z{i}\n    cluster: {{podCIDR: 10.{60 + i}.0.0/16}}\n")
    return text
