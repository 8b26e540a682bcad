"""`fabricgen status FABRIC`: the live fabric against what the fabric renders, and the health of
its control plane (see `fabricgen.judge`).

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
        wait: str | None, interval: float, problems_only: bool, serve: str | None = None) -> int:
    from fabricgen.judge import report
    from fabricgen.judge.run import status

    if capture is not None and source is not None:
        raise UsageError("give --capture or --from, not both")
    if source is not None and wait is not None:
        raise UsageError("--wait reads the live fabric again; it does not go with --from")
    if serve is not None:
        if wait is not None or capture is not None:
            raise UsageError("--serve reads on its own interval: not with --wait or --capture")
        if not re.fullmatch(r"(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]*):[0-9]{1,5}", serve):
            raise UsageError(f"--serve {serve!r}: give HOST:PORT, such as 127.0.0.1:9977 or :9977")
        from fabricgen.judge.exporter import serve as export

        export(serve.replace("[", "").replace("]", ""), lambda: status(
            fabric, endpoints=endpoints, capture=None, replay=source, deadline=None, interval=interval), interval)
        return 0
    deadline = time.monotonic() + duration(wait) if wait is not None else None
    result = status(fabric, endpoints=endpoints, capture=capture, replay=source, deadline=deadline,
                    interval=interval)
    if fmt == "json":
        sys.stdout.write(report.as_json(result))
    elif fmt == "markdown":
        sys.stdout.write(report.markdown(result))
    elif fmt == "openmetrics":
        from fabricgen.judge.openmetrics import openmetrics

        sys.stdout.write(openmetrics(result))
    else:
        sys.stdout.write(report.text(result, verbose=not problems_only))
    return CODES[result.verdict]
