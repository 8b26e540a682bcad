"""Speed and memory of `fabricgen verify` (the OVN-IC lab): a benchmark, not a test.

    .venv/bin/python benchmarks/verify_lab.py [--runs N] [--logical 16,32,64] [--packets 16] [--json]
                                              [--ovn-prefix DIR]

Measures, per fabric and mode, the wall time (median of N runs) and the peak memory of the
whole lab: the resident set of fabricgen and of every lab process (the detached OVN/OVS daemons,
found by the lab's directory on their command line), summed, sampled every 50 ms. Fabrics:
`sites/lab/fabric.yaml` (4 zones, 12 pairs) and the synthetic full-mesh fabrics of `bench.py`
(n zones: n(n-1) pairs). Modes: `--logical` (ovn-trace only) and the data plane (packets
between simulated chassis). Targets: logical 64 zones under 15 s; data plane: the lab under
15 s, 16 zones under 60 s. The kernel underlay stage runs where a fabric renders host files (OVN
deployments: `--underlay`, default the two samples that have them): each is proven with packets
with and without `--no-underlay`, the stage's own seconds are the difference (target: under 10 s),
and its memory per host namespace is the peak resident set of the FRR daemons the stage started
(found by the namespace names on their command line) divided by the hosts. Exit 0 when every
target is met, 1 otherwise; 2 when the OVN programs are not installed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import LAB, REPO, fabric_text

TARGETS = {("logical", 64): 15.0, ("data-plane", 4): 15.0, ("data-plane", 16): 60.0}  # (mode, zones) -> seconds
UNDERLAY_TARGET = 10.0  # seconds the kernel underlay stage may add to a proof
ALL_FLOWS = re.compile(r"(\d+)/\1 flows between hosts")


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _lab_rss_kib(base: str, root: int) -> tuple[int, int]:
    """Resident KiB of the lab (fabricgen and every process naming its directory or, for the kernel
    underlay, its namespaces), and of the kernel underlay's FRR daemons alone."""
    total, underlay = _rss_kib(root), 0
    marker, namespaces = base.encode(), f"fgu{root}-".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != root:
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker in cmdline or namespaces in cmdline:
                rss = _rss_kib(int(entry.name))
                total += rss
                underlay += rss if namespaces in cmdline and b"/usr/lib/frr/" in cmdline else 0
    return total, underlay


def once(fabric: Path, logical: bool, env: dict[str, str], *extra: str) -> tuple[float, int, str, int]:
    """Wall seconds, peak resident KiB of the lab, the last line of the output, and the peak
    resident KiB of the kernel underlay's processes."""
    base = tempfile.mkdtemp(prefix="fgb", dir="/tmp")
    args = [sys.executable, "-m", "fabricgen", "verify", str(fabric), *(["--logical"] if logical else []), *extra]
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**env, "FABRICGEN_OVN_SANDBOX_BASE": base})
    peak = underlay = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak, underlay
        while not done.is_set():
            total, kernel = _lab_rss_kib(base, proc.pid)
            peak, underlay = max(peak, total), max(underlay, kernel)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    os.rmdir(base)
    if proc.returncode not in (0, 5):  # 5: a pair is not delivered (the result says so)
        raise RuntimeError(f"verify {fabric} exited {proc.returncode}: {err}{out}")
    return elapsed, peak, out.splitlines()[-1], underlay


def underlay_row(fabric: Path, name: str, env: dict[str, str], runs: int) -> dict[str, object]:
    """The kernel underlay stage of one fabric: a proof with it and one without, `runs` times each."""
    sys.path.insert(0, str(REPO / "generator"))
    from fabricgen.lab.underlay.hosts import hosts_of
    from fabricgen.pipeline import build

    hosts = len(hosts_of(build(fabric)))
    with_it = [once(fabric, False, env) for _ in range(runs)]
    without = [once(fabric, False, env, "--no-underlay") for _ in range(runs)]
    wall = statistics.median(r[0] for r in with_it)
    added = wall - statistics.median(r[0] for r in without)
    per_host = max(r[3] for r in with_it) / 1024 / hosts
    return {"mode": "underlay", "fabric": name, "zones": hosts, "wall_s": round(wall, 2),
            "added_s": round(added, 2), "per_host_mib": round(per_host, 1),
            "peak_mib": round(max(r[1] for r in with_it) / 1024, 1), "result": with_it[0][2],
            "target_s": UNDERLAY_TARGET, "ok": added < UNDERLAY_TARGET and ALL_FLOWS.search(with_it[0][2]) is not None}


def _underlay_line(r: dict[str, object]) -> str:
    return (f"{'PASS' if r['ok'] else 'FAIL'}  underlay   {r['fabric']!s:<13} {r['zones']!s:>3} hosts  wall "
            f"{r['wall_s']} s, the stage {r['added_s']} s  peak {r['peak_mib']} MiB, {r['per_host_mib']} MiB per "
            f"host  target stage < {r['target_s']} s  ({r['result']})\n")


def _all(result: str) -> bool:
    """`K/K pairs delivered`."""
    done, _, rest = result.partition("/")
    return rest.split(" ", 1)[0] == done


def _sizes(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--logical", default="16,32,64", help="synthetic zone counts for --logical, comma separated")
    parser.add_argument("--packets", default="16", help="synthetic zone counts for the data plane, comma separated")
    parser.add_argument("--ovn-prefix", default=os.environ.get("FABRICGEN_OVN_PREFIX", ""),
                        help="the OVN programs to run (default: $FABRICGEN_OVN_PREFIX, else the system's)")
    parser.add_argument("--underlay", default="sites/openstack-k8s,sites/cloudstack",
                        help="fabrics (directories under the repository) whose kernel underlay stage is measured")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO / "generator"))
    env = dict(os.environ)
    if args.ovn_prefix:
        env["FABRICGEN_OVN_PREFIX"] = str(Path(args.ovn_prefix).resolve())
        os.environ["FABRICGEN_OVN_PREFIX"] = env["FABRICGEN_OVN_PREFIX"]
    from fabricgen.lab.ovn.programs import Programs
    from fabricgen.lab.ovn.sandbox import INSTALL_COMMAND

    programs = Programs.from_environment()
    if programs.missing(data_plane=True):
        sys.stderr.write(f"verify_lab: the OVN programs are missing; {INSTALL_COMMAND}\n")
        return 2
    ovn, ovs = programs.versions()
    rows = []
    with tempfile.TemporaryDirectory(prefix="fg-bench-") as tmp:
        def synthetic(zones: int) -> Path:
            path = Path(tmp) / f"fabric-{zones}.yaml"
            path.write_text(fabric_text(zones))
            return path

        runs: list[tuple[str, int, str, Path]] = [("logical", 4, "sites/lab", REPO / LAB)]
        runs += [("logical", n, f"synthetic {n}", synthetic(n)) for n in _sizes(args.logical)]
        runs += [("data-plane", 4, "sites/lab", REPO / LAB)]
        runs += [("data-plane", n, f"synthetic {n}", synthetic(n)) for n in _sizes(args.packets)]
        for mode, zones, name, path in runs:
            results = [once(path, mode == "logical", env) for _ in range(args.runs)]
            wall = statistics.median(r[0] for r in results)
            target = TARGETS.get((mode, zones))
            rows.append({"mode": mode, "fabric": name, "zones": zones, "wall_s": round(wall, 2),
                         "peak_mib": round(max(r[1] for r in results) / 1024, 1), "result": results[0][2],
                         "target_s": target, "ok": (target is None or wall < target) and _all(results[0][2])})
        rows += [underlay_row(REPO / site / "fabric.yaml", site, env, args.runs) for site in args.underlay.split(",")
                 if site]
    if args.json:
        sys.stdout.write(json.dumps({"ovn": ovn, "ovs": ovs, "cpus": os.cpu_count(), "runs": rows}, indent=2) + "\n")
    else:
        sys.stdout.write(f"OVN {ovn}, Open vSwitch {ovs}, {os.cpu_count()} CPUs\n")
        for r in rows:
            if r["mode"] == "underlay":
                sys.stdout.write(_underlay_line(r))
                continue
            limit = f"< {r['target_s']:.0f} s" if r["target_s"] else "-"
            verdict = "PASS" if r["ok"] else "FAIL"
            sys.stdout.write(f"{verdict}  {r['mode']:<10} {r['fabric']:<13} {r['zones']:>3} zones  "
                             f"wall {r['wall_s']:.2f} s  peak {r['peak_mib']:.0f} MiB  target {limit}  "
                             f"({r['result']})\n")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
