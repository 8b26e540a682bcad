"""One object fabricgen renders against its live counterpart (`fabricgen.observe.kube_objects`
reads and normalises both), field by field.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from ipaddress import ip_network
from typing import Any, Literal

from fabricgen.observe.kube_objects import ObjectId, identify, normalise

Fields = Literal["set", "all"]


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
    "ALLOCATED", "DEFAULTS", "ITEM_DEFAULTS", "KEYED_LISTS", "MISSING", "Comparison", "FieldDifference",
    "compare", "format_path", "is_partial",
]
