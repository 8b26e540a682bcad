"""Shared test helpers: repository paths, the golden update flag, in-process rendering."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabricgen.errors import InvalidFabricError
from fabricgen.output import emit
from fabricgen.pipeline import Build, load_text, render
from fabricgen.report import text_line

REPO = Path(__file__).resolve().parents[1]
# Upstream CRD schemas vendored with the tests (see tests/crds/README.md).
CRD_DIR = REPO / "tests" / "crds"
SITES = sorted(REPO.glob("sites/*/fabric.yaml"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/*/expected/ from the current renderer output",
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int) -> None:
    """With FABRICGEN_TEST_STRICT=1 (`scripts/test.sh`, hence CI), a skipped test fails the run:
    every skip here is a tool or an OVN release the setup script installs, so a skip in CI means
    something the tests should have driven was not driven."""
    skipped = terminalreporter.stats.get("skipped", [])
    if os.environ.get("FABRICGEN_TEST_STRICT") == "1" and skipped:
        terminalreporter.write_line(f"FABRICGEN_TEST_STRICT: {len(skipped)} test(s) skipped; each needs what "
                                    "scripts/setup.sh --test installs", red=True)
        terminalreporter._session.exitstatus = pytest.ExitCode.TESTS_FAILED


# ------------------------------------------------------------------ the `lab` marker
# A test that starts a program (OVN and OVS daemons, Prometheus, kubectl, nft, git, fabricgen as a
# process, ...) carries `@pytest.mark.lab` (or its module `pytestmark`), so that `pytest -m "not
# lab"` runs the fast ones alone. It is held to it: a test without the mark that starts one fails,
# naming the program, whether the program starts in its setup (a fixture), its call or teardown.
_RUNNING: list[pytest.Item] = []
_STARTED: dict[str, list[str]] = {}
_popen_init = subprocess.Popen.__init__


def _watched_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
    item = _RUNNING[-1] if _RUNNING else None
    if item is not None and item.get_closest_marker("lab") is None:
        program = args if isinstance(args, str | bytes | os.PathLike) else (list(args) or ["?"])[0]
        _STARTED.setdefault(item.nodeid, []).append(Path(os.fsdecode(program)).name)
    _popen_init(self, args, *rest, **kwargs)


subprocess.Popen.__init__ = _watched_init  # type: ignore[method-assign]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _RUNNING.append(item)
    try:
        yield
    finally:
        _RUNNING.pop()
        _STARTED.pop(item.nodeid, None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    started = _STARTED.get(item.nodeid)
    if started and report.when == "teardown" and not report.failed:
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} starts {', '.join(sorted(set(started)))} without @pytest.mark.lab: mark "
                           "it (or its module) lab, so that `pytest -m \"not lab\"` stays the fast tests")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets a private cache of its own (`fabricgen.output.private_cache`), also for
    the fabricgen processes it starts: no test answers from another's render records."""
    cache = tmp_path_factory.mktemp("cache") / "fabricgen"
    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(cache))
    return cache


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


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


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Run with the repository root as working directory (file names as users see them)."""
    monkeypatch.chdir(REPO)
    yield REPO


@pytest.fixture(scope="session")
def fabricgen_commit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """This work tree committed in a scratch repository (what a user pins with repo: and rev:),
    its commit id, and one PRE_COMMIT_HOME that keeps the hook environment for the session."""
    from support.hook_repo import snapshot

    source, rev = snapshot(tmp_path_factory.mktemp("fabricgen"))
    return source, rev, tmp_path_factory.mktemp("pre-commit-home")
