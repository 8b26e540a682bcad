"""The proof of an import as people and tools read it.

Text: a table of the classes per cluster (and the IC southbound's availability zones), the
verdict, then one line per entry that is not imported, each difference on its own line. JSON:
every entry with its differences, the counts, the verdict, the diagnostics of the new file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fabricgen import report
from fabricgen.adopt.proof import IC_SB, STATUSES, Proof
from fabricgen.diagnostics import Diagnostic
from fabricgen.source.provenance import printable


def verdict(proof: Proof) -> str:
    if not proof.rendered:
        return f"round trip: not proven: {proof.why_not}"
    if proof.exact:
        return "round trip: exact: every object fabricgen renders equals the live one"
    bad = [s for s in ("partial", "conflict") if proof.counts.get(s)]
    missing = sum(e.status == "added" and not e.own for e in proof.entries)
    parts = [f"{proof.counts[s]} {s}" for s in bad] + ([f"{missing} added (not captured)"] if missing else [])
    return f"round trip: not exact: {', '.join(parts)}"


def table(proof: Proof) -> list[str]:
    rows: dict[str, dict[str, int]] = {}
    for entry in proof.entries:
        rows.setdefault(entry.cluster, dict.fromkeys(STATUSES, 0))[entry.status] += 1
    zones = {e.cluster: e.zone for e in proof.entries if e.zone and e.cluster != IC_SB}
    lines = [["cluster", "zone", *STATUSES]]
    for cluster, row in rows.items():
        zone = "" if cluster == IC_SB else zones.get(cluster, "-")
        lines.append([printable(cluster), zone or "-", *(str(row[s]) for s in STATUSES)])
    lines.append(["total", "", *(str(sum(r[s] for r in rows.values())) for s in STATUSES)])
    widths = [max(len(r[i]) for r in lines) for i in range(len(lines[0]))]
    return ["  ".join(cell.ljust(widths[i]) if i < 2 else cell.rjust(widths[i]) for i, cell in enumerate(r)).rstrip()
            for r in lines]


def text(proof: Proof, fabric: str, written: bool) -> str:
    out = [f"fabricgen import: {printable(fabric)}" + ("" if written else " (not written)"), ""]
    out += table(proof)
    out += ["", verdict(proof)]
    details = [e for e in proof.entries if e.status != "imported"]
    if details:
        out.append("")
    for entry in details:
        where = f" ({entry.origin})" if entry.origin else ""
        out.append(f"{printable(entry.cluster)}: {entry.object}: {entry.status}: {entry.reason}{where}")
        out += [f"    {d.describe()}" for d in entry.differences]
        out += [f"    not expressed: {u}" for u in entry.unexpressed]
    return "\n".join(out) + "\n"


def as_json(proof: Proof, fabric: str, *, written: bool, valid: bool, notes: Sequence[str],
            diagnostics: Sequence[Diagnostic]) -> str:
    doc: dict[str, Any] = {
        "fabric": fabric, "written": written, "valid": valid, "rendered": proof.rendered,
        "exact": proof.exact, "verdict": verdict(proof), "counts": proof.counts,
        "entries": [e.as_dict() for e in proof.entries], "notes": list(notes),
        "diagnostics": [report.as_dict(d) for d in diagnostics],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
