"""`fabricgen status FABRIC`: the live fabric against what the fabric renders, and the health of
its control plane (see `fabricgen.status`).

Exit 0 when every check is ok; otherwise the worst verdict's code: 3 drift, 7 unhealthy, 8 a
part could not be read or judged (`unknown`). `--wait DURATION` reads and judges again every `--interval` seconds
until everything is ok or the time is up (for a pipeline after a sync); progress goes to
stderr, the last report to stdout.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from fabricgen import exit_codes
from fabricgen.errors import FabricgenError

CODES = {"ok": 0, "drift": exit_codes.CHANGED, "unknown": exit_codes.NOT_READ, "unhealthy": exit_codes.UNHEALTHY,
         "unreachable": exit_codes.NOT_READ}
_DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s?)?")


class UsageError(FabricgenError):
    exit_code = exit_codes.USAGE


def duration(text: str) -> int:
    """`90`, `90s`, `5m`, `1h30m` -> seconds."""
    match = _DURATION.fullmatch(text)
    if not text or match is None or not any(match.groups()):
        raise UsageError(f"--wait: {text!r} is not a duration (e.g. 90s, 5m, 1h30m)")
    h, m, s = (int(g) if g else 0 for g in match.groups())
    return h * 3600 + m * 60 + s


def run(*, fabric: Path, endpoints: Path | None, capture: Path | None, source: Path | None, fmt: str,
        wait: str | None, interval: float, problems_only: bool) -> int:
    from fabricgen import report as diagnostics_report
    from fabricgen.live_state import capture as captures
    from fabricgen.pipeline import build as build_fabric
    from fabricgen.source.reader import display_name
    from fabricgen.status import judge, live, observe, report, sources

    if capture is not None and source is not None:
        raise UsageError("give --capture or --from, not both")
    if source is not None and wait is not None:
        raise UsageError("--wait reads the live fabric again; it does not go with --from")
    if capture is not None:
        captures.refuse_existing(capture)  # before anything is read
    deadline = time.monotonic() + duration(wait) if wait is not None else None
    head = build_fabric(fabric)
    for d in head.warnings:
        sys.stderr.write(diagnostics_report.text_line(d) + "\n")
    name = display_name(fabric)
    if head.plan.fabric.interconnection is None and not head.plan.fabric.ovn_deployments:
        raise UsageError(f"{name}: the fabric has no interconnection and no OVN deployment: nothing to check")
    given = sources.read_endpoints(endpoints) if endpoints is not None else sources.Endpoints()
    plan = sources.plan(head, given)
    observer: observe.Observer
    if source is not None:
        recorded, _header = captures.read(source, site=head.plan.site)
        observer = observe.Replay(recorded)
    else:
        observer = observe.Live()
    while True:
        recording = observe.Recording(observer) if capture is not None else None
        state = live.gather(head, plan, recording or observer)
        result = judge.judge(head, state, name)
        if recording is not None and capture is not None:
            captures.write(capture, recording.kept, site=head.plan.site, fabric=name)
            capture = None  # a capture is of the first reading
        if deadline is None or result.verdict == "ok" or time.monotonic() + interval > deadline:
            break
        sys.stderr.write(f"fabricgen status: {report.summary(result)}; reading again in {interval:g} s\n")
        time.sleep(interval)
    if fmt == "json":
        sys.stdout.write(report.as_json(result))
    elif fmt == "markdown":
        sys.stdout.write(report.markdown(result))
    else:
        sys.stdout.write(report.text(result, verbose=not problems_only))
    return CODES[result.verdict]
