"""What `fabricgen import` reads, and the checks it passes before anything is mapped.

`LiveInput` is the running fabric as captured: per cluster its objects (`kube_objects.LiveObject`
by identity), the parsed `ovn-ic-sbctl show`, and optionally the IC northbound options. Two
readers produce it:

- `read_kubectl`: files the user captured with the stock commands of docs/status-and-import.md, per cluster
  the output of `kubectl --context CLUSTER get ... -o yaml` (or `-o json`; a List, or several
  documents), and one `ovn-ic-sbctl show` (and `ovn-ic-nbctl get IC_NB_Global . options`);
- `from_texts`, which `read_kubectl` calls once it has read the files: the format-independent
  part;
- `from_status_capture`: the directory `fabricgen status --capture` writes (`observe.capture`),
  whose zones' `kubectl get -o json` outputs, `ovn-ic-sbctl show` output and IC northbound
  options it passes to `from_texts`; every check below applies to it unchanged, but that
  objects of kinds import does not read, which status reads for its own checks, are left out.

Refused, with every problem named at once and nothing written: a file that cannot be read, is
not UTF-8 or not kubectl output (`kube_objects.KubeInputError`), an object of a kind import
does not read (`KINDS`; a Secret is never read), one object twice with different content, a
show capture that is not `ovn-ic-sbctl show` output or lists no availability zone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fabricgen.errors import FabricgenError
from fabricgen.files.regular import NotRegularError, TooLargeError, read_regular
from fabricgen.observe import capture as status_capture
from fabricgen.observe import icnb_options, icsb_show, ovsdb_rows, raft_status
from fabricgen.observe import kube_objects as ko
from fabricgen.source.provenance import printable


class ImportInputError(FabricgenError):
    """The input is not what `fabricgen import` reads; nothing was written."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        head = "the input was refused (nothing written):" if len(problems) > 1 else "the input was refused:"
        super().__init__(head + "".join(f"\n  {p}" for p in problems) if len(problems) > 1
                         else f"{problems[0]} (nothing written)")


# (group, kind) -> what import reads it for
KINDS: dict[tuple[str, str], str] = {
    ("", "ConfigMap"): "kube-system/ovn-ic-config (the zone and the interconnection), "
                       "kube-system/ovn-vpc-nat-gw-config",
    ("", "Node"): "the IC database members' node names (by InternalIP) and the zone that runs the database",
    ("apps", "Deployment"): "kube-system/ovn-ic-server (install-ic-server.sh's IC server): the IC database's raft "
                            "members (NODE_IPS, replicas), its transit switches (TS_NUM) and image",
    ("", "Namespace"): "nothing: the namespaces the NADs need follow from the NADs",
    ("kubeovn.io", "Configuration"): "enableIC, enableNATGateway, the tunnel type, the pod, join and service CIDRs",
    ("kubeovn.io", "Vpc"): "ovn-cluster's routes and policies, tenant VPCs and their peerings",
    ("kubeovn.io", "Subnet"): "the backbone, tenant subnets, the NAT gateways' external network, "
                              "ovn-default and join (the pod and join CIDRs)",
    ("k8s.cni.cncf.io", "NetworkAttachmentDefinition"): "the overlay networks of the backbone and tenant subnets",
    ("kubeovn.io", "ProviderNetwork"): "the NAT gateways' external network (its NIC)",
    ("kubeovn.io", "Vlan"): "the NAT gateways' external network (its VLAN)",
    ("kubeovn.io", "VpcNatGateway"): "tenant VPCs' NAT gateways",
    ("kubeovn.io", "IptablesEIP"): "the NAT gateways' elastic IPs",
    ("kubeovn.io", "IptablesSnatRule"): "the NAT gateways' SNAT rules",
    ("kubeovn.io", "IptablesDnatRule"): "the NAT gateways' DNAT rules",
    ("helm.cattle.io", "HelmChart"): "kube-system/rke2-canal: Canal's pod range (cluster.primaryPodCIDR)",
    ("kubeovn.io", "SecurityGroup"): "nothing: listed as kept on the cluster (a policy group cannot name its pods)",
    ("networking.k8s.io", "NetworkPolicy"): "nothing: listed as kept on the cluster (fabricgen's policy is Subnet "
                                            "ACLs in a Kube-OVN zone)",
}
# Read only to be listed as kept on the cluster: optional in a capture, and not in status's.
KEPT = frozenset({("kubeovn.io", "SecurityGroup"), ("networking.k8s.io", "NetworkPolicy")})


@dataclass(frozen=True)
class ClusterInput:
    """One cluster's captured objects."""

    name: str  # as the user named it (the kubectl context); shown printable
    sources: tuple[str, ...]  # the captures read for it
    objects: dict[ko.ObjectId, ko.LiveObject]


@dataclass(frozen=True)
class LiveInput:
    """The running fabric as captured, ready to map."""

    clusters: tuple[ClusterInput, ...]
    show: icsb_show.IcSbShow
    show_name: str
    ic_nb_options: dict[str, str] | None = None  # None: not captured
    ic_nb_name: str | None = None
    reader: str = "kubectl"  # which reader produced it
    ic_raft: raft_status.ClusterStatus | None = None  # one IC member's `cluster/status`; None: not captured
    ic_raft_name: str | None = None


def kind_problem(obj: ko.LiveObject) -> str | None:
    key = (obj.id.group, obj.id.kind)
    if key in KINDS:
        return None
    why = "a Secret is never read" if key == ("", "Secret") else "import does not read this kind"
    return (f"{obj.origin}: {obj.id} ({obj.body.get('apiVersion')}): {why}; the captures hold "
            f"{', '.join(sorted({k for _g, k in KINDS}))}: use the commands in fabricgen's docs/status-and-import.md")


def from_texts(clusters: Sequence[tuple[str, Sequence[tuple[str, str]]]], show: tuple[str, str] | None,
               ic_nb: tuple[str, str] | None = None, *, reader: str = "kubectl",
               problems: Sequence[str] = (), other_kinds: bool = False,
               ic_raft: tuple[str, str] | None = None) -> LiveInput:
    """The format-independent reader: per cluster (name, [(capture name, text)]), the show capture
    (name, text), the options capture and one IC member's `cluster/status OVN_IC_Northbound`.
    Every problem is collected (after `problems`, found while reading) before one error is raised;
    `show` is None only when it could not be read."""
    problems = list(problems)
    done: list[ClusterInput] = []
    names: set[str] = set()
    for cluster, texts in clusters:
        label = printable(cluster)
        if not cluster.strip():
            problems.append("a cluster has an empty name; name each cluster (its kubectl context)")
            continue
        if cluster in names:
            problems.append(f"cluster {label} is given twice; give each cluster once, with all its files")
            continue
        names.add(cluster)
        objects: list[ko.LiveObject] = []
        unread = False
        for name, text in texts:
            try:
                read = ko.read_objects(text, printable(name))
            except ko.KubeInputError as exc:
                problems.append(str(exc))
                unread = True
                continue
            if other_kinds:  # left out, not refused
                read = [o for o in read if kind_problem(o) is None]
            problems += [p for p in map(kind_problem, read) if p]
            objects += read
        if not objects and not unread:
            problems.append(f"cluster {label}: its captures ({', '.join(printable(n) for n, _t in texts) or 'none'}) "
                            "hold no object (null, or an empty List): a cluster with nothing read would vanish from "
                            "the fabric; capture its `kubectl get` output again")
            continue
        try:
            merged = ko.merge_objects(objects)
        except ko.KubeInputError as exc:
            problems.append(str(exc))
            continue
        done.append(ClusterInput(cluster, tuple(printable(n) for n, _t in texts), merged))
    parsed: icsb_show.IcSbShow | None = None
    show_name = ""
    if show is not None:
        show_name = printable(show[0])
        try:
            parsed = icsb_show.parse(show[1], show_name)
            if not parsed.zones:
                problems.append(f"{show_name}: no availability zone in it; pass the output of `ovn-ic-sbctl show`")
        except icsb_show.ShowParseError as exc:
            problems.append(str(exc))
    options = None
    if ic_nb is not None:
        try:
            options = icnb_options.parse(ic_nb[1], printable(ic_nb[0]))
        except icnb_options.OptionsParseError as exc:
            problems.append(str(exc))
    raft = None
    if ic_raft is not None:
        try:
            raft = raft_status.parse_cluster_status(ic_raft[1], printable(ic_raft[0]))
        except raft_status.RaftParseError as exc:
            problems.append(f"{exc}; pass what `ovn-appctl -t /var/run/ovn/ovn_ic_nb_db.ctl cluster/status "
                            "OVN_IC_Northbound` prints in an ovn-ic-server pod")
    if not clusters:
        problems.append("no cluster given; pass each cluster's captures with --cluster NAME=FILE")
    if problems or parsed is None:
        raise ImportInputError(problems)
    return LiveInput(tuple(done), parsed, show_name, options, None if ic_nb is None else printable(ic_nb[0]), reader,
                     raft, None if ic_raft is None else printable(ic_raft[0]))


def from_status_capture(directory: Path) -> LiveInput:
    """`fabricgen import --from DIR`: a capture of `fabricgen status --capture`, its zones as the
    clusters (each zone's object reads; a kind the cluster has no CRD for is simply absent)."""
    try:
        observations, header = status_capture.read(directory)
    except status_capture.CaptureError as exc:
        raise ImportInputError([str(exc)]) from None
    name = printable(directory.as_posix())
    problems: list[str] = []
    clusters: dict[str, list[tuple[str, str]]] = {}
    for key, obs in observations.items():
        parts = key.split("/")
        if parts[0] != "zones" or len(parts) < 4 or parts[2] != "objects":
            continue
        if not obs.ok and "doesn't have a resource type" not in obs.stderr:
            problems.append(f"{name}: zone {parts[1]}'s objects were not captured ({key}: {obs.failure()}); "
                            "capture again where kubectl reaches the cluster")
        else:
            texts = clusters.setdefault(parts[1], [])
            if obs.ok and obs.stdout.strip():  # --ignore-not-found prints nothing when nothing was found
                texts.append((f"{name}/{key}", obs.stdout))
    show = observations.get("ic/sb/show")
    if show is None or not show.ok:
        problems.append(f"{name}: holds no `ovn-ic-sbctl show` output (ic/sb/show)"
                        + (f": {show.failure()}" if show is not None else ""))
    options = _options_text(observations.get("ic/nb/IC_NB_Global"), name, problems)
    if not clusters:
        problems.append(f"{name}: holds no zone's objects: it was captured from no zone through kubectl "
                        f"(site {header['site']!r})")
    return from_texts(list(clusters.items()), (f"{name}/ic/sb/show", show.stdout) if show and show.ok else None,
                      options, reader="status capture", problems=problems, other_kinds=True,
                      ic_raft=_ic_raft_text(observations, name))


def _ic_raft_text(observations: Mapping[str, status_capture.Observation], name: str) -> tuple[str, str] | None:
    """One IC northbound member's `cluster/status` of the capture: the leader's where one
    answered as leader, else the first that answered with a server list."""
    answered: list[tuple[str, raft_status.ClusterStatus]] = []
    for key, obs in sorted(observations.items()):
        if not key.startswith("ic/raft/nb/") or not obs.ok:
            continue
        try:
            answered.append((key, raft_status.parse_cluster_status(obs.stdout, key)))
        except raft_status.RaftParseError:
            continue  # a member status judges; import needs one server list
    chosen = next((a for a in answered if a[1].role == "leader"), answered[0] if answered else None)
    return (f"{name}/{chosen[0]}", observations[chosen[0]].stdout) if chosen else None


def _options_text(obs: status_capture.Observation | None, name: str, problems: list[str]) -> tuple[str, str] | None:
    """The IC northbound options of the capture's `IC_NB_Global` row, as `ovn-ic-nbctl get` prints them."""
    if obs is None or not obs.ok:
        return None
    try:
        found = ovsdb_rows.rows(obs.stdout, f"{name}/ic/nb/IC_NB_Global")
    except ovsdb_rows.RowsError as exc:
        problems.append(str(exc))
        return None
    options = ovsdb_rows.as_map(found[0].get("options", {})) if found else {}
    text = "{" + ", ".join(f"{k}={json.dumps(str(v))}" for k, v in sorted(options.items())) + "}"
    return f"{name}/ic/nb/IC_NB_Global", text


def read_text(path: Path, limit: int = ko.MAX_BYTES) -> str:
    """A capture file: regular (a FIFO or device is not read), at most `limit` bytes, UTF-8."""
    name = printable(path.as_posix())
    try:
        data, _status = read_regular(path, follow_symlinks=True, limit=limit)
    except FileNotFoundError:
        raise ImportInputError([f"{name}: no such file"]) from None
    except NotRegularError:
        raise ImportInputError([f"{name}: not a regular file; give the file kubectl's output was saved to"]) \
            from None
    except TooLargeError:
        raise ImportInputError([f"{name}: larger than {limit // (1024 * 1024)} MiB"]) from None
    except OSError as exc:
        raise ImportInputError([f"{name}: cannot read it: {exc.strerror or exc}"]) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportInputError([f"{name}: byte {exc.start} is not UTF-8; save kubectl's output as it "
                                "printed it"]) from None


def read_kubectl(clusters: Sequence[tuple[str, Sequence[Path]]], show: Path, ic_nb: Path | None = None,
                 ic_raft: Path | None = None) -> LiveInput:
    """`fabricgen import --cluster NAME=FILE ... --show FILE [--ic-nb-options FILE] [--ic-raft FILE]`."""
    problems: list[str] = []
    texts: list[tuple[str, list[tuple[str, str]]]] = []
    for cluster, paths in clusters:
        read: list[tuple[str, str]] = []
        for path in paths:
            try:
                read.append((path.as_posix(), read_text(path)))
            except ImportInputError as exc:
                problems += exc.problems
        texts.append((cluster, read))
    captures: list[tuple[str, str] | None] = []
    for capture in (show, ic_nb, ic_raft):
        if capture is None:
            captures.append(None)
            continue
        try:
            captures.append((capture.as_posix(), read_text(capture, 4 * 1024 * 1024)))
        except ImportInputError as exc:
            problems += exc.problems
            captures.append(None)
    return from_texts(texts, captures[0], captures[1], problems=problems, ic_raft=captures[2])
