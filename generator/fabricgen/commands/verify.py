"""`fabricgen verify FABRIC [--actual SHOW]`: the rendered routes, proven in a throwaway OVN-IC lab.

Exit 0 when every pair is delivered, 5 when one is not, 6 when the OVN programs are
missing or the lab cannot run (see `fabricgen.live_state.verification`). The heavy imports
stay inside `run`: other commands never load the lab.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fabricgen import exit_codes


def run(*, fabric: Path, actual: Path | None, fmt: str) -> int:
    from fabricgen.live_state import verification

    result, name = verification.prove(fabric, actual)
    if fmt == "json":
        sys.stdout.write(verification.as_json(result, name))
    elif fmt == "markdown":
        sys.stdout.write(verification.markdown(result, name))
    else:
        sys.stdout.write(verification.text(result, name))
    return 0 if result.ok else exit_codes.UNREACHABLE
