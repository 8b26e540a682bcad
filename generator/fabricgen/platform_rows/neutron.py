"""What Neutron's ML2/OVN driver writes into its northbound DB for a security group: what the lab
writes for the rendered security groups, and what `fabricgen status` looks for in a deployment's
live database. Modelled on openstack/neutron 28.0.1:

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
  1001 (`ACL_PRIORITY_DROP`; unreleased master moves it to 1000).

The rendered security groups are read from the cloud's directory of the rendered output, as
Ansible reads the playbook (YAML).
"""

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import IPv4Network
from pathlib import PurePosixPath
from typing import Any

from ruamel.yaml import YAML

from fabricgen.pipeline import Build
from fabricgen.platform_rows.acls import Acl

ALLOW_PRIORITY, DROP_PRIORITY = 1002, 1001
DROP_PRIORITIES = (1001, 1000)  # every release so far; unreleased master
DROP_GROUP = "neutron_pg_drop"
SECURITY_GROUP_ID = "neutron:security_group_id"
TASK = "openstack.cloud.security_group"


def port_group_name(security_group_id: str) -> str:
    """`utils.ovn_port_group_name`: `('pg-%s' % sg_id).replace('-', '_')`."""
    return f"pg-{security_group_id}".replace("-", "_")


def groups(playbook: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
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


def group_acls(group: Mapping[str, Any], ids: Mapping[str, str]) -> list[Acl]:
    """The ACLs of one security group's rules, once each (ovsdbapp's `may_exist` keeps one ACL of
    rules with the same direction, priority and match); `ids`: group name -> its id."""
    port_group = port_group_name(ids[str(group["name"])])
    out: dict[tuple[str, str], Acl] = {}
    for rule in group.get("security_group_rules", []):
        direction = "to-lport" if rule["direction"] == "ingress" else "from-lport"
        match = rule_match(port_group, rule, ids)
        out.setdefault((direction, match), Acl(direction, ALLOW_PRIORITY, match, "allow-related",
                                               f"Neutron security group {group['name']}"))
    return list(out.values())


def drop_acls() -> list[Acl]:
    return [Acl("to-lport", DROP_PRIORITY, f"outport == @{DROP_GROUP} && ip", "drop", "Neutron's neutron_pg_drop"),
            Acl("from-lport", DROP_PRIORITY, f"inport == @{DROP_GROUP} && ip", "drop", "Neutron's neutron_pg_drop")]


def playbook(build: Build, deployment: str, cloud: str) -> list[Mapping[str, Any]]:
    """A cloud's rendered security groups: every play of the YAML files rendered into the cloud's
    directory (`_host/DEPLOYMENT/openstack/CLOUD/`), read as Ansible reads them."""
    top = PurePosixPath(build.site, "_host", deployment, "openstack", cloud)
    plays: list[Mapping[str, Any]] = []
    for path, out in sorted(build.files.items()):
        if path.parent == top and path.suffix in (".yml", ".yaml"):
            plays += list(YAML(typ="safe").load(out.text) or [])
    return plays
