"""What a policy costs `fabricgen render` and `fabricgen verify` (a benchmark, not a test).

    .venv/bin/python benchmarks/policy_scale.py [--rules 1000] [--verify-rules 50] [--runs 5]

- render: sites/lab/fabric.yaml with its policy's rules replaced by N rules (prod-web to prod-db,
  one port each), against the same fabric without a policy; rendered to a scratch directory,
  best of `--runs` runs each.
- verify: `verify --logical` of the lab with a policy of M rules, against the lab without a
  policy (the tenant VPCs and their flows are what the policy adds to the lab); and the lab's
  peak memory (max RSS of the verify process and its children) with and without.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAB = REPO / "sites" / "lab" / "fabric.yaml"


def fabric(rules: int) -> str:
    text = LAB.read_text(encoding="utf-8")
    start, end = text.index("policy:\n"), text.index("# How Argo CD and Flux deliver")
    if rules == 0:
        return text[:start] + text[end:]
    head = text[start:text.index("  rules:\n", start)]
    body = "".join(f'    - {{from: prod-web, to: prod-db, protocol: tcp, ports: ["{10000 + r}"]}}\n'
                   for r in range(rules))
    return text[:start] + head + "  rules:\n" + body + "\n" + text[end:]


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Seconds and peak MiB of the children's largest RSS for one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if done.returncode not in (0, 3):
        sys.exit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-2000:]}")
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    return took, peak


def best(argv: list[str], cwd: Path, runs: int) -> float:
    return min(timed(argv, cwd)[0] for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--verify-rules", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("fabricgen"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, rules in (("none", 0), ("many", args.rules), ("verify", args.verify_rules)):
            (work / "sites" / name).mkdir(parents=True)
            (work / "sites" / name / "fabric.yaml").write_text(fabric(rules), encoding="utf-8")
        without = best([exe, "render", "sites/none/fabric.yaml", "-o", str(work / "out-none")], work, args.runs)
        with_rules = best([exe, "render", "sites/many/fabric.yaml", "-o", str(work / "out-many")], work, args.runs)
        print(f"render, no policy: {without:.3f} s; {args.rules} rules: {with_rules:.3f} s "
              f"({with_rules / without:.2f}x)")
        verify = [exe, "verify", "--logical"]
        plain = min(timed([*verify, "sites/none/fabric.yaml"], work) for _ in range(max(1, args.runs // 2)))
        policy = min(timed([*verify, "sites/verify/fabric.yaml"], work) for _ in range(max(1, args.runs // 2)))
        print(f"verify --logical, no policy: {plain[0]:.2f} s; {args.verify_rules} rules: {policy[0]:.2f} s "
              f"({policy[0] / plain[0]:.2f}x)")
        print(f"peak RSS of a process of the lab (its largest), no policy: {plain[1]:.0f} MiB; "
              f"with the policy: {policy[1]:.0f} MiB")


if __name__ == "__main__":
    main()
