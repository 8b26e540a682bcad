"""What Neutron's ML2/OVN driver writes into its northbound DB for the rendered security groups.

Read from the rendered playbook (`openstack.cloud.security_group` tasks: a group and exactly its
rules) as Neutron would store them, and modelled on openstack/neutron 28.0.1:

- `ovn_client.create_security_group`: a Port_Group `pg_<id with _ for ->`
  (`utils.ovn_port_group_name`), `external_ids:neutron:security_group_id`;
- `acl._add_sg_rule_acl_for_port_group`: one ACL per rule at priority 1002
  (`ACL_PRIORITY_ALLOW`), `allow-related` (a stateful group), ingress `to-lport` and egress
  `from-lport`, no tier, `external_ids:neutron:security_group_rule_id`. Its match is built in
  this order: `outport == @PG` (ingress) or `inport == @PG`, `&& ip4`, the remote prefix
  (`ip4.src` ingress, `ip4.dst` egress), a remote group as the address set northd keeps of its
  port group (`$pg_<id>_ip4`), then the protocol: `&& tcp && tcp.dst == N`, or `>= N` and
  `<= M` for a range, `&& icmp4`, nothing for `any`;
- `utils.create_neutron_pg_drop`: the port group `neutron_pg_drop` dropping `ip` both ways at
  1001 (`ACL_PRIORITY_DROP`; unreleased master moves it to 1000); `ovn_client.create_port` puts a
  port with port security in it and in its groups' port groups in one transaction, and sets the
  port's `port_security` to its MAC and addresses.

Neutron keeps ids the lab does not have: a group's and a rule's id are uuid5 of the cloud and
name (and the rule's place), stable from run to run.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from ipaddress import IPv4Network
from typing import Any

from fabricgen.lab.acl_rows import Acl

ALLOW_PRIORITY, DROP_PRIORITY = 1002, 1001
DROP_GROUP = "neutron_pg_drop"
TASK = "openstack.cloud.security_group"
_IDS = uuid.UUID("6f1f0e5e-3d1c-4c64-9a55-2b9d6f0c6a11")  # the lab's namespace for Neutron's ids


def group_id(cloud: str, name: str) -> str:
    return str(uuid.uuid5(_IDS, f"{cloud}/{name}"))


def port_group_name(security_group_id: str) -> str:
    """`utils.ovn_port_group_name`: `('pg-%s' % sg_id).replace('-', '_')`."""
    return f"pg-{security_group_id}".replace("-", "_")


def groups(playbook: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The security groups a rendered playbook brings about (its tasks' module arguments)."""
    return [task[TASK] for play in playbook for task in play.get("tasks", []) if TASK in task]


def rule_match(port_group: str, rule: Mapping[str, Any], ids: Mapping[str, str]) -> str:
    """`_add_sg_rule_acl_for_port_group`'s match of one rule; `ids`: group name -> id."""
    ingress = rule["direction"] == "ingress"
    side = "src" if ingress else "dst"
    match = f"{'outport' if ingress else 'inport'} == @{port_group} && ip4"
    if rule.get("remote_ip_prefix"):
        match += f" && ip4.{side} == {IPv4Network(str(rule['remote_ip_prefix']), strict=False)}"
    if rule.get("remote_group"):
        match += f" && ip4.{side} == ${port_group_name(ids[str(rule['remote_group'])])}_ip4"
    protocol = str(rule.get("protocol") or "any").lower()
    if protocol in ("tcp", "udp", "sctp"):
        match += f" && {protocol}"
        low, high = rule.get("port_range_min"), rule.get("port_range_max")
        if low is not None and low == high:
            match += f" && {protocol}.dst == {int(low)}"
        else:
            match += f" && {protocol}.dst >= {int(low)}" if low is not None else ""
            match += f" && {protocol}.dst <= {int(high)}" if high is not None else ""
    elif protocol == "icmp":
        match += " && icmp4"
        for field, key in (("type", "port_range_min"), ("code", "port_range_max")):
            if rule.get(key) is not None:
                match += f" && icmp4.{field} == {int(rule[key])}"
    elif protocol != "any":
        raise ValueError(f"a rule of protocol {protocol!r} is not modelled")
    return match


def group_acls(cloud: str, group: Mapping[str, Any], ids: Mapping[str, str]) -> list[Acl]:
    """The ACLs of one security group's rules, once each (ovsdbapp's `may_exist` keeps one ACL of
    rules with the same direction, priority and match)."""
    sg_id = ids[str(group["name"])]
    port_group = port_group_name(sg_id)
    out: dict[tuple[str, str], Acl] = {}
    for i, rule in enumerate(group.get("security_group_rules", [])):
        direction = "to-lport" if rule["direction"] == "ingress" else "from-lport"
        match = rule_match(port_group, rule, ids)
        rule_id = str(uuid.uuid5(_IDS, f"{cloud}/{group['name']}/{i}"))
        out.setdefault((direction, match), Acl(direction, ALLOW_PRIORITY, match, "allow-related",
                                               f"Neutron security group {group['name']}",
                                               (("neutron:security_group_rule_id", rule_id),)))
    return list(out.values())


def drop_acls() -> list[Acl]:
    return [Acl("to-lport", DROP_PRIORITY, f"outport == @{DROP_GROUP} && ip", "drop", "Neutron's neutron_pg_drop"),
            Acl("from-lport", DROP_PRIORITY, f"inport == @{DROP_GROUP} && ip", "drop", "Neutron's neutron_pg_drop")]


def _acl_commands(port_group: str, acls: Sequence[Acl], refs: list[int]) -> list[list[str]]:
    commands: list[list[str]] = []
    for acl in acls:
        refs.append(len(refs))
        ref = f"@nacl{refs[-1]}"
        commands.append([f"--id={ref}", "create", "ACL", f"direction={acl.direction}", f"priority={acl.priority}",
                         f"match={json.dumps(acl.match)}", f"action={acl.action}",
                         *(f"external_ids:{json.dumps(k)}={json.dumps(v)}" for k, v in acl.external_ids)])
        commands.append(["add", "Port_Group", port_group, "acls", ref])
    return commands


def commands(cloud: str, playbook: Sequence[Mapping[str, Any]], ports: Mapping[str, tuple[str, str]],
             ) -> tuple[list[Acl], list[list[str]]]:
    """The rows of a cloud's rendered security groups, and of `neutron_pg_drop`, with the lab's
    ports in them: `ports` maps a group's name to (its member VM's logical port, that port's
    `MAC IP`). Returns every ACL written and the ovn-nbctl commands (one transaction)."""
    found = groups(playbook)
    ids = {str(g["name"]): group_id(cloud, str(g["name"])) for g in found}
    refs: list[int] = []
    members = [port for port, _address in ports.values()]
    out = [["pg-add", DROP_GROUP, *members]]
    acls = drop_acls()
    out += _acl_commands(DROP_GROUP, acls, refs)
    for group in found:
        name = str(group["name"])
        port_group = port_group_name(ids[name])
        own = [ports[name][0]] if name in ports else []
        out += [["pg-add", port_group, *own],
                ["set", "Port_Group", port_group, f'external_ids:"neutron:security_group_id"={json.dumps(ids[name])}']]
        made = group_acls(cloud, group, ids)
        out += _acl_commands(port_group, made, refs)
        acls += made
    for port, address in ports.values():
        out.append(["lsp-set-port-security", port, address])
    return acls, out
