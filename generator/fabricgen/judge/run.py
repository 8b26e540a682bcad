"""One `fabricgen status` run: the fabric built, where each part is read (`observe.sources`),
the reading (live, or answered from a capture), the judgment, and the capture written; again
every `interval` seconds until everything is ok or `deadline` has passed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from fabricgen import exit_codes
from fabricgen import report as diagnostics_report
from fabricgen.errors import FabricgenError
from fabricgen.judge import report
from fabricgen.judge.verdicts import Report, judge
from fabricgen.observe import capture as captures
from fabricgen.observe import live_fabric, runner, sources
from fabricgen.pipeline import build
from fabricgen.source.reader import display_name


class NothingToCheck(FabricgenError):
    """The fabric has no interconnection and no OVN deployment: a usage error, as the command
    cannot apply to it."""

    exit_code = exit_codes.USAGE


def status(fabric: Path, *, endpoints: Path | None, capture: Path | None, replay: Path | None,
           deadline: float | None, interval: float) -> Report:
    """The report of the last reading. `capture`: a new directory for the raw outputs of the first
    reading; `replay`: a capture to answer every command from instead of running it; `deadline`
    (`time.monotonic()`): read again while not everything is ok."""
    if capture is not None:
        captures.refuse_existing(capture)  # before anything is read
    head = build(fabric)
    for d in head.warnings:
        sys.stderr.write(diagnostics_report.text_line(d) + "\n")
    name = display_name(fabric)
    if head.plan.fabric.interconnection is None and not head.plan.fabric.ovn_deployments:
        raise NothingToCheck(f"{name}: the fabric has no interconnection and no OVN deployment: nothing to check")
    given = sources.read_endpoints(endpoints) if endpoints is not None else sources.Endpoints()
    plan = sources.plan(head, given)
    observer: runner.Observer
    if replay is not None:
        recorded, _header = captures.read(replay, site=head.plan.site)
        observer = runner.Replay(recorded)
    else:
        observer = runner.Live()
    while True:
        recording = runner.Recording(observer) if capture is not None else None
        state = live_fabric.gather(head, plan, recording or observer)
        result = judge(head, state, name)
        if recording is not None and capture is not None:
            captures.write(capture, recording.kept, site=head.plan.site, fabric=name)
            capture = None  # a capture is of the first reading
        if deadline is None or result.verdict == "ok" or time.monotonic() + interval > deadline:
            return result
        sys.stderr.write(f"fabricgen status: {report.summary(result)}; reading again in {interval:g} s\n")
        time.sleep(interval)
