"""Where `fabricgen status` reads each part of the live fabric.

- A zone: by default its cluster, through `kubectl --context <destination.kubeContext, default
  the zone's name>` and the user's kubeconfig, running the OVN commands inside Kube-OVN's
  `ovn-central` pods (and the IC database's inside fabricgen's `ovn-ic-server` pods) as
  `kubectl ko` does; its Kubernetes objects are read with `kubectl get -o json`.
- An interconnected OVN deployment (CloudStack, OpenStack, OVN-Kubernetes): directly, over the
  OVSDB remotes of its declared database members (`tcp:` or `ssl:` at their NB and SB ports).
- The IC database: in the zone that runs it (`database.zone`), else directly at its declared
  members' ports.
- An endpoints file (`--endpoints FILE`) overrides any of these with direct remotes, and names
  the raft members' control sockets (`ovn-appctl -t CTL cluster/status DB`) or remotes (the
  `_Server` database) for the raft checks. Format:

      icDatabase:                       # the IC NB and SB
        northbound: tcp:10.20.2.11:6645,tcp:10.20.2.12:6645   # a remote as ovn-ic-nbctl --db takes it
        southbound: tcp:10.20.2.11:6646,tcp:10.20.2.12:6646
        members:                        # raft members, each with a control socket or a remote per database
          - name: ic-db1
            northbound: {control: /var/run/ovn/ovn_ic_nb_db.ctl}
            southbound: {remote: tcp:10.20.2.11:6646, raftAddress: tcp:192.0.2.11:6648}
        # a member's name is the fabric's (the IC database's node, a deployment's host);
        # raftAddress: the member's address in the cluster's server list, where it is not the
        # fabric's address at the raft port (6647/6648 for the IC database, 6643/6644 otherwise)
      availabilityZones:                # per zone or deployment, by its fabric name
        openstack:
          northbound: ssl:10.20.0.11:6641
          southbound: ssl:10.20.0.11:6642
          members: [...]
      kubernetesClusters:               # a Kubernetes consumer's cluster, by its fabric name
        k8s-prod: {kubeContext: prod}   # read through this kubectl context (default: its destination's)
        # or {read: false}: its objects are not read
      ssl:                              # client certificate for ssl: remotes (paths)
        privateKey: /etc/ovn/key.pem
        certificate: /etc/ovn/cert.pem
        caCertificate: /etc/ovn/ca.pem

Nothing here reads a kubeconfig or a certificate: kubectl and the OVN tools do, and only their
output is kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fabricgen.errors import FabricgenError
from fabricgen.files.regular import read_regular
from fabricgen.model import Fabric
from fabricgen.model.consumers import KubernetesCluster
from fabricgen.model.names import KUBE_SYSTEM
from fabricgen.observe.raft_address import address as remote
from fabricgen.pipeline import Build

Database = Literal["northbound", "southbound"]
DATABASES: tuple[Database, ...] = ("northbound", "southbound")
# What ovsdb clients accept as a remote, one or several (comma-separated): never an option.
_REMOTE = re.compile(r"(?:(?:unix|tcp|ssl):[^\s,]+)(?:,(?:unix|tcp|ssl):[^\s,]+)*")
_PATH = re.compile(r"[^\s\x00-\x1f\x7f-][^\s\x00-\x1f\x7f]*")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
MAX_ENDPOINTS_BYTES = 1024 * 1024


class EndpointsError(FabricgenError):
    """The endpoints file cannot be used; the message names the file, line and field."""


@dataclass(frozen=True)
class Kubectl:
    """A cluster reached with kubectl: its context, and the namespace of Kube-OVN's pods."""

    context: str
    namespace: str = KUBE_SYSTEM


@dataclass(frozen=True)
class Direct:
    """Databases reached over OVSDB remotes from this machine."""

    northbound: str
    southbound: str


@dataclass(frozen=True)
class Member:
    """One raft member, as the endpoints file names it: how to read its state per database."""

    name: str
    control: Mapping[Database, str] = field(default_factory=dict)  # ovn-appctl -t CTL
    remote: Mapping[Database, str] = field(default_factory=dict)  # the member alone, for `_Server`
    raft_address: Mapping[Database, str] = field(default_factory=dict)  # as the cluster lists it, if not the fabric's


@dataclass(frozen=True)
class Ssl:
    private_key: str
    certificate: str
    ca_certificate: str

    def options(self) -> list[str]:
        return [f"--private-key={self.private_key}", f"--certificate={self.certificate}",
                f"--ca-cert={self.ca_certificate}"]


@dataclass(frozen=True)
class AzSource:
    """One availability zone: a zone of the fabric or an interconnected deployment."""

    az: str  # the OVN AZ name
    kind: Literal["zone", "deployment", "cluster"]  # cluster: a Kubernetes consumer's, objects only
    name: str  # the zone's, deployment's or Kubernetes consumer's name in the fabric
    access: Kubectl | Direct
    members: tuple[Member, ...] = ()  # raft members for a Direct access (kubectl finds the pods)

    @property
    def subject(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(frozen=True)
class IcSource:
    access: Kubectl | Direct
    members: tuple[Member, ...] = ()


@dataclass(frozen=True)
class Sources:
    azs: tuple[AzSource, ...]
    ic: IcSource | None
    ssl: Ssl | None = None
    # Deployments that do not interconnect: their raft health only (Direct, declared members).
    databases: tuple[AzSource, ...] = ()
    # Kubernetes consumers' clusters (OVN-Kubernetes): the objects fabricgen renders for them.
    clusters: tuple[AzSource, ...] = ()


@dataclass(frozen=True)
class Endpoints:
    """What an endpoints file says (empty: kubectl and the fabric's addresses for everything)."""

    ic: IcSource | None = None
    azs: Mapping[str, tuple[Direct, tuple[Member, ...]]] = field(default_factory=dict)
    ssl: Ssl | None = None
    # a Kubernetes consumer -> its kubectl context ("": its destination's); None: not read
    clusters: Mapping[str, str | None] = field(default_factory=dict)


def plan(build: Build, endpoints: Endpoints) -> Sources:
    """Where each AZ, deployment database and the IC database are read, for this fabric."""
    fabric = build.plan.fabric
    azs: list[AzSource] = []
    for zone in fabric.zones:
        given = endpoints.azs.get(zone.name)
        access: Kubectl | Direct = given[0] if given else Kubectl(zone.destination.kube_context or zone.name)
        azs.append(AzSource(zone.name, "zone", zone.name, access, given[1] if given else ()))
    databases: list[AzSource] = []
    for deployment in fabric.ovn_deployments:
        given = endpoints.azs.get(deployment.name)
        direct, members = given if given else _declared(fabric, deployment.name)
        source = AzSource(deployment.az_name or deployment.name, "deployment", deployment.name, direct, members)
        (azs if deployment.interconnect is not None else databases).append(source)
    unknown = sorted(set(endpoints.azs) - {z.name for z in fabric.zones} - {d.name for d in fabric.ovn_deployments})
    if unknown:
        raise EndpointsError(f"endpoints: availabilityZones names {', '.join(unknown)}, which the fabric has "
                             "neither as a zone nor as an OVN deployment")
    consumers = [c for d in fabric.ovn_deployments for c in d.consumers if isinstance(c, KubernetesCluster)]
    unknown_clusters = sorted(set(endpoints.clusters) - {c.name for c in consumers})
    if unknown_clusters:
        raise EndpointsError(f"endpoints: kubernetesClusters names {', '.join(unknown_clusters)}, which the fabric "
                             "has not as a Kubernetes consumer")
    clusters = tuple(AzSource(c.name, "cluster", c.name,
                              Kubectl(endpoints.clusters.get(c.name) or c.destination.kube_context or c.name))
                     for c in consumers if build.objects(c.name)
                     if c.name not in endpoints.clusters or endpoints.clusters[c.name] is not None)
    return Sources(tuple(azs), _ic(fabric, endpoints), endpoints.ssl, tuple(databases), clusters)


def _ic(fabric: Fabric, endpoints: Endpoints) -> IcSource | None:
    ic = fabric.interconnection
    if ic is None:
        return None
    if endpoints.ic is not None:
        return endpoints.ic
    db = ic.database
    host = next((z for z in fabric.zones if z.name == db.zone), None)
    if host is not None:
        return IcSource(Kubectl(host.destination.kube_context or host.name))
    nb = ",".join(remote("tcp", str(m.address), db.nb_port) for m in db.members)
    sb = ",".join(remote("tcp", str(m.address), db.sb_port) for m in db.members)
    members = tuple(Member(m.node, remote={"northbound": remote("tcp", str(m.address), db.nb_port),
                                           "southbound": remote("tcp", str(m.address), db.sb_port)})
                    for m in db.members)
    return IcSource(Direct(nb, sb), members)


def _declared(fabric: Fabric, name: str) -> tuple[Direct, tuple[Member, ...]]:
    """A deployment's databases at its declared members, in the protocol it serves."""
    deployment = next(d for d in fabric.ovn_deployments if d.name == name)
    dbs = deployment.databases
    proto = dbs.protocol
    nb = ",".join(remote(proto, str(m.address), dbs.nb_port) for m in dbs.members)
    sb = ",".join(remote(proto, str(m.address), dbs.sb_port) for m in dbs.members)
    members = tuple(Member(m.host, remote={"northbound": remote(proto, str(m.address), dbs.nb_port),
                                           "southbound": remote(proto, str(m.address), dbs.sb_port)})
                    for m in dbs.members)
    return Direct(nb, sb), members


# ------------------------------------------------------------------ the endpoints file
def read_endpoints(path: Path) -> Endpoints:
    """The endpoints file; raises EndpointsError with the file, line and field of each problem
    (all of them at once)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data, _stat = read_regular(path, follow_symlinks=True, limit=MAX_ENDPOINTS_BYTES)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EndpointsError(f"{path}: cannot read the endpoints file: {exc}") from None
    try:
        doc = YAML(typ="rt").load(text)
    except YAMLError as exc:
        raise EndpointsError(f"{path}: not YAML: {exc}") from None
    reader = _Reader(str(path))
    endpoints = reader.endpoints(doc if doc is not None else {})
    if reader.problems:
        raise EndpointsError("\n".join(sorted(reader.problems, key=_position)))
    return endpoints


def _position(problem: str) -> tuple[int, int]:
    """(line, column) of a `FILE:LINE:COL: ...` problem."""
    match = re.search(r":(\d+):(\d+): ", problem)
    return (int(match[1]), int(match[2])) if match else (0, 0)


class _Reader:
    def __init__(self, name: str) -> None:
        self.name = name
        self.problems: list[str] = []

    def problem(self, node: Any, key: str | int | None, where: str, message: str) -> None:
        line = col = 0
        lc = getattr(node, "lc", None)
        if lc is not None:
            try:
                line, col = lc.key(key) if isinstance(key, str) else lc.item(key) if isinstance(key, int) \
                    else (lc.line, lc.col)
            except (KeyError, IndexError, TypeError):
                line, col = lc.line, lc.col
        self.problems.append(f"{self.name}:{line + 1}:{col + 1}: {where}: {message}")

    def mapping(self, node: Any, where: str, keys: set[str], parent: Any = None,
                key: str | int | None = None) -> dict[str, Any]:
        if not isinstance(node, dict):
            self.problem(parent if parent is not None else node, key, where, "expected a mapping")
            return {}
        for k in node:
            if k not in keys:
                self.problem(node, str(k), f"{where}.{k}" if where else str(k),
                             f"unknown key; expected one of {', '.join(sorted(keys))}")
        return dict(node)

    def text(self, node: Any, key: str, where: str, pattern: re.Pattern[str], what: str) -> str | None:
        value = node.get(key)
        if not isinstance(value, str) or not pattern.fullmatch(value):
            self.problem(node, key, f"{where}.{key}", f"expected {what}")
            return None
        return value

    def endpoints(self, doc: Any) -> Endpoints:
        top = self.mapping(doc, "", {"icDatabase", "availabilityZones", "ssl", "kubernetesClusters"})
        ic = None
        if "icDatabase" in top:
            found = self.databases(top["icDatabase"], "icDatabase", doc, "icDatabase")
            if found is not None:
                ic = IcSource(*found)
        azs: dict[str, tuple[Direct, tuple[Member, ...]]] = {}
        zones = top.get("availabilityZones", {})
        for name in self.mapping(zones, "availabilityZones", set(zones) if isinstance(zones, dict) else set(),
                                 doc, "availabilityZones"):
            if not _NAME.fullmatch(str(name)):
                self.problem(zones, str(name), f"availabilityZones.{name}", "expected a zone or deployment name")
                continue
            found = self.databases(zones[name], f"availabilityZones.{name}", zones, str(name))
            if found is not None:
                azs[str(name)] = found
        ssl = None
        if "ssl" in top:
            node = top["ssl"]
            fields = self.mapping(node, "ssl", {"privateKey", "certificate", "caCertificate"}, doc, "ssl")
            values = [self.text(node, k, "ssl", _PATH, "a file path") if k in fields else
                      self.missing(node, "ssl", k) for k in ("privateKey", "certificate", "caCertificate")]
            if all(values):
                ssl = Ssl(*(str(v) for v in values))
        clusters: dict[str, str | None] = {}
        given = top.get("kubernetesClusters", {})
        for name in self.mapping(given, "kubernetesClusters", set(given) if isinstance(given, dict) else set(),
                                 doc, "kubernetesClusters"):
            where = f"kubernetesClusters.{name}"
            node = given[name]
            fields = self.mapping(node, where, {"kubeContext", "read"}, given, str(name))
            if not _NAME.fullmatch(str(name)):
                self.problem(given, str(name), where, "expected a Kubernetes consumer's name")
                continue
            read = fields.get("read", True)
            if not isinstance(read, bool):
                self.problem(node, "read", f"{where}.read", "expected true or false")
            elif not read:
                clusters[str(name)] = None
            elif "kubeContext" in fields:
                context = self.text(node, "kubeContext", where, _NAME, "a kubectl context name")
                if context is not None:
                    clusters[str(name)] = context
            else:
                clusters[str(name)] = ""  # read, through its destination's context
        return Endpoints(ic, azs, ssl, clusters)

    def missing(self, node: Any, where: str, key: str) -> str | None:
        """Report a required key that is absent; None, as a value read would be."""
        self.problem(node, None, where, f"{key} is missing")
        return None

    def databases(self, node: Any, where: str, parent: Any, key: str) -> tuple[Direct, tuple[Member, ...]] | None:
        fields = self.mapping(node, where, {"northbound", "southbound", "members"}, parent, key)
        if not fields:
            return None
        nb = self.text(node, "northbound", where, _REMOTE, "an OVSDB remote (unix:PATH, tcp:HOST:PORT or "
                       "ssl:HOST:PORT, several separated by commas)") if "northbound" in fields \
            else self.missing(node, where, "northbound")
        sb = self.text(node, "southbound", where, _REMOTE, "an OVSDB remote (unix:PATH, tcp:HOST:PORT or "
                       "ssl:HOST:PORT, several separated by commas)") if "southbound" in fields \
            else self.missing(node, where, "southbound")
        members = []
        listed = fields.get("members", [])
        if not isinstance(listed, list):
            self.problem(node, "members", f"{where}.members", "expected a list of members")
            listed = []
        for i, item in enumerate(listed):
            member = self.member(item, f"{where}.members[{i}]", listed, i)
            if member is not None:
                members.append(member)
        if nb is None or sb is None:
            return None
        return Direct(nb, sb), tuple(members)

    def member(self, node: Any, where: str, parent: Any, index: int) -> Member | None:
        fields = self.mapping(node, where, {"name", "northbound", "southbound"}, parent, index)
        if not fields:
            return None
        name = self.text(node, "name", where, _NAME, "a member name") if "name" in fields \
            else self.missing(node, where, "name")
        control: dict[Database, str] = {}
        remote: dict[Database, str] = {}
        raft_address: dict[Database, str] = {}
        for db in DATABASES:
            if db not in fields:
                continue
            how = self.mapping(fields[db], f"{where}.{db}", {"control", "remote", "raftAddress"}, node, db)
            if "raftAddress" in how:
                value = self.text(fields[db], "raftAddress", f"{where}.{db}", _REMOTE, "a raft address "
                                  "(tcp:HOST:PORT, ssl:HOST:PORT or unix:PATH)")
                if value is not None:
                    raft_address[db] = value
                how.pop("raftAddress")
            if len(how) != 1:
                self.problem(node, db, f"{where}.{db}", "give exactly one of control (a control socket path) "
                                                        "or remote (the member's OVSDB remote)")
                continue
            if "control" in how:
                value = self.text(fields[db], "control", f"{where}.{db}", _PATH, "a control socket path")
                if value is not None:
                    control[db] = value
            else:
                value = self.text(fields[db], "remote", f"{where}.{db}", _REMOTE, "an OVSDB remote")
                if value is not None:
                    remote[db] = value
        return Member(name, control, remote, raft_address) if name is not None else None
