"""What the git index of a fabric repository holds: its fabric files and its rendered sites.

`fabricgen render --all` (what the pre-commit hooks run) renders exactly the fabrics git
tracks, and finds output directories that no tracked fabric renders any more. During a
hook, pre-commit has set unstaged changes aside, so every tracked file in the work tree is
its staged version: the check compares the staged output with what the staged fabrics
render to. Untracked files (a new fabric not yet added) are not part of the commit and are
left out. Reads the index with the `git` program; writes nothing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path, PurePosixPath

from fabricgen import exit_codes
from fabricgen.errors import FabricgenError

FABRIC_NAMES = ("fabric.yaml", "fabric.yml")


class RepositoryError(FabricgenError):
    """`--all` outside a git repository, or away from its top directory."""

    exit_code = exit_codes.USAGE


def _git(cwd: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise RepositoryError(f"--all needs the git program: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise RepositoryError(f"--all needs a git repository: {done.stderr.strip() or 'git failed'}")
    return done.stdout


def toplevel(cwd: Path) -> Path:
    """The top directory of the repository; `--all` runs there, as pre-commit runs hooks."""
    top = Path(_git(cwd, "rev-parse", "--show-toplevel").rstrip("\n"))
    if top.resolve() != cwd.resolve():
        raise RepositoryError(f"run `fabricgen render --all` from the top of the repository: cd {top}")
    return top


def _tracked(top: Path, *pathspecs: str) -> list[PurePosixPath]:
    out = _git(top, "-c", "core.quotepath=off", "ls-files", "-z", "--cached", "--", *pathspecs)
    return sorted({PurePosixPath(p) for p in out.split("\0") if p})


def fabrics(top: Path) -> list[Path]:
    """Every `fabric.yaml` (or `.yml`) in the index, in path order."""
    found = _tracked(top, *(f"*{name}" for name in FABRIC_NAMES))
    return [Path(p) for p in found if p.name in FABRIC_NAMES]


def sites(top: Path, output: Path) -> list[str]:
    """The site directories under `output` that hold tracked files ([] when `output` is outside
    the repository). A directory holding a tracked fabric is never one."""
    try:
        rel = output.resolve().relative_to(top.resolve())
    except ValueError:
        return []
    prefix = PurePosixPath(rel.as_posix())
    if not prefix.parts:
        raise RepositoryError("--all needs an output directory below the top of the repository, "
                              "such as the default, rendered")
    found = [p.relative_to(prefix) for p in _tracked(top, f"{prefix.as_posix()}/")]
    names = {p.parts[0] for p in found if len(p.parts) > 1}
    names -= {p.parts[0] for p in found if p.name in FABRIC_NAMES}
    return sorted(names)
