"""The routes and policies of each AZ's router against the fabric.

Whose a row on the router is, from its `external_ids` (kubeovn/kube-ovn v1.16):

- `vendor=kube-ovn` and nothing else: applied by Kube-OVN from the Vpc's spec
  (`pkg/controller/vpc.go` `handleAddOrUpdateVpc`, which manages only static routes with that
  marker); for `ovn-cluster` that is what fabricgen renders, plus Kube-OVN's default route
  (`0.0.0.0/0` and `::/0` through the join subnet's gateway, in every route table);
- a policy with `vendor` and other keys (`subnet`, `node`, `origin`, ...): Kube-OVN's own
  (31000 subnet allows, 30000 node policies, 29000 gateway reroutes, 29500 IC allows);
- `ic-learned-route`: learned through ovn-ic (`auto-route`);
- the `fabricgen-owner` marker of a deployment's `configure-ovn-ic.sh`: that script's routes;
- nothing of these: added by hand (`ovn-nbctl lr-route-add`), which no controller removes.

A zone's routes are compared with its rendered Vpc `ovn-cluster`; a deployment's with the
routes its script adds. A next hop must also still be the transit address its AZ holds in the
IC database: when an IC database is rebuilt, a zone's transit address can move, and a route
through the old address silently drops what it carries.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

from fabricgen.judge.checks import DRIFT, OK, UNREACHABLE, Check
from fabricgen.judge.expected import AzIntent, Policy, StaticRoute, prefix
from fabricgen.observe.live_fabric import AzLive
from fabricgen.observe.ovsdb_rows import Row, as_list, as_map

VENDOR = "kube-ovn"
DEFAULT_ROUTES = {"0.0.0.0/0", "::/0"}


def _router(live: AzLive, name: str) -> Row | None:
    return next((r for r in live.nb.get("Logical_Router") if r.get("name") == name), None)


def _on(live: AzLive, table: str, uuids: Sequence[str]) -> list[Row]:
    wanted = set(uuids)
    return [r for r in live.nb.get(table) if r.get("_uuid") in wanted]


def _policy_of(row: Row) -> str:
    value = row.get("policy")
    return value if isinstance(value, str) and value else "dst-ip"


def _route(row: Row) -> StaticRoute:
    return StaticRoute(prefix(str(row.get("ip_prefix", ""))), str(row.get("nexthop", "")), _policy_of(row),
                       str(row.get("route_table", "")))


def _shown(route: StaticRoute) -> str:
    table = f" (route table {route.table})" if route.table else ""
    policy = " (policy src-ip)" if route.policy == "src-ip" else ""
    return f"{route.prefix} via {route.nexthop}{policy}{table}"


def check(intent: AzIntent, live: AzLive, addresses: Mapping[str, str], fabric: str, sync: str) -> list[Check]:
    """Routes and policies; `addresses`: each AZ's live transit address (the IC database's), for
    the next hops; `sync`: how the AZ's rendered output is applied again (a command)."""
    subject = intent.subject
    if live.nb.error is not None:
        return [Check(subject, "routes", UNREACHABLE, f"its northbound database could not be read: {live.nb.error}")]
    router = _router(live, intent.router)
    if router is None:
        return [Check(subject, "routes", DRIFT, f"no router {intent.router} in its northbound database",
                      sync)]
    statics = _on(live, "Logical_Router_Static_Route", as_list(router.get("static_routes", [])))
    policies = _on(live, "Logical_Router_Policy", as_list(router.get("policies", [])))
    out = _static_routes(intent, statics, addresses, fabric, sync)
    if intent.kind == "zone":
        out += _policies(intent, policies, sync)
    return out


def _static_routes(intent: AzIntent, rows: Sequence[Row], addresses: Mapping[str, str], fabric: str,
                   sync: str) -> list[Check]:
    subject, out = intent.subject, []
    managed: dict[tuple[str, str, str], list[StaticRoute]] = {}
    learned: list[StaticRoute] = []
    by_hand: list[StaticRoute] = []
    for row in rows:
        ids = as_map(row.get("external_ids", {}))
        route = _route(row)
        if "ic-learned-route" in ids:
            learned.append(route)
        elif intent.owner is not None and ids.get(intent.owner[0]) == intent.owner[1]:
            managed.setdefault(route.key, []).append(route)
        elif intent.owner is None and ids.get("vendor") == VENDOR:
            if route.prefix not in DEFAULT_ROUTES:
                managed.setdefault(route.key, []).append(route)
        elif intent.owner is None:
            by_hand.append(route)
    missing: list[tuple[StaticRoute, list[StaticRoute]]] = []
    wrong_hop: list[tuple[StaticRoute, list[StaticRoute]]] = []
    stale: list[tuple[StaticRoute, str]] = []
    for want in intent.routes:
        have = managed.pop(want.key, [])
        if not any(h.nexthop == want.nexthop for h in have):
            (wrong_hop if have else missing).append((want, have))
        live_hop = addresses.get(want.via) if want.via else None
        if live_hop is not None and live_hop != want.nexthop:
            stale.append((want, live_hop))
    for want, _have in missing:
        out.append(Check(subject, "routes.missing", DRIFT, f"route {_shown(want)} is not on {intent.router}", sync))
    for want, have in wrong_hop:
        hops = ", ".join(h.nexthop for h in have)
        out.append(Check(subject, "routes.next-hop", DRIFT,
                         f"route {want.prefix} goes via {hops} on {intent.router}; the fabric says {want.nexthop}",
                         sync))
    for want, live_hop in stale:
        out.append(Check(subject, "routes.stale", DRIFT,
                         f"route {want.prefix} leads to {want.nexthop}, but {want.via}'s transit address is now "
                         f"{live_hop}: the next hop is stale (an IC rebuild gave {want.via} a new address)",
                         f"fabricgen transit {shlex.quote(fabric)} SHOW --write (SHOW: `ovn-ic-sbctl show`), "
                         "render, commit and sync"))
    for extra in (r for routes in managed.values() for r in routes):
        who = "its configure-ovn-ic.sh" if intent.owner is not None else "Kube-OVN from the Vpc's spec"
        out.append(Check(subject, "routes.extra", DRIFT,
                         f"route {_shown(extra)} on {intent.router}, applied by {who}, is not in the fabric",
                         "add it to the fabric (zones[].defaultVpc), or sync: the next sync removes it"
                         if intent.owner is None else f"run the rendered configure-ovn-ic.sh again ({sync})"))
    for route in by_hand:
        out.append(Check(subject, "routes.by-hand", DRIFT,
                         f"route {_shown(route)} on {intent.router} was added by hand (no controller's marker): "
                         "Kube-OVN keeps it, and no fabric names it",
                         f"remove it (ovn-nbctl lr-route-del {intent.router} {route.prefix}) or declare it in "
                         "zones[].defaultVpc"))
    out += _learned(intent, learned)
    if not out:
        out.append(Check(subject, "routes", OK, f"the {len(intent.routes)} route(s) of the fabric are on "
                                                 f"{intent.router}, every next hop current"))
    return out


def _learned(intent: AzIntent, learned: Sequence[StaticRoute]) -> list[Check]:
    subject = intent.subject
    if not intent.auto_route:
        return [Check(subject, "routes.learned", DRIFT,
                      f"route {_shown(r)} was learned through ovn-ic although the fabric has autoRoute off "
                      "(left over from an earlier auto-route, or ic-route-learn set by hand)",
                      f"ovn-nbctl lr-route-del {intent.router} {r.prefix}; check NB_Global options:ic-route-learn")
                for r in learned]
    return []


def check_learned(intent: AzIntent, live: AzLive, others: Sequence[AzIntent]) -> list[Check]:
    """With autoRoute: the routes learned are the other AZs' advertised prefixes, each once."""
    if not intent.auto_route or live.nb.error is not None:
        return []
    router = _router(live, intent.router)
    if router is None:
        return []
    rows = [r for r in _on(live, "Logical_Router_Static_Route", as_list(router.get("static_routes", [])))
            if "ic-learned-route" in as_map(r.get("external_ids", {}))]
    have = {prefix(str(r.get("ip_prefix", ""))) for r in rows}
    want = {str(n) for o in others if o.az != intent.az and o.auto_route for n in o.advertised}
    out = []
    for missing in sorted(want - have):
        out.append(Check(intent.subject, "routes.learned", DRIFT,
                         f"{missing} (another AZ's) has not been learned through ovn-ic",
                         "check ic-route-adv on that AZ and ic-route-learn here (NB_Global options)"))
    for extra in sorted(have - want):
        out.append(Check(intent.subject, "routes.learned", DRIFT,
                         f"{extra} was learned through ovn-ic but no AZ of the fabric advertises it (another "
                         "fabric's AZ, or a route left over; kube-ovn issues 923 and 7264)",
                         "add it to ic-route-blacklist, or remove what advertises it"))
    if not out:
        out.append(Check(intent.subject, "routes.learned", OK, f"learned the {len(want)} prefix(es) the other AZs "
                                                               "advertise, nothing else"))
    return out


def _policies(intent: AzIntent, rows: Sequence[Row], sync: str) -> list[Check]:
    subject, out = intent.subject, []
    spec: dict[tuple[int, str], list[Policy]] = {}
    by_hand: list[Policy] = []
    for row in rows:
        ids = as_map(row.get("external_ids", {}))
        hops = [str(h) for h in as_list(row.get("nexthops", []))] or [str(h) for h in as_list(row.get("nexthop", []))]
        policy = Policy(int(row.get("priority", 0)), str(row.get("match", "")), str(row.get("action", "")),
                        hops[0] if hops else "")
        if set(ids) == {"vendor"} and ids["vendor"] == VENDOR:
            spec.setdefault(policy.key, []).append(policy)
        elif not ids:
            by_hand.append(policy)
    for want in intent.policies:
        have = spec.pop(want.key, [])
        if not have:
            out.append(Check(subject, "policies.missing", DRIFT,
                             f"policy {want.priority} `{want.match}` {want.action} is not on {intent.router}", sync))
        elif not any(h.action == want.action and h.nexthop == want.nexthop for h in have):
            got = ", ".join(f"{h.action} {h.nexthop}".strip() for h in have)
            out.append(Check(subject, "policies.changed", DRIFT,
                             f"policy {want.priority} `{want.match}` is {got}; the fabric says "
                             f"{want.action} {want.nexthop}".rstrip(), sync))
    for extra in (p for found in spec.values() for p in found):
        out.append(Check(subject, "policies.extra", DRIFT,
                         f"policy {extra.priority} `{extra.match}` {extra.action} on {intent.router}, applied by "
                         "Kube-OVN from the Vpc's spec, is not in the fabric",
                         "add it to the fabric (zones[].defaultVpc.policyRoutes), or sync: the next sync removes it"))
    for policy in by_hand:
        out.append(Check(subject, "policies.by-hand", DRIFT,
                         f"policy {policy.priority} `{policy.match}` {policy.action} on {intent.router} was added by "
                         "hand (no external_ids)",
                         f"remove it (ovn-nbctl lr-policy-del {intent.router} {policy.priority} "
                         f"{shlex.quote(policy.match)}) or declare it in zones[].defaultVpc.policyRoutes"))
    if not out:
        out.append(Check(subject, "policies", OK, f"the {len(intent.policies)} policy route(s) of the fabric are on "
                                                   f"{intent.router}"))
    return out
