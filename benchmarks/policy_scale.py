"""What a policy costs `fabricgen render` and `fabricgen verify` (a benchmark, not a test).

    .venv/bin/python benchmarks/policy_scale.py [--rules 1000] [--verify-rules 50] [--runs 5]
        [--only render|validate|verify]

- render: sites/lab/fabric.yaml with its policy's rules replaced by N rules (prod-web to prod-db,
  one port each), against the same fabric without a policy; each run renders every file into a
  new directory with the fast path off (`FABRICGEN_FAST_PATH=0`), best of `--runs` runs.
- verify: `verify --logical` (ovn-trace) and `verify` (packets through the simulated chassis, with
  the OVN of `--ovn-prefix`, by default `.ovn/25.03` where it is extracted) of the lab with a
  policy of M rules, against the lab without a policy (the tenant VPCs and their flows are what
  the policy adds to the lab); and the verify process's peak memory with and without (the OVN
  daemons it starts detach: not counted).
- validate with one error: `validate` of the lab with 1,250 to 10,000 rules, one of which names a
  group that does not exist (the error report is what a long policy used to make quadratic); the
  seconds per thousand rules stay flat where validation is linear.
- memory: the data-plane lab's daemons (every NB/SB, northd, ovn-ic, and each chassis'
  ovsdb-server, ovs-vswitchd and ovn-controller), resident memory per AZ with and without the
  policy of M rules.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAB = REPO / "sites" / "lab" / "fabric.yaml"


def fabric(rules: int, broken: bool = False) -> str:
    text = LAB.read_text(encoding="utf-8")
    start, end = text.index("policy:\n"), text.index("# How Argo CD and Flux deliver")
    if rules == 0:
        return text[:start] + text[end:]
    head = text[start:text.index("  rules:\n", start)]
    body = "".join(f'    - {{from: prod-web, to: prod-db, protocol: tcp, ports: ["{10000 + r}"]}}\n'
                   for r in range(rules))
    if broken:  # the middle rule names a group that does not exist
        lines = body.splitlines(keepends=True)
        lines[rules // 2] = lines[rules // 2].replace("from: prod-web", "from: prod-wbe")
        body = "".join(lines)
    return text[:start] + head + "  rules:\n" + body + "\n" + text[end:]


ENV = {**os.environ, "FABRICGEN_FAST_PATH": "0"}  # the whole pipeline every time, never the render record


def timed(argv: list[str], cwd: Path, exits: tuple[int, ...] = (0, 3)) -> tuple[float, float]:
    """Seconds and peak MiB of the children's largest RSS for one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False, env=ENV)
    took = time.perf_counter() - start
    if done.returncode not in exits:
        sys.exit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-2000:]}")
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    return took, peak


def best_render(exe: str, fabric: str, work: Path, runs: int) -> float:
    """The fastest of `runs` renders, each into a new empty directory: every file written."""
    return min(timed([exe, "render", fabric, "-o", str(work / f"out-{fabric.split('/')[1]}-{run}")], work)[0]
               for run in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--verify-rules", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ovn-prefix", type=Path, default=REPO / ".ovn" / "25.03")
    parser.add_argument("--only", choices=("render", "validate", "verify"))
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("fabricgen"))
    if args.only in (None, "validate"):
        validate_one_error(exe)
    if args.only == "validate":
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, rules in (("none", 0), ("many", args.rules), ("verify", args.verify_rules)):
            (work / "sites" / name).mkdir(parents=True)
            (work / "sites" / name / "fabric.yaml").write_text(fabric(rules), encoding="utf-8")
        without = best_render(exe, "sites/none/fabric.yaml", work, args.runs)
        with_rules = best_render(exe, "sites/many/fabric.yaml", work, args.runs)
        print(f"render, no policy: {without:.3f} s; {args.rules} rules: {with_rules:.3f} s "
              f"({with_rules / without:.2f}x)")
        if args.only == "render":
            return
        verify = [exe, "verify", "--logical"]
        plain = min(timed([*verify, "sites/none/fabric.yaml"], work) for _ in range(max(1, args.runs // 2)))
        policy = min(timed([*verify, "sites/verify/fabric.yaml"], work) for _ in range(max(1, args.runs // 2)))
        print(f"verify --logical, no policy: {plain[0]:.2f} s; {args.verify_rules} rules: {policy[0]:.2f} s "
              f"({policy[0] / plain[0]:.2f}x)")
        print(f"peak RSS of the verify process (the OVN daemons it starts detach and are not counted), "
              f"no policy: {plain[1]:.0f} MiB; with the policy: {policy[1]:.0f} MiB")
        packets = [exe, "verify", *(["--ovn-prefix", str(args.ovn_prefix)] if args.ovn_prefix.is_dir() else [])]
        plain = min(timed([*packets, "sites/none/fabric.yaml"], work) for _ in range(max(1, args.runs // 2)))
        policy = min(timed([*packets, "sites/verify/fabric.yaml"], work) for _ in range(max(1, args.runs // 2)))
        print(f"verify with packets, no policy: {plain[0]:.2f} s; {args.verify_rules} rules: {policy[0]:.2f} s "
              f"({policy[0] / plain[0]:.2f}x)")
    print("the data-plane lab's daemons, resident memory per AZ (MiB), no policy / "
          f"{args.verify_rules} rules:")
    bare, ruled = lab_memory(fabric(0)), lab_memory(fabric(args.verify_rules))
    for az in sorted(set(bare) | set(ruled)):
        print(f"  {az:<12} {bare.get(az, 0) / 1024:6.1f} / {ruled.get(az, 0) / 1024:6.1f}")


def validate_one_error(exe: str) -> None:
    """`validate` of 1,250 to 10,000 rules with one error: seconds, and seconds per 1,000 rules."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for rules in (1250, 2500, 5000, 10000):
            (work / "sites" / str(rules)).mkdir(parents=True)
            (work / "sites" / str(rules) / "fabric.yaml").write_text(fabric(rules, broken=True), encoding="utf-8")
            took = timed([exe, "validate", f"sites/{rules}/fabric.yaml"], work, exits=(1,))[0]
            print(f"validate with one error, {rules} rules: {took:.2f} s ({took / rules * 1000:.2f} s per 1,000 rules)")


def lab_memory(text: str) -> dict[str, int]:
    """KiB of resident memory of every daemon of the data-plane lab (`verify` without --logical),
    by the AZ it serves (its NB/SB, northd and ovn-ic, and its chassis' ovsdb-server, ovs-vswitchd
    and ovn-controller), read from /proc once the lab has started; `ic` and `underlay` apart."""
    from fabricgen.lab.assembly import running
    from fabricgen.pipeline import load_text, render

    fabric_obj, source, _warnings = load_text(text, "fabric.yaml")
    build = render(fabric_obj, source.name)
    out: dict[str, int] = {}
    with running(build, data_plane=True) as lab:
        workdir = lab.sandbox.workdir
        assert lab.underlay is not None
        az_of = {c.directory.name: c.spec.az for c in lab.underlay.chassis.values()}
        az_of |= {"ic": "ic", "u": "underlay"}
        for pidfile in list(lab.sandbox._pidfiles):
            try:
                pid = int(pidfile.read_text().strip())
                status = Path(f"/proc/{pid}/status").read_text()
            except (OSError, ValueError):
                continue
            rss = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
            top = pidfile.relative_to(workdir).parts[0]
            az = az_of.get(top, top)
            out[az] = out.get(az, 0) + rss
    return out


if __name__ == "__main__":
    main()
