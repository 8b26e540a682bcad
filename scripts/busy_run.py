#!/usr/bin/env python3
"""Run the tests that touch daemons, packets, raft, status and signals in two clones of this
repository at once, on a machine kept busy, and count what passed: what a shared CI runner does
to them.

    .venv/bin/python scripts/busy_run.py [--rounds N] [--busy K] [--clones C] [TEST ...]

Each clone is `git clone` of this repository's HEAD into a scratch directory, sharing this
repository's `.venv` and `.ovn` (nothing is installed twice). K busy loops (`sha256sum /dev/zero`,
one process each, at the lowest priority nobody lowers them from) run while the C clones run
pytest on the tests given (default: the data-plane, raft, status, interruption and signal tests)
N rounds each, all rounds started as background jobs of a non-interactive shell would be (SIGINT
ignored, as `pytest &` has it). It prints per clone and round the pytest summary line, then the
counts: passed, failed, and every failed test with how often it failed. Exit 1 when one failed.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TESTS = ["tests/lab/test_dataplane.py", "tests/day2/test_raft_status.py", "tests/day2/test_raft_kubeovn.py",
                 "tests/day2/test_status.py", "tests/lab/test_signal_cleanup.py", "tests/cli/test_cli.py",
                 "tests/lab/test_verify.py::test_an_interrupted_lab_stops_every_daemon_and_removes_its_directory"]
SUMMARY = re.compile(r"^=*\s*(?P<line>(?:\d+ (?:passed|failed|error|errors|skipped)[, ]*)+)", re.MULTILINE)
FAILED = re.compile(r"^FAILED (?P<test>\S+)", re.MULTILINE)


def clone(target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(REPO), str(target)], check=True)
    for shared in (".venv", ".ovn"):
        if (REPO / shared).exists():
            (target / shared).symlink_to(REPO / shared)
    return target


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def rounds(directory: Path, tests: list[str], count: int, results: list[tuple[str, int, str]]) -> None:
    for number in range(1, count + 1):
        done = subprocess.run([str(REPO / ".venv" / "bin" / "pytest"), "-q", "-p", "no:cacheprovider", "-rf",
                               *tests], cwd=directory, capture_output=True, text=True, check=False,
                              preexec_fn=ignore_sigint,
                              env={**os.environ, "FABRICGEN_TEST_STRICT": "1",
                                   "PYTHONPATH": str(directory / "generator")})
        found = SUMMARY.findall(done.stdout)
        line = found[-1] if found else f"no summary (exit {done.returncode})"
        print(f"{directory.name} round {number}: {line.strip()}", flush=True)
        if done.returncode != 0:  # enough of each failure to tell what broke
            said = [x for x in done.stdout.splitlines() if x.startswith(("E ", "FAILED"))]
            print("\n".join(f"    {x[:300]}" for x in said[:12]), flush=True)
        results.append((directory.name, done.returncode, done.stdout))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--busy", type=int, default=2, help="busy loops (default 2: one per core here)")
    parser.add_argument("--clones", type=int, default=2)
    parser.add_argument("tests", nargs="*", default=DEFAULT_TESTS)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="busy-run-"))
    loops = [subprocess.Popen(["nice", "-n", "19", "sha256sum", "/dev/zero"], stdout=subprocess.DEVNULL)
             for _ in range(args.busy)]
    results: list[tuple[str, int, str]] = []
    try:
        clones = [clone(scratch / f"clone-{i + 1}") for i in range(args.clones)]
        threads = [threading.Thread(target=rounds, args=(c, args.tests, args.rounds, results)) for c in clones]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
        shutil.rmtree(scratch, ignore_errors=True)
    passed = failed = 0
    failures: collections.Counter[str] = collections.Counter()
    for _name, _code, out in results:
        found = SUMMARY.findall(out)
        line = found[-1] if found else ""
        passed += sum(int(n) for n in re.findall(r"(\d+) passed", line))
        failed += sum(int(n) for n in re.findall(r"(\d+) (?:failed|errors?)", line))
        failures.update(FAILED.findall(out))
    print(f"busy run: {args.clones} clones x {args.rounds} rounds, {args.busy} busy loops: "
          f"{passed} passed, {failed} failed")
    for test, times in failures.most_common():
        print(f"  {times}x {test}")
    return 1 if failed or any(code not in (0,) for _n, code, _o in results) else 0


if __name__ == "__main__":
    sys.exit(main())
