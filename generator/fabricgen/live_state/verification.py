"""The `verify` proof of a fabric, and the proof as text, Markdown and JSON.

The fabric is rendered in memory and set up in a lab of real OVN daemons (see
`fabricgen.live_state.lab.proof`); every ordered pair of AZ endpoints is traced with ovn-trace.
With an `ovn-ic-sbctl show` capture, each zone's transit address is taken from it instead of
the fabric, as the live transit switch has it. The lab is imported inside the functions that
run it: formatting a proof never loads it.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from fabricgen import report
from fabricgen.errors import FabricgenError
from fabricgen.source.reader import display_name

if TYPE_CHECKING:
    from fabricgen.live_state.lab.proof import Proof
    from fabricgen.pipeline import Build

CELL = {"delivered": "ok", "rerouted": "REROUTED", "dropped": "DROPPED", "wrong-zone": "WRONG-AZ",
        "unresolved": "UNRESOLVED"}


def summary(proof: Proof) -> str:
    return f"{proof.delivered}/{len(proof.pairs)} pairs delivered"


def _matrix_rows(proof: Proof) -> Iterator[list[str]]:
    labels = [e.label for e in proof.endpoints]
    yield ["from \\ to", *labels]
    for src in proof.endpoints:
        row = [src.label]
        for dst in proof.endpoints:
            pair = proof.pair(src, dst)
            row.append("-" if pair is None else CELL[pair.outcome])
        yield row


def _stale_lines(proof: Proof, fabric: str) -> list[str]:
    lines = [f"zone {az.name}: transit address {az.fabric_address or '(unset)'} in {fabric}, "
             f"{az.transit_address} on the live transit switch: routes to it lag behind; run "
             f"`fabricgen transit {fabric} SHOW --write`, render and commit"
             for az in proof.azs if az.kind == "zone" and az.stale]
    lines += [f"zone {az.name}: no transitAddress in {fabric} yet, so no AZ routes to it; the lab gave it "
              f"{az.transit_address}. Once it has joined, run `fabricgen transit {fabric} SHOW --write`, "
              "render and commit" for az in proof.azs if az.source == "lab"]
    return lines


def _failures(proof: Proof) -> list[str]:
    return [f"{p.source.label} ({p.source.cidr}) -> {p.target.label} ({p.target.cidr}): {p.outcome}: {p.detail}"
            for p in proof.pairs if not p.delivered]


def header(proof: Proof, fabric: str) -> str:
    if not proof.azs:
        return f"{fabric}: no interconnection: nothing to trace"
    return (f"{fabric}: {len(proof.azs)} AZ(s) on transit switch {proof.transit_switch} "
            f"({proof.transit_subnet}), {len(proof.pairs)} ordered pair(s) traced with ovn-trace")


def text(proof: Proof, fabric: str) -> str:
    lines = [header(proof, fabric)]
    if proof.endpoints:
        rows = list(_matrix_rows(proof))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines += ["", *("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows), ""]
    lines += [f"not delivered: {line}" for line in _failures(proof)]
    lines += [f"transit address: {line}" for line in _stale_lines(proof, fabric)]
    lines.append(summary(proof))
    return "\n".join(lines) + "\n"


MATRIX_MAX = 16  # endpoints: a larger matrix does not fit a pull-request comment; failures are listed
FAILURES_MAX = 50


def markdown(proof: Proof, fabric: str) -> str:
    """The verify matrix as a pull-request comment section (up to 16 endpoints; with more, only the
    pairs that are not delivered, at most 50 of them)."""
    lines = [f"### OVN-IC lab: {summary(proof)}", "", header(proof, fabric), ""]
    if proof.endpoints and len(proof.endpoints) <= MATRIX_MAX:
        rows = list(_matrix_rows(proof))
        lines += ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        lines.append("")
    failures = _failures(proof)
    lines += [f"- not delivered: {line}" for line in failures[:FAILURES_MAX]]
    if len(failures) > FAILURES_MAX:
        lines.append(f"- and {len(failures) - FAILURES_MAX} more pairs not delivered: run `fabricgen verify {fabric}`")
    lines += [f"- transit address: {line}" for line in _stale_lines(proof, fabric)]
    return "\n".join(lines).rstrip("\n") + "\n"


def as_json(proof: Proof, fabric: str) -> str:
    doc = {"fabric": fabric, "transitSwitch": proof.transit_switch or None,
           "delivered": proof.delivered, "total": len(proof.pairs), "ok": proof.ok,
           "azs": [a.as_dict() for a in proof.azs], "pairs": [p.as_dict() for p in proof.pairs]}
    return json.dumps(doc, indent=2) + "\n"


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def missing_programs() -> str | None:
    """Why the lab cannot run here, with the install command; None when it can."""
    from fabricgen.live_state.lab.sandbox import INSTALL_COMMAND, missing_prerequisites

    missing = missing_prerequisites()
    if not missing:
        return None
    return (f"verify runs real OVN programs, and these are missing: {', '.join(missing)}; "
            f"install them (Debian/Ubuntu, as root): {INSTALL_COMMAND}")


def prove(fabric: Path, actual: Path | None) -> tuple[Proof, str]:
    """The proof of a fabric file, and its name as messages give it."""
    from fabricgen.live_state import icsb_show
    from fabricgen.live_state.lab import proof
    from fabricgen.live_state.transit import read_show
    from fabricgen.pipeline import build

    head = build(fabric)
    for d in head.warnings:
        sys.stderr.write(report.text_line(d) + "\n")
    name = display_name(fabric)
    live = {}
    if actual is not None:
        text_in, show_name = read_show(actual, sys.stdin)
        parsed = icsb_show.parse(text_in, show_name)
        if head.plan.fabric.interconnection is None or not parsed.zones:
            raise FabricgenError(f"{show_name}: no availability zone to take addresses from; "
                                 "pass the output of `ovn-ic-sbctl show`")
        ts = head.plan.interconnection.transit_switch.name
        live = proof.live_addresses(parsed, ts)
        known = {z.name for z in head.plan.fabric.zones}
        for zone in sorted(known - set(live)):
            sys.stderr.write(f"fabricgen: {show_name}: zone {zone} has no port on {ts}; "
                             "the lab uses its address from the fabric\n")
    if head.plan.fabric.interconnection is not None:
        why = missing_programs()
        if why is not None:
            raise proof.ProofError(why)
    # A CI job that is cancelled gets SIGTERM: stop the lab as for Ctrl-C.
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        return proof.prove(head, live), name
    finally:
        signal.signal(signal.SIGTERM, previous)



def lab_section(head: Build, name: str) -> str | None:
    """The verify matrix of a build for a pull-request comment, or None when the OVN programs
    are not installed."""
    from fabricgen.live_state.lab import proof

    if head.plan.fabric.interconnection is None or missing_programs() is not None:
        return None
    try:
        return markdown(proof.prove(head), name)
    except proof.ProofError as exc:
        return f"### OVN-IC lab: not run\n\n{exc}\n"
