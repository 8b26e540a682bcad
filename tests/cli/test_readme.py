"""The README documents what the code does: its tour names every command, and its quick start works.

The rest of the documentation moved to docs/, which `tests/cli/test_docs.py` holds to the code (the
generated fabric.yaml reference and diagnostics page, every command and flag named, the links).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from fabricgen.cli import _parser

pytestmark = pytest.mark.lab  # starts real programs: bash

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_every_command_is_in_the_tour() -> None:
    parser = _parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert commands
    tour = README.split("## A tour of the commands", 1)[1].split("\n## ", 1)[0]
    for name in commands:
        assert f"fabricgen {name}" in tour, f"command {name} is missing from README's tour of the commands"


def _block_after(heading: str) -> str:
    match = re.search(rf"^## {re.escape(heading)}\n.*?```sh\n(.*?)```", README, re.MULTILINE | re.DOTALL)
    assert match, f"README has no ```sh block under ## {heading}"
    return match.group(1)


def _commands(block: str) -> list[str]:
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_quick_start_is_two_commands_and_ci_runs_the_second() -> None:
    first, second = _commands(_block_after("Quick start"))
    assert first.startswith("bash scripts/setup.sh && ")
    assert second == "bash scripts/test.sh"
    assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text()


def test_quick_start_puts_fabricgen_on_path_for_the_next_section(
        tmp_path: Path, fabricgen_commit: tuple[Path, str, Path]) -> None:
    """From a fresh clone and a fresh shell (no venv on PATH), the quick start's first command, then
    the bare `fabricgen` of "What a user does" in the same shell. Under umask 002, as on a shared
    machine: the clone's files are group-writable, and the committed output is still current
    (render compares what git compares: content and the executable bit)."""
    source, _rev, _home = fabricgen_commit
    clone = tmp_path / "fabricgen"
    first = _commands(_block_after("Quick start"))[0]
    validate = _commands(_block_after("What a user does"))[0]
    assert validate.startswith("fabricgen validate ")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
           **{k: v for k, v in os.environ.items() if k.startswith("PIP_")}}
    script = (f"umask 002\ngit clone -q {shlex.quote(str(source))} {shlex.quote(str(clone))}\n"
              f"cd {shlex.quote(str(clone))}\n{first}\necho \"render exit $?\"\ncommand -v fabricgen\n"
              "fabricgen render --check sites/*/fabric.yaml\necho \"check exit $?\"\n"
              f"stat -c %a sites/lab/fabric.yaml\n{validate}\n")
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["render exit 0", str(clone / ".venv" / "bin" / "fabricgen"),
                                        "check exit 0", "664"]
    assert "fabricgen: 1 fabric(s) valid" in done.stderr


def test_setup_says_what_a_stock_debian_python_lacks(tmp_path: Path) -> None:
    """Debian's python3 has no ensurepip without python3-venv, and `python3 -m venv` then fails
    halfway; setup says so first (as root it installs the package with apt-get)."""
    import shutil


    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text('#!/bin/sh\n[ "$1" = -c ] && [ "$2" = "import ensurepip" ] && exit 1\nexit 9\n')
    (bin_dir / "id").write_text("#!/bin/sh\necho 1000\n")  # not root: no apt-get
    for tool in ("python3", "id"):
        (bin_dir / tool).chmod(0o755)
    project = tmp_path / "project"
    shutil.copytree(REPO / "scripts", project / "scripts")
    done = subprocess.run(["bash", "scripts/setup.sh"], cwd=project, capture_output=True, text=True, check=False,
                          env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert done.returncode == 1
    assert done.stderr == ("setup: python3 -m venv needs ensurepip; on Debian or Ubuntu: sudo apt-get install "
                           "python3-venv\n")
    assert not (project / ".venv").exists()
