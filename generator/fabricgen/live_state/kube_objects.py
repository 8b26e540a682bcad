"""Live Kubernetes objects: what `kubectl get -o yaml|json` prints, normalised and compared
with the objects fabricgen renders.

This module is a contract, shared by `fabricgen import` (the round-trip proof) and
`fabricgen status` (the objects check). Everything named in `__all__` keeps its meaning;
new fields and functions may be added, existing ones are not changed.

Reading
-------
`read_objects(text, name) -> list[LiveObject]` takes the text kubectl prints:

- `kubectl get ... -o yaml`: one object, or a `List` (`kind: List`, or `<Kind>List` as the
  API server returns it, whose items may lack `apiVersion` and `kind`: they are taken from
  the list), or several YAML documents of those (`---` between them, as several captures
  concatenated);
- `kubectl get ... -o json`: one JSON value of the same forms, or several one after another.

Anything else is refused with `KubeInputError`, whose message names the file, the line (YAML)
or the document, and what was expected: a table printed without `-o`, an error message of
kubectl's (`Error from server ...`), a `Status` object, an object without `apiVersion`, `kind`
or `metadata.name`, YAML anchors, aliases or tags (kubectl never writes them), duplicate keys,
nesting deeper than `MAX_DEPTH`, a file larger than `MAX_BYTES`. Empty documents are skipped.
Every object comes back as plain data (dict, list, str, int, float, bool, None) with
`origin`, where it was read (`FILE:LINE` for YAML, `FILE: document N, item M` for JSON).
`merge_objects` indexes objects of one cluster by identity; the same object read twice is
kept once if both copies normalise alike, refused otherwise.

Identity
--------
`identify(obj) -> ObjectId(group, kind, namespace, name)`: the API group (`""` for the core
group, never the version), the kind, the namespace (`""` for a cluster-scoped object; an
object of a namespaced kind in `NAMESPACED` written without one is in `default`, where
kubectl and kustomize put it), the name. `str(ObjectId)` is `Kind: namespace/name` or
`Kind: name`, the form `fabricgen diff` titles objects with.

Normalising
-----------
`normalise(obj)` returns a copy without what the API server, admission and controllers add:

- `status`, and every `metadata` field but `name`, `namespace`, `labels` and `annotations`
  (`uid`, `resourceVersion`, `generation`, `managedFields`, `creationTimestamp`,
  `deletionTimestamp`, `selfLink`, `finalizers` such as Kube-OVN's
  `kubeovn.io/kube-ovn-controller` and the kubeovn-operator's `finalizer.kubeovn.io/configuration`,
  `ownerReferences`);
- annotations and labels that are bookkeeping, not intent: `kubectl.kubernetes.io/*`
  (the last-applied configuration), fabricgen's own (`fabricgen.io/*`,
  `app.kubernetes.io/managed-by: fabricgen`), the delivery tools' (`argocd.argoproj.io/*`,
  Argo CD's tracking label `app.kubernetes.io/instance`, `kustomize.toolkit.fluxcd.io/*`),
  Kube-OVN's (`ovn.kubernetes.io/*`, which its controllers set on Subnets, NAT gateways, EIPs
  and NAT rules: kubeovn/kube-ovn `pkg/util/const.go`, `pkg/controller/vpc_nat_gw_eip.go`,
  `vpc_nat_gw_nat.go`, `vpc_nat_gateway.go`), and SUSE Virtualization's status label
  `network.harvesterhci.io/ready` (harvester/network-controller-harvester
  `pkg/controller/manager/nad/controller.go` `ensureLabels`); empty maps are dropped.

Comparing
---------
`compare(rendered, live, fields=...) -> Comparison` compares one object fabricgen renders with
its live counterpart, after `normalise` of both, and returns every difference at field level
(`FieldDifference`: `path`, `at` (the path as a list), `rendered`, `live`, `kind`). A path
names map keys (`metadata.labels['network.harvesterhci.io/type']`), list positions
(`spec.template.spec.containers[0]`) and list items by their key fields
(`spec.staticRoutes[cidr=172.30.20.0/24].nextHopIP`) or, for a list of scalars, by value
(`spec.excludeIps[=172.30.10.9]`); in `at` an item is a mapping of those fields (`{"": value}`
for a scalar). The kinds:

- `changed`: both have the field, with other values; `missing`: the rendered object sets it,
  the live one lacks it; `extra`: the live object has it, the rendered one does not set it.
- `fields="set"` (the default): only the fields the rendered object sets. `fields="all"`:
  also the live object's other fields (`extra`), less those that only say what Kube-OVN
  defaults to (`DEFAULTS`, below). A partial object (`is_partial`: the rendered object carries
  `kustomize.toolkit.fluxcd.io/ssa: Merge`, as fabricgen marks the Configuration `kubeovn`,
  the Vpc `ovn-cluster` and `ovn-vpc-nat-gw-config`, whose other fields belong to another
  controller) is always compared on fabricgen's fields only, whatever `fields` says.
- A list fabricgen sets is compared whole: its live items that the rendered list lacks are
  `extra` (for the Vpc `ovn-cluster`: the routes fabricgen did not render, which the next sync
  wipes; `Comparison.extra_items("spec", "staticRoutes")` lists them), its rendered items that
  the live list lacks `missing`, and an item of `KEYED_LISTS` present on both sides with other
  values `changed` field by field. Lists in the `spec` of `kubeovn.io` kinds are sets: their
  order is not compared (Kube-OVN sorts `excludeIps` and matches routes by value); every other
  list is compared by position.
- In the `spec` of `kubeovn.io` kinds a field absent on one side equals the zero value (false,
  0, "", empty list or map) on the other: Kube-OVN's controllers write these objects back from
  Go structs, which drop zero values of `omitempty` fields and write those of the others
  (kubeovn/kube-ovn `pkg/apis/kubeovn/v1`); the API server drops null values.
- `NetworkAttachmentDefinition` `spec.config` is compared as the JSON it holds, so key order
  and spacing do not count.

`DEFAULTS` lists, per kind, the fields Kube-OVN fills in when they are not given and the value
it fills in (or `ALLOCATED`: a value it picks, such as an elastic IP's MAC address), each with
the upstream code that decides it. An `extra` field whose live value is its default is not a
difference. `ITEM_DEFAULTS` does the same inside list items (a static route's `policy`).

`Comparison.equal` is true when nothing differs; `Comparison.as_dict()` and
`FieldDifference.as_dict()` are the JSON forms (`rendered`/`live` left out when absent).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from ipaddress import ip_network
from typing import Any, Literal

from fabricgen.errors import FabricgenError
from fabricgen.live_state import json_bounds

MAX_BYTES = 64 * 1024 * 1024  # a cluster's objects of these kinds are far smaller
MAX_DEPTH = 64
Fields = Literal["set", "all"]


class KubeInputError(FabricgenError):
    """The text is not what `kubectl get -o yaml` or `-o json` prints."""


# ------------------------------------------------------------------ identity
# Kinds whose objects live in a namespace, among those fabricgen renders or reads.
NAMESPACED = frozenset({
    ("", "ConfigMap"), ("", "Secret"), ("", "Service"), ("", "Endpoints"), ("", "Pod"),
    ("apps", "Deployment"), ("apps", "DaemonSet"), ("apps", "StatefulSet"), ("batch", "Job"),
    ("k8s.cni.cncf.io", "NetworkAttachmentDefinition"), ("kubeovn.io", "Configuration"),
    ("helm.cattle.io", "HelmChart"),
})


@dataclass(frozen=True, order=True)
class ObjectId:
    """Which object: API group ("" for core), kind, namespace ("" if cluster-scoped), name."""

    group: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.namespace}/{self.name}" if self.namespace else f"{self.kind}: {self.name}"

    def as_dict(self) -> dict[str, str]:
        return {"group": self.group, "kind": self.kind, "namespace": self.namespace, "name": self.name}


def group_of(api_version: str) -> str:
    """`kubeovn.io/v1` -> `kubeovn.io`; `v1` -> `` (the core group)."""
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def identify(obj: Mapping[str, Any]) -> ObjectId:
    meta = obj.get("metadata") or {}
    group, kind = group_of(str(obj.get("apiVersion", ""))), str(obj.get("kind", ""))
    namespace = str(meta.get("namespace") or "")
    if not namespace and (group, kind) in NAMESPACED:
        namespace = "default"
    return ObjectId(group, kind, namespace, str(meta.get("name", "")))


@dataclass(frozen=True)
class LiveObject:
    """One object as the cluster returned it (plain data) and where it was read."""

    id: ObjectId
    body: dict[str, Any]
    origin: str  # "FILE:LINE" (YAML) or "FILE: document N, item M" (JSON)


# ------------------------------------------------------------------ reading
def read_objects(text: str, name: str) -> list[LiveObject]:
    """Every object in kubectl's `-o yaml` or `-o json` output; see the module docstring."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise KubeInputError(f"{name}: larger than {MAX_BYTES // (1024 * 1024)} MiB; split the capture "
                             "into one file per kind")
    stripped = text.lstrip()
    if not stripped:
        raise KubeInputError(f"{name}: empty; expected the output of `kubectl get ... -o yaml` (or -o json)")
    first = stripped.splitlines()[0]
    if first.lower().startswith(_KUBECTL_ERROR):
        raise KubeInputError(f"{name}:1: this is a message of kubectl's ({first[:80]!r}), not objects; capture the "
                             "output of a `kubectl get` that succeeded")
    documents = _json_documents(text, name) if stripped[0] in "{[" else _yaml_documents(text, name)
    objects: list[LiveObject] = []
    for doc, where in documents:
        objects.extend(_objects_of(doc, where, name))
    return objects


def _json_documents(text: str, name: str) -> list[tuple[Any, Callable[[int | None], str]]]:
    decoder = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_int=json_bounds.parse_int,
                               parse_constant=json_bounds.parse_constant)
    docs: list[tuple[Any, Callable[[int | None], str]]] = []
    pos, number = 0, 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return docs
        number += 1
        try:
            value, pos = decoder.raw_decode(text, pos)
        except _DuplicateKey as exc:
            raise KubeInputError(f"{name}: JSON document {number} repeats the key {exc.key!r}; "
                                 "kubectl never does: pass its output unchanged") from None
        except json_bounds.OddNumber as exc:
            raise KubeInputError(f"{name}: JSON document {number} holds {exc}, which no Kubernetes object "
                                 "holds and kubectl never prints") from None
        except json.JSONDecodeError as exc:
            raise KubeInputError(f"{name}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg}); expected the output "
                                 "of `kubectl get ... -o json`") from None
        except RecursionError:
            raise KubeInputError(f"{name}: JSON document {number} nests too deeply for a Kubernetes "
                                 "object") from None
        _check_depth(value, f"{name}: JSON document {number}")
        docs.append((value, _json_where(name, number)))


def _json_where(name: str, number: int) -> Callable[[int | None], str]:
    def where(item: int | None) -> str:
        return f"{name}: document {number}" + ("" if item is None else f", item {item + 1}")
    return where


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _check_depth(value: Any, where: str) -> None:
    if json_bounds.deeper_than(value, MAX_DEPTH):
        raise KubeInputError(f"{where}: nests deeper than {MAX_DEPTH} levels; not a Kubernetes object")


def _yaml_documents(text: str, name: str) -> list[tuple[Any, Callable[[int | None], str]]]:
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    from fabricgen.serialise.roundtrip_yaml import round_trip

    try:
        _refuse_anchors_and_tags(text, name)
        loaded = list(round_trip(preserve_quotes=False, comments=False).load_all(text))
    except DuplicateKeyError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else 1
        raise KubeInputError(f"{name}:{line}: a mapping repeats a key; kubectl never does: pass its output "
                             "unchanged") from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        raise KubeInputError(f"{name}:{line}: not YAML ({problem}); expected the output of "
                             "`kubectl get ... -o yaml`") from None
    except RecursionError:
        raise KubeInputError(f"{name}: nests too deeply for Kubernetes objects") from None
    except YAMLError as exc:
        raise KubeInputError(f"{name}: not YAML ({' '.join(str(exc).split())})") from None
    docs: list[tuple[Any, Callable[[int | None], str]]] = []
    for number, raw in enumerate(loaded, start=1):
        line = _line_of(raw)
        value = _plain(raw, f"{name}:{line}" if line else f"{name}: document {number}")
        docs.append((value, _yaml_where(name, number, raw)))
    return docs


def _refuse_anchors_and_tags(text: str, name: str) -> None:
    """kubectl never writes an anchor, an alias or a tag, on a scalar or a collection: each is
    refused where it stands, read from the event stream (the loaded document keeps no trace of a
    scalar's anchor or a `!!map` tag)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.events import AliasEvent

    for event in YAML(typ="safe", pure=True).parse(text):
        anchor, tag = getattr(event, "anchor", None), getattr(event, "tag", None)
        what = ("YAML anchors and aliases (an alias)" if isinstance(event, AliasEvent)
                else "YAML anchors and aliases (an anchor)" if anchor else f"YAML tag {tag}" if tag else None)
        if what is not None:
            line = event.start_mark.line + 1 if event.start_mark is not None else 1
            raise KubeInputError(f"{name}:{line}: {what} in the document; kubectl never writes anchors, aliases "
                                 "or tags: pass its output unchanged")


def _line_of(node: Any) -> int | None:
    lc = getattr(node, "lc", None)
    return lc.line + 1 if lc is not None and lc.line is not None else None


def _yaml_where(name: str, number: int, raw: Any) -> Callable[[int | None], str]:
    def where(item: int | None) -> str:
        node = raw
        if item is not None and isinstance(raw, dict) and isinstance(raw.get("items"), list):
            node = raw["items"][item]
        line = _line_of(node)
        return f"{name}:{line}" if line else f"{name}: document {number}"
    return where


def _plain(node: Any, where: str) -> Any:
    """ruamel's loaded document as plain data; anchors, aliases and tags are refused."""
    from datetime import date, datetime

    seen: set[int] = set()

    def convert(value: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise KubeInputError(f"{where}: nests deeper than {MAX_DEPTH} levels; not a Kubernetes object")
        tag = getattr(getattr(value, "tag", None), "value", None)
        if isinstance(tag, str) and tag and not tag.startswith("tag:yaml.org,2002:"):
            raise KubeInputError(f"{where}: YAML tag {tag} in the document; kubectl never writes tags")
        if isinstance(value, (dict, list)):
            if id(value) in seen or getattr(getattr(value, "anchor", None), "value", None):
                raise KubeInputError(f"{where}: YAML anchors and aliases in the document; kubectl never "
                                     "writes them: pass its output unchanged")
            seen.add(id(value))
            if isinstance(value, dict):
                return {str(k): convert(v, depth + 1) for k, v in value.items()}
            return [convert(v, depth + 1) for v in value]
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise KubeInputError(f"{where}: {value} (a YAML .nan or .inf), which no Kubernetes object holds "
                                     "and kubectl never prints")
            return float(value)
        if isinstance(value, (datetime, date)):
            return value.isoformat()
        if isinstance(value, str):
            return str(value)
        raise KubeInputError(f"{where}: a {type(value).__name__} value, which Kubernetes objects never hold")

    return convert(node, 1)


_KUBECTL_ERROR = ("error", "error from server", "the server doesn't have a resource type", "no resources found",
                  "unable to connect to the server")


def _objects_of(doc: Any, where: Callable[[int | None], str], name: str) -> list[LiveObject]:
    if doc is None:
        return []
    if isinstance(doc, str):
        first = doc.strip().splitlines()[0] if doc.strip() else ""
        if first.lower().startswith(_KUBECTL_ERROR):
            raise KubeInputError(f"{where(None)}: this is a message of kubectl's ({first[:80]!r}), not objects; "
                                 "capture the output of a `kubectl get` that succeeded")
        if first.split()[:1] == ["NAME"]:  # kubectl's table: its header is safe to show
            raise KubeInputError(f"{where(None)}: text, not objects ({first[:60]!r}); this is the table "
                                 "`kubectl get` prints without `-o yaml`: run it with `-o yaml` or `-o json`")
        # Anything else may be a file given by mistake (a key, a token): none of it is quoted.
        raise KubeInputError(f"{where(None)}: text, not objects (a first line of {len(first)} characters, not "
                             "quoted here); expected the output of `kubectl get ... -o yaml` or `-o json`")
    if not isinstance(doc, dict):
        raise KubeInputError(f"{where(None)}: a {_shape(doc)}, not a Kubernetes object or List; expected the "
                             "output of `kubectl get ... -o yaml` (or -o json)")
    if "kind" not in doc and any(str(k).lower().startswith(_KUBECTL_ERROR) for k in doc):
        first = next(str(k) for k in doc if str(k).lower().startswith(_KUBECTL_ERROR))
        raise KubeInputError(f"{where(None)}: this is a message of kubectl's ({first[:80]!r}), not objects; "
                             "capture the output of a `kubectl get` that succeeded")
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
        items = doc["items"]
        if not isinstance(items, list):
            raise KubeInputError(f"{where(None)}: `items` of this {kind} is a {_shape(items)}, not a list")
        item_api = str(doc.get("apiVersion", "")) if kind != "List" else ""
        item_kind = kind[: -len("List")] if kind != "List" else ""
        out = []
        for i, item in enumerate(items):
            if isinstance(item, dict) and item_kind:
                item = {"apiVersion": item_api, "kind": item_kind, **item} if "kind" not in item else item
            out.append(_one(item, where(i), f"item {i + 1} of the {kind}"))
        return out
    return [_one(doc, where(None), "the document")]


def _one(obj: Any, where: str, what: str) -> LiveObject:
    if not isinstance(obj, dict):
        raise KubeInputError(f"{where}: {what} is a {_shape(obj)}, not a Kubernetes object")
    if obj.get("kind") == "Status" and obj.get("apiVersion") == "v1":
        reason = obj.get("message") or obj.get("reason") or "an error"
        raise KubeInputError(f"{where}: {what} is a Status returned by the API server ({str(reason)[:80]!r}), "
                             "not an object; capture the output of a `kubectl get` that succeeded")
    meta = obj.get("metadata")
    missing = [k for k in ("apiVersion", "kind") if not isinstance(obj.get(k), str) or not obj.get(k)]
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta.get("name"):
        missing.append("metadata.name")
    if missing:
        raise KubeInputError(f"{where}: {what} has no {', '.join(missing)}; not an object as kubectl prints it")
    assert isinstance(meta, dict)
    wrong = [f"metadata.{k}" for k in ("labels", "annotations")
             if k in meta and not (isinstance(meta[k], dict) and all(isinstance(v, str) for v in meta[k].values()))]
    if "namespace" in meta and not isinstance(meta["namespace"], str):
        wrong.append("metadata.namespace")
    if wrong:
        raise KubeInputError(f"{where}: {what} has {', '.join(wrong)} of another shape than the API server keeps "
                             "(a map of strings, a string); not an object as kubectl prints it")
    return LiveObject(identify(obj), obj, where)


def _shape(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def merge_objects(objects: Iterable[LiveObject]) -> dict[ObjectId, LiveObject]:
    """One cluster's objects by identity, in the order first read. The same object twice is kept
    once if both normalise alike; two different copies are refused."""
    found: dict[ObjectId, LiveObject] = {}
    for obj in objects:
        seen = found.get(obj.id)
        if seen is None:
            found[obj.id] = obj
        elif normalise(seen.body) != normalise(obj.body):
            raise KubeInputError(f"{obj.origin}: {obj.id} is also at {seen.origin}, with other content; "
                                 "capture each object once, from one cluster")
    return found


# ------------------------------------------------------------------ normalising
_KEPT_METADATA = ("name", "namespace", "labels", "annotations")
_DROPPED_PREFIXES = ("kubectl.kubernetes.io/", "fabricgen.io/", "argocd.argoproj.io/",
                     "kustomize.toolkit.fluxcd.io/", "ovn.kubernetes.io/")
_DROPPED_LABELS = frozenset({"app.kubernetes.io/instance", "network.harvesterhci.io/ready"})
MANAGED_BY = ("app.kubernetes.io/managed-by", "fabricgen")


def _bookkeeping(key: str, value: Any, *, label: bool) -> bool:
    if key.startswith(_DROPPED_PREFIXES):
        return True
    return label and (key in _DROPPED_LABELS or (key, value) == MANAGED_BY)


def normalise(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `obj` without status, server metadata and bookkeeping (see the module docstring)."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if key == "status":
            continue
        if key == "metadata" and isinstance(value, Mapping):
            meta: dict[str, Any] = {}
            for mkey in _KEPT_METADATA:
                if mkey not in value:
                    continue
                mvalue = value[mkey]
                if mkey in ("labels", "annotations") and isinstance(mvalue, Mapping):
                    kept = {str(k): v for k, v in mvalue.items()
                            if not _bookkeeping(str(k), v, label=mkey == "labels")}
                    if kept:
                        meta[mkey] = kept
                else:
                    meta[mkey] = mvalue
            out[key] = meta
        else:
            out[key] = _copy(value)
    return out


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(v) for v in value]
    return value


def is_partial(rendered: Mapping[str, Any]) -> bool:
    """fabricgen renders the object partial: server-side merged, its other fields another controller's."""
    notes = (rendered.get("metadata") or {}).get("annotations") or {}
    return notes.get("kustomize.toolkit.fluxcd.io/ssa") == "Merge"


# ------------------------------------------------------------------ defaults
class _Allocated:
    """A value Kube-OVN picks when none is given (an elastic IP's MAC address)."""

    def __repr__(self) -> str:
        return "ALLOCATED"


ALLOCATED: Any = _Allocated()
Default = Any  # a value, ALLOCATED, or a function of the normalised live object giving the value


def _subnet_exclude_ips(obj: Mapping[str, Any]) -> Any:
    gateway = str((obj.get("spec") or {}).get("gateway", ""))
    return sorted(g for g in gateway.split(",") if g)


def _subnet_protocol(obj: Mapping[str, Any]) -> Any:
    cidrs = [c for c in str((obj.get("spec") or {}).get("cidrBlock", "")).split(",") if c]
    try:
        versions = {ip_network(c, strict=False).version for c in cidrs}
    except ValueError:
        return None
    return {frozenset({4}): "IPv4", frozenset({6}): "IPv6", frozenset({4, 6}): "Dual"}.get(frozenset(versions))


def _subnet_gateway_type(obj: Mapping[str, Any]) -> Any:
    """`distributed`: formatSubnet writes it in the default VPC; outside it Kube-OVN reads no
    gatewayType at all (a custom VPC's subnets go through the VPC's own router; only
    reconcileOvnDefaultVpcRoute, for ovn-cluster, reads it), so a `distributed` written there by a
    user or a UI is the same as none."""
    return "distributed"


_BGP_SPEAKER_ZERO = {"enabled": False, "asn": 0, "remoteAsn": 0, "holdTime": "0s", "routerId": "",
                     "password": "", "enableGracefulRestart": False}

# (group, kind) -> {path: default}. Only consulted for live fields the rendered object does not set.
DEFAULTS: dict[tuple[str, str], dict[tuple[str, ...], Default]] = {
    # kubeovn/kube-ovn v1.16.2 pkg/controller/subnet.go formatSubnet and formatAddress: the
    # provider `ovn`, the VPC `ovn-cluster`, `gatewayType: distributed` in it, `enableLb` from
    # kube-ovn-controller's --enable-lb (default true; the kubeovn-operator's enableLB, default
    # true), `excludeIps` the gateway, `protocol` from the CIDR; pkg/apis/kubeovn/v1/subnet.go
    # writes `default`, `gatewayNode` and `private` without omitempty.
    ("kubeovn.io", "Subnet"): {
        ("spec", "provider"): "ovn",
        ("spec", "vpc"): "ovn-cluster",
        ("spec", "gatewayType"): _subnet_gateway_type,
        ("spec", "enableLb"): True,
        ("spec", "excludeIps"): _subnet_exclude_ips,
        ("spec", "protocol"): _subnet_protocol,
        ("spec", "default"): False,
        ("spec", "gatewayNode"): "",
        ("spec", "private"): False,
    },
    # pkg/controller/vpc_nat_gw_eip.go handleAddIptablesEip: the address, its MAC and the
    # IPv6 address are written into the spec when the EIP is allocated.
    ("kubeovn.io", "IptablesEIP"): {
        ("spec", "v4ip"): ALLOCATED,
        ("spec", "macAddress"): ALLOCATED,
        ("spec", "v6ip"): "",
        ("spec", "qosPolicy"): "",
    },
    # pkg/apis/kubeovn/v1/vpc-nat-gateway.go: VpcNatGatewaySpec and VpcBgpSpeaker fields
    # without omitempty (a zero Duration is written "0s").
    ("kubeovn.io", "VpcNatGateway"): {
        ("spec", "bgpSpeaker"): _BGP_SPEAKER_ZERO,
        ("spec", "qosPolicy"): "",
        ("spec", "noDefaultEIP"): False,
    },
    # the kubeovn-operator's CRD fills in its defaults (harvester/kubeovn-operator
    # api/v1/configuration_types.go); the Configuration is only compared partially.
}

# (group, kind, list path) -> {item field: default}: pkg/controller/vpc.go formatVpc gives a
# static route without a policy `policyDst`, and clears `nextHopIP` of a policy route that
# does not reroute.
ITEM_DEFAULTS: dict[tuple[str, str, tuple[str, ...]], dict[str, Any]] = {
    ("kubeovn.io", "Vpc", ("spec", "staticRoutes")): {"policy": "policyDst"},
}

# List items that are matched by key when they differ, so that a difference names the field:
# a route to the same prefix through another next hop is `changed` at `nextHopIP`.
KEYED_LISTS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("spec", "staticRoutes"): ("cidr", "policy", "routeTable"),
    ("spec", "policyRoutes"): ("priority", "match"),
    ("spec", "vpcPeerings"): ("remoteVpc",),
}


# ------------------------------------------------------------------ comparing
class _Missing:
    def __repr__(self) -> str:
        return "(absent)"


MISSING: Any = _Missing()
PathPart = str | int | dict[str, Any]


@dataclass(frozen=True)
class FieldDifference:
    """One field (or list item) where the rendered and the live object differ."""

    at: tuple[PathPart, ...]  # keys, list positions, or {field: value} naming a list item
    rendered: Any  # MISSING when only the live object has it
    live: Any  # MISSING when the live object lacks it

    @property
    def kind(self) -> str:
        if self.rendered is MISSING:
            return "extra"
        if self.live is MISSING:
            return "missing"
        return "changed"

    @property
    def path(self) -> str:
        return format_path(self.at)

    def describe(self) -> str:
        """One line: `spec.natOutgoing: false in the fabric, true live`."""
        if self.kind == "extra":
            return f"{self.path}: {_shown(self.live)} live, not set by the fabric"
        if self.kind == "missing":
            return f"{self.path}: {_shown(self.rendered)} in the fabric, absent live"
        return f"{self.path}: {_shown(self.rendered)} in the fabric, {_shown(self.live)} live"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "at": list(self.at), "kind": self.kind}
        if self.rendered is not MISSING:
            out["rendered"] = self.rendered
        if self.live is not MISSING:
            out["live"] = self.live
        return out


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=False, separators=(", ", ": "))
    return text if len(text) <= 200 else text[:197] + "..."


def format_path(at: Sequence[PathPart]) -> str:
    """`spec.staticRoutes[cidr=172.30.20.0/24].nextHopIP`, `metadata.labels['a/b']`, `spec.excludeIps[3]`."""
    out = ""
    for part in at:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, dict):
            out += "[" + ",".join(f"{k}={_item_key(v)}" for k, v in part.items()) + "]"
        elif part.replace("_", "").replace("-", "").isalnum() and not part[:1].isdigit():
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out


def _item_key(value: Any) -> str:
    return value if isinstance(value, str) and value and "," not in value and "]" not in value else json.dumps(value)


@dataclass(frozen=True)
class Comparison:
    """The field-level differences between a rendered object and its live counterpart."""

    id: ObjectId
    differences: tuple[FieldDifference, ...]
    fields: Fields  # what was compared: "set" (fabricgen's fields) or "all"

    @property
    def equal(self) -> bool:
        return not self.differences

    def extra_items(self, *path: str) -> list[Any]:
        """The live items of the list at `path` that the rendered list lacks (e.g. hand-added routes)."""
        n = len(path)
        return [d.live for d in self.differences
                if d.kind == "extra" and len(d.at) == n + 1 and tuple(d.at[:n]) == path
                and not isinstance(d.at[n], str)]

    def as_dict(self) -> dict[str, Any]:
        return {"object": str(self.id), "id": self.id.as_dict(), "fields": self.fields, "equal": self.equal,
                "differences": [d.as_dict() for d in self.differences]}


@dataclass
class _Context:
    group: str
    kind: str
    live: Mapping[str, Any]  # the normalised live object (for conditional defaults)
    fields: Fields
    out: list[FieldDifference] = field(default_factory=list)

    def kubeovn_spec(self, at: Sequence[PathPart]) -> bool:
        return self.group == "kubeovn.io" and bool(at) and at[0] == "spec"


def compare(rendered: Mapping[str, Any], live: Mapping[str, Any], *, fields: Fields = "set") -> Comparison:
    """Compare a rendered object with the live one (see the module docstring)."""
    ident = identify(rendered)
    if identify(live) != ident:
        raise ValueError(f"compare: {identify(live)} is not {ident}")
    scope: Fields = "set" if is_partial(rendered) else fields
    r, lv = normalise(rendered), normalise(live)
    ctx = _Context(ident.group, ident.kind, lv, scope)
    for key in _ordered_keys(r, lv, scope):
        if key in ("apiVersion", "kind"):
            continue
        if key == "metadata":
            for part in ("labels", "annotations"):
                _compare_value(_get(r["metadata"], part, {}), _get(lv.get("metadata", {}), part, {}),
                               ("metadata", part), ctx, scope)
            continue
        _compare_value(r.get(key, MISSING), lv.get(key, MISSING), (key,), ctx, scope)
    return Comparison(ident, tuple(ctx.out), scope)


def _get(mapping: Mapping[str, Any], key: str, default: Any) -> Any:
    return mapping.get(key, default) if isinstance(mapping, Mapping) else default


def _ordered_keys(r: Mapping[str, Any], lv: Mapping[str, Any], scope: Fields) -> list[str]:
    keys = list(r)
    if scope == "all":
        keys += [k for k in lv if k not in r and k != "status"]
    if "metadata" not in keys:
        keys.append("metadata")
    return keys


def _is_zero(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return not value
    return value in ("", 0) or (isinstance(value, list | dict) and not value)


def _default_of(ctx: _Context, at: tuple[PathPart, ...]) -> Any:
    if not all(isinstance(p, str) for p in at):
        return MISSING  # inside a list item: see ITEM_DEFAULTS
    default = DEFAULTS.get((ctx.group, ctx.kind), {}).get(tuple(str(p) for p in at), MISSING)
    if callable(default) and not isinstance(default, _Allocated):
        return default(ctx.live)
    return default


def _ignorable_extra(value: Any, at: tuple[PathPart, ...], ctx: _Context) -> bool:
    """A live field the rendered object does not set, that only says what Kube-OVN defaults to."""
    if ctx.kubeovn_spec(at) and _is_zero(value):
        return True
    default = _default_of(ctx, at)
    return default is ALLOCATED or (default is not MISSING and default == value)


def _compare_value(r: Any, lv: Any, at: tuple[PathPart, ...], ctx: _Context, scope: Fields) -> None:
    if r is MISSING:
        if lv is MISSING or scope == "set" or _ignorable_extra(lv, at, ctx):
            return
        if isinstance(lv, Mapping):
            for key, value in lv.items():
                _compare_value(MISSING, value, (*at, key), ctx, scope)
            return
        ctx.out.append(FieldDifference(at, MISSING, lv))
        return
    if lv is MISSING:
        if ctx.kubeovn_spec(at) and _is_zero(r):
            return
        if isinstance(r, Mapping) and r:  # name each field the live object lacks
            for key, value in r.items():
                _compare_value(value, MISSING, (*at, key), ctx, scope)
            return
        if isinstance(r, list) and ctx.kubeovn_spec(at):  # an empty list is not written back: name each item
            _compare_list(r, [], at, ctx)
            return
        ctx.out.append(FieldDifference(at, r, MISSING))
        return
    if isinstance(r, Mapping) and isinstance(lv, Mapping):
        for key in r:
            _compare_value(r[key], lv.get(key, MISSING), (*at, key), ctx, scope)
        if scope == "all":
            for key in lv:
                if key not in r:
                    _compare_value(MISSING, lv[key], (*at, key), ctx, scope)
        return
    if isinstance(r, list) and isinstance(lv, list):
        _compare_list(r, lv, at, ctx)
        return
    if at == ("spec", "config") and ctx.kind == "NetworkAttachmentDefinition":
        rj, lj = _json_or_none(r), _json_or_none(lv)
        if rj is not None and lj is not None:
            if rj != lj:
                _compare_value(rj, lj, at, _Context(ctx.group, ctx.kind, ctx.live, "all", ctx.out), "all")
            return
    if not _same_scalar(r, lv):
        ctx.out.append(FieldDifference(at, r, lv))


def _same_scalar(r: Any, lv: Any) -> bool:
    return type(r) is type(lv) and r == lv if isinstance(r, bool) or isinstance(lv, bool) else r == lv


def _json_or_none(text: Any) -> Any:
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _compare_list(r: list[Any], lv: list[Any], at: tuple[PathPart, ...], ctx: _Context) -> None:
    """A list fabricgen sets is compared whole, inside its items every field."""
    item_ctx = _Context(ctx.group, ctx.kind, ctx.live, "all", ctx.out)
    if not ctx.kubeovn_spec(at):
        for i in range(max(len(r), len(lv))):
            _compare_value(r[i] if i < len(r) else MISSING, lv[i] if i < len(lv) else MISSING,
                           (*at, i), item_ctx, "all")
        return
    key_path = tuple(p for p in at if isinstance(p, str))
    defaults = ITEM_DEFAULTS.get((ctx.group, ctx.kind, key_path), {})
    unmatched = [(item, _canonical(item, defaults)) for item in lv]
    left: list[tuple[Any, Any]] = []
    for item in r:
        canon = _canonical(item, defaults)
        hit = next((i for i, (_x, c) in enumerate(unmatched) if c == canon), None)
        if hit is None:
            left.append((item, canon))
        else:
            unmatched.pop(hit)
    keys = KEYED_LISTS.get(key_path, ())
    for item, canon in left:
        label = _item_label(canon, keys, defaults)
        pair = None
        if keys and isinstance(canon, dict):
            pair = next((i for i, (_x, c) in enumerate(unmatched)
                         if isinstance(c, dict) and all(c.get(k) == canon.get(k) for k in keys)), None)
        if pair is None:
            ctx.out.append(FieldDifference((*at, label), item, MISSING))
            continue
        _live_item, live_canon = unmatched.pop(pair)
        _compare_value(canon, live_canon, (*at, label), item_ctx, "all")
    for item, canon in unmatched:
        ctx.out.append(FieldDifference((*at, _item_label(canon, keys, defaults)), MISSING, item))


def _canonical(item: Any, defaults: Mapping[str, Any]) -> Any:
    """An item without zero-valued fields (omitempty), its defaults filled in."""
    if isinstance(item, Mapping):
        out = {k: _canonical(v, {}) for k, v in item.items() if not _is_zero(v)}
        for key, value in defaults.items():
            if key not in out:
                out[key] = value
        return out
    if isinstance(item, list):
        return [_canonical(v, {}) for v in item]
    return item


def _item_label(canon: Any, keys: Sequence[str], defaults: Mapping[str, Any]) -> PathPart:
    """How a path names a list item: its key fields that have a value other than the default,
    or the item itself."""
    if isinstance(canon, dict):
        named = {k: canon[k] for k in keys if k in canon and not _is_zero(canon[k]) and canon[k] != defaults.get(k)}
        if not named:
            named = {k: v for k, v in list(canon.items())[:2]}
        return named
    return {"": canon} if not isinstance(canon, (dict, list)) else {"": json.dumps(canon)}


__all__ = [
    "ALLOCATED", "DEFAULTS", "ITEM_DEFAULTS", "KEYED_LISTS", "MAX_BYTES", "MISSING", "NAMESPACED",
    "Comparison", "FieldDifference", "KubeInputError", "LiveObject", "ObjectId", "compare", "format_path",
    "group_of", "identify", "is_partial", "merge_objects", "normalise", "read_objects",
]
