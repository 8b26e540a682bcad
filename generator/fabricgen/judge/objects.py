"""A zone's Kubernetes objects against the ones fabricgen renders for it.

Each rendered object must exist in the cluster and equal the rendered one on the fields
fabricgen sets (`judge.kube_compare.compare`, which normalises what the API server,
admission and Kube-OVN add). The Vpc `ovn-cluster` is partial (fabricgen's routes only); its
route lists are atomic for server-side apply (no list type in the CRD), so a route someone
added to them is listed on its own line: the next sync removes it.

A Subnet's `acls`, `private` and `allowSubnets` decide who reaches its pods and VMs: they are the
policy's, so they are compared even where fabricgen renders none of them (a live `drop ip4` on a
backbone, `private: true` on a tenant subnet, an ACL someone added): each is named as a change to
the policy (`object.policy`), which the next sync does not undo (server-side apply leaves a field
it never set).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fabricgen.judge import kube_compare
from fabricgen.judge.checks import DRIFT, OK, UNREACHABLE, Check
from fabricgen.observe import kube_objects
from fabricgen.observe.live_fabric import AzLive
from fabricgen.plan.zones import DEFAULT_VPC

SHOWN = 3  # field differences shown per object


def check(live: AzLive, rendered: Sequence[dict[str, Any]], sync: str) -> list[Check]:
    subject = live.source.subject
    if live.objects is None:
        why = live.objects_error or "not read"
        return [Check(subject, "objects", UNREACHABLE, f"its Kubernetes objects could not be read: {why}",
                      "check the kubeconfig context (destination.kubeContext) and access to the cluster")]
    out: list[Check] = []
    same = 0
    for obj in rendered:
        oid = kube_objects.identify(obj)
        found = live.objects.get(oid)
        if found is None:
            out.append(Check(subject, "object.missing", DRIFT, f"{oid} is not in the cluster", sync))
            continue
        comparison = kube_compare.compare(obj, found.body)
        widened = _policy_fields(obj, found.body) if oid.kind == "Subnet" else []
        routes = []
        if oid.kind == "Vpc" and oid.name == DEFAULT_VPC:
            routes = comparison.extra_items("spec", "staticRoutes") + comparison.extra_items("spec", "policyRoutes")
        others = [d for d in comparison.differences
                  if not (routes and d.kind == "extra" and d.at[:2] in (("spec", "staticRoutes"),
                                                                        ("spec", "policyRoutes")))]
        if routes:
            shown = "; ".join(_route(r) for r in routes)
            out.append(Check(subject, "object.vpc-routes", DRIFT,
                             f"{oid} holds route(s) fabricgen did not render: {shown}; the route lists are "
                             "replaced whole, so the next sync removes them",
                             "add them to zones[].defaultVpc in the fabric (or remove them)"))
        if others:
            detail = "; ".join(d.describe() for d in others[:SHOWN])
            more = f" (and {len(others) - SHOWN} more)" if len(others) > SHOWN else ""
            out.append(Check(subject, "object.changed", DRIFT, f"{oid} differs: {detail}{more}", sync))
        elif not routes and not widened:
            same += 1
        if widened:
            out.append(Check(subject, "object.policy", DRIFT,
                             f"{oid} has {'; '.join(widened)}, which the fabric does not render: it changes who "
                             "reaches the subnet, beside the fabric's policy, and a sync leaves it",
                             "declare it in the fabric (policy, or the subnet's acls) or remove it from the "
                             "Subnet (kubectl edit subnet)"))
    if same == len(rendered) and rendered:
        out.append(Check(subject, "objects", OK, f"all {same} rendered object(s) are in the cluster as rendered"))
    return out


POLICY_FIELDS = {"acls": [], "private": False, "allowSubnets": []}  # a Subnet's fields and their zero value


def _policy_fields(rendered: dict[str, Any], live: dict[str, Any]) -> list[str]:
    """The policy fields of a live Subnet that the rendered one does not set, where the live value
    is not the zero value."""
    spec, live_spec = rendered.get("spec") or {}, live.get("spec") or {}
    return [f"spec.{name} = {json.dumps(live_spec[name], sort_keys=True)}" for name, zero in POLICY_FIELDS.items()
            if name not in spec and live_spec.get(name, zero) not in (zero, None)]


def _route(item: Any) -> str:
    if isinstance(item, dict) and "cidr" in item:
        return f"{item.get('cidr')} via {item.get('nextHopIP')}"
    if isinstance(item, dict) and "match" in item:
        return f"{item.get('priority')} `{item.get('match')}` {item.get('action')}"
    return str(item)
