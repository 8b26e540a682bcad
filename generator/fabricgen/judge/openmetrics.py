"""`fabricgen status --format openmetrics`: the report as OpenMetrics 1.0 text, for Prometheus.

One series per check and state (`fabricgen_status_check`, 1 for the check's state, 0 for the
other four), so that an alert selects a state without knowing the others, and a check that
stops being reported is stale rather than ok. Several checks of one name in one place (the
objects of a zone) are one series, in the worst of their states. The labels say where the check is:

- `site`: the fabric's `metadata.name`, so that one Prometheus watches several fabrics;
- `scope`: `ic` (the IC database), `zone`, `deployment`, or `cluster` (a Kubernetes consumer's,
  whose objects fabricgen renders); `name`: its name in the fabric (empty for the IC database);
- `database`: `nb` or `sb` for a raft check of that database, else empty;
- `part`: what the check is of, the first word of `check` (`raft`, `routes`, `transit`, `ic`,
  `object`, ...); `check`: the check's stable name (`raft.leader`, `routes.stale`, ...).

Per raft member (`MEMBER_METRICS`): whether it answered, its role, its status as `cluster/status`
words it, term, the servers its list holds and its disconnections, with the member's name as the
checks give it, and per database the members the fabric declares: what an operator compares when
a member is lost or stale.

`METRICS` and `MEMBER_METRICS` list every metric with its type, help and labels; `fabricgen watching`
writes their reference (docs/watching.md). Names and labels follow Prometheus' naming rules and are
stable: a new one may be added, none is renamed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabricgen.judge.checks import ORDER, Check, worst
from fabricgen.judge.raft_readings import ROLES
from fabricgen.judge.verdicts import Report
from fabricgen.live_text import escape


@dataclass(frozen=True)
class Metric:
    name: str
    kind: str  # OpenMetrics type
    help: str
    labels: tuple[str, ...]


CHECK_LABELS = ("site", "scope", "name", "database", "part", "check", "state")
METRICS: tuple[Metric, ...] = (
    Metric("fabricgen_status_check", "gauge",
           "1 for the state a check of the live fabric is in, 0 for the other states.", CHECK_LABELS),
    Metric("fabricgen_status_checks", "gauge", "How many checks of the reading are in each state.",
           ("site", "state")),
    Metric("fabricgen_status_verdict", "gauge",
           "1 for the reading's worst state (the exit status of fabricgen status), 0 for the others.",
           ("site", "state")),
)
MEMBER_LABELS = ("site", "scope", "name", "database", "member")
MEMBER_METRICS: tuple[Metric, ...] = (
    Metric("fabricgen_raft_member_up", "gauge", "1 when the raft member answered the reading, else 0.",
           MEMBER_LABELS),
    Metric("fabricgen_raft_member_role", "gauge",
           "1 for the member's raft role (leader, follower, candidate), 0 for the others; all 0 when not known.",
           (*MEMBER_LABELS, "role")),
    Metric("fabricgen_raft_member_status", "gauge",
           "1, labelled with the member's raft status as cluster/status words it (cluster member, disconnected "
           "from the cluster (election timeout), joining cluster, leaving cluster, left cluster, failed).",
           (*MEMBER_LABELS, "status")),
    Metric("fabricgen_raft_member_term", "gauge", "The member's raft term (from cluster/status).", MEMBER_LABELS),
    Metric("fabricgen_raft_member_servers", "gauge",
           "How many servers the member's own list holds (from cluster/status); compare with the declared members.",
           MEMBER_LABELS),
    Metric("fabricgen_raft_member_disconnections", "gauge",
           "Raft disconnections the member counted since it started (from cluster/status).", MEMBER_LABELS),
    Metric("fabricgen_raft_declared_members", "gauge",
           "How many members the fabric declares for the database (the IC database, a deployment's).",
           ("site", "scope", "name", "database")),
)
_SUBJECT = re.compile(r"^(?:(?P<ic>IC database)|(?P<scope>zone|deployment|cluster) (?P<name>\S+))"
                      r"(?: (?P<database>nb|sb) raft)?$")


def _escaped(value: str) -> str:
    """A label value as OpenMetrics writes it: backslash, double quote and line feed escaped,
    after every character that is not printable (a control, a bidirectional override from a
    hostile member's `cluster/status`) became its backslash escape (`live_text.escape`), so the
    text and the served bytes are one, and a parser that refuses a raw control (promtool) reads
    every line."""
    return escape(value, kept="").replace("\\", "\\\\").replace('"', '\\"')


def _series(name: str, labels: dict[str, str], value: int) -> str:
    inner = ",".join(f'{k}="{_escaped(v)}"' for k, v in labels.items())
    return f"{name}{{{inner}}} {value}"


def where(subject: str) -> dict[str, str]:
    """The `scope`, `name` and `database` labels of a check's subject."""
    found = _SUBJECT.match(subject)
    if found is None:
        return {"scope": "other", "name": subject, "database": ""}
    if found["ic"]:
        return {"scope": "ic", "name": "", "database": found["database"] or ""}
    return {"scope": found["scope"], "name": found["name"], "database": found["database"] or ""}


def family(metric: Metric, lines: list[str]) -> list[str]:
    """A metric family: its TYPE and HELP lines, then its samples."""
    return [f"# TYPE {metric.name} {metric.kind}", f"# HELP {metric.name} {metric.help}", *lines]


def openmetrics(report: Report) -> str:
    check, checks, verdict = METRICS
    out: list[str] = []
    grouped: dict[tuple[tuple[str, str], ...], list[Check]] = {}
    for c in report.checks:  # several checks of one name in one place (objects): one series, the worst
        labels = {"site": report.site, **where(c.subject), "part": c.name.split(".")[0], "check": c.name}
        grouped.setdefault(tuple(labels.items()), []).append(c)
    rows = []
    for key, same in grouped.items():
        state_now = worst(same)
        rows += [_series(check.name, {**dict(key), "state": state}, int(state_now == state)) for state in ORDER]
    out += family(check, rows)
    counts = report.counts()
    out += family(checks, [_series(checks.name, {"site": report.site, "state": s}, counts[s]) for s in ORDER])
    out += family(verdict, [_series(verdict.name, {"site": report.site, "state": s}, int(report.verdict == s))
                             for s in ORDER])
    out += _members(report)
    return "\n".join([*out, "# EOF"]) + "\n"


def _members(report: Report) -> list[str]:
    """The per-member families: every member in each, a value only where it is known."""
    up, role, status, term, servers, disconnections, declared = MEMBER_METRICS
    rows: dict[str, list[str]] = {m.name: [] for m in MEMBER_METRICS}
    databases: dict[tuple[tuple[str, str], ...], int] = {}
    for m in report.members:
        place = where(m.subject)
        labels = {"site": report.site, **place, "member": m.member}
        rows[up.name].append(_series(up.name, labels, int(m.answered)))
        rows[role.name] += [_series(role.name, {**labels, "role": r}, int(m.role == r)) for r in ROLES]
        if m.status:
            rows[status.name].append(_series(status.name, {**labels, "status": m.status}, 1))
        for metric, value in ((term, m.term), (servers, m.servers), (disconnections, m.disconnections)):
            if value is not None:
                rows[metric.name].append(_series(metric.name, labels, value))
        if m.declared is not None:
            databases[tuple({"site": report.site, **place}.items())] = m.declared
    rows[declared.name] = [_series(declared.name, dict(key), count) for key, count in databases.items()]
    return [line for metric in MEMBER_METRICS if rows[metric.name] for line in family(metric, rows[metric.name])]
