"""The registry of semantic rules: each has a stable code, a name and one line of documentation.

A rule is a function from the validated model to findings, registered with `@rule(code, name,
summary)`; rules never stop at the first problem: `run` runs all of them and reports everything at
once. Codes: FG0xx loading and schema, FG1xx interconnection, FG2xx addressing, FG3xx routing,
FG4xx tenant VPCs, FG5xx OVN deployments and hosts, FG6xx the platforms using a deployment, FG7xx
deployments joined to the interconnection, FG8xx the Argo CD and Flux delivery objects, FG9xx the
policy; later families extend the list. The rule modules in `rules/` import this leaf; the package
`rules` imports them, so nothing runs back up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from fabricgen.diagnostics import Finding
from fabricgen.model import Fabric

Check = Callable[[Fabric], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str
    check: Check


# Codes reported by the loader and the schema step rather than by a rule.
LOAD_CODES: dict[str, tuple[str, str]] = {
    "FG000": ("unreadable-file", "The fabric file cannot be read, is not UTF-8, is not a regular file (a FIFO, "
                                 "a device) or is larger than 4 MiB."),
    "FG001": ("yaml-syntax", "The file is not valid YAML, holds more than one document, nests deeper than 64 levels, "
                        "uses an explicit tag, or expands aliases past 100,000 nodes."),
    "FG002": ("duplicate-key", "A mapping repeats a key; YAML would silently keep the last one."),
    "FG003": ("schema", "A field is missing, unknown, of the wrong type or out of range."),
    "FG004": ("duplicate-site", "Two fabrics rendered together share metadata.name (one output directory)."),
}

RULES: list[Rule] = []


def rule(code: str, name: str, summary: str) -> Callable[[Check], Check]:
    """Register a rule under a stable code."""

    def register(check: Check) -> Check:
        if any(r.code == code for r in RULES):
            raise ValueError(f"rule code {code} registered twice")
        RULES.append(Rule(code, name, summary, check))
        return check

    return register


def run(fabric: Fabric) -> list[Finding]:
    findings: list[Finding] = []
    for item in sorted(RULES, key=lambda r: r.code):
        findings.extend(item.check(fabric))
    return findings


def catalogue() -> list[tuple[str, str, str]]:
    """Every code with its name and summary, for `fabricgen rules` and docs/diagnostics.md."""
    rows = [(code, name, summary) for code, (name, summary) in LOAD_CODES.items()]
    rows += [(r.code, r.name, r.summary) for r in RULES]
    return sorted(rows)
