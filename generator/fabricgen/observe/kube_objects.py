"""Live Kubernetes objects: what `kubectl get -o yaml|json` prints, read and normalised; the
comparison with the objects fabricgen renders is `fabricgen.judge.kube_compare`.

This module and `fabricgen.judge.kube_compare` are a contract, shared by `fabricgen import` (the
round-trip proof) and `fabricgen status` (the objects check). Everything named in `__all__`
keeps its meaning; new fields and functions may be added, existing ones are not changed.

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
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fabricgen.errors import FabricgenError
from fabricgen.observe import json_bounds

MAX_BYTES = 64 * 1024 * 1024  # a cluster's objects of these kinds are far smaller
MAX_DEPTH = 64


class KubeInputError(FabricgenError):
    """The text is not what `kubectl get -o yaml` or `-o json` prints."""


# ------------------------------------------------------------------ identity
# Kinds whose objects live in a namespace, among those fabricgen renders or reads.
NAMESPACED = frozenset({
    ("", "ConfigMap"), ("", "Secret"), ("", "Service"), ("", "Endpoints"), ("", "Pod"),
    ("apps", "Deployment"), ("apps", "DaemonSet"), ("apps", "StatefulSet"), ("batch", "Job"),
    ("k8s.cni.cncf.io", "NetworkAttachmentDefinition"), ("kubeovn.io", "Configuration"),
    ("helm.cattle.io", "HelmChart"), ("", "ServiceAccount"), ("networking.k8s.io", "NetworkPolicy"),
    ("rbac.authorization.k8s.io", "Role"), ("rbac.authorization.k8s.io", "RoleBinding"),
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
    from ruamel.yaml.events import AliasEvent, ScalarEvent

    for event in YAML(typ="safe", pure=True).parse(text):
        anchor, tag = getattr(event, "anchor", None), getattr(event, "tag", None)
        what = ("YAML anchors and aliases (an alias)" if isinstance(event, AliasEvent)
                else "YAML anchors and aliases (an anchor)" if anchor else f"YAML tag {tag}" if tag else None)
        line = event.start_mark.line + 1 if event.start_mark is not None else 1
        if what is not None:
            raise KubeInputError(f"{name}:{line}: {what} in the document; kubectl never writes anchors, aliases "
                                 "or tags: pass its output unchanged")
        if isinstance(event, ScalarEvent) and not event.style and _LONG_NUMBER.fullmatch(event.value):
            # a plain scalar YAML reads as an integer: past an int64 no object holds it, and Python
            # refuses to make one of more than 4,300 digits
            raise KubeInputError(f"{name}:{line}: an integer of {len(event.value.lstrip('+-'))} digits, which no "
                                 "Kubernetes object holds (an int64 has 19); pass kubectl's output unchanged")


_LONG_NUMBER = re.compile(rf"[-+]?(0[xo])?[0-9_]{{{json_bounds.MAX_INT_DIGITS + 1},}}")


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


__all__ = [
    "MAX_BYTES", "NAMESPACED", "KubeInputError", "LiveObject", "ObjectId", "group_of", "identify",
    "merge_objects", "normalise", "read_objects",
]
