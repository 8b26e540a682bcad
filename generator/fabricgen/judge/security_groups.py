"""The rendered Neutron security groups, as Neutron wrote them into a deployment's northbound DB.

fabricgen renders a cloud's security groups as a playbook that runs against the Neutron API; it
never learns the groups' ids. What reaches the data plane is what Neutron then writes
(`observe.neutron_rows`): a port group `pg_<id>` tagged `neutron:security_group_id` and an ACL per
rule. So a group is looked for among the port groups Neutron wrote, by its rules: for each, the
ACLs the group's rules give with that port group's id, against the ACLs it holds. The port group
that holds most of them is the group's; then

- every rule there, nothing else, and ports in it: ok;
- every rule there and nothing else, but no port: drift, the group protects nothing until it is
  attached to the VMs' ports;
- rules missing or others beside them: drift, naming each (the playbook not applied since the
  policy changed, or a rule added by hand);
- no port group holds any of its rules: drift, the group is missing (the playbook not applied).

And where a group holds ports, `neutron_pg_drop` must drop what no rule lets in: its two drop
ACLs (at 1001, or 1000 on Neutron's unreleased master) are looked for too, and any other ACL on it
is named: Neutron writes none, and an allow or pass there (above the drop, or beside it at its
priority, where OVN's order is undefined) opens every port of every security group. The fix never
names `neutron-ovn-db-sync-util --ovn-neutron_sync_mode repair` where another platform shares the
northbound DB: every released Neutron's repair deletes the ACLs of every logical switch, its
own or not (the `neutron:network_name` filter is only in 29.0.0's successor, commit 57bb384ca2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fabricgen.judge.checks import DRIFT, OK, UNREACHABLE, Check
from fabricgen.observe.live_fabric import AzLive
from fabricgen.observe.ovsdb_rows import Row, as_list
from fabricgen.pipeline import Build
from fabricgen.platform_rows import neutron as neutron_rows

NAME = "policy.security-group"
Rule = tuple[str, int, str, str]  # direction, priority, action, match


def _live_rules(group: Row, acls: Mapping[str, Row]) -> set[Rule]:
    out = set()
    for uuid in as_list(group.get("acls")):
        acl = acls.get(str(uuid))
        if acl is not None:
            out.add((str(acl["direction"]), int(acl["priority"]), str(acl["action"]), str(acl["match"])))
    return out


def _wanted(group: Mapping[str, Any], security_group_id: str) -> set[Rule]:
    return {(a.direction, a.priority, a.action, a.match)
            for a in neutron_rows.group_acls(group, {str(group["name"]): security_group_id})}


def _words(rules: set[Rule]) -> str:
    return "; ".join(f"{d} {p} {a} `{m}`" for d, p, a, m in sorted(rules))


def check(build: Build, az: AzLive, subject: str) -> list[Check]:
    clouds = az.security_groups
    if not clouds or az.policy is None:
        return []
    if az.policy.error is not None:
        return [Check(subject, NAME, UNREACHABLE, f"its security groups' rows could not be read: {az.policy.error}")]
    acls = {str(row["_uuid"]): row for row in az.policy.get("ACL")}
    port_groups = az.policy.get("Port_Group")
    ours = [g for g in port_groups if neutron_rows.SECURITY_GROUP_ID in (g.get("external_ids") or {})]
    out: list[Check] = []
    attached = False
    for cloud, groups in sorted(clouds.items()):
        apply = (f"ansible-playbook rendered/{build.plan.site}/_host/{az.source.name}/openstack/{cloud}/"
                 "security-groups.yml")
        for group in groups:
            found = _match(group, ours, acls)
            name = str(group["name"])
            if found is None:
                rules = len(_wanted(group, "ID"))
                out.append(Check(subject, NAME, DRIFT, f"security group {name} of cloud {cloud} is missing: no port "
                                                       f"group Neutron wrote holds any of its {rules} rule(s)", apply))
                continue
            port_group, wanted, live = found
            ports = len(as_list(port_group.get("ports")))
            attached |= ports > 0
            missing, extra = wanted - live, live - wanted
            label = f"security group {name} of cloud {cloud} (port group {port_group['name']})"
            if missing or extra:
                said = [f"{len(missing)} rule(s) missing: {_words(missing)}"] if missing else []
                said += [f"{len(extra)} rule(s) the rendered group does not have: {_words(extra)}"] if extra else []
                out.append(Check(subject, NAME, DRIFT, f"{label}: {'; and '.join(said)}", apply))
            elif ports == 0:
                out.append(Check(subject, NAME, DRIFT, f"{label} holds its {len(wanted)} rule(s) as rendered but no "
                                                       "port: it protects nothing", f"attach {name} to the VMs' ports "
                                                       f"(openstack port set --no-security-group --security-group "
                                                       f"{name} PORT)"))
            elif (others := _other_groups(port_group, ours)):
                out.append(Check(subject, NAME, DRIFT, f"{label} holds its {len(wanted)} rule(s) as rendered, but "
                                                       f"{_ports_words(others, _port_names(az))}: what those groups' "
                                                       "rules admit reaches the port too (the project's `default` "
                                                       "group admits every member of it, on every port)",
                                 f"openstack port set --no-security-group --security-group {name} PORT, for each "
                                 "(--security-group alone adds to the port's groups)"))
            else:
                out.append(Check(subject, NAME, OK, f"{label} holds its {len(wanted)} rule(s) as rendered, on "
                                                    f"{ports} port(s)"))
    if attached:
        shared = [c.platform for c in next((d.consumers for d in build.plan.fabric.ovn_deployments
                                            if d.name == az.source.name), []) if c.platform != "openstack"]
        out += _drop_group(subject, port_groups, acls, shared=bool(shared))
    return out


def _other_groups(port_group: Row, ours: Sequence[Row]) -> dict[str, list[str]]:
    """Each port of `port_group` that another security group's port group also holds: port -> those
    port groups' names."""
    ports = {str(p) for p in as_list(port_group.get("ports"))}
    out: dict[str, list[str]] = {}
    for other in ours:
        if other.get("name") == port_group.get("name"):
            continue
        for port in sorted(ports & {str(p) for p in as_list(other.get("ports"))}):
            out.setdefault(port, []).append(str(other["name"]))
    return out


def _port_names(az: AzLive) -> dict[str, str]:
    """Each logical switch port's row UUID -> its name (Neutron's port id); empty where the names
    could not be read (a port is then named by its row)."""
    if az.policy_ports is None or az.policy_ports.error is not None:
        return {}
    return {str(row["_uuid"]): str(row["name"]) for row in az.policy_ports.get("Logical_Switch_Port")}


def _ports_words(others: Mapping[str, list[str]], names: Mapping[str, str]) -> str:
    return "; ".join(f"port {names.get(port, f'row {port}')} is also in {', '.join(sorted(groups))}"
                     for port, groups in sorted(others.items(), key=lambda item: names.get(item[0], item[0])))


def _match(group: Mapping[str, Any], port_groups: Sequence[Row], acls: Mapping[str, Row]
           ) -> tuple[Row, set[Rule], set[Rule]] | None:
    """The port group holding most of the group's rules (on a tie, the first by name), with the
    rules wanted and held; None when none holds any."""
    found = []
    for port_group in port_groups:
        wanted = _wanted(group, str(port_group["external_ids"][neutron_rows.SECURITY_GROUP_ID]))
        live = _live_rules(port_group, acls)
        if wanted & live:
            found.append((-len(wanted & live), str(port_group["name"]), port_group, wanted, live))
    if not found:
        return None
    _score, _name, port_group, wanted, live = min(found, key=lambda f: (f[0], f[1]))
    return port_group, wanted, live


RESTART = "restart neutron-server (it creates neutron_pg_drop at start)"
REPAIR = " or run neutron-ovn-db-sync-util --ovn-neutron_sync_mode repair"


def _drop_group(subject: str, port_groups: Sequence[Row], acls: Mapping[str, Row], *, shared: bool) -> list[Check]:
    drop = next((g for g in port_groups if g.get("name") == neutron_rows.DROP_GROUP), None)
    live = _live_rules(drop, acls) if drop is not None else set()
    drops = {(d, p, a, m) for d, p, a, m in live if a == "drop" and p in neutron_rows.DROP_PRIORITIES}
    wanted = {(a.direction, a.match) for a in neutron_rows.drop_acls()}
    foreign = live - {r for r in drops if (r[0], r[3]) in wanted}
    out = []
    if foreign:
        out.append(Check(subject, f"{NAME}.drop", DRIFT,
                         f"neutron_pg_drop holds {len(foreign)} ACL(s) Neutron does not write: {_words(foreign)}: "
                         "what they let through no security group's rules decide, on every port of every group",
                         "delete them (ovn-nbctl acl-del neutron_pg_drop DIRECTION PRIORITY MATCH); find who writes "
                         "them first"))
    if {(d, m) for d, _p, _a, m in drops} >= wanted:
        return out
    why = ("there is no port group neutron_pg_drop" if drop is None else
           "neutron_pg_drop lacks its drop ACLs (`outport == @neutron_pg_drop && ip`, `inport == @neutron_pg_drop && "
           "ip`)")
    fix = RESTART if shared else RESTART + REPAIR
    return [*out, Check(subject, f"{NAME}.drop", DRIFT, f"{why}: a port in a security group lets in what no rule names",
                        fix)]
