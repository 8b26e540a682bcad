"""`fabricgen verify FABRIC [--actual SHOW] [--logical] [--ovn-prefix DIR]`: the rendered output, proven
in a throwaway OVN-IC lab, with packets between simulated chassis (or `--logical`: ovn-trace only).

Where the fabric renders host files, they run first on a kernel underlay (`--no-underlay` skips it).
Exit 0 when every pair is delivered (or, where the fabric's policy admits no ICMP between its
ends, is not), every policy flow is as the policy says and every flow between hosts passes the
kernel underlay, 5 when one is not or when nothing could
be proven where there is something to prove (no pair of AZs, yet a shared OVN deployment or several
zones), 6 when the OVN programs are missing or the lab cannot run (see `fabricgen.lab.verify`).
The heavy imports stay inside `run`: other commands never load the lab.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fabricgen import exit_codes


def run(*, fabric: Path, actual: Path | None, fmt: str, logical: bool = False, ovn_prefix: Path | None = None,
        underlay: bool = True) -> int:
    import os

    from fabricgen.lab import verify as verification
    from fabricgen.lab.ovn.programs import PREFIX_VARIABLE

    if ovn_prefix is not None:  # the lab, and the rendered scripts it runs, use these programs
        os.environ[PREFIX_VARIABLE] = str(ovn_prefix.resolve())
    result, name, not_proven = verification.prove(fabric, actual, logical=logical, underlay=underlay)
    if fmt == "json":
        sys.stdout.write(verification.as_json(result, name, not_proven))
    elif fmt == "markdown":
        sys.stdout.write(verification.markdown(result, name, not_proven))
    else:
        sys.stdout.write(verification.text(result, name, not_proven))
    return 0 if result.ok and not_proven is None else exit_codes.UNREACHABLE
