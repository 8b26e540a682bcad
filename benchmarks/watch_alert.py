"""How long a lost quorum takes to page: a benchmark, not a test.

    .venv/bin/python benchmarks/watch_alert.py [--runs 3]

Runs the watch's end-to-end test (`tests/day2/test_watch_e2e.py`: Kube-OVN's IC database, the exporter,
a real Prometheus and Alertmanager on 127.0.0.1) `--runs` times and prints, per run and as the
median, the seconds from stopping two of the three raft members to the webhook's notification of
FabricRaftQuorumLost (the rule waits `for: 2m`, so 120 s is the floor), and from bringing them back
to the resolved notification. Exit 1 when a run fails.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIGURE = re.compile(r"^(break to notification|repair to resolved): ([0-9.]+) s", re.MULTILINE)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    figures: dict[str, list[float]] = {"break to notification": [], "repair to resolved": []}
    for run in range(1, args.runs + 1):
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "tests/day2/test_watch_e2e.py"], cwd=REPO,
                              capture_output=True, text=True, check=False)
        found = dict((name, float(value)) for name, value in FIGURE.findall(done.stdout))
        if done.returncode != 0 or len(found) != 2:
            print(f"run {run} failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}", file=sys.stderr)
            return 1
        print(f"run {run}: " + ", ".join(f"{name} {value:.1f} s" for name, value in found.items()))
        for name, value in found.items():
            figures[name].append(value)
    for name, values in figures.items():
        print(f"{name}: median {statistics.median(values):.1f} s (min {min(values):.1f}, max {max(values):.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
