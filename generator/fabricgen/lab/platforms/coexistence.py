"""What another controller does to ACL rows it does not own, played in a lab's northbound DB: the
behaviours behind validation's refusals (FG910), so that a test can show what happens to the rows
a refusal is about.

- `ovn_kubernetes_sync_acls`: OVN-Kubernetes before v1.1.0, at every start of its default network
  controller (ovn-org/ovn-kubernetes v1.0.0 `go-controller/pkg/ovn/external_ids_syncer/acl/
  acl_sync.go` `SyncACLs`, removed by commit 7c75baeaf, first in v1.1.0): every ACL without
  `k8s.ovn.org/owner-controller` that is not one of its own legacy ACLs is removed from every
  logical switch and port group (the row goes with its last reference), and every ACL in tier 0
  is moved to tier 2 (`DefaultACLTier`), whoever wrote it. Its legacy ACLs (`policy_type`,
  `default-deny-policy-type`, multicast and node ACLs of its own) are given owners instead; a
  Neutron row has none of those keys, so every Neutron row is removed.
- `kube_ovn_migrate_acl_tier`: Kube-OVN v1.13.14, v1.14.0 and later, at every start of its
  controller (kubeovn/kube-ovn v1.16.2 `pkg/ovs/ovn-nb-acl.go` `MigrateACLTier`): every ACL in
  tier 0 is moved to tier 2 (`NetpolACLTier`), with no owner filter.
"""

from __future__ import annotations

from typing import Any

from fabricgen.lab.ovn.databases import NB
from fabricgen.lab.ovn.sandbox import Sandbox, atoms
from fabricgen.lab.platforms.kubeovn import batch

OWNER = "k8s.ovn.org/owner-controller"
LEGACY_KEYS = ("policy_type", "default-deny-policy-type")  # what SyncACLs converts instead of removing
DEFAULT_TIER = 2


def _acls(sandbox: Sandbox, az: str) -> list[dict[str, Any]]:
    columns = ["_uuid", "external_ids", *(["tier"] if sandbox.acl_tiers else [])]
    return sandbox.rows(sandbox.nb_db(az), NB, "ACL", columns)


def _uuid(row: dict[str, Any]) -> str:
    return str(row["_uuid"][1])


def _moved_to_tier_2(sandbox: Sandbox, acls: list[dict[str, Any]]) -> list[list[str]]:
    if not sandbox.acl_tiers:
        return []
    return [["set", "ACL", _uuid(a), f"tier={DEFAULT_TIER}"] for a in acls if a.get("tier") == 0]


def ovn_kubernetes_sync_acls(sandbox: Sandbox, az: str) -> int:
    """`SyncACLs` of OVN-Kubernetes v1.0.0 on an AZ's NB; returns how many ACLs it removed."""
    acls = _acls(sandbox, az)
    foreign = {_uuid(a) for a in acls
               if OWNER not in dict(a["external_ids"][1]) and
               not any(dict(a["external_ids"][1]).get(key) for key in LEGACY_KEYS)}
    commands = [["remove", table, _uuid(holder), "acls", acl]
                for table in ("Logical_Switch", "Port_Group")
                for holder in sandbox.rows(sandbox.nb_db(az), NB, table, ["_uuid", "acls"])
                for acl in sorted(set(map(str, atoms(holder["acls"]))) & foreign)]
    commands += _moved_to_tier_2(sandbox, [a for a in acls if _uuid(a) not in foreign])
    if commands:
        sandbox.nb(az, *batch(commands))
    return len(foreign)


def kube_ovn_migrate_acl_tier(sandbox: Sandbox, az: str) -> int:
    """`MigrateACLTier` of Kube-OVN on an AZ's NB; returns how many ACLs it moved."""
    commands = _moved_to_tier_2(sandbox, _acls(sandbox, az))
    if commands:
        sandbox.nb(az, *batch(commands))
    return len(commands)
