"""What Neutron's ML2/OVN driver writes into the lab's northbound DB for the rendered security
groups: the rows `observe.neutron_rows` describes (openstack/neutron 28.0.1), with the lab's VM
ports in them. `ovn_client.create_port` puts a port with port security into `neutron_pg_drop` and
its groups' port groups in one transaction, and sets its `port_security` to its MAC and address.

Neutron keeps ids the lab does not have: a group's and a rule's id are uuid5 of the cloud and
name (and the rule's place), stable from run to run.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from fabricgen.lab.platforms import nb_rows
from fabricgen.platform_rows.acls import Acl
from fabricgen.platform_rows.neutron import (
    DROP_GROUP,
    SECURITY_GROUP_ID,
    drop_acls,
    group_acls,
    groups,
    port_group_name,
)

_IDS = uuid.UUID("6f1f0e5e-3d1c-4c64-9a55-2b9d6f0c6a11")  # the lab's namespace for Neutron's ids


def group_id(cloud: str, name: str) -> str:
    return str(uuid.uuid5(_IDS, f"{cloud}/{name}"))


def _acl_commands(port_group: str, acls: Sequence[Acl]) -> list[list[str]]:
    return [command for acl in acls
            for command in nb_rows.acl("Port_Group", port_group, acl.direction, acl.priority, acl.match, acl.action,
                                       external_ids=dict(acl.external_ids))]


def commands(cloud: str, playbook: list[Mapping[str, Any]], ports: Mapping[str, tuple[str, str]],
             ) -> tuple[list[Acl], list[list[str]]]:
    """The rows of a cloud's rendered security groups, and of `neutron_pg_drop`, with the lab's
    ports in them: `ports` maps a group's name to (its member VM's logical port, that port's
    `MAC IP`). Returns every ACL written and the ovn-nbctl commands (one transaction)."""
    found = groups(playbook)
    ids = {str(g["name"]): group_id(cloud, str(g["name"])) for g in found}
    members = [port for port, _address in ports.values()]
    out = [["pg-add", DROP_GROUP, *members]]
    acls = drop_acls()
    out += _acl_commands(DROP_GROUP, acls)
    for group in found:
        name = str(group["name"])
        port_group = port_group_name(ids[name])
        own = [ports[name][0]] if name in ports else []
        out += [["pg-add", port_group, *own],
                ["set", "Port_Group", port_group, *nb_rows.pairs("external_ids", {SECURITY_GROUP_ID: ids[name]})]]
        made = [replace(acl, external_ids=(("neutron:security_group_rule_id",
                                            str(uuid.uuid5(_IDS, f"{cloud}/{name}/{i}"))),))
                for i, acl in enumerate(group_acls(group, ids))]
        out += _acl_commands(port_group, made)
        acls += made
    for port, address in ports.values():
        out.append(["lsp-set-port-security", port, address])
    return acls, out
