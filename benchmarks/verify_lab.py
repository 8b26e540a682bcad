"""Speed of `fabricgen verify` (the OVN-IC lab): a benchmark, not a test.

    .venv/bin/python benchmarks/verify_lab.py [--runs N] [--sizes 16] [--json]

Measures the wall time (median of N runs) and the CPU time (`RUSAGE_CHILDREN`: fabricgen
and the tools it waits for; the detached OVN daemons are not counted) of `fabricgen verify`
on `sites/lab/fabric.yaml` (4 zones, 12 pairs) and on the synthetic full-mesh fabrics of
`bench.py` (16 zones: 240 pairs). Targets: the lab under 3 s, 16 zones under 10 s.
Exit 0 when every target is met, 1 otherwise; 2 when the OVN programs are not installed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import LAB, REPO, fabric_text

TARGETS = {4: 3.0, 16: 10.0}  # zones -> seconds


def once(fabric: Path) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds of the whole process tree, and the last line of the output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "fabricgen", "verify", str(fabric)], cwd=REPO,
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"verify {fabric} exited {proc.returncode}: {proc.stderr}{proc.stdout}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, proc.stdout.splitlines()[-1]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="16", help="synthetic zone counts, comma separated")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO / "generator"))
    from fabricgen.live_state.lab.sandbox import INSTALL_COMMAND, missing_prerequisites

    if missing_prerequisites():
        sys.stderr.write(f"verify_lab: the OVN programs are missing; {INSTALL_COMMAND}\n")
        return 2
    rows = []
    with tempfile.TemporaryDirectory(prefix="fg-bench-") as tmp:
        fabrics = [(4, "sites/lab", REPO / LAB)]
        for zones in (int(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"fabric-{zones}.yaml"
            path.write_text(fabric_text(zones))
            fabrics.append((zones, f"synthetic {zones}", path))
        for zones, name, path in fabrics:
            runs = [once(path) for _ in range(args.runs)]
            wall = statistics.median(r[0] for r in runs)
            target = TARGETS.get(zones)
            rows.append({"fabric": name, "zones": zones, "wall_s": wall,
                         "cpu_s": statistics.median(r[1] for r in runs), "result": runs[0][2],
                         "target_s": target, "ok": target is None or wall < target})
    if args.json:
        sys.stdout.write(json.dumps({"runs": rows, "cpus": os.cpu_count()}, indent=2) + "\n")
    else:
        for r in rows:
            target = f"< {r['target_s']:.0f} s" if r["target_s"] else "-"
            sys.stdout.write(f"{'PASS' if r['ok'] else 'FAIL'}  {r['fabric']:<14} {r['zones']:>3} zones  "
                             f"wall {r['wall_s']:.2f} s  cpu {r['cpu_s']:.2f} s  target {target}  ({r['result']})\n")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
