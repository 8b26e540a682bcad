#!/usr/bin/env python3
"""Try fabricgen as a hostile user would, repeatably, and say per family what held.

    .venv/bin/python tests/hostile_run.py [--fuzz N] [--seed S] [--quick] [--keep DIR]
                                            [--families fuzz,targeted,interruption,ovn-scripts,live-data]

Every case runs the installed `fabricgen` (default: the one beside this interpreter, i.e. the
repository's `.venv`) as a real process, in a private temporary directory with a private
`FABRICGEN_CACHE_DIR`. Families (see each module of `tests/hostile/`):

- `fuzz`: mutants of the sample fabrics in sites/ and tests/golden/, rendered; refused ones
  must be located one-line diagnostics with nothing written, accepted ones must pass their real
  readers and render the same bytes again elsewhere (`hostile.fuzz`);
- `targeted`: one case per hostile input or use that has broken fabricgen before (forged
  stamps, `-o` over inputs, partial writes, `transit --write`, the plugin's fabric, broken
  pipes, tags, KRM limits, `diff --base`, values no reader takes) (`hostile.targeted`);
- `interruption`: kill -9 during render, two renders at once, a full disk, a read-only output,
  interrupted `verify` (`hostile.interruption`);
- `ovn-scripts`: the rendered host scripts against real ovsdb-server NB, SB and IC databases on
  unix sockets (`hostile.ovn_scripts`; skipped, saying so, without the OVN programs);
- `live-data`: what a hostile cluster feeds `import`, `status --from` and `transit` (kubectl
  captures, `ovn-ic-sbctl show`, capture directories with hostile names, controls and tokens),
  one fifth as many as `--fuzz` (`hostile.live_data`).

It prints, per family, how many cases held, failed and were skipped, then every failure with
its reasons; with `--keep DIR` each failed case's directory (its input, what fabricgen wrote,
`commands.log` with every command, its environment and output) is copied to
DIR/<family>/<case>/. Exit status 1 when any case failed, 0 otherwise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile import fuzz, interruption, live_data, ovn_scripts, targeted
from hostile.harness import Case, Context, Failed, Skip, Workdir, keep, remove_tree

REPO = Path(__file__).resolve().parents[1]
FAMILIES = ("fuzz", "targeted", "interruption", "ovn-scripts", "live-data")
QUICK_FUZZ = 40


@dataclass
class Outcome:
    case: Case
    status: str  # held, failed, skipped
    detail: str
    reasons: list[str]
    kept: Path | None
    seconds: float


def _default_fabricgen() -> Path:
    beside = Path(sys.executable).parent / "fabricgen"
    if beside.exists():
        return beside
    found = shutil.which("fabricgen")
    return Path(found) if found else REPO / ".venv" / "bin" / "fabricgen"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fuzz", type=int, default=None, metavar="N",
                        help=f"fuzzed fabrics (default 2000; {QUICK_FUZZ} with --quick)")
    parser.add_argument("--seed", type=int, default=16, help="seed of the mutants and random points (default 16)")
    parser.add_argument("--quick", action="store_true", help="a small subset of every family (under a minute)")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="copy each failed case's directory (its reproduction) into DIR/<family>/<case>/")
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help=f"comma-separated families to run (default: {','.join(FAMILIES)})")
    parser.add_argument("--case", action="append", default=[], metavar="NAME",
                        help="run only cases whose name contains NAME (repeatable)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="cases at once (default: CPUs)")
    parser.add_argument("--fabricgen", type=Path, default=None,
                        help="the fabricgen executable to try (default: the one beside this interpreter)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every case with its result")
    parser.add_argument("--inner", default=None, help=argparse.SUPPRESS)  # a step run inside a mount namespace
    return parser


def _cases(ctx: Context, families: Sequence[str], fuzz_count: int) -> list[Case]:
    found: list[Case] = []
    for family in families:
        if family == "fuzz":
            found += fuzz.cases(ctx, fuzz_count)
        elif family == "targeted":
            found += targeted.cases(ctx)
        elif family == "interruption":
            found += interruption.cases(ctx)
        elif family == "ovn-scripts":
            found += ovn_scripts.cases(ctx)
        elif family == "live-data":
            found += live_data.cases(ctx, max(fuzz_count // 5, 20))
    if ctx.quick:
        found = [c for c in found if c.quick or c.family == "fuzz"]
    return found


def _run_case(ctx: Context, case: Case, keep_root: Path | None) -> Outcome:
    started = time.monotonic()
    work = Workdir(ctx, case)
    status, detail = "held", ""
    try:
        note = case.run(work)
        detail = note or ""
    except Skip as exc:
        status, detail = "skipped", str(exc)
    except Failed as exc:
        work.reasons.extend(exc.reasons)
    except Exception as exc:  # the harness itself broke: that is a failure of the case, with the trace
        work.reasons.append(f"the case itself raised {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
    kept = None
    if work.reasons:
        status = "failed"
        if keep_root is not None:
            rerun = (f"{sys.executable} tests/hostile_run.py --families {case.family} --case {case.name} "
                     f"--seed {ctx.seed}{' --quick' if ctx.quick else ''} --keep DIR")
            kept = keep(work, keep_root, work.reasons, rerun)
    remove_tree(work.path)
    return Outcome(case, status, detail, list(work.reasons), kept, time.monotonic() - started)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.inner is not None:
        return interruption.inner(args.inner)
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        _parser().error(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")
    fabricgen = (args.fabricgen or _default_fabricgen()).absolute()
    if not os.access(fabricgen, os.X_OK):
        _parser().error(f"{fabricgen} is not an executable fabricgen (set up with scripts/setup.sh --test)")
    fuzz_count = args.fuzz if args.fuzz is not None else (QUICK_FUZZ if args.quick else 2000)
    scratch = Path(tempfile.mkdtemp(prefix="fabricgen-hostile-"))
    scratch.chmod(0o755)  # cases that run fabricgen as an unprivileged user reach their directories
    ctx = Context(fabricgen=fabricgen, repo=REPO, scratch=scratch, python=Path(sys.executable), seed=args.seed,
                  quick=args.quick)
    try:
        cases = _cases(ctx, families, fuzz_count)
        if args.case:
            cases = [c for c in cases if any(n in c.name for n in args.case)]
        if args.list:
            for case in cases:
                print(f"{case.family}/{case.name}")
            return 0
        keep_root = args.keep.absolute() if args.keep else None
        if keep_root is not None:
            keep_root.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        outcomes = _run_all(ctx, cases, keep_root, args.jobs)
        if args.verbose:
            for outcome in outcomes:
                print(f"{outcome.status:7} {outcome.seconds:6.1f} s  {outcome.case.family}/{outcome.case.name}"
                      + (f": {outcome.detail}" if outcome.detail else ""))
        return _report(ctx, families, outcomes, time.monotonic() - started, fabricgen)
    finally:
        remove_tree(scratch)


def _run_all(ctx: Context, cases: list[Case], keep_root: Path | None, jobs: int) -> list[Outcome]:
    outcomes: list[Outcome] = []
    lock = threading.Lock()

    def one(case: Case) -> None:
        outcome = _run_case(ctx, case, keep_root)
        with lock:
            outcomes.append(outcome)
            if outcome.status == "failed":
                print(f"FAILED {case.family}/{case.name}: {outcome.reasons[0][:300]}", file=sys.stderr, flush=True)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(one, cases))
    order = {id(c): i for i, c in enumerate(cases)}
    outcomes.sort(key=lambda o: order[id(o.case)])
    return outcomes


def _report(ctx: Context, families: Sequence[str], outcomes: list[Outcome], seconds: float, fabricgen: Path) -> int:
    print(f"fabricgen hostile run: {fabricgen}, seed {ctx.seed}{', quick' if ctx.quick else ''}, "
          f"{len(outcomes)} cases in {seconds:.0f} s")
    failed_any = False
    for family in families:
        mine = [o for o in outcomes if o.case.family == family]
        counts = {s: sum(1 for o in mine if o.status == s) for s in ("held", "failed", "skipped")}
        failed_any |= counts["failed"] > 0
        extra = ""
        if family == "fuzz":
            refused = sum(1 for o in mine if o.status == "held" and o.detail == "refused")
            accepted = sum(1 for o in mine if o.status == "held" and o.detail == "accepted")
            extra = f" ({refused} refused, {accepted} accepted)"
        print(f"{family}: held {counts['held']}, failed {counts['failed']}, skipped {counts['skipped']}{extra}")
        for note in sorted(ctx.notes.get(family, ())):
            print(f"  note: {note}")
        skipped = sorted({o.detail for o in mine if o.status == "skipped"})
        for reason in skipped:
            print(f"  skipped: {reason}")
    failures = [o for o in outcomes if o.status == "failed"]
    if failures:
        print()
        print("failures:")
    for outcome in failures:
        print(f"- {outcome.case.family}/{outcome.case.name}"
              + (f" (reproduction: {outcome.kept})" if outcome.kept else ""))
        for reason in outcome.reasons:
            print("    " + reason.replace("\n", "\n    "))
    return 1 if failed_any else 0


if __name__ == "__main__":
    sys.exit(main())
