"""What Kube-OVN's controllers write into a zone's OVN northbound DB, done with ovn-nbctl.

Modelled on Kube-OVN v1.16.2 (`pkg/controller/subnet.go`, `vpc.go`, `pkg/ovs/ovn-nb-*.go`):

- `add_backbone`: a Subnet in the default VPC (logical switch, router port on
  `ovn-cluster`, the 31000 `allow` of `ip4.dst == <cidr>` that
  `addCommonRoutesForSubnet` adds), with one VM port on it.
- `add_join_reroute`: the join network (with its own 31000 allow) and the
  priority-29000 reroute of the backbone's traffic to a node, as Kube-OVN installs
  for every subnet of the default VPC.
- `auto_route_options`, `allow_learned_routes`: `auto-route: "true"`, and the 29500
  allow per route ovn-ic learned (ovn-ic-controller `SynRouteToPolicy`).
- `apply_vpc_routes`: a Vpc's `spec.staticRoutes` / `spec.policyRoutes` the way
  `handleAddOrUpdateVpc` applies them: `policyDst`/`policySrc` become `dst-ip`/
  `src-ip`, a static route first removes routes for the same (table, policy,
  prefix), and a policy replaces one with the same (priority, match).

Each function is one ovn-nbctl transaction. Rows carry the `external_ids` Kube-OVN gives them
(`pkg/controller/vpc.go`: `vendor=kube-ovn` on the Vpc's routes and policies; `subnet.go`:
`vendor` and `subnet` on a subnet's policies; `pkg/ovn_ic_controller` `syncOneRouteToPolicy`:
`origin` and `vendor` on the 29500 allows), as `fabricgen status` tells whose a row is by them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from typing import Any

from fabricgen.lab.ovn.sandbox import ROUTER, Sandbox
from fabricgen.lab.platforms import nb_rows
from fabricgen.model.names import ROUTE_POLICY

VENDOR = {"vendor": "kube-ovn"}
JOIN = IPv4Interface("100.64.0.1/16")
GATEWAY_ROUTER_PRIORITY = 29000
OVN_IC_PRIORITY = 29500
SUBNET_ROUTER_PRIORITY = 31000


@dataclass(frozen=True)
class Backbone:
    """A switch on a router with one VM: a zone's backbone or a network behind a deployment's router."""

    zone: str
    switch: str
    cidr: IPv4Network
    gateway: IPv4Address
    router_mac: str
    vm: str
    vm_mac: str
    vm_ip: IPv4Address


def host_in(cidr: IPv4Network, avoid: IPv4Address) -> IPv4Address:
    """A stable host address in `cidr` other than `avoid` (the gateway)."""
    candidate = cidr.network_address + 5 if cidr.num_addresses > 8 else cidr.network_address + 1
    return candidate if candidate != avoid else candidate + 1


def mac(prefix: str, address: IPv4Address) -> str:
    _, b, c, d = address.packed
    return f"{prefix}:{b:02x}:{c:02x}:{d:02x}"


def batch(commands: Sequence[Sequence[str]]) -> list[str]:
    """Several ovn-nbctl commands as one transaction."""
    out: list[str] = []
    for command in commands:
        out += ["--", *command] if out else list(command)
    return out


def _router_port(router: str, switch: str, lrp: str, router_mac: str, network: str) -> list[list[str]]:
    lsp = f"{switch}-{router}"
    return [["lrp-add", router, lrp, router_mac, network], ["lsp-add", switch, lsp],
            ["lsp-set-type", lsp, "router"], ["lsp-set-addresses", lsp, "router"],
            ["lsp-set-options", lsp, f"router-port={lrp}"]]


def network_commands(zone: str, switch: str, cidr: IPv4Network, gateway: IPv4Address, *,
                     router: str = ROUTER, router_mac: str | None = None, vm: str | None = None,
                     vm_mac: str | None = None) -> tuple[Backbone, list[list[str]]]:
    """A switch `switch` on `cidr` behind `router`, with one VM, and the commands that create it."""
    router_mac = router_mac or mac("00:00:00", gateway)
    vm_ip = host_in(cidr, gateway)
    vm, vm_mac = vm or f"vm-{zone}", vm_mac or mac("00:00:01", vm_ip)
    commands = [["ls-add", switch], ["set", "Logical_Switch", switch, f"other_config:subnet={cidr}"]]
    commands += _router_port(router, switch, f"{router}-{switch}", router_mac, f"{gateway}/{cidr.prefixlen}")
    commands += [["lsp-add", switch, vm], ["lsp-set-addresses", vm, f"{vm_mac} {vm_ip}"]]
    return Backbone(zone, switch, cidr, gateway, router_mac, vm, vm_mac, vm_ip), commands


def create_policy(priority: int, match: str, action: str, nexthop: str | None,
                  external_ids: Mapping[str, str], router: str = ROUTER) -> list[list[str]]:
    """A policy with its external_ids, as Kube-OVN creates one (ovn-nbctl's lr-policy-add sets none)."""
    ref = nb_rows.ref("policy")
    columns = [f"priority={priority}", f"match={json.dumps(match)}", f"action={action}"]
    columns += [f"nexthops={json.dumps(nexthop)}"] if nexthop else []
    return [[f"--id={ref}", "create", "Logical_Router_Policy", *columns,
             *nb_rows.pairs("external_ids", external_ids)],
            ["add", "Logical_Router", router, "policies", ref]]


def create_static_route(prefix: str, nexthop: str, policy: str, route_table: str,
                        external_ids: Mapping[str, str], router: str = ROUTER) -> list[list[str]]:
    ref = nb_rows.ref("route")
    columns = [f"ip_prefix={json.dumps(prefix)}", f"nexthop={json.dumps(nexthop)}", f"policy={policy}"]
    columns += [f"route_table={json.dumps(route_table)}"] if route_table else []
    return [[f"--id={ref}", "create", "Logical_Router_Static_Route", *columns,
             *nb_rows.pairs("external_ids", external_ids)],
            ["add", "Logical_Router", router, "static_routes", ref]]


def subnet_allow(cidr: IPv4Network | IPv4Interface, subnet: str) -> list[list[str]]:
    """Kube-OVN's own 31000 allow for a subnet of the default VPC."""
    network = cidr.network if isinstance(cidr, IPv4Interface) else cidr
    return create_policy(SUBNET_ROUTER_PRIORITY, f"ip4.dst == {network}", "allow", None,
                         {**VENDOR, "subnet": subnet})


def add_backbone(sandbox: Sandbox, zone: str, switch: str, cidr: IPv4Network, gateway: IPv4Address) -> Backbone:
    backbone, commands = network_commands(zone, switch, cidr, gateway)
    sandbox.nb(zone, *batch([*commands, *subnet_allow(cidr, switch)]))
    return backbone


def join_reroute_commands(zone: str, source: IPv4Network) -> tuple[str, list[list[str]]]:
    """The join network with one node, its 31000 allow, and Kube-OVN's 29000 reroute of `source`
    to the node. Returns the node's port name (where rerouted packets end up) and the commands."""
    node_ip = JOIN.ip + 1
    node = "node-" + zone
    commands = [["ls-add", "join"]]
    commands += _router_port(ROUTER, "join", f"{ROUTER}-join", mac("00:00:02", JOIN.ip), str(JOIN))
    commands += [["lsp-add", "join", node], ["lsp-set-addresses", node, f"{mac('00:00:02', node_ip)} {node_ip}"],
                 *subnet_allow(JOIN, "join"),
                 *create_policy(GATEWAY_ROUTER_PRIORITY, f"ip4.src == {source}", "reroute", str(node_ip),
                                {**VENDOR, "subnet": f"backbone-{zone}"})]
    return node, commands


def add_join_reroute(sandbox: Sandbox, zone: str, source: IPv4Network) -> str:
    node, commands = join_reroute_commands(zone, source)
    sandbox.nb(zone, *batch(commands))
    return node


Commands = tuple[list[list[str]], list[list[str]]]  # deletions, then additions


def static_route_commands(routes: Sequence[Mapping[str, Any]]) -> Commands:
    deletions, additions = [], []
    for route in routes:
        if route.get("bfdId") or route.get("ecmpMode"):
            raise NotImplementedError("BFD/ECMP static routes are not modelled here")
        options = [f"--policy={ROUTE_POLICY[route.get('policy', '')]}"]
        if route.get("routeTable"):
            options.append(f"--route-table={route['routeTable']}")
        deletions.append(["--if-exists", *options, "lr-route-del", ROUTER, route["cidr"]])
        additions += create_static_route(route["cidr"], route["nextHopIP"], ROUTE_POLICY[route.get("policy", "")],
                                         route.get("routeTable", ""), VENDOR)
    return deletions, additions


def policy_route_commands(policies: Sequence[Mapping[str, Any]]) -> Commands:
    deletions, additions = [], []
    for policy in policies:
        priority, match = str(policy["priority"]), policy["match"]
        deletions.append(["--if-exists", "lr-policy-del", ROUTER, priority, match])
        hop = policy["nextHopIP"] if policy["action"] == "reroute" and policy.get("nextHopIP") else None
        additions += create_policy(int(priority), match, policy["action"], hop, VENDOR)
    return deletions, additions


def _apply(sandbox: Sandbox, zone: str, commands: Commands) -> None:
    """Deletions and additions as two transactions: ovn-nbctl checks an addition for duplicates
    against the database as it was before the transaction."""
    for part in commands:
        if part:
            sandbox.nb(zone, *batch(part))


def apply_static_routes(sandbox: Sandbox, zone: str, routes: Sequence[Mapping[str, Any]]) -> None:
    _apply(sandbox, zone, static_route_commands(routes))


def apply_policy_routes(sandbox: Sandbox, zone: str, policies: Sequence[Mapping[str, Any]]) -> None:
    _apply(sandbox, zone, policy_route_commands(policies))


def vpc_route_commands(spec: Mapping[str, Any]) -> Commands:
    static = static_route_commands(spec.get("staticRoutes", []))
    policy = policy_route_commands(spec.get("policyRoutes", []))
    return static[0] + policy[0], static[1] + policy[1]


def new_vpc_route_commands(spec: Mapping[str, Any]) -> list[list[str]]:
    """The additions of `vpc_route_commands` on a router that has none of these routes yet: what
    Kube-OVN leaves is the last route per (table, policy, prefix) and the last policy per
    (priority, match) of the spec, so one transaction can add them all."""
    routes = {(r.get("routeTable", ""), ROUTE_POLICY[r.get("policy", "")], r["cidr"]): r
              for r in spec.get("staticRoutes", [])}
    policies = {(int(p["priority"]), p["match"]): p for p in spec.get("policyRoutes", [])}
    return static_route_commands(list(routes.values()))[1] + policy_route_commands(list(policies.values()))[1]


def apply_vpc_routes(sandbox: Sandbox, zone: str, spec: Mapping[str, Any]) -> None:
    _apply(sandbox, zone, vpc_route_commands(spec))
    sandbox.sync(zone)


def auto_route_options() -> list[str]:
    """`auto-route: "true"` in ovn-ic-config: Kube-OVN's SetICAutoRoute on NB_Global, with the join
    subnet on the blacklist (the lab has no node InternalIPs to add)."""
    return ["set", "NB_Global", ".", "options:ic-route-adv=true", "options:ic-route-learn=true",
            f'options:ic-route-blacklist="{JOIN.network}"']


def learned_routes(sandbox: Sandbox, zone: str) -> list[tuple[IPv4Interface, str]]:
    """The routes ovn-ic learned into a zone's NB (`external_ids:ic-learned-route`), with their
    `options:origin`."""
    rows = sandbox.nb(zone, "--format=csv", "--data=bare", "--no-headings",
                      "--columns=ip_prefix,external_ids,options", "list", "Logical_Router_Static_Route")
    out = []
    for row in rows.splitlines():
        prefix, ids, options = [*row.split(","), "", ""][:3]
        if "ic-learned-route=" in ids:
            origin = next((o.split("=", 1)[1] for o in options.split() if o.startswith("origin=")), "")
            out.append((IPv4Interface(prefix), origin))
    return out


def allow_learned_routes(sandbox: Sandbox, zone: str) -> None:
    """What Kube-OVN's ovn-ic-controller SynRouteToPolicy adds for each learned route that carries an
    origin: a 29500 allow of `ip4.dst == <prefix>`, above its own 29000 reroute."""
    rows = sandbox.nb(zone, "--format=csv", "--data=bare", "--no-headings", "--columns=priority,match", "list",
                      "Logical_Router_Policy")
    have = {tuple(line.split(",", 1)) for line in rows.splitlines()}
    commands = [c for route, origin in learned_routes(sandbox, zone)
                if origin and (str(OVN_IC_PRIORITY), f"ip4.dst == {route}") not in have
                for c in create_policy(OVN_IC_PRIORITY, f"ip4.dst == {route}", "allow", None,
                                       {"origin": origin, **VENDOR})]
    if commands:
        sandbox.nb(zone, *batch(commands))


# ------------------------------------------------------------------ tenant VPCs and their ACLs
NETPOL_TIER = 2  # `util.NetpolACLTier`: the tier of a Subnet's acls


def acl_commands(switch: str, subnet: str, acls: Sequence[Mapping[str, Any]], *, tiers: bool = True
                 ) -> list[list[str]]:
    """A Subnet's `acls` on its switch, as `UpdateLogicalSwitchACL` writes them (`newACL`): tier 2
    (`tiers`: where the northbound schema has ACL tiers, OVN 23.06 and later), `external_ids`
    parent, vendor and subnet."""
    commands: list[list[str]] = []
    for acl in acls:
        commands += nb_rows.acl("Logical_Switch", switch, str(acl["direction"]), int(acl.get("priority", 0)),
                                str(acl["match"]), str(acl["action"]), tier=NETPOL_TIER if tiers else None,
                                external_ids={"parent": switch, "vendor": "kube-ovn", "subnet": subnet})
    return commands


def tenant_commands(zone: str, vpcs: Sequence[Mapping[str, Any]], subnets: Sequence[Mapping[str, Any]], *,
                    tiers: bool = True) -> tuple[dict[str, Backbone], list[list[str]]]:
    """Each tenant Vpc a router, each of its Subnets a switch behind it with one VM and the Subnet's
    `acls`; each peering the pair of peer router ports (`CreatePeerRouterPort`: `VPC-REMOTE`,
    `localConnectIP`, `peer=REMOTE-VPC`) and the Vpc's static routes: what Kube-OVN's vpc and
    subnet controllers write (`pkg/controller/vpc.go`, `subnet.go`, v1.16.2)."""
    networks: dict[str, Backbone] = {}
    commands: list[list[str]] = []
    for vpc in vpcs:
        name = str(vpc["metadata"]["name"])
        commands.append(["lr-add", name])
        for peering in vpc.get("spec", {}).get("vpcPeerings", []):
            remote, local = str(peering["remoteVpc"]), IPv4Interface(str(peering["localConnectIP"]))
            commands.append(["lrp-add", name, f"{name}-{remote}", mac("00:00:02", local.ip), str(local),
                             f"peer={remote}-{name}"])
    for sub in subnets:
        spec = sub["spec"]
        name, router = str(sub["metadata"]["name"]), str(spec["vpc"])
        cidr, gateway = IPv4Network(str(spec["cidrBlock"])), IPv4Address(str(spec["gateway"]))
        network, created = network_commands(zone, name, cidr, gateway, router=router, vm=f"vm-{zone}-{name}")
        networks[name] = network
        commands += created + acl_commands(name, name, spec.get("acls", []), tiers=tiers)
    for vpc in vpcs:
        for route in vpc.get("spec", {}).get("staticRoutes", []):
            commands.append(["lr-route-add", str(vpc["metadata"]["name"]), str(route["cidr"]), str(route["nextHopIP"])])
    return networks, commands
