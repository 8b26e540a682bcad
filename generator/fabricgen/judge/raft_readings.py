"""Each raft member as it answered, for the per-member metrics of `fabricgen status
--format openmetrics` (`judge.openmetrics`): whether it answered, its role and term, how many
servers its list holds, its disconnections, and how many members the fabric declares.

From `cluster/status` all of them; from a `_Server` row (a member read by its remote, without a
control socket) only whether it leads (`leader`) or follows a leader it is connected to; from a
member that did not answer, only that."""

from dataclasses import dataclass

from fabricgen.judge import raft
from fabricgen.observe.raft_server_db import ServerRow
from fabricgen.observe.raft_status import ClusterStatus

ROLES = ("leader", "follower", "candidate")  # raft.c `raft_role_to_string`


@dataclass(frozen=True)
class MemberReading:
    subject: str  # the raft subject of the checks: `IC database nb raft`, `zone hq sb raft`
    member: str  # as the checks name it (the fabric's name where it declares the member)
    answered: bool
    role: str = ""  # one of ROLES; "" when not known
    term: int | None = None
    servers: int | None = None  # the servers in its list
    disconnections: int | None = None
    declared: int | None = None  # members the fabric declares for this database; None: none
    status: str = ""  # cluster/status's `Status:` (`cluster member`, `disconnected from the cluster (...)`)


def reading(subject: str, member: str, found: raft.Reading, declared: int | None) -> MemberReading:
    if isinstance(found, ClusterStatus):
        return MemberReading(subject, member, True, found.role if found.role in ROLES else "", found.term,
                             len(found.servers), found.disconnections, declared, found.status)
    if isinstance(found, ServerRow):
        role = "leader" if found.leader and found.model == "clustered" else (
            "follower" if found.connected and found.model == "clustered" else "")
        return MemberReading(subject, member, True, role, declared=declared)
    return MemberReading(subject, member, False, declared=declared)
