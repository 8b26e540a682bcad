"""No two modules of generator/fabricgen need each other, directly or through others.

`tests/house/test_import_direction.py` holds the units (subpackages) to one direction; this holds the
modules inside a unit. Every import counts, also one inside a function or under
`TYPE_CHECKING`: a lazy import back is still a cycle, only hidden. `from fabricgen.lab import
proof` imports the module `lab.proof`; `from fabricgen.lab.proof import Proof` too. A package's
`__init__` holds no code here (its docstring only), so importing a package is no edge.
"""

from __future__ import annotations

from pathlib import Path

from test_import_direction import PACKAGE, import_targets, module_name

MAX_LINES = 600


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def edges(root: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the package's modules it imports (packages themselves left out)."""
    known = modules(root)
    packages = {name for name, path in known.items() if path.name == "__init__.py"}
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for _line, module, names in import_targets(path, root):
            targets = [f"{module}.{n}" if f"{module}.{n}" in known else module for n in names] or [module]
            graph[name] |= {t for t in targets if t in known and t not in packages and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_two_modules_need_each_other() -> None:
    assert cycles(edges()) == []


def test_a_cycle_is_caught(tmp_path: Path) -> None:
    """The walk itself: a lazy import back, a relative one and a three-module ring are each found;
    importing a package or a name from a module below is not a cycle."""
    root = tmp_path / "fabricgen"
    files = {
        "__init__.py": "",
        "lab/__init__.py": "",
        "lab/proof.py": "from fabricgen.lab import tracing\nfrom fabricgen import lab\n",
        "lab/tracing.py": "def f() -> None:\n    from fabricgen.lab.proof import Proof\n",
        "lab/paths.py": "",
        "judge/__init__.py": "",
        "judge/a.py": "from .b import x\nfrom fabricgen.lab.paths import Pair\n",
        "judge/b.py": "from fabricgen.judge import c\n",
        "judge/c.py": "import fabricgen.judge.a\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert cycles(edges(root)) == [["fabricgen.judge.a", "fabricgen.judge.b", "fabricgen.judge.c"],
                                   ["fabricgen.lab.proof", "fabricgen.lab.tracing"]]


def test_no_module_is_longer_than_a_newcomer_reads() -> None:
    """A module holds one thing: none is longer than MAX_LINES lines."""
    long = {name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}
