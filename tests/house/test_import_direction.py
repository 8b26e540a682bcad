"""Imports in generator/fabricgen run one way: from the command line down through the stages.

Each unit is a subpackage of fabricgen or a module at its root. `ALLOWED` says which other
units a unit may import from; within a unit anything goes. Every import statement counts,
also those inside functions and under `TYPE_CHECKING`, since a lazy import that runs back
up is still a cycle waiting to happen. Each subpackage states its own row in the docstring
of its `__init__.py` ("May import: ..."), and the test holds that line to this table.
"""

from __future__ import annotations

import ast
import re
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "generator" / "fabricgen"

# Shared by every stage: the exit codes, located diagnostics and the errors that carry them.
SHARED = ("exit_codes", "diagnostics", "errors", "files", "escapes")

# unit: the units it may import from (besides SHARED, which all may import, and itself)
ALLOWED: dict[str, tuple[str, ...]] = {
    "exit_codes": (),
    "files": (),
    "escapes": (),
    "diagnostics": (),
    "live_text": (),
    "errors": ("exit_codes", "diagnostics"),
    "serialise": ("live_text",),
    "source": ("serialise",),
    "model": (),
    "plan": ("model", "source", "serialise"),
    "validation": ("plan", "model", "source"),
    "render": ("plan", "model", "source", "serialise"),
    "pipeline": ("render", "validation", "plan", "model", "source", "serialise"),
    "report": ("source",),
    "output": ("pipeline", "serialise"),
    "delivery": ("pipeline", "render", "model", "source", "serialise"),
    "review": ("pipeline", "report", "plan", "model", "source", "serialise"),
    "platform_rows": ("pipeline", "plan", "model", "source", "serialise"),
    "observe": ("platform_rows", "live_text", "pipeline", "report", "plan", "model", "source", "serialise"),
    "judge": ("observe", "platform_rows", "live_text", "pipeline", "report", "plan", "model", "source", "serialise"),
    "lab": ("platform_rows", "observe", "pipeline", "report", "plan", "model", "source", "serialise"),
    "adopt": ("judge", "observe", "live_text", "pipeline", "report", "validation", "plan", "model", "source",
              "serialise"),
    "scaffold": ("output", "pipeline", "render", "model"),
    "commands": ("adopt", "scaffold", "judge", "lab", "observe", "review", "delivery", "output", "report", "pipeline",
                 "render", "validation", "model", "source", "serialise"),
    "fast_path": ("output", "delivery", "report", "source", "serialise"),
    "cli": ("fast_path", "commands", "report", "live_text", "__init__"),
    "console": ("cli",),
    "__main__": ("console",),
}


def unit_of(module: str) -> str:
    """`fabricgen.plan.zones` -> `plan`; `fabricgen.cli` -> `cli`; `fabricgen` -> `__init__`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def module_name(path: Path, package: Path = PACKAGE) -> str:
    rel = path.relative_to(package.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_targets(path: Path, root: Path = PACKAGE) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names) for every import of the file: `from M import a, b` gives (M, (a, b)),
    relative imports resolved; `import M` gives (M, ())."""
    tree = ast.parse(path.read_text(), str(path))
    here = module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: list[tuple[int, str, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target, tuple(a.name for a in node.names)))
    return found


def imported_units(path: Path, root: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, unit) for every fabricgen unit the file imports from."""
    found: list[tuple[int, str]] = []
    for line, target, names in import_targets(path, root):
        if target.split(".")[0] != "fabricgen":
            continue
        if target == "fabricgen" and names:  # `from fabricgen import plan, exit_codes`: each name is a unit
            found += [(line, n if (root / n).is_dir() or (root / f"{n}.py").is_file() else "__init__") for n in names]
        else:
            found.append((line, unit_of(target)))
    return found


def units() -> set[str]:
    return {p.stem for p in PACKAGE.glob("*.py")} | {p.parent.name for p in PACKAGE.glob("*/__init__.py")}


def violations(root: Path = PACKAGE) -> list[str]:
    problems = []
    for path in sorted(root.rglob("*.py")):
        unit = unit_of(module_name(path, root))
        allowed = {unit, "__init__", *SHARED, *ALLOWED.get(unit, ())} if unit != "__init__" else {unit}
        for line, target in imported_units(path, root):
            if target not in allowed:
                problems.append(f"{path.relative_to(root.parent)}:{line}: {unit} imports {target}, "
                                f"which is not below it (it may import {', '.join(sorted(allowed - {unit}))})")
    return problems


def test_every_unit_has_a_row() -> None:
    assert units() - {"__init__"} == set(ALLOWED)


def test_the_table_runs_one_way() -> None:
    graph = {unit: set(below) | (set(SHARED) - {unit} if unit not in SHARED else set(below))
             for unit, below in ALLOWED.items()}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:  # pragma: no cover - the message is the point
        pytest.fail(f"the allowed imports form a cycle: {exc.args[1]}")


def test_no_import_runs_back_up() -> None:
    assert violations() == []


def test_an_import_back_up_is_caught(tmp_path: Path) -> None:
    """The walk itself, on a small package: the plan importing the pipeline (at the top, in a
    function, relatively) and a renderer importing the CLI are each reported; downward imports are not."""
    root = tmp_path / "fabricgen"
    files = {
        "__init__.py": "",
        "pipeline.py": "from fabricgen.plan import zones\n",
        "cli.py": "",
        "plan/__init__.py": "",
        "plan/zones.py": ("from fabricgen.model import Fabric\nfrom fabricgen.pipeline import Build\n"
                          "def f() -> None:\n    from .. import pipeline\n"),
        "render/__init__.py": "",
        "render/x.py": "from fabricgen import cli, errors\nfrom fabricgen.plan.zones import Plan\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert [v.split(": ")[0] + ": " + v.split(": ")[1].split(",")[0] for v in violations(root)] == [
        "fabricgen/plan/zones.py:2: plan imports pipeline",
        "fabricgen/plan/zones.py:4: plan imports pipeline",
        "fabricgen/render/x.py:1: render imports cli",
    ]


@pytest.mark.parametrize("unit", sorted(u for u in ALLOWED if (PACKAGE / u / "__init__.py").is_file()))
def test_subpackage_docstring_states_its_row(unit: str) -> None:
    doc = ast.get_docstring(ast.parse((PACKAGE / unit / "__init__.py").read_text())) or ""
    paragraph = doc.partition("May import:")[2].partition("\n\n")[0]
    assert paragraph, f"fabricgen/{unit}/__init__.py: the docstring has no 'May import:' paragraph"
    named = set(re.findall(r"`fabricgen\.([a-z_]+)`", paragraph))
    assert named == set(ALLOWED[unit]), f"fabricgen/{unit}: the docstring says {sorted(named)}"
