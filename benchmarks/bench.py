"""Render speed and memory of fabricgen on synthetic full-mesh fabrics (a benchmark, not a test).

    .venv/bin/python benchmarks/bench.py [--runs N] [--sizes 4,32,128] [--json]

For each size it writes a valid fabric of that many zones (distinct /24 backbones
in 172.16.0.0/12; transit addresses 169.254.100.0 upwards, which stays in the
lower half Kube-OVN allocates from: .0-.127, so at most 128 zones), and measures:

- `process`: wall time of `fabricgen render FABRIC -o <fresh tmp dir>`, median of N runs;
- `pipeline`: the same work in this process (load+validate, plan+render, write);
- `cpu`: user + system seconds of those subprocesses (steadier on a busy machine);
- `peak_rss`: the largest ru_maxrss of those subprocesses;
- `routes`: static routes written (each zone: one per other zone, N*(N-1); every one is
  written twice, in the Vpc and in the merge patch, beside as many 31000 policies).

It also measures `fabricgen render sites/lab/fabric.yaml` against a bare
`python -c "import pydantic, ruamel.yaml, jinja2, jsonschema, git"` in the same run.
Targets: lab <= 2x that import floor; 128 zones < 5 s; time linear in routes
(the marginal cost per route between the two largest sizes at most 1.5x the one
between the two smallest). Exit 0 when every target is met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAB = Path("sites/lab/fabric.yaml")
IMPORTS = "import pydantic, ruamel.yaml, jinja2, jsonschema, git"
VPC = "ovn-cluster"
MAX_ZONES = 128  # transit addresses .0-.127: the lower half of 169.254.100.0/24
TARGET_LAB_RATIO = 2.0
TARGET_128_SECONDS = 5.0
TARGET_SLOPE_RATIO = 1.5


def fabricgen_command() -> list[str]:
    script = Path(sys.executable).with_name("fabricgen")
    return [str(script)] if script.exists() else [sys.executable, "-m", "fabricgen"]


def fabric_text(zones: int) -> str:
    """A full-mesh fabric that passes every rule."""
    if not 2 <= zones <= MAX_ZONES:
        raise ValueError(f"zones must be 2..{MAX_ZONES}")
    lines = [
        "apiVersion: fabricgen.io/v1alpha1",
        "kind: Fabric",
        "metadata:",
        f"  name: bench{zones}",
        "interconnection:",
        "  encapsulation: vxlan",
        "  autoRoute: false",
        "  database:",
        "    zone: z000",
        "    members:",
        *(f"      - {{node: z000-node-{m}, address: 10.10.10.{10 + m}}}" for m in (1, 2, 3)),
        "zones:",
    ]
    for i in range(zones):
        name = f"z{i:03d}"
        lines += [
            f"  - name: {name}",
            "    platform: harvester",
            f"    gatewayNodes: [{name}-node-1, {name}-node-2]",
            f"    transitAddress: 169.254.100.{i}",
            "    cluster: {podCIDR: 10.54.0.0/16, serviceCIDR: 10.55.0.0/16, primaryPodCIDR: 10.52.0.0/16}",
            "    backbone:",
            f"      cidr: 172.{16 + i // 256}.{i % 256}.0/24",
            "      network: {name: vsw-backbone}",
        ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Run:
    wall_s: float
    cpu_s: float  # user + system: steadier than wall time on a busy machine
    peak_rss_kib: int
    code: int


def wall(argv: Sequence[str], cwd: Path) -> Run:
    """Wall and CPU seconds, peak RSS and exit code of one subprocess."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(argv), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if proc.returncode not in (0, 3):
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {err}")
    return Run(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, proc.returncode)


def render_once(fabric: Path, cwd: Path) -> Run:
    """`fabricgen render` into a fresh directory, so that it writes every file."""
    out = Path(tempfile.mkdtemp(prefix="fg-bench-out-"))
    try:
        result = wall([*fabricgen_command(), "render", "-q", str(fabric), "-o", str(out)], cwd)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    if result.code != 3:
        raise RuntimeError("render into an empty directory must report changes (exit 3)")
    return result


def render_in_process(fabric: Path, runs: int) -> tuple[dict[str, float], int]:
    """Median seconds per stage, and the number of static routes the Vpc objects hold."""
    from fabricgen import emit
    from fabricgen.pipeline import load, render

    stages: dict[str, list[float]] = {"load": [], "render": [], "write": [], "total": []}
    routes = 0
    for _ in range(runs):
        out = Path(tempfile.mkdtemp(prefix="fg-bench-out-"))
        try:
            t0 = time.perf_counter()
            fabric_model, source, _warnings = load(fabric)
            t1 = time.perf_counter()
            build = render(fabric_model, source.name)
            t2 = time.perf_counter()
            emit.write(out, build)
            t3 = time.perf_counter()
        finally:
            shutil.rmtree(out, ignore_errors=True)
        for key, value in (("load", t1 - t0), ("render", t2 - t1), ("write", t3 - t2), ("total", t3 - t0)):
            stages[key].append(value)
        routes = sum(len(obj["spec"]["staticRoutes"]) for d in build.manifests
                     for obj in build.objects(d) if obj.get("kind") == "Vpc" and obj["metadata"]["name"] == VPC)
    return {k: statistics.median(v) for k, v in stages.items()}, routes


@dataclass
class SizeResult:
    zones: int
    routes: int
    process_s: float
    process_cpu_s: float
    pipeline_s: float
    load_s: float
    render_s: float
    write_s: float
    peak_rss_mib: float
    us_per_route: float


def bench_size(zones: int, runs: int, workdir: Path) -> SizeResult:
    fabric = workdir / f"fabric-{zones}.yaml"
    fabric.write_text(fabric_text(zones))
    stages, routes = render_in_process(fabric, runs)
    runs_ = [render_once(fabric, workdir) for _ in range(runs)]
    return SizeResult(zones, routes, statistics.median(r.wall_s for r in runs_),
                      statistics.median(r.cpu_s for r in runs_), stages["total"], stages["load"], stages["render"],
                      stages["write"], max(r.peak_rss_kib for r in runs_) / 1024,
                      stages["total"] / max(routes, 1) * 1e6)


def lab_ratio(runs: int) -> dict[str, float]:
    floor, lab = [], []
    for _ in range(runs):  # interleaved, so both see the same machine state
        floor.append(wall([sys.executable, "-c", IMPORTS], REPO))
        lab.append(render_once(LAB, REPO))
    f, r = statistics.median(x.wall_s for x in floor), statistics.median(x.wall_s for x in lab)
    fc, rc = statistics.median(x.cpu_s for x in floor), statistics.median(x.cpu_s for x in lab)
    return {"import_floor_s": f, "lab_render_s": r, "ratio": r / f,
            "import_floor_cpu_s": fc, "lab_render_cpu_s": rc, "cpu_ratio": rc / fc}


def slopes(results: Sequence[SizeResult]) -> list[float]:
    """Marginal in-process seconds per route between consecutive sizes."""
    return [(b.pipeline_s - a.pipeline_s) / (b.routes - a.routes) for a, b in itertools.pairwise(results)]


def verdicts(results: Sequence[SizeResult], lab: dict[str, float]) -> dict[str, bool]:
    checks = {"lab_within_2x_import_floor": lab["ratio"] <= TARGET_LAB_RATIO}
    big = [r for r in results if r.zones == MAX_ZONES]
    if big:
        checks["128_zones_under_5s"] = big[0].process_s < TARGET_128_SECONDS
    s = slopes(results)
    if len(s) >= 2:
        checks["linear_in_routes"] = s[-1] <= TARGET_SLOPE_RATIO * s[0]
    return checks


def table(results: Sequence[SizeResult], lab: dict[str, float], checks: dict[str, bool]) -> str:
    head = (f"{'zones':>5} {'routes':>7} {'process s':>10} {'cpu s':>6} {'pipeline s':>11} {'load':>7} {'render':>7} "
            f"{'write':>7} {'peak MiB':>9} {'us/route':>9}")
    rows = [head, "-" * len(head)]
    for r in results:
        rows.append(f"{r.zones:>5} {r.routes:>7} {r.process_s:>10.3f} {r.process_cpu_s:>6.3f} "
                    f"{r.pipeline_s:>11.3f} {r.load_s:>7.3f} {r.render_s:>7.3f} {r.write_s:>7.3f} "
                    f"{r.peak_rss_mib:>9.1f} {r.us_per_route:>9.1f}")
    rows.append("")
    s = slopes(results)
    if s:
        rows.append("marginal us/route between sizes: " + ", ".join(f"{x * 1e6:.1f}" for x in s))
    rows.append(f"import floor {lab['import_floor_s']:.3f} s, lab render {lab['lab_render_s']:.3f} s, "
                f"ratio {lab['ratio']:.2f}x (CPU time: {lab['import_floor_cpu_s']:.3f} s, "
                f"{lab['lab_render_cpu_s']:.3f} s, {lab['cpu_ratio']:.2f}x)")
    rows += [f"{'PASS' if ok else 'FAIL'}  {name}" for name, ok in checks.items()]
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement; the median is reported")
    parser.add_argument("--sizes", default="4,32,128", help="zone counts, comma separated (2..128)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    sys.path.insert(0, str(REPO / "generator"))
    with tempfile.TemporaryDirectory(prefix="fg-bench-") as tmp:
        results = [bench_size(n, args.runs, Path(tmp)) for n in sizes]
    lab = lab_ratio(args.runs)
    checks = verdicts(results, lab)
    if args.json:
        doc = {"sizes": [asdict(r) for r in results], "lab": lab,
               "marginal_us_per_route": [x * 1e6 for x in slopes(results)], "checks": checks,
               "python": sys.version.split()[0], "cpus": os.cpu_count()}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(table(results, lab, checks))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
