"""Speed of `fabricgen status`: a benchmark, not a test.

    .venv/bin/python benchmarks/status.py [--zones 16] [--runs 5] [--ovn-prefix DIR] [--json]

Builds the OVN lab of a synthetic full-mesh fabric (`bench.fabric_text`, n zones) with the
rendered output applied, as `fabricgen verify --logical` does, and measures two whole
`fabricgen status` processes against it (median wall time of N runs, and peak resident memory):

- live: every AZ's and the IC database's databases read through their sockets (an endpoints
  file), the zones several at once (`observe.runner.WORKERS`), then judged;
- capture: the same judged from a capture written by `--capture` (`--from`, no database read):
  what CI or a ticket does with a user's capture. Target: 16 zones within 2 s.
- metrics: that capture judged and written as metrics (`--format openmetrics`), what the
  exporter does each reading. Target: 16 zones within 1 s and 100 MiB.

Peak memory is each process's own (`wait4`), not the largest child so far. Exit 0 when the
capture and metrics rows meet their targets, 1 otherwise, 2 without the OVN programs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import REPO, fabric_text

TARGET = {"capture": 2.0, "metrics": 1.0}  # seconds, for 16 zones
METRICS_MIB = 100  # the metrics row's peak memory, for 16 zones


def timed(argv: Sequence[str], env: dict[str, str]) -> tuple[float, int, int]:
    """Wall seconds, exit code and peak resident KiB of one process (its own, from wait4)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(list(argv), env=env, stdout=subprocess.DEVNULL, stderr=err)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        if code not in (0, 3, 7, 8):
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)} exited {code}: {err.read().decode(errors='replace')}")
    return wall, code, usage.ru_maxrss


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zones", type=int, default=16)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ovn-prefix", type=Path, default=REPO / ".ovn" / "25.03")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from fabricgen.lab import assembly
    from fabricgen.lab.ovn.programs import Programs
    from fabricgen.pipeline import load_text, render

    prefix = args.ovn_prefix.resolve()
    programs = Programs(prefix) if (prefix / "bin").is_dir() else Programs.from_environment()
    if programs.missing():
        print(f"OVN programs missing: {', '.join(programs.missing())}", file=sys.stderr)
        return 2
    text = fabric_text(args.zones)
    fabric_obj, source, _warnings = load_text(text, "fabric.yaml")
    build = render(fabric_obj, source.name)
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        fabric = work / "fabric.yaml"
        fabric.write_text(text, encoding="utf-8")
        env = {**os.environ, "PATH": programs.search_path(), "FABRICGEN_CACHE_DIR": str(work / "cache")}
        fabricgen = [sys.executable, "-m", "fabricgen", "status", str(fabric)]
        with assembly.running(build, programs=programs) as lab:
            sb = lab.sandbox
            endpoints = work / "endpoints.yaml"
            endpoints.write_text(json.dumps({
                "icDatabase": {"northbound": sb.ic_nb, "southbound": sb.ic_sb},
                "availabilityZones": {az: {"northbound": sb.nb_db(az), "southbound": sb.sb_db(az)}
                                      for az in lab.azs}}), encoding="utf-8")
            live = [timed([*fabricgen, "--endpoints", str(endpoints)], env) for _ in range(args.runs)]
            timed([*fabricgen, "--endpoints", str(endpoints), "--capture", str(work / "capture")], env)
        replay = [timed([*fabricgen, "--endpoints", str(endpoints), "--from", str(work / "capture")], env)
                  for _ in range(args.runs)]
        metrics = [timed([*fabricgen, "--endpoints", str(endpoints), "--from", str(work / "capture"),
                          "--format", "openmetrics"], env) for _ in range(args.runs)]
    for name, runs in (("live", live), ("capture", replay), ("metrics", metrics)):
        rows[name] = {"median_s": statistics.median(r[0] for r in runs), "min_s": min(r[0] for r in runs),
                      "max_s": max(r[0] for r in runs), "exit": runs[-1][1],
                      "peak_rss_mib": max(r[2] for r in runs) / 1024}
    ok = args.zones != 16 or (rows["capture"]["median_s"] <= TARGET["capture"]
                              and rows["metrics"]["median_s"] <= TARGET["metrics"]
                              and rows["metrics"]["peak_rss_mib"] <= METRICS_MIB)
    if args.json:
        print(json.dumps({"zones": args.zones, "runs": args.runs, "ovn": programs.versions()[0], "rows": rows,
                          "target_capture_16_zones_s": TARGET["capture"], "passed": ok}, indent=2))
    else:
        print(f"fabricgen status, {args.zones} zones, OVN {programs.versions()[0]}, {args.runs} runs each")
        for name, row in rows.items():
            print(f"  {name:<8} median {row['median_s']:.2f} s (min {row['min_s']:.2f}, max {row['max_s']:.2f}), "
                  f"peak RSS {row['peak_rss_mib']:.0f} MiB, exit {row['exit']:.0f}")
        if args.zones == 16:
            print(f"  targets (capture {TARGET['capture']:.0f} s; metrics {TARGET['metrics']:.0f} s and "
                  f"{METRICS_MIB} MiB): {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
