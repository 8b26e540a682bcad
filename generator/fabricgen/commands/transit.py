"""`fabricgen transit FABRIC [SHOW]`: compare transit addresses with `ovn-ic-sbctl show`.

Reads `ovn-ic-sbctl show` (a file, or stdin) and reports where the fabric's
`zones[].transitAddress` differs (see `fabricgen.judge.transit`). Exit 3 when it
does; `--write` updates fabric.yaml in place, only if the result is still a valid fabric.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from fabricgen import exit_codes
from fabricgen.errors import FabricgenError
from fabricgen.judge import transit as tr
from fabricgen.observe import icsb_show
from fabricgen.pipeline import load


def run(*, fabric: Path, show: Path | None, fmt: str, write: bool, stdin: TextIO | None = None) -> int:
    fabric_model, source, _warnings = load(fabric)
    ts = tr.transit_switch(fabric_model)
    text, show_name = icsb_show.read_show(show, stdin if stdin is not None else sys.stdin)
    parsed = icsb_show.parse(text, show_name)
    if not parsed.zones:
        raise FabricgenError(f"{show_name}: no availability zone in the input; "
                             "pass the output of `ovn-ic-sbctl show`")
    reports, extra = tr.compare(fabric_model, source, parsed)
    differ = any(r.status in tr.DIFFERENT for r in reports)
    if fmt == "json":
        written = tr.update_fabric(fabric, source, reports) if write else False
        doc = {"fabric": source.name, "show": show_name, "transitSwitch": ts, "differ": differ,
               "written": written, "zones": [r.as_dict() for r in reports], "unknownZones": extra}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return exit_codes.CHANGED if differ else 0
    tr.write_report(source, reports, extra, ts, sys.stdout)
    sys.stdout.flush()
    if write and tr.update_fabric(fabric, source, reports):
        sys.stderr.write(f"fabricgen: updated {source.name}; run `fabricgen render {source.name}` "
                         "and commit both\n")
    elif differ:
        if not any(r.status in (tr.CHANGED, tr.ADDED) for r in reports):
            hint = f"; nothing to update yet: run it again once every zone has its port on {ts}"
        else:
            hint = "" if write else "; `--write` updates the fabric"
        sys.stderr.write(f"fabricgen: transit addresses in {source.name} differ from {show_name}{hint}\n")
    else:
        sys.stderr.write(f"fabricgen: transit addresses match ({len(reports)} zone(s))\n")
    return exit_codes.CHANGED if differ else 0
