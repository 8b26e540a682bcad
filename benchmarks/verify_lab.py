"""Speed and memory of `fabricgen verify` (the OVN-IC lab): a benchmark, not a test.

    .venv/bin/python benchmarks/verify_lab.py [--runs N] [--logical 16,32,64] [--packets 16] [--json]
                                              [--ovn-prefix DIR]

Measures, per fabric and mode, the wall time (median of N runs) and the peak memory of the
whole lab: the resident set of fabricgen and of every lab process (the detached OVN/OVS daemons,
found by the lab's directory on their command line), summed, sampled every 50 ms. Fabrics:
`sites/lab/fabric.yaml` (4 zones, 12 pairs) and the synthetic full-mesh fabrics of `bench.py`
(n zones: n(n-1) pairs). Modes: `--logical` (ovn-trace only) and the data plane (packets
between simulated chassis). Targets: logical 64 zones under 15 s; data plane: the lab under
15 s, 16 zones under 60 s. Exit 0 when every target is met, 1 otherwise; 2 when the OVN
programs are not installed.
"""

from __future__ import annotations

import argparse
import json
import os
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


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _lab_rss_kib(base: str, root: int) -> int:
    total = _rss_kib(root)
    marker = base.encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != root:
            try:
                if marker in (entry / "cmdline").read_bytes():
                    total += _rss_kib(int(entry.name))
            except OSError:
                continue
    return total


def once(fabric: Path, logical: bool, env: dict[str, str]) -> tuple[float, int, str]:
    """Wall seconds, peak resident KiB of the lab, and the last line of the output."""
    base = tempfile.mkdtemp(prefix="fgb", dir="/tmp")
    args = [sys.executable, "-m", "fabricgen", "verify", str(fabric), *(["--logical"] if logical else [])]
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**env, "FABRICGEN_OVN_SANDBOX_BASE": base})
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _lab_rss_kib(base, proc.pid))
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
    return elapsed, peak, out.splitlines()[-1]


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
    if args.json:
        sys.stdout.write(json.dumps({"ovn": ovn, "ovs": ovs, "cpus": os.cpu_count(), "runs": rows}, indent=2) + "\n")
    else:
        sys.stdout.write(f"OVN {ovn}, Open vSwitch {ovs}, {os.cpu_count()} CPUs\n")
        for r in rows:
            target = f"< {r['target_s']:.0f} s" if r["target_s"] else "-"
            verdict = "PASS" if r["ok"] else "FAIL"
            sys.stdout.write(f"{verdict}  {r['mode']:<10} {r['fabric']:<13} {r['zones']:>3} zones  "
                             f"wall {r['wall_s']:.2f} s  peak {r['peak_mib']:.0f} MiB  target {target}  "
                             f"({r['result']})\n")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
