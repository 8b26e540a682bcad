"""The package's indexes stay whole: every module of a subpackage is named (in backquotes) in its
`__init__.py` docstring, and every subpackage and module of the root in docs/development.md, so
that a newcomer reading either finds every room."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from support.fabrics import REPO

PACKAGE = REPO / "generator" / "fabricgen"
DEVELOPMENT = REPO / "docs" / "development.md"
PACKAGES = sorted(p.parent for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE
                  and "__pycache__" not in p.parts and "templates" not in p.parts)


def named(text: str, name: str) -> bool:
    return f"`{name}`" in text or f"`{name}.py`" in text or f"`{name}/`" in text


@pytest.mark.parametrize("package", PACKAGES, ids=[str(p.relative_to(PACKAGE)) for p in PACKAGES])
def test_every_module_is_in_its_package_index(package: Path) -> None:
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    members = sorted([p.stem for p in package.glob("*.py") if p.name != "__init__.py"]
                     + [p.name for p in package.iterdir() if (p / "__init__.py").exists()])
    missing = [m for m in members if not named(doc, m)]
    assert not missing, f"{package.relative_to(REPO)}/__init__.py names no {', '.join(missing)}"


def test_every_room_of_the_root_is_in_the_development_guide() -> None:
    text = DEVELOPMENT.read_text()
    rooms = sorted([p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")]
                   + [p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()])
    missing = [r for r in rooms if not named(text, r)]
    assert not missing, f"docs/development.md names no {', '.join(missing)}"


def test_the_root_holds_ten_modules_at_most() -> None:
    modules = [p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")]
    assert len(modules) <= 10, sorted(modules)
