"""How `fabricgen import` scales with what a cluster holds (a benchmark, not a test).

    .venv/bin/python benchmarks/import_scale.py [--vpcs N] [--subnets M]

The lab's captures (tests/data/import/lab/) with hq's grown by N tenant VPCs and M Subnets
spread over them, imported once at the size given and once at a quarter of it: the work is
linear in the objects read when the larger takes about four times the smaller (it took 56 s
for 5,000 VPCs and 20,000 Subnets when every VPC scanned every Subnet).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "import" / "lab"


def capture(directory: Path, vpcs: int, subnets: int) -> Path:
    items = []
    for v in range(vpcs):
        items.append({"apiVersion": "kubeovn.io/v1", "kind": "Vpc", "metadata": {"name": f"bench-{v}"},
                      "spec": {"namespaces": [f"ns-{v}"]}, "status": {"standby": True}})
    for s in range(subnets):
        v = s % vpcs
        third, fourth = divmod(s, 64)
        items.append({"apiVersion": "kubeovn.io/v1", "kind": "Subnet", "metadata": {"name": f"bench-s{s}"},
                      "spec": {"vpc": f"bench-{v}", "cidrBlock": f"10.{128 + third // 256}.{third % 256}."
                                                                  f"{fourth * 4}/30",
                               "provider": f"bench-s{s}.default.ovn", "protocol": "IPv4", "enableDHCP": True}})
    path = directory / "hq-bench.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    return path


def run(vpcs: int, subnets: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        extra = capture(directory, vpcs, subnets)
        args = [sys.executable, "-m", "fabricgen", "import", str(directory / "sites" / "lab" / "fabric.yaml"),
                "--show", str(DATA / "icsb-show.txt"), "--format", "json",
                "--cluster", f"hq={DATA / 'hq.yaml'}", "--cluster", f"hq={extra}"]
        for name, file in (("ai", "ai.json"), ("edge", "edge.yaml"), ("dr", "dr.json")):
            args += ["--cluster", f"{name}={DATA / file}"]
        started = time.monotonic()
        done = subprocess.run(args, capture_output=True, text=True, check=False, cwd=directory)
        seconds = time.monotonic() - started
        if done.returncode not in (0, 1, 3):
            sys.exit(f"import exited {done.returncode}: {done.stderr[-500:]}")
        shutil.rmtree(directory / "sites", ignore_errors=True)
        return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vpcs", type=int, default=5000)
    parser.add_argument("--subnets", type=int, default=20000)
    args = parser.parse_args()
    small = run(args.vpcs // 4, args.subnets // 4)
    large = run(args.vpcs, args.subnets)
    print(f"import of {args.vpcs // 4} VPCs x {args.subnets // 4} Subnets: {small:.1f} s")
    print(f"import of {args.vpcs} VPCs x {args.subnets} Subnets: {large:.1f} s "
          f"({large / small:.1f}x for 4x the objects)")


if __name__ == "__main__":
    main()
