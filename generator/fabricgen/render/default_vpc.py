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

import json
from pathlib import PurePosixPath
from typing import Any

from fabricgen.plan import ALLOW_PRIORITY, DEFAULT_VPC, Plan, ZonePlan
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


def route_spec(zone: ZonePlan) -> dict[str, list[dict[str, Any]]]:
    statics = [static_route(str(r.cidr), str(r.next_hop)) for r in zone.routes]
    statics += [
        static_route(str(r.cidr), str(r.next_hop_ip), r.policy) for r in zone.zone.default_vpc.static_routes
    ]
    policies = [policy_route(ALLOW_PRIORITY, f"ip4.dst == {r.cidr}", "allow") for r in zone.routes]
    policies += [
        policy_route(p.priority, p.match, p.action,
                     str(p.next_hop_ip) if p.next_hop_ip is not None else None)
        for p in zone.zone.default_vpc.policy_routes
    ]
    return {"staticRoutes": statics, "policyRoutes": policies}


def vpc(plan: Plan, zone: ZonePlan) -> KubeObject:
    return {
        "apiVersion": "kubeovn.io/v1",
        "kind": "Vpc",
        "metadata": md.metadata(DEFAULT_VPC, None, plan.source_name, md.WAVE_ROUTES, md.PARTIAL),
        "spec": route_spec(zone),
    }


def merge_patch(plan: Plan, zone: ZonePlan) -> str:
    patch = {
        "metadata": {
            "annotations": {
                **md.source_annotation(plan.source_name),
                "fabricgen.io/regenerate": regenerate_command(plan),
            }
        },
        "spec": route_spec(zone),
    }
    return json.dumps(patch, indent=2, ensure_ascii=False) + "\n"


def render(plan: Plan) -> list[Artifact]:
    out: list[Artifact] = []
    for zone in plan.zones:
        out.append(Manifest(zone.name, "default-vpc-routes.yaml", (vpc(plan, zone),), md.WAVE_ROUTES))
        out.append(TextFile(PurePosixPath(zone.name, f"ic-routes-{zone.name}.json"), merge_patch(plan, zone)))
    return out
