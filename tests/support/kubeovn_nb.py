"""What Kube-OVN's controllers write into a zone's OVN northbound DB, done with ovn-nbctl.

- `add_backbone`: a Subnet in the default VPC (logical switch, router port on
  `ovn-cluster`), with one VM port on it.
- `add_join_reroute`: the join network and the priority-29000 reroute of the
  backbone's traffic to a node, as Kube-OVN installs for every subnet.
- `apply_vpc_routes`: a Vpc's `spec.staticRoutes` / `spec.policyRoutes` the way
  `handleAddOrUpdateVpc` applies them: `policyDst`/`policySrc` become `dst-ip`/
  `src-ip`, a static route first removes routes for the same (table, policy,
  prefix), and a policy replaces one with the same (priority, match).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from typing import Any

from support.ic_sandbox import ROUTER, Sandbox

ROUTE_POLICY = {"policyDst": "dst-ip", "policySrc": "src-ip", "": "dst-ip"}
JOIN = IPv4Interface("100.64.0.1/16")
GATEWAY_ROUTER_PRIORITY = 29000


@dataclass(frozen=True)
class Backbone:
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
    candidate = cidr.network_address + 5
    return candidate if candidate != avoid else candidate + 1


def _mac(prefix: str, address: IPv4Address) -> str:
    _, b, c, d = address.packed
    return f"{prefix}:{b:02x}:{c:02x}:{d:02x}"


def _router_port(sandbox: Sandbox, zone: str, switch: str, lrp: str, mac: str, network: str) -> None:
    lsp = f"{switch}-{ROUTER}"
    sandbox.nb(zone, "lrp-add", ROUTER, lrp, mac, network)
    sandbox.nb(zone, "lsp-add", switch, lsp, "--", "lsp-set-type", lsp, "router",
               "--", "lsp-set-addresses", lsp, "router", "--", "lsp-set-options", lsp, f"router-port={lrp}")


def add_backbone(sandbox: Sandbox, zone: str, switch: str, cidr: IPv4Network, gateway: IPv4Address) -> Backbone:
    router_mac = _mac("00:00:00", gateway)
    vm_ip = host_in(cidr, gateway)
    vm, vm_mac = f"vm-{zone}", _mac("00:00:01", vm_ip)
    sandbox.nb(zone, "ls-add", switch)
    sandbox.nb(zone, "set", "Logical_Switch", switch, f"other_config:subnet={cidr}")
    _router_port(sandbox, zone, switch, f"{ROUTER}-{switch}", router_mac, f"{gateway}/{cidr.prefixlen}")
    sandbox.nb(zone, "lsp-add", switch, vm, "--", "lsp-set-addresses", vm, f"{vm_mac} {vm_ip}")
    return Backbone(zone, switch, cidr, gateway, router_mac, vm, vm_mac, vm_ip)


def add_join_reroute(sandbox: Sandbox, zone: str, source: IPv4Network) -> str:
    """The join network with one node, and Kube-OVN's 29000 reroute of `source` to it.

    Returns the node's port name: where rerouted packets end up.
    """
    node_ip = JOIN.ip + 1
    node = "node-" + zone
    sandbox.nb(zone, "ls-add", "join")
    _router_port(sandbox, zone, "join", f"{ROUTER}-join", _mac("00:00:02", JOIN.ip), str(JOIN))
    sandbox.nb(zone, "lsp-add", "join", node, "--", "lsp-set-addresses", node, f"{_mac('00:00:02', node_ip)} {node_ip}")
    sandbox.nb(zone, "lr-policy-add", ROUTER, str(GATEWAY_ROUTER_PRIORITY), f"ip4.src == {source}", "reroute",
               str(node_ip))
    return node


def apply_static_routes(sandbox: Sandbox, zone: str, routes: Sequence[Mapping[str, Any]]) -> None:
    for route in routes:
        if route.get("bfdId") or route.get("ecmpMode"):
            raise NotImplementedError("BFD/ECMP static routes are not modelled here")
        options = [f"--policy={ROUTE_POLICY[route.get('policy', '')]}"]
        if route.get("routeTable"):
            options.append(f"--route-table={route['routeTable']}")
        sandbox.nb(zone, "--if-exists", *options, "lr-route-del", ROUTER, route["cidr"])
        sandbox.nb(zone, *options, "lr-route-add", ROUTER, route["cidr"], route["nextHopIP"])


def apply_policy_routes(sandbox: Sandbox, zone: str, policies: Sequence[Mapping[str, Any]]) -> None:
    for policy in policies:
        priority, match = str(policy["priority"]), policy["match"]
        sandbox.nb(zone, "--if-exists", "lr-policy-del", ROUTER, priority, match)
        hops = [policy["nextHopIP"]] if policy["action"] == "reroute" and policy.get("nextHopIP") else []
        sandbox.nb(zone, "lr-policy-add", ROUTER, priority, match, policy["action"], *hops)


def apply_vpc_routes(sandbox: Sandbox, zone: str, spec: Mapping[str, Any]) -> None:
    apply_static_routes(sandbox, zone, spec.get("staticRoutes", []))
    apply_policy_routes(sandbox, zone, spec.get("policyRoutes", []))
    sandbox.sync(zone)
