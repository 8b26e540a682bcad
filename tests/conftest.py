"""The test session's hooks and fixtures: the `lab` marker held to what a test starts, a private
cache per test, the golden update flag. Helpers live in `support/` (`support.fabrics`: paths and
in-process rendering), imported by the tests that use them."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.fabrics import REPO


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
