"""Per zone: routes to the other zones' backbones on the default VPC `ovn-cluster`.

For each remote zone with a known transit address: a static route to its backbone
through that address, and a priority-31000 `allow` policy so that Kube-OVN's
priority-29000 reroute does not pull the traffic onto the join network. Every
StaticRoute field is written out (Kube-OVN re-adds the empty ones after its own
updates, which would otherwise show as drift).

Two forms of the same routes:
- `default-vpc-routes.yaml`: the partial Vpc, server-side merged, never pruned;
- `ic-routes-<zone>.json`: the complete merge patch for
  `kubectl patch vpc ovn-cluster --type=merge --patch-file=ic-routes-<zone>.json`.
  A merge patch replaces whole lists, so the file always holds every route. JSON
  has no comments; its provenance is an annotation inside the patch.
"""

from __future__ import annotations

import functools
import json
from ipaddress import IPv4Address, IPv4Network
from json.encoder import encode_basestring
from pathlib import PurePosixPath
from typing import Any

from fabricgen.plan.zones import DEFAULT_VPC, ROUTE_ALLOW_PRIORITY, Plan, ZonePlan
from fabricgen.render import metadata as md
from fabricgen.render.artifacts import Artifact, KubeObject, Manifest, TextFile
from fabricgen.render.header import regenerate_command


def static_route(cidr: str, next_hop: str, policy: str = "policyDst") -> dict[str, str]:
    return {
        "cidr": cidr,
        "nextHopIP": next_hop,
        "policy": policy,
        "routeTable": "",
        "ecmpMode": "",
        "bfdId": "",
    }


def policy_route(priority: int, match: str, action: str, next_hop: str | None = None) -> dict[str, Any]:
    route: dict[str, Any] = {"action": action, "match": match, "priority": priority}
    if next_hop is not None:
        route["nextHopIP"] = next_hop
    return route


@functools.lru_cache(maxsize=4096)
def _text(value: IPv4Address | IPv4Network) -> str:
    """The text of an address; every remote backbone and transit address recurs in every zone."""
    return str(value)


def route_spec(zone: ZonePlan) -> dict[str, list[dict[str, Any]]]:
    statics = [static_route(_text(r.cidr), _text(r.next_hop)) for r in zone.routes]
    statics += [
        static_route(str(r.cidr), str(r.next_hop_ip), r.policy) for r in zone.zone.default_vpc.static_routes
    ]
    policies = [policy_route(ROUTE_ALLOW_PRIORITY, f"ip4.dst == {_text(r.cidr)}", "allow") for r in zone.routes]
    policies += [
        policy_route(p.priority, p.match, p.action,
                     str(p.next_hop_ip) if p.next_hop_ip is not None else None)
        for p in zone.zone.default_vpc.policy_routes
    ]
    return {"staticRoutes": statics, "policyRoutes": policies}


def vpc(plan: Plan, zone: ZonePlan, spec: dict[str, list[dict[str, Any]]] | None = None) -> KubeObject:
    return {
        "apiVersion": "kubeovn.io/v1",
        "kind": "Vpc",
        "metadata": md.metadata(DEFAULT_VPC, None, plan.source_name, md.PARTIAL),
        "spec": route_spec(zone) if spec is None else spec,
    }


_SCALARS = (str, int, bool, type(None))
_flat_encoders: dict[int, json.JSONEncoder] = {}


def _flat_dict(value: dict[str, Any], level: int) -> str:
    """A dict of scalars in one call of the C encoder, the separators doing the indenting."""
    inner = _flat_dict_encoder(level).encode(value)[1:-1]
    return "{\n" + "  " * (level + 1) + inner + "\n" + "  " * level + "}"


def _flat_dicts(value: list[dict[str, Any]], level: int) -> str:
    """A list of non-empty dicts of scalars (routes) in one call of the C encoder.

    The encoder separates the dicts' items and the dicts themselves alike; a line break
    never occurs inside encoded JSON, so `},<break>{` is always a boundary between two
    dicts, and the boundaries and both ends are then laid out as `indent=2` does.
    """
    inner = "\n" + "  " * (level + 2)
    outer = "\n" + "  " * (level + 1)
    text = _flat_dict_encoder(level + 1).encode(value)
    text = text[2:-2].replace("}," + inner + "{", outer + "}," + outer + "{" + inner)
    return "[" + outer + "{" + inner + text + outer + "}\n" + "  " * level + "]"


def _flat_dict_encoder(level: int) -> json.JSONEncoder:
    encoder = _flat_encoders.get(level)
    if encoder is None:
        pad = "\n" + "  " * (level + 1)
        encoder = _flat_encoders[level] = json.JSONEncoder(ensure_ascii=False, separators=("," + pad, ": "))
    return encoder


def json_text(value: Any, level: int = 0) -> str:
    """`json.dumps(value, indent=2, ensure_ascii=False)` for dicts, lists and scalars.

    With `indent` the standard library falls back to its pure-Python encoder, which
    dominated a large fabric's render time; routes are dicts of scalars, which the C
    encoder writes in the same layout when the separators carry the indentation.
    """
    if isinstance(value, dict):
        if not value:
            return "{}"
        if all(isinstance(v, _SCALARS) for v in value.values()):
            return _flat_dict(value, level)
        pad = "\n" + "  " * (level + 1)
        items = (f"{encode_basestring(k)}: {json_text(v, level + 1)}" for k, v in value.items())
        return "{" + pad + ("," + pad).join(items) + "\n" + "  " * level + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if all(type(v) is dict and v and all(isinstance(x, _SCALARS) for x in v.values()) for v in value):
            return _flat_dicts(value, level)
        pad = "\n" + "  " * (level + 1)
        return "[" + pad + ("," + pad).join(json_text(v, level + 1) for v in value) + "\n" + "  " * level + "]"
    return json.dumps(value, ensure_ascii=False)


def merge_patch(plan: Plan, zone: ZonePlan, spec: dict[str, list[dict[str, Any]]] | None = None) -> str:
    patch = {
        "metadata": {
            "annotations": {
                **md.source_annotation(plan.source_name),
                "fabricgen.io/regenerate": regenerate_command(plan),
            }
        },
        "spec": route_spec(zone) if spec is None else spec,
    }
    return json_text(patch) + "\n"


def render(plan: Plan) -> list[Artifact]:
    out: list[Artifact] = []
    for zone in plan.zones:
        spec = route_spec(zone)  # both forms hold the same routes
        out.append(Manifest(zone.name, "default-vpc-routes.yaml", (vpc(plan, zone, spec),)))
        out.append(TextFile(PurePosixPath(zone.name, f"ic-routes-{zone.name}.json"), merge_patch(plan, zone, spec)))
    return out
