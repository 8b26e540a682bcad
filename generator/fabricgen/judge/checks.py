"""One line of `fabricgen status`: a check of the live fabric, its verdict, why, and the fix.

Verdicts, from best to worst (a report's verdict is its worst check's):

- `ok`: the live state is what the fabric renders, or healthy;
- `drift`: the live state differs from the fabric (a route, an address, an object), and the
  fix is a change to the fabric or a sync of its output;
- `unknown`: what was read does not settle the question, and the fix a wrong verdict would give
  (a `cluster/kick`, a database file removed, a rejoin) could do harm: the line says what was
  seen and what to check instead (a raft election under way, a server list whose addresses
  match none of the declared members);
- `unhealthy`: the control plane is in trouble whatever the fabric says (no raft leader, a
  member out of the cluster, a stale raft server, a transit switch keyed outside VXLAN's range);
- `unreachable`: the state could not be read (a cluster, a pod, a database that did not answer),
  so nothing about it is known.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Verdict = Literal["ok", "drift", "unknown", "unhealthy", "unreachable"]
OK: Verdict = "ok"
DRIFT: Verdict = "drift"
UNKNOWN: Verdict = "unknown"
UNHEALTHY: Verdict = "unhealthy"
UNREACHABLE: Verdict = "unreachable"
ORDER: tuple[Verdict, ...] = (OK, DRIFT, UNKNOWN, UNHEALTHY, UNREACHABLE)


@dataclass(frozen=True)
class Check:
    """One check. `subject`: what was checked (`zone hq`, `IC northbound raft`,
    `deployment openstack`); `name`: the kind of check, stable for tooling (`raft.leader`,
    `transit.address`, `object`); `why`: one sentence saying what was found; `fix`: the command
    or change that fixes it (empty when ok)."""

    subject: str
    name: str
    verdict: Verdict
    why: str
    fix: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"subject": self.subject, "check": self.name, "verdict": self.verdict, "why": self.why,
                "fix": self.fix}


def worst(checks: Iterable[Check]) -> Verdict:
    """The worst verdict of `checks` (`ok` when there are none)."""
    return max((c.verdict for c in checks), key=ORDER.index, default=OK)
