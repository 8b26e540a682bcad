"""`fabricgen validate FABRIC...`: check fabrics, write nothing."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from fabricgen import exit_codes, report
from fabricgen.pipeline import load_all


def run(*, fabrics: Sequence[Path], fmt: str) -> int:
    _loaded, found = load_all(fabrics)
    out = report.format_diagnostics(found, fmt)
    failed = any(d.is_error for d in found)
    if report.resolve(fmt) == "json":
        sys.stdout.write(out)
    else:
        sys.stderr.write(out)
        if failed:
            sys.stderr.write(f"fabricgen: {report.summary(found)}; nothing written\n")
        else:
            sys.stderr.write(f"fabricgen: {len(fabrics)} fabric(s) valid ({report.summary(found)})\n")
    return exit_codes.INVALID if failed else 0
