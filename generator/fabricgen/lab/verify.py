"""The `verify` proof of a fabric, and the proof as text, Markdown and JSON.

The fabric is rendered in memory and set up in a lab of real OVN daemons (see
`fabricgen.lab.provers.proof`); every ordered pair of AZ endpoints is traced with ovn-trace.
With an `ovn-ic-sbctl show` capture, each zone's transit address is taken from it instead of
the fabric, as the live transit switch has it. The lab is imported inside the functions that
run it: formatting a proof never loads it.
"""

from __future__ import annotations

import json
import re
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from fabricgen import report
from fabricgen.errors import FabricgenError
from fabricgen.lab.underlay import report as underlay_report
from fabricgen.source.reader import display_name

if TYPE_CHECKING:
    from fabricgen.lab.provers.proof import Proof
    from fabricgen.pipeline import Build

CELL = {"delivered": "ok", "rerouted": "REROUTED", "dropped": "DROPPED", "wrong-zone": "WRONG-AZ",
        "unresolved": "UNRESOLVED", "tunnel-key": "TUNNEL-KEY", "no-tunnel": "NO-TUNNEL",
        "encapsulation": "ENCAP", "mtu": "MTU", "altered": "ALTERED", "lost": "LOST", "denied": "denied"}


def summary(proof: Proof) -> str:
    """The pairs, a rendered match OVN refused and the kernel underlay: each fails the proof, so each
    is in its title."""
    denied = f", {proof.denied} denied by the policy" if proof.denied else ""
    refused = sum(m.refused is not None for m in proof.matches)
    refusals = f"; {refused} rendered match{'es' if refused > 1 else ''} refused by OVN" if refused else ""
    kernel = f"; {underlay_report.summary(proof.underlay)}" if proof.underlay is not None else ""
    return f"{proof.delivered}/{len(proof.pairs)} pairs delivered{denied}{refusals}{kernel}"


def underlay_said(proof: Proof) -> str:
    """What the proof says of the underlay between hosts: run on the kernel, or simulated."""
    return underlay_report.RAN if proof.underlay is not None else UNDERLAY


def matches_summary(proof: Proof) -> str:
    return (f"{sum(m.refused is None for m in proof.matches)}/{len(proof.matches)} rendered matches parsed by "
            f"OVN {proof.ovn_version}")


def policy_summary(proof: Proof) -> str:
    return f"{sum(f.ok for f in proof.flows)}/{len(proof.flows)} policy flows as the policy says"


def policy_how(proof: Proof) -> str:
    """How the policy's connections were proven: as packets through the chassis, or traced."""
    how = ("packets through the simulated chassis, first packet and reply (TCP SYN and SYN-ACK, UDP, ICMP echo), "
           "each row named by ovn-trace" if proof.data_plane else "ovn-trace of each, first packet and reply")
    return f"the policy's connections: {how}, through the rows each platform's controller writes from the rendered " \
           "objects"


def _cell(text: str) -> str:
    """Text in a Markdown table cell: an OVN match's `||` must not end the cell."""
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    """Text as a Markdown code span, whatever backticks it holds (CommonMark: a longer fence)."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _flow_lines(proof: Proof) -> list[str]:
    out = []
    for f in proof.flows:
        what = f"{f.protocol}/{f.port}" if f.port is not None else f.protocol
        reply = f", reply {f.reply}" if f.reply is not None else ""
        mark = "" if f.ok else "NOT AS THE POLICY SAYS: "
        out.append(f"{mark}{f.policy}: {f.source} -> {f.destination} {what}: expected {f.expected}, "
                   f"{f.observed}{reply} ({f.decided_by})")
    return out


# Said under every proof: what the lab does not model.
UNDERLAY = ("the underlay between chassis is simulated as ideal (every tunnel endpoint reaches every other, any "
            "MTU but the one the fabric declares): a missing route or firewall rule between hosts is not proven")


# Said under every proof with an interconnected deployment: how its members are wired in the lab.
WIRING = ("a deployment's VMs and pods sit in the lab straight behind its interconnection router: the route from "
          "a Neutron router, or OVN-Kubernetes' ovn_cluster_router and join switch, to that router is not proven")


def wiring(proof: Proof) -> str | None:
    return WIRING if any(az.kind == "deployment" for az in proof.azs) else None


def unproven(head: Build, proof: Proof) -> str | None:
    """What a proof of no pair leaves unproven, in words; None when it proved pairs or when there is
    truly nothing to prove (one AZ and no OVN deployment: no path between AZs exists)."""
    if proof.pairs:
        return None
    fabric = head.plan.fabric
    deployments = [d.name for d in fabric.ovn_deployments]
    if not deployments and len(fabric.zones) <= 1:
        return None
    what = (f"the paths inside the shared OVN deployment(s) {', '.join(deployments)} (between their consumers' "
            "VMs and pods)" if deployments else f"the paths between the {len(fabric.zones)} zones")
    proven = "nothing was proven" if not proof.flows else f"only the policy's {len(proof.flows)} flows were proven"
    return (f"{proven}: 0 pairs of AZs to send packets between, so {what} are not proven by this "
            "lab; verify proves routing between interconnected AZs")


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
            for p in proof.pairs if not p.as_it_should]


def header(proof: Proof, fabric: str) -> str:
    if not proof.azs:
        return f"{fabric}: no interconnection: nothing to trace"
    how = ("proven with packets between simulated chassis" if proof.data_plane else "traced with ovn-trace")
    extra = (f" and {len(proof.extra_switches)} more ({', '.join(proof.extra_switches)}: every zone joined, its "
             "ports bound in every other zone, keyed alike; the routes go over the first)"
             if proof.extra_switches else "")
    return (f"{fabric}: {len(proof.azs)} AZ(s) on transit switch {proof.transit_switch} "
            f"({proof.transit_subnet}){extra}, {len(proof.pairs)} ordered pair(s) {how}")


def proven_with(proof: Proof) -> str:
    """Which programs proved it, and how."""
    how = ("ICMP echo and reply per pair, injected at a VM port (netdev-dummy) and read back at the other"
           if proof.data_plane else "ovn-trace of each pair, no chassis and no packets (--logical)")
    return f"proven with OVN {proof.ovn_version} and Open vSwitch {proof.ovs_version}: {how}"


def version_warnings(proof: Proof) -> list[str]:
    """Where the AZs run another OVN than the one that proved it."""
    from fabricgen.lab.ovn.programs import release

    have = release(proof.ovn_version)
    out = []
    for who, version in proof.expected_ovn:
        if have is not None and release(version) != have:
            out.append(f"{who} run OVN {version}, this proof ran OVN {proof.ovn_version}: it proves nothing about "
                       f"OVN {version}; run it with OVN {version} (`--ovn-prefix DIR`, see docs/review-and-proof.md)")
    return out


def text(proof: Proof, fabric: str, not_proven: str | None = None) -> str:
    lines = [header(proof, fabric)]
    if proof.azs:
        lines.append(proven_with(proof))
        lines += [f"warning: {w}" for w in version_warnings(proof)]
    if proof.underlay is not None:
        lines.append(underlay_report.how(proof.underlay))
        lines += underlay_report.failures(proof.underlay)
    if proof.azs or proof.underlay is not None:
        lines.append(underlay_said(proof))
    if wiring(proof):
        lines.append(WIRING)
    if proof.endpoints:
        rows = list(_matrix_rows(proof))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines += ["", *("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows), ""]
    lines += [f"not delivered: {line}" for line in _failures(proof)]
    lines += [f"refused by OVN: {m.where}: `{m.match}`: {m.refused}" for m in proof.matches if m.refused]
    if proof.flows:
        lines += ["", f"policy ({policy_how(proof)}):", *(f"  {line}" for line in _flow_lines(proof)), ""]
    lines += [f"transit address: {line}" for line in _stale_lines(proof, fabric)]
    if not_proven is not None:
        lines.append(not_proven)
    if proof.matches:
        lines.append(matches_summary(proof))
    if proof.flows:
        lines.append(policy_summary(proof))
    lines.append(summary(proof))
    return "\n".join(lines) + "\n"


MATRIX_MAX = 16  # endpoints: a larger matrix does not fit a pull-request comment; failures are listed
FAILURES_MAX = 50
FLOWS_MAX = 50  # policy flows in a comment, the failing first


def markdown(proof: Proof, fabric: str, note: str | None = None) -> str:
    """The verify matrix as a pull-request comment section (up to 16 endpoints; with more, only the
    pairs that are not delivered, at most 50 of them); `note`: why it was proven as it was."""
    lines = [f"### OVN-IC lab: {summary(proof)}", "", header(proof, fabric), ""]
    if proof.azs:
        lines += [f"{proven_with(proof)}.", ""]
        lines += [note, ""] if note else []
        lines += [f"Not proven: {UNDERLAY}.", ""] if proof.underlay is None else []
        lines += [f"Not proven: {WIRING}.", ""] if wiring(proof) else []
        lines += [f"> **Warning**: {w}" for w in version_warnings(proof)]
        lines += [""] if version_warnings(proof) else []
    elif note:
        lines += [note, ""]
    if proof.underlay is not None:
        lines += [f"Underlay: {underlay_report.how(proof.underlay)}; {underlay_report.RAN}.", ""]
        lines += [f"- {line}" for line in underlay_report.failures(proof.underlay)[:FAILURES_MAX]]
        lines += [""] if underlay_report.failures(proof.underlay) else []
    if proof.endpoints and len(proof.endpoints) <= MATRIX_MAX:
        rows = list(_matrix_rows(proof))
        lines += ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        lines.append("")
    failures = _failures(proof)
    lines += [f"- not delivered: {line}" for line in failures[:FAILURES_MAX]]
    if len(failures) > FAILURES_MAX:
        lines.append(f"- and {len(failures) - FAILURES_MAX} more pairs not delivered: run `fabricgen verify {fabric}`")
    if proof.flows:
        lines += ["", f"Policy: {policy_summary(proof)}; {policy_how(proof)}.", "",
                  "| policy | from | to | what | expected | observed | decided by |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        shown = sorted(proof.flows, key=lambda f: f.ok)[:FLOWS_MAX]  # the failing first
        lines += [f"| {f.policy} | {f.source} | {f.destination} | {f.protocol}"
                  f"{'/' + str(f.port) if f.port is not None else ''} | {f.expected} | "
                  f"{'**' if not f.ok else ''}{f.observed}{', reply ' + f.reply if f.reply else ''}"
                  f"{'**' if not f.ok else ''} | {_cell(f.decided_by)} |" for f in shown]
        if len(proof.flows) > FLOWS_MAX:
            lines.append(f"\nand {len(proof.flows) - FLOWS_MAX} more flows: run `fabricgen verify {fabric}`")
        lines.append("")
    if proof.matches:
        lines += [f"Matches: {matches_summary(proof)}.", ""]
        lines += [f"- refused by OVN: {m.where}: {_code(m.match)}: {m.refused}"
                  for m in proof.matches if m.refused]
        lines += [""] if any(m.refused for m in proof.matches) else []
    lines += [f"- transit address: {line}" for line in _stale_lines(proof, fabric)]
    return "\n".join(lines).rstrip("\n") + "\n"


def as_json(proof: Proof, fabric: str, not_proven: str | None = None) -> str:
    doc = {"fabric": fabric, "transitSwitch": proof.transit_switch or None,
           "transitSwitches": [proof.transit_switch, *proof.extra_switches] if proof.transit_switch else [],
           "notProven": not_proven,
           "underlay": underlay_said(proof),
           "kernelUnderlay": underlay_report.as_dict(proof.underlay) if proof.underlay is not None else None,
           "wiring": wiring(proof),
           "mode": "data-plane" if proof.data_plane else "logical",
           "ovn": proof.ovn_version or None, "ovs": proof.ovs_version or None,
           "warnings": version_warnings(proof),
           "delivered": proof.delivered, "denied": proof.denied, "total": len(proof.pairs),
           "ok": proof.ok and not_proven is None,
           "azs": [a.as_dict() for a in proof.azs], "pairs": [p.as_dict() for p in proof.pairs],
           "flows": [f.as_dict() for f in proof.flows],
           "matches": [m.as_dict() for m in proof.matches]}
    return json.dumps(doc, indent=2) + "\n"


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def missing_programs(*, data_plane: bool = False) -> str | None:
    """Why the lab cannot run here, with the install command; None when it can."""
    from fabricgen.lab.ovn.programs import PREFIX_VARIABLE, Programs
    from fabricgen.lab.ovn.sandbox import INSTALL_COMMAND, missing_prerequisites

    programs = Programs.from_environment()
    missing = missing_prerequisites(data_plane=data_plane, programs=programs)
    if not missing:
        return None
    where = (f" (from {PREFIX_VARIABLE}={programs.prefix})" if programs.prefix is not None else "")
    return (f"verify runs real OVN programs, and these are missing{where}: {', '.join(missing)}; "
            f"install them (Debian/Ubuntu, as root): {INSTALL_COMMAND}, or name a prefix that has them "
            f"with --ovn-prefix DIR")


def prove(fabric: Path, actual: Path | None, *, logical: bool = False,
          underlay: bool = True) -> tuple[Proof, str, str | None]:
    """The proof of a fabric file, its name as messages give it, and what it left unproven
    (`unproven`); with `underlay`, the hosts' rendered files run first on a kernel underlay."""
    from dataclasses import replace

    from fabricgen.lab import assembly
    from fabricgen.lab.provers import proof
    from fabricgen.lab.underlay import stage
    from fabricgen.observe import icsb_show
    from fabricgen.pipeline import build

    head = build(fabric)
    for d in head.warnings:
        sys.stderr.write(report.text_line(d) + "\n")
    name = display_name(fabric)
    live = {}
    if actual is not None:
        text_in, show_name = icsb_show.read_show(actual, sys.stdin)
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
        why = missing_programs(data_plane=not logical)
        if why is not None:
            raise assembly.ProofError(why)
    underlay = underlay and bool(head.plan.fabric.ovn_deployments)
    if underlay and (why := stage.missing()) is not None:
        raise assembly.ProofError(f"verify runs the hosts' rendered files on a kernel underlay, and cannot here: "
                                  f"{why}; run it as root with iproute2, nft and FRR (Debian: apt-get install "
                                  "iproute2 nftables frr), or pass --no-underlay")
    # A CI job that is cancelled gets SIGTERM: stop the lab as for Ctrl-C. Ctrl-C interrupts the
    # proof even where this process was started with SIGINT ignored (a background job of a shell).
    previous = {sig: signal.signal(sig, _raise_interrupt) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        try:
            kernel = stage.prove_underlay(head) if underlay else None
        except stage.UnderlayError as exc:
            raise assembly.ProofError(f"the kernel underlay failed: {exc}") from None
        result = replace(proof.prove(head, live, data_plane=not logical), underlay=kernel)
        return result, name, unproven(head, result)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)



# The pull-request comment proves with packets up to this many AZs, above it with ovn-trace
# (`--logical`): the data-plane lab runs three daemons per chassis, each AZ about 170 MiB and a
# second on 2 cores (16 zones: 2.7 GiB; docs/review-and-proof.md), and the comment is a second proof beside
# the verify job's, which proves any size with packets.
COMMENT_DATA_PLANE_MAX_AZS = 8


def comment_proof(azs: int, fabric: str, *, data_plane_programs: bool = True) -> tuple[bool, str | None]:
    """How the pull-request comment proves a fabric of `azs` AZs: (with packets?, why not, in words)."""
    if not data_plane_programs:
        return False, None  # only the control-plane programs: `proven_with` says --logical
    if azs > COMMENT_DATA_PLANE_MAX_AZS:
        return False, (f"Traced with `ovn-trace` only: {azs} AZs are more than the {COMMENT_DATA_PLANE_MAX_AZS} "
                       "this comment proves with packets (the data-plane lab takes about 170 MiB and a second "
                       f"per AZ); `fabricgen verify {fabric}` proves them with packets.")
    return True, None


def lab_section(head: Build, name: str) -> str | None:
    """The verify matrix of a build for a pull-request comment, or None when the OVN programs
    are not installed: with packets up to `COMMENT_DATA_PLANE_MAX_AZS` AZs, else with ovn-trace,
    saying so."""
    from fabricgen.lab import assembly
    from fabricgen.lab.provers import proof

    if head.plan.fabric.interconnection is None or missing_programs() is not None:
        return None
    azs = len(head.plan.zones) + len(head.plan.joins)
    data_plane, note = comment_proof(azs, name, data_plane_programs=missing_programs(data_plane=True) is None)
    try:
        return markdown(proof.prove(head, data_plane=data_plane), name, note)
    except assembly.ProofError as exc:
        return f"### OVN-IC lab: not run\n\n{exc}\n"
