"""Raft health in `fabricgen status`: each database's members, read as `observe.live_fabric`
gathered them, judged by `judge.raft` (one line per aspect, each with its fix).

The members the fabric declares and their raft addresses (what `cluster/status` lists):

- the IC database: `interconnection.database.members` on ovn-ctl's IC cluster ports, 6647 (IC
  NB) and 6648 (IC SB), which Kube-OVN's `start-ic-db.sh` uses;
- a deployment: `databases.members` on 6643 (NB) and 6644 (SB), in the databases' protocol;
- a Kube-OVN zone's ovn-central: not declared; the pods that answered are the reference.

An endpoints file's member may give its `raftAddress` where the cluster knows it by another
address than the fabric's (a unix socket, an address behind NAT).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fabricgen.errors import FabricgenError
from fabricgen.judge import raft
from fabricgen.judge.checks import UNREACHABLE, Check
from fabricgen.judge.raft_readings import MemberReading, reading
from fabricgen.model.ovn import RAFT_PORTS
from fabricgen.observe import raft_address
from fabricgen.observe.live_fabric import SHORT, RaftMember
from fabricgen.observe.read_commands import IC_CTL, ZONE_CTL
from fabricgen.observe.sources import DATABASES, Database

IC_RAFT_PORTS: dict[Database, int] = {"northbound": 6647, "southbound": 6648}


def declared_members(members: Sequence[tuple[str, str]], db: Database, *, ic: bool, protocol: str = "tcp",
                     overrides: Mapping[str, str] | None = None) -> list[raft.Member]:
    """The raft members the fabric declares for one database: (name, address) -> raft address."""
    port = IC_RAFT_PORTS[db] if ic else RAFT_PORTS[db]
    return [raft.Member(name, (overrides or {}).get(name) or raft_address.address(protocol, address, port))
            for name, address in members]


# What ovsdb-server answers on its control socket when none of its databases is clustered: raft
# registers `cluster/status` with the first clustered database it opens (openvswitch/ovs
# `ovsdb/raft.c` `raft_init`), and unixctl refuses a command it does not know
# (`lib/unixctl.c` `process_command`).
NOT_CLUSTERED = '"cluster/status" is not a valid command'


def _reading(member: RaftMember, database: str) -> raft.Reading:
    obs = member.observation
    if obs is None:
        return "not read"
    if not obs.ok:
        if member.kind != "_Server" and NOT_CLUSTERED in obs.stderr + obs.stdout:
            # A standalone server, read through its control socket: what `_Server` says of one.
            return raft.ServerRow(database, "standalone", connected=True, leader=True, cid=None, sid=None,
                                  index=None)
        return obs.failure()
    try:
        if member.kind == "_Server":
            rows = raft.parse_server_databases(obs.stdout, obs.key)
            row = rows.get(database)
            return row if row is not None else f"its _Server database lists no {database}"
        return raft.parse_cluster_status(obs.stdout, obs.key)
    except FabricgenError as exc:
        return str(exc)


def _declared_name(member: RaftMember, declared: Sequence[tuple[str, str]] | None) -> str:
    """A pod read through kubectl goes by the declared member it is: the one on its node, or at its
    (host network) address; anything else keeps its own name."""
    for name, address in declared or ():
        if (member.node and member.node == name) or (member.address and member.address == address):
            return name
    return member.name


def readings(subject: str, members: Mapping[Database, Sequence[RaftMember]],
             declared: Sequence[tuple[str, str]] | None, *, ic: bool) -> list[MemberReading]:
    """Each member of one AZ's (or the IC database's) two databases as it answered."""
    names = IC_CTL if ic else ZONE_CTL
    count = len(declared) if declared is not None else None
    return [reading(f"{subject} {SHORT[db]} raft", _declared_name(m, declared), _reading(m, names[db][1]), count)
            for db in DATABASES for m in members.get(db, ())]


def checks(subject: str, members: Mapping[Database, Sequence[RaftMember]],
           declared: Sequence[tuple[str, str]] | None, pods_error: str | None, *, ic: bool,
           protocol: str = "tcp", overrides: Mapping[Database, Mapping[str, str]] | None = None) -> list[Check]:
    """Every raft line of one AZ's (or the IC database's) two databases."""
    out: list[Check] = []
    names = IC_CTL if ic else ZONE_CTL
    for db in DATABASES:
        found = members.get(db, ())
        label = f"{subject} {SHORT[db]} raft"
        if not found:
            if pods_error is not None:
                out.append(Check(label, "raft.reachable", UNREACHABLE, f"no member could be read: {pods_error}"))
            continue
        database = names[db][1]
        named = {_declared_name(m, declared): m for m in found}
        readings = {name: _reading(m, database) for name, m in named.items()}
        ctls = {name: m.control for name, m in named.items()}
        wanted = declared_members(declared, db, ic=ic, protocol=protocol,
                                  overrides=(overrides or {}).get(db)) if declared is not None else None
        out += raft.judge(database, label, wanted, readings, ctls=ctls)
    return out
