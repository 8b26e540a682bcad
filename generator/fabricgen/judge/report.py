"""`fabricgen status` output: text (one line per check, its fix indented below), JSON, Markdown."""

from __future__ import annotations

import json

from fabricgen.judge.checks import OK, Check
from fabricgen.judge.verdicts import Report

WIDTH = 12  # the verdict column


def text(report: Report, *, verbose: bool = True) -> str:
    """Every check (`verbose`) or only those not ok, then the summary."""
    lines = [f"fabricgen status {report.fabric} (site {report.site})"]
    for check in report.checks:
        if check.verdict == OK and not verbose:
            continue
        lines.append(f"{check.verdict:<{WIDTH}}{check.subject}: {check.why}")
        if check.fix:
            lines.append(f"{'':<{WIDTH}}  fix: {check.fix}")
    lines += [f"note: {n}" for n in report.notes]
    lines.append(summary(report))
    return "\n".join(lines) + "\n"


def summary(report: Report) -> str:
    counts = report.counts()
    return (f"{report.verdict}: {counts['ok']} ok, {counts['drift']} drift, {counts['unknown']} unknown, "
            f"{counts['unhealthy']} unhealthy, "
            f"{counts['unreachable']} unreachable")


def as_json(report: Report) -> str:
    doc = {"fabric": report.fabric, "site": report.site, "verdict": report.verdict, "counts": report.counts(),
           "checks": [c.as_dict() for c in report.checks], "notes": list(report.notes)}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _problems_first(check: Check) -> bool:
    return check.verdict == OK


def markdown(report: Report) -> str:
    lines = [f"### fabricgen status: {report.verdict}", "", summary(report), "",
             "| verdict | subject | check | why | fix |", "| --- | --- | --- | --- | --- |"]
    for check in sorted(report.checks, key=_problems_first):
        lines.append(f"| {check.verdict} | {_cell(check.subject)} | `{check.name}` | {_cell(check.why)} | "
                     f"{_cell(check.fix)} |")
    lines += ["", *(f"- {_cell(n)}" for n in report.notes)]
    return "\n".join(lines).rstrip() + "\n"
