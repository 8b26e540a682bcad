"""The live fabric as one run of `fabricgen status` read it: what to read (`probes`), in two
rounds (the first finds, through kubectl, the pods the second runs its commands in), and the
observations parsed per AZ and for the IC database.

Nothing here judges; a read that failed keeps its reason, which the checks report as
`unreachable`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fabricgen.errors import FabricgenError
from fabricgen.live_text import escape
from fabricgen.model.names import KUBE_SYSTEM
from fabricgen.observe import icsb_show, json_bounds, kube_objects
from fabricgen.observe import read_commands as cmd
from fabricgen.observe.capture import NOT_CAPTURED, NOT_RUN, Observation
from fabricgen.observe.kube_objects import LiveObject, ObjectId
from fabricgen.observe.ovsdb_rows import Row, RowsError, rows
from fabricgen.observe.runner import Observer, Probe
from fabricgen.observe.sources import (
    DATABASES,
    AzSource,
    Database,
    Direct,
    IcSource,
    Kubectl,
    Member,
    Sources,
    Ssl,
)
from fabricgen.pipeline import Build
from fabricgen.platform_rows import neutron as neutron_rows

# What each AZ's databases are read for (table, columns).
NB_TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("NB_Global", ("name", "options", "external_ids")),
    ("Logical_Router", ("_uuid", "name", "static_routes", "policies", "ports")),
    ("Logical_Router_Static_Route", ("_uuid", "ip_prefix", "nexthop", "policy", "route_table", "external_ids",
                                     "options")),
    ("Logical_Router_Policy", ("_uuid", "priority", "match", "action", "nexthop", "nexthops", "external_ids")),
    ("Logical_Router_Port", ("_uuid", "name", "networks", "mac", "gateway_chassis")),
    ("Gateway_Chassis", ("_uuid", "name", "chassis_name", "priority")),
    ("Logical_Switch", ("name", "other_config")),
)
SB_TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Chassis", ("name", "hostname")),
    ("Datapath_Binding", ("tunnel_key", "external_ids")),
)
# A deployment whose clouds have rendered security groups: the rows Neutron wrote for them.
POLICY_TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Port_Group", ("name", "external_ids", "acls", "ports")),
    ("ACL", ("_uuid", "direction", "priority", "match", "action")),
)
# ... and the names of the ports in them (Neutron's port ids: a port group holds rows, not names);
# read apart, so that a capture made before they were read still judges the groups
POLICY_PORTS: tuple[tuple[str, tuple[str, ...]], ...] = (("Logical_Switch_Port", ("_uuid", "name")),)
IC_NB_TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (("IC_NB_Global", ("options",)),)
IC_SB_TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Availability_Zone", ("name",)),
    ("Datapath_Binding", ("transit_switch", "tunnel_key")),
)
SHORT: dict[Database, str] = {"northbound": "nb", "southbound": "sb"}
# A pod name, as the API server allows it (a DNS subdomain): anything else from a cluster's
# answer is never put on a command line or into a capture's file names.
_POD = re.compile(r"[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?")


class LiveError(FabricgenError):
    pass


@dataclass(frozen=True)
class Pod:
    name: str
    node: str
    ip: str
    labels: Mapping[str, str]
    running: bool


@dataclass
class Tables:
    """One database's tables, or why they could not be read."""

    tables: dict[str, list[Row]] = field(default_factory=dict)
    error: str | None = None

    def get(self, table: str) -> list[Row]:
        return self.tables.get(table, [])


@dataclass
class RaftMember:
    """One raft member's answer (`cluster/status` text or `_Server` JSON) or why there is none."""

    name: str
    address: str  # the member's node or pod IP where known ('' otherwise)
    control: str  # the control socket `cluster/kick` is run through, as the fix names it
    observation: Observation | None
    kind: str  # "cluster/status" or "_Server"
    node: str = ""  # the pod's node, where read through kubectl


@dataclass
class AzLive:
    source: AzSource
    nb: Tables
    sb: Tables
    objects: dict[ObjectId, LiveObject] | None = None  # kubectl only
    objects_error: str | None = None
    raft: dict[Database, list[RaftMember]] = field(default_factory=dict)
    pods_error: str | None = None
    # a deployment's clouds with rendered security groups, each with its groups, and the rows
    # Neutron wrote for them (POLICY_TABLES; None where there are no such groups)
    security_groups: dict[str, list[Mapping[str, Any]]] = field(default_factory=dict)
    policy: Tables | None = None
    policy_ports: Tables | None = None


@dataclass
class IcLive:
    source: IcSource
    show: icsb_show.IcSbShow | None
    show_error: str | None
    nb: Tables
    sb: Tables
    raft: dict[Database, list[RaftMember]] = field(default_factory=dict)
    pods_error: str | None = None


@dataclass
class LiveFabric:
    azs: list[AzLive]
    ic: IcLive | None
    databases: list[AzLive]  # deployments that do not interconnect: raft only
    notes: list[str] = field(default_factory=list)
    clusters: list[AzLive] = field(default_factory=list)  # Kubernetes consumers: their objects only


# ------------------------------------------------------------------ reading
def gather(build: Build, sources: Sources, observer: Observer) -> LiveFabric:
    """Read everything, in two rounds of probes: pods and Kubernetes objects and every direct
    read first, then the reads inside the pods found."""
    first: list[Probe] = []
    groups = {az.name: _security_groups(build, az) for az in (*sources.azs, *sources.databases)}
    for az in (*sources.azs, *sources.databases):
        first += _first_round(build, az, sources, bool(groups[az.name]))
    if sources.ic is not None:
        first += _ic_first_round(sources.ic, sources)
    for cluster in sources.clusters:
        first += _cluster_round(build, cluster)
    seen = observer.observe(first)
    second: list[Probe] = []
    pods: dict[str, list[Pod] | str] = {}
    for az in (*sources.azs, *sources.databases):
        if isinstance(az.access, Kubectl):
            found = _pods(seen[_key(az, "pods", cmd.OVN_CENTRAL)])
            pods[az.name] = found
            if not isinstance(found, str):
                second += _pod_round(az, found)
    if sources.ic is not None and isinstance(sources.ic.access, Kubectl):
        found = _pods(seen["ic/pods/" + cmd.IC_SERVER])
        pods["ic"] = found
        if not isinstance(found, str):
            second += _ic_pod_round(sources.ic, found)
    seen = {**seen, **observer.observe(second)}
    azs = [_az_live(build, az, seen, pods.get(az.name), groups[az.name]) for az in sources.azs]
    databases = [_az_live(build, az, seen, pods.get(az.name), groups[az.name]) for az in sources.databases]
    ic = _ic_live(sources.ic, seen, pods.get("ic")) if sources.ic is not None else None
    clusters = [_cluster_live(c, seen) for c in sources.clusters]
    return LiveFabric(azs, ic, databases, _unchecked(sources), clusters)


def _unchecked(sources: Sources) -> list[str]:
    """What this run cannot check, from where it reads."""
    notes = []
    for az in sources.azs:
        if isinstance(az.access, Direct) and az.kind == "zone":
            notes.append(f"{az.subject}: Kubernetes objects not checked (read directly, not through kubectl)")
    for az in (*sources.azs, *sources.databases):
        if isinstance(az.access, Direct) and not az.members:
            notes.append(f"{az.subject}: raft not checked (no members with a control socket or remote in --endpoints)")
    if sources.ic is not None and isinstance(sources.ic.access, Direct) and not sources.ic.members:
        notes.append("IC database: raft not checked (no members with a control socket or remote in --endpoints)")
    return notes


def _key(az: AzSource, *parts: str) -> str:
    return "/".join(({"zone": "zones", "deployment": "deployments", "cluster": "clusters"}[az.kind], az.name, *parts))


def _tables(az: AzSource, db: Database, pod: str | None, ssl: Ssl | None) -> list[Probe]:
    listed = NB_TABLES if db == "northbound" else SB_TABLES
    return [Probe(_key(az, SHORT[db], name), tuple(cmd.table("zone", db, az.access, pod, ssl, name, columns)))
            for name, columns in listed]


def _first_round(build: Build, az: AzSource, sources: Sources, policy: bool) -> list[Probe]:
    """The AZ's reads that need no pod; `policy`: its clouds have security groups, whose rows
    are read too."""
    if isinstance(az.access, Direct):
        probes = [] if az in sources.databases else \
            [p for db in DATABASES for p in _tables(az, db, None, sources.ssl)]
        if policy:
            probes += [Probe(_key(az, "nbpolicy", name), tuple(cmd.table("zone", "northbound", az.access, None,
                                                                         sources.ssl, name, columns)))
                       for name, columns in (*POLICY_TABLES, *POLICY_PORTS)]
        return probes + _member_probes(_key(az, "raft"), az.members, "zone", sources)
    probes = [Probe(_key(az, "pods", cmd.OVN_CENTRAL), tuple(cmd.pods(az.access, cmd.OVN_CENTRAL)))]
    for resource in LISTED:
        probes.append(Probe(_key(az, "objects", "list", resource), tuple(cmd.every(az.access, resource))))
    for namespace, names in _named(build, az.name).items():
        probes.append(Probe(_key(az, "objects", "named", namespace), tuple(cmd.objects(az.access, namespace, names))))
    probes.append(Probe(_key(az, "objects", "named", "canal"), tuple(cmd.objects(az.access, KUBE_SYSTEM, [CANAL]))))
    return probes


def _ic_first_round(ic: IcSource, sources: Sources) -> list[Probe]:
    if isinstance(ic.access, Kubectl):
        return [Probe("ic/pods/" + cmd.IC_SERVER, tuple(cmd.pods(ic.access, cmd.IC_SERVER)))]
    return [*_ic_tables(ic, None, sources.ssl), *_member_probes("ic/raft", ic.members, "ic", sources)]


def _ic_tables(ic: IcSource, pod: str | None, ssl: Ssl | None) -> list[Probe]:
    probes = [Probe("ic/sb/show", tuple(cmd.database("ic", "southbound", ic.access, pod, ssl, ["show"])))]
    listed: tuple[tuple[Database, tuple[tuple[str, tuple[str, ...]], ...]], ...] = (
        ("northbound", IC_NB_TABLES), ("southbound", IC_SB_TABLES))
    for db, tables in listed:
        for name, columns in tables:
            argv = cmd.table("ic", db, ic.access, pod, ssl, name, columns)
            probes.append(Probe(f"ic/{SHORT[db]}/{name}", tuple(argv)))
    return probes


def _member_probes(prefix: str, members: Sequence[Member], scope: str, sources: Sources) -> list[Probe]:
    probes = []
    for member in members:
        for db in DATABASES:
            names = cmd.ZONE_CTL if scope == "zone" else cmd.IC_CTL
            if db in member.control:
                argv = cmd.cluster_status(member.control[db], names[db][1])
            elif db in member.remote:
                argv = cmd.server_rows_argv(member.remote[db], names[db][1], sources.ssl)
            else:
                continue
            probes.append(Probe(f"{prefix}/{SHORT[db]}/{member.name}", tuple(argv)))
    return probes


def _pods(obs: Observation) -> list[Pod] | str:
    if not obs.ok:
        return obs.failure()
    try:
        doc = json.loads(obs.stdout, parse_int=json_bounds.parse_int, parse_constant=json_bounds.parse_constant)
        items = doc.get("items", []) if isinstance(doc, dict) else []
        out = []
        for item in items:
            name = str(item["metadata"]["name"])
            if not _POD.fullmatch(name):
                continue
            status = item.get("status", {})
            ready = all(c.get("ready") for c in status.get("containerStatuses", []))
            out.append(Pod(name, str(item.get("spec", {}).get("nodeName", "")), str(status.get("podIP", "")),
                           {str(k): str(v) for k, v in (item["metadata"].get("labels") or {}).items()},
                           status.get("phase") == "Running" and ready))
        return sorted(out, key=lambda p: p.name)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        return f"`kubectl get pods` printed no pod list: {escape(str(exc))[:300]}"


def _chosen(pods: Sequence[Pod], label: str) -> Pod | None:
    """The pod a read runs in: the one labelled leader (as `kubectl ko` picks it), else a running one."""
    running = [p for p in pods if p.running]
    return next((p for p in running if p.labels.get(label) == "true"), running[0] if running else None)


def _pod_round(az: AzSource, pods: Sequence[Pod]) -> list[Probe]:
    assert isinstance(az.access, Kubectl)
    probes: list[Probe] = []
    labels: dict[Database, str] = {"northbound": "ovn-nb-leader", "southbound": "ovn-sb-leader"}
    for db in DATABASES:
        pod = _chosen(pods, labels[db])
        if pod is not None:
            probes += _tables(az, db, pod.name, None)
        control, name = cmd.ZONE_CTL[db]
        for p in pods:
            probes.append(Probe(_key(az, "raft", SHORT[db], p.name),
                                tuple(cmd.cluster_status(control, name, (az.access, p.name, cmd.OVN_CENTRAL)))))
    return probes


def _ic_pod_round(ic: IcSource, pods: Sequence[Pod]) -> list[Probe]:
    assert isinstance(ic.access, Kubectl)
    pod = _chosen(pods, "ovn-ic-nb-leader")
    probes = _ic_tables(ic, pod.name, None) if pod is not None else []
    for db in DATABASES:
        control, name = cmd.IC_CTL[db]
        for p in pods:
            probes.append(Probe(f"ic/raft/{SHORT[db]}/{p.name}",
                                tuple(cmd.cluster_status(control, name, (ic.access, p.name, cmd.IC_SERVER)))))
    return probes


# ------------------------------------------------------------------ Kubernetes objects
# The API resource of every kind fabricgen renders (`kubectl api-resources`), for `TYPE/NAME`.
RESOURCES: dict[tuple[str, str], str] = {
    ("", "ConfigMap"): "configmaps",
    ("", "Namespace"): "namespaces",
    ("apps", "Deployment"): "deployments.apps",
    ("k8s.cni.cncf.io", "NetworkAttachmentDefinition"): "network-attachment-definitions.k8s.cni.cncf.io",
    ("kubeovn.io", "Subnet"): "subnets.kubeovn.io",
    ("kubeovn.io", "Vpc"): "vpcs.kubeovn.io",
    ("kubeovn.io", "Vlan"): "vlans.kubeovn.io",
    ("kubeovn.io", "ProviderNetwork"): "provider-networks.kubeovn.io",
    ("kubeovn.io", "VpcNatGateway"): "vpc-nat-gateways.kubeovn.io",
    ("kubeovn.io", "IptablesEIP"): "iptables-eips.kubeovn.io",
    ("kubeovn.io", "IptablesSnatRule"): "iptables-snat-rules.kubeovn.io",
    ("kubeovn.io", "IptablesDnatRule"): "iptables-dnat-rules.kubeovn.io",
    ("kubeovn.io", "Configuration"): "configurations.kubeovn.io",
    ("", "Service"): "services",
    ("", "Endpoints"): "endpoints",
    ("", "ServiceAccount"): "serviceaccounts",
    ("networking.k8s.io", "NetworkPolicy"): "networkpolicies.networking.k8s.io",
    ("policy.networking.k8s.io", "AdminNetworkPolicy"): "adminnetworkpolicies.policy.networking.k8s.io",
    ("rbac.authorization.k8s.io", "ClusterRole"): "clusterroles.rbac.authorization.k8s.io",
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): "clusterrolebindings.rbac.authorization.k8s.io",
    ("rbac.authorization.k8s.io", "Role"): "roles.rbac.authorization.k8s.io",
    ("rbac.authorization.k8s.io", "RoleBinding"): "rolebindings.rbac.authorization.k8s.io",
}


# Read whole (every object, every namespace): the kinds `fabricgen import` reads, so that a status
# capture is an import's input (adopt.inputs.KINDS), and Nodes (the IC database members' names).
LISTED = ("configurations.kubeovn.io", "vpcs.kubeovn.io", "subnets.kubeovn.io",
          "network-attachment-definitions.k8s.cni.cncf.io", "provider-networks.kubeovn.io", "vlans.kubeovn.io",
          "vpc-nat-gateways.kubeovn.io", "iptables-eips.kubeovn.io", "iptables-snat-rules.kubeovn.io",
          "iptables-dnat-rules.kubeovn.io", "nodes")
# In kube-system, read by name in every zone: the ConfigMaps import reads, and the IC server whose
# NODE_IPS say how many raft members run (install-ic-server.sh's, where the fabric runs none yet).
NAMED = ("configmaps/ovn-ic-config", "configmaps/ovn-vpc-nat-gw-config", "deployments.apps/ovn-ic-server")
CANAL = "helmcharts.helm.cattle.io/rke2-canal"  # RKE2's Canal, for its pod range; absent elsewhere


def _named(build: Build, zone: str, always: Sequence[str] = NAMED) -> dict[str, list[str]]:
    """`TYPE/NAME` of the objects read by name, per namespace: the zone's rendered objects of the
    kinds not read whole (`LISTED`), and `always` in kube-system (what `import` reads by name);
    cluster-scoped ones go with the first namespace (`-n` does not apply to them)."""
    namespaced: dict[str, list[str]] = {KUBE_SYSTEM: list(always)} if always else {}
    cluster: list[str] = []
    for obj in build.objects_within(zone):
        oid = kube_objects.identify(obj)
        resource = RESOURCES.get((oid.group, oid.kind))
        if resource is None:
            raise LiveError(f"zone {zone}: no API resource known for {oid.kind} ({oid.group or 'core'})")
        if resource in LISTED:
            continue
        name = f"{resource}/{oid.name}"
        (namespaced.setdefault(oid.namespace, []) if oid.namespace else cluster).append(name)
    first = sorted(namespaced)[0] if namespaced else KUBE_SYSTEM
    namespaced[first] = cluster + namespaced.get(first, [])
    return {ns: sorted(set(names), key=names.index) for ns, names in sorted(namespaced.items()) if names}


def _absent_kind(obs: Observation) -> bool:
    """kubectl's answer for a kind whose CRD the cluster does not have: none of it exists."""
    return not obs.ok and "doesn't have a resource type" in obs.stderr


def _uncaptured_listing(key: str, obs: Observation) -> bool:
    """A namespace's listing (`/every/`) that a capture made before status read it lacks: the
    rendered objects, read by name, are judged without it."""
    return "/every/" in key and obs.exit == NOT_RUN and obs.stderr == NOT_CAPTURED


def _objects(az: AzSource, seen: Mapping[str, Observation]) -> tuple[dict[ObjectId, LiveObject] | None, str | None]:
    """The objects of every read of the AZ's (or cluster's) objects this run made, in the order
    they were asked for: the answers to the probes `_first_round` or `_cluster_round` built."""
    prefix = _key(az, "objects") + "/"
    return _read_objects(az, [key for key in seen if key.startswith(prefix)], seen)


def _read_objects(az: AzSource, keys: Sequence[str], seen: Mapping[str, Observation]) -> tuple[
        dict[ObjectId, LiveObject] | None, str | None]:
    found: list[LiveObject] = []
    for key in keys:
        obs = seen[key]
        if _absent_kind(obs) or _uncaptured_listing(key, obs):
            continue
        if not obs.ok:
            return None, obs.failure()
        if obs.stdout.strip():
            try:
                found += kube_objects.read_objects(obs.stdout, f"{az.subject}: {key}")
            except FabricgenError as exc:
                return None, str(exc)
    try:
        return kube_objects.merge_objects(found), None
    except FabricgenError as exc:
        return None, str(exc)


NETWORK_POLICIES = RESOURCES[("networking.k8s.io", "NetworkPolicy")]
ADMIN_NETWORK_POLICIES = RESOURCES[("policy.networking.k8s.io", "AdminNetworkPolicy")]


def _cluster_round(build: Build, cluster: AzSource) -> list[Probe]:
    """A Kubernetes consumer's cluster: the objects fabricgen renders for it, by name, every
    NetworkPolicy of a namespace it renders one in (NetworkPolicies add up: another owner's admits
    what fabricgen's do not), and there every AdminNetworkPolicy of the cluster (one decided before
    fabricgen's can admit, pass or deny what the policy does not say; a cluster without their CRD
    has none)."""
    assert isinstance(cluster.access, Kubectl)
    probes = [Probe(_key(cluster, "objects", "named", ns), tuple(cmd.objects(cluster.access, ns, names)))
              for ns, names in _named(build, cluster.name, always=()).items()]
    spaces = sorted({str(o["metadata"]["namespace"]) for o in build.objects_within(cluster.name)
                     if o.get("kind") == "NetworkPolicy"})
    probes += [Probe(_key(cluster, "objects", "every", ns, NETWORK_POLICIES),
                     tuple(cmd.in_namespace(cluster.access, ns, NETWORK_POLICIES))) for ns in spaces]
    if spaces:
        probes.append(Probe(_key(cluster, "objects", "every", ADMIN_NETWORK_POLICIES),
                            tuple(cmd.every(cluster.access, ADMIN_NETWORK_POLICIES))))
    return probes


def _cluster_live(cluster: AzSource, seen: Mapping[str, Observation]) -> AzLive:
    live = AzLive(cluster, Tables(), Tables())
    live.objects, live.objects_error = _objects(cluster, seen)
    return live


# ------------------------------------------------------------------ parsing
def _read_tables(seen: Mapping[str, Observation], prefix: str,
                 listed: Sequence[tuple[str, tuple[str, ...]]]) -> Tables:
    out = Tables()
    for name, _columns in listed:
        obs = seen.get(f"{prefix}/{name}")
        if obs is None:
            return Tables(error="not read")
        if not obs.ok:
            return Tables(error=obs.failure())
        try:
            out.tables[name] = rows(obs.stdout, f"{prefix}/{name}")
        except RowsError as exc:
            return Tables(error=str(exc))
    return out


def _az_live(build: Build, az: AzSource, seen: Mapping[str, Observation], pods: list[Pod] | str | None,
             groups: dict[str, list[Mapping[str, Any]]]) -> AzLive:
    live = AzLive(az, _read_tables(seen, _key(az, "nb"), NB_TABLES), _read_tables(seen, _key(az, "sb"), SB_TABLES))
    if isinstance(az.access, Kubectl):
        live.objects, live.objects_error = _objects(az, seen)
        if isinstance(pods, str) or pods is None:
            live.pods_error = pods or "no pods read"
            live.nb.error = live.sb.error = live.pods_error
        else:
            if not any(p.running for p in pods):
                live.pods_error = f"no running {cmd.OVN_CENTRAL} pod ({len(pods)} found)"
                live.nb.error = live.sb.error = live.pods_error
            for db in DATABASES:
                live.raft[db] = [RaftMember(p.name, p.ip, cmd.ZONE_CTL[db][0],
                                            seen.get(_key(az, "raft", SHORT[db], p.name)), "cluster/status", p.node)
                                 for p in pods]
    else:
        for db in DATABASES:
            live.raft[db] = _direct_members(seen, _key(az, "raft"), az.members, db, cmd.ZONE_CTL)
        if groups:
            live.security_groups = groups
            live.policy = _read_tables(seen, _key(az, "nbpolicy"), POLICY_TABLES)
            live.policy_ports = _read_tables(seen, _key(az, "nbpolicy"), POLICY_PORTS)
    return live


def _security_groups(build: Build, az: AzSource) -> dict[str, list[Mapping[str, Any]]]:
    """A deployment's clouds that have rendered security groups, each with its groups."""
    if az.kind != "deployment":
        return {}
    deployment = next((d for d in build.plan.fabric.ovn_deployments if d.name == az.name), None)
    if deployment is None:
        return {}
    out = {}
    for consumer in deployment.consumers:
        if consumer.platform == "openstack":
            found = neutron_rows.groups(neutron_rows.playbook(build, deployment.name, consumer.name))
            if found:
                out[consumer.name] = found
    return out


def _direct_members(seen: Mapping[str, Observation], prefix: str, members: Sequence[Member], db: Database,
                    names: Mapping[Database, tuple[str, str]]) -> list[RaftMember]:
    out = []
    for m in members:
        if db in m.control:
            out.append(RaftMember(m.name, "", m.control[db], seen.get(f"{prefix}/{SHORT[db]}/{m.name}"),
                                  "cluster/status"))
        elif db in m.remote:
            out.append(RaftMember(m.name, m.remote[db], names[db][0], seen.get(f"{prefix}/{SHORT[db]}/{m.name}"),
                                  "_Server"))
    return out


def _ic_live(ic: IcSource, seen: Mapping[str, Observation], pods: list[Pod] | str | None) -> IcLive:
    show_obs = seen.get("ic/sb/show")
    show, show_error = None, None
    if show_obs is None:
        show_error = pods if isinstance(pods, str) else "not read"
    elif not show_obs.ok:
        show_error = show_obs.failure()
    else:
        try:
            show = icsb_show.parse(show_obs.stdout, "ovn-ic-sbctl show")
        except FabricgenError as exc:
            show_error = str(exc)
    live = IcLive(ic, show, show_error, _read_tables(seen, "ic/nb", IC_NB_TABLES),
                  _read_tables(seen, "ic/sb", IC_SB_TABLES))
    if isinstance(ic.access, Kubectl):
        if isinstance(pods, str) or pods is None:
            live.pods_error = pods or "no pods read"
            live.nb.error = live.sb.error = live.pods_error
        else:
            for db in DATABASES:
                live.raft[db] = [RaftMember(p.name, p.ip, cmd.IC_CTL[db][0],
                                            seen.get(f"ic/raft/{SHORT[db]}/{p.name}"), "cluster/status", p.node)
                                 for p in pods]
    else:
        for db in DATABASES:
            live.raft[db] = _direct_members(seen, "ic/raft", ic.members, db, cmd.IC_CTL)
    return live
