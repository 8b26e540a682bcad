"""The `lab` marker is held: a test that starts a program without it fails (tests/conftest.py).

Run as its own pytest, in a copy of this directory's conftest, on three small tests: one marked
that starts `true`, one unmarked that starts it in its call, one whose fixture starts it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.lab

TESTS = '''
import subprocess

import pytest


@pytest.fixture
def started() -> None:
    subprocess.run(["true"], check=True)


@pytest.mark.lab
def test_marked() -> None:
    subprocess.run(["true"], check=True)


def test_unmarked() -> None:
    subprocess.run(["true"], check=True)


def test_fixture_starts(started: None) -> None:
    pass


def test_quiet() -> None:
    assert sum([1, 2]) == 3
'''


def test_a_test_that_starts_a_program_without_the_mark_fails(tmp_path: Path) -> None:
    shutil.copy(HERE.parent / "conftest.py", tmp_path / "conftest.py")
    shutil.copytree(HERE.parent / "support", tmp_path / "support", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "test_started.py").write_text(TESTS, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    lab: starts a program\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", str(tmp_path)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    out = run.stdout
    assert run.returncode == 1, out
    assert "PASSED test_started.py::test_marked" in out, out
    assert "PASSED test_started.py::test_quiet" in out, out
    for name in ("test_unmarked", "test_fixture_starts"):
        assert (f"test_started.py::{name} starts true without @pytest.mark.lab: mark it (or its module) lab"
                in out), out
    assert "4 passed, 2 errors" in out, out  # the call passed; its teardown fails
    fast = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not lab",
                           str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "3 passed, 1 deselected, 2 errors" in fast.stdout, fast.stdout
