"""The policy on Kube-OVN: the `acls` of the Subnets that hold a protected group's members.

Kube-OVN writes a Subnet's `acls` into the subnet's logical switch as OVN ACLs in tier 2, with
the priority, match and action given (kubeovn/kube-ovn `pkg/ovs/ovn-nb-acl.go`
`UpdateLogicalSwitchACL`, v1.16.2); fabricgen never writes northbound rows itself, which
Kube-OVN's subnet controller would delete (it clears every ACL of the switch before it writes
the Subnet's: `pkg/controller/subnet.go` `handleAddOrUpdateSubnet`). Per protected member, with
D its range:

- `to-lport`, ALLOW (1200), `allow-related`: from the group's own ranges (and, on a backbone,
  the zone's join range, the nodes, as Kube-OVN's private subnets allow them) to D; and per rule
  into the group, from the source group's ranges to D on the rule's protocol and ports, one ACL
  per port range;
- `to-lport`, DENY (1100), `drop`: everything else to D.

Both sit above Kube-OVN's private subnet drop (1000) and below its NetworkPolicy ACLs (2000,
2001) and node allow (3000); `docs/policy.md` has the whole map. Replies pass with the
connection (`allow-related` commits it to conntrack).
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Any

from fabricgen.plan.policy import KUBE_OVN, Allowed, Endpoint
from fabricgen.plan.zones import Plan, ZonePlan

ACL_ALLOW_PRIORITY = 1200
ACL_DENY_PRIORITY = 1100


def _addresses(cidrs: tuple[IPv4Network, ...]) -> str:
    return str(cidrs[0]) if len(cidrs) == 1 else "{" + ", ".join(str(c) for c in cidrs) + "}"


def protocol_match(rule: Allowed) -> list[str]:
    """The protocol part of a rule's matches, one per port range ('' for any protocol)."""
    if rule.protocol == "any":
        return [""]
    if rule.protocol == "icmp":
        return [" && icmp4"]
    if not rule.ports:
        return [f" && {rule.protocol}"]
    return [f" && {rule.protocol}.dst == {a}" if a == b else f" && {a} <= {rule.protocol}.dst <= {b}"
            for a, b in rule.ports]


def _acl(priority: int, match: str, action: str) -> dict[str, Any]:
    return {"direction": "to-lport", "priority": priority, "match": match, "action": action}


def member_acls(plan: Plan, zone: ZonePlan, member: Endpoint) -> list[dict[str, Any]]:
    policy = plan.policy
    assert member.cidr is not None
    own = policy.cidrs(member.group)
    if member.kind == "backbone" and zone.zone.cluster.join_cidr not in own:
        own += (zone.zone.cluster.join_cidr,)
    dst = f"ip4.dst == {member.cidr}"
    acls = [_acl(ACL_ALLOW_PRIORITY, f"ip4.src == {_addresses(own)} && {dst}", "allow-related")]
    for rule in policy.into(member.group):
        sources = policy.cidrs(rule.source)
        if sources:
            acls += [_acl(ACL_ALLOW_PRIORITY, f"ip4.src == {_addresses(sources)} && {dst}{part}", "allow-related")
                     for part in protocol_match(rule)]
    acls.append(_acl(ACL_DENY_PRIORITY, dst, "drop"))
    unique: dict[str, dict[str, Any]] = {}
    for acl in acls:
        unique.setdefault(acl["match"], acl)
    return list(unique.values())


def subnet_acls(plan: Plan, zone: ZonePlan, tenant_subnet: str | None) -> list[dict[str, Any]]:
    """The policy's ACLs for a tenant subnet of the zone (by name), or for its backbone (None)."""
    out: list[dict[str, Any]] = []
    for member in plan.policy.enforced_by(KUBE_OVN):
        if member.zone != zone.name:
            continue
        if (tenant_subnet is None and member.kind == "backbone") or \
                (member.kind == "tenantSubnet" and member.subnet == tenant_subnet):
            out += member_acls(plan, zone, member)
    return out
