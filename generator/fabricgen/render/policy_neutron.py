"""The policy on OpenStack: a Neutron security group per protected group, as an Ansible playbook of
the OpenStack Ansible SIG's `openstack.cloud` collection (`security_group` with
`security_group_rules`, collection 2.0.0 and later).

Why this form: Neutron ML2/OVN turns a security group into its own port group and ACLs
(`pg_<id>`, rules at 1002, `neutron_pg_drop` at 1001: openstack/neutron
`neutron/common/ovn/constants.py`, `neutron/common/ovn/acl.py`), and its `ovn_db_sync` repairs
rows it did not write, so fabricgen writes the group, never the rows. The module runs against the
Neutron API with nothing installed in the cloud, and brings the group to exactly the listed rules
(openstack/ansible-collections-openstack `plugins/modules/security_group.py`, 2.5.0): a rule
already there is kept, the others are deleted and the missing created. Heat's
`OS::Neutron::SecurityGroup` replaces every rule of the group on any update; the module deletes and
recreates only the rules that change (deletions first: a changed rule is missing for a moment,
which `fabricgen diff` cautions). Apply with `ansible-playbook security-groups.yml` where
`clouds.yaml` names the cloud as the consumer is named.

The module matches an existing rule on the fields a listed rule gives, a field left out matching
anything (and `protocol: any` left out too, 2.5.0 L499), and fails when two match; so every rule
is written with all its fields and a description of its own, which names its protocol, ports and
source. Rules are written as Neutron stores them, so a second run finds them unchanged: the whole
port range 1-65535 as no range (`_make_canonical_port_range`), and two rules Neutron's duplicate
check takes for one (`securitygroups_db._rule_to_key`: everything but the description, 0.0.0.0/0
as no prefix) as one rule whose description names both: Neutron refuses the second with
`DuplicateSecurityGroupRuleInPost`, after the module has deleted the rules it no longer wants.
Neutron's default egress rules are deleted unless listed: the egress
rule is listed. A security group admits nothing by itself: each rule lets one source range in on
its protocol and ports (`remote_ip_prefix`), the group's own ports in by `remote_group`. Attach the
group to the VMs' ports; fabricgen does not know them.
"""

from __future__ import annotations

from typing import Any

from fabricgen.plan.policy import NEUTRON, Allowed, object_name
from fabricgen.plan.zones import Plan
from fabricgen.render.artifacts import Artifact, TextFile
from fabricgen.render.header import header
from fabricgen.render.host_tree import platform_dir
from fabricgen.serialise import manifest_yaml

FILENAME = "security-groups.yml"


FULL_RANGE = (1, 65535)  # Neutron stores it as no range (neutron/db/securitygroups_db.py)
DESCRIPTION_MAX = 255  # Neutron's description column


def _rule(name: str, rule: Allowed | None, remote: dict[str, str], ports: tuple[int, int] | None) -> dict[str, Any]:
    protocol = rule.protocol if rule is not None and rule.protocol != "any" else "any"
    ports = None if ports == FULL_RANGE else ports
    what = protocol if ports is None else f"{protocol}/{ports[0]}" + (f"-{ports[1]}" if ports[1] != ports[0] else "")
    source = remote.get("remote_ip_prefix") or f"group {remote.get('remote_group')}"
    out: dict[str, Any] = {"description": f"{name}: {what} from {source}", "direction": "ingress",
                           "ether_type": "IPv4", "protocol": protocol}
    if ports is not None:
        out["port_range_min"], out["port_range_max"] = ports
    return {**out, **remote}


def neutron_key(rule: dict[str, Any]) -> tuple[object, ...]:
    """What Neutron's duplicate check compares (`_rule_to_key`): every field but the description,
    0.0.0.0/0 as no prefix."""
    prefix = rule.get("remote_ip_prefix")
    return (rule.get("direction"), rule.get("ether_type"), rule.get("port_range_max"), rule.get("port_range_min"),
            rule.get("protocol"), rule.get("remote_group"), None if prefix == "0.0.0.0/0" else prefix)


def _merged(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One rule per Neutron key, in first-seen order; the description names every rule it stands for."""
    unique: dict[tuple[object, ...], dict[str, Any]] = {}
    for rule in rules:
        key = neutron_key(rule)
        if key not in unique:
            unique[key] = dict(rule)
        elif rule["description"] not in unique[key]["description"].split("; "):
            joined = f"{unique[key]['description']}; {rule['description']}"
            unique[key]["description"] = joined if len(joined) <= DESCRIPTION_MAX else unique[key]["description"]
    return list(unique.values())


def group_rules(plan: Plan, group: str) -> list[dict[str, Any]]:
    policy = plan.policy
    own = f"fabricgen {group} (its own members)"
    rules = [_rule(own, None, {"remote_group": object_name(group)}, None)]
    rules += [_rule(own, None, {"remote_ip_prefix": str(c)}, None) for c in policy.cidrs(group)]
    for allowed in policy.into(group):
        ranges: list[tuple[int, int] | None] = list(allowed.ports) or [None]
        rules += [_rule(f"fabricgen {allowed.name}", allowed, {"remote_ip_prefix": str(c)}, r)
                  for c in policy.cidrs(allowed.source) for r in ranges]
    rules.append({"description": f"fabricgen {group}: every egress", "direction": "egress", "ether_type": "IPv4",
                  "protocol": "any"})
    return _merged(rules)


def playbook(plan: Plan, cloud: str, groups: list[str]) -> list[dict[str, Any]]:
    tasks = [{
        "name": f"security group {object_name(group)}",
        "openstack.cloud.security_group": {
            "cloud": cloud,
            "name": object_name(group),
            "description": f"fabricgen policy group {group}",
            "state": "present",
            "security_group_rules": group_rules(plan, group),
        },
    } for group in groups]
    return [{"name": f"fabricgen policy for OpenStack cloud {cloud}", "hosts": "localhost",
             "gather_facts": False, "tasks": tasks}]


def render(plan: Plan) -> list[Artifact]:
    by_cloud: dict[str, list[str]] = {}
    for member in plan.policy.enforced_by(NEUTRON):
        assert member.cloud is not None
        groups = by_cloud.setdefault(member.cloud, [])
        if member.group not in groups:
            groups.append(member.group)
    out: list[Artifact] = []
    for deployment in plan.fabric.ovn_deployments:
        for consumer in deployment.consumers:
            if consumer.platform == "openstack" and consumer.name in by_cloud:
                text = header(plan) + "---\n" + manifest_yaml.dump(playbook(plan, consumer.name,
                                                                           by_cloud[consumer.name]))
                out.append(TextFile(platform_dir(deployment.name, "openstack", consumer.name) / FILENAME, text))
    return out
