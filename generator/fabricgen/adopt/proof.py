"""The round-trip proof: the imported fabric rendered, and each rendered object compared with the
live one it came from (`kube_objects.compare`, every field: what the live object has that the
fabric cannot say counts), after removing what the API server, admission and Kube-OVN add.

Each live object, each rendered object and each availability zone of `ovn-ic-sbctl show` is
one entry:

- `imported`: the rendered object equals the live one (an AZ: its port address is the zone's
  transitAddress);
- `partial`: fabricgen renders the object, and named fields differ (the differences are listed);
- `conflict`: the live object contradicts the fabric or another live object (two clusters with
  one az-name, two zones on one transit address, a stale route, zones disagreeing on the IC
  database), with why;
- `unmapped`: a live object fabricgen does not manage, with why (or what it was read for);
- `added`: rendered, with no live counterpart. The IC database's script ConfigMap, the IC
  server Deployment (`OWN`) and the tenant namespaces fabricgen creates (`NAMESPACE`) are
  fabricgen's own; any other added object was not in the captures.

The round trip is exact when no entry is partial or conflict, and nothing was added but
fabricgen's own objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fabricgen.adopt import ic_server
from fabricgen.adopt.mapping import Imported
from fabricgen.judge import kube_compare
from fabricgen.model import Fabric
from fabricgen.observe import kube_objects as ko
from fabricgen.pipeline import render_kubernetes

IC_SB = "ovn-ic-sb"
STATUSES = ("imported", "partial", "conflict", "unmapped", "added")
OWN = {
    ic_server.IC_SERVER:
        "the IC server fabricgen runs in the zone of the IC database, its members from the raft server list (the "
        "Deployment was not captured); install-ic-server.sh names its Deployment the same, and applying the output "
        "replaces that one (its pods restart one by one)",
    ko.ObjectId("", "ConfigMap", "kube-system", "fabricgen-ic-db-setup"):
        "fabricgen's script that the IC server's sidecar runs to keep vxlan_mode set on the IC northbound",
}

NAMESPACE = ("a namespace the zone's NADs need: fabricgen creates it when it is missing and never deletes it "
             "(merged server-side); one that exists stays as it is")


@dataclass(frozen=True)
class Entry:
    cluster: str  # the cluster's name, or IC_SB for an availability zone of the show
    zone: str | None
    object: str  # "Kind: namespace/name", or "AvailabilityZone: NAME"
    status: str
    reason: str
    origin: str | None = None
    differences: tuple[kube_compare.FieldDifference, ...] = ()
    unexpressed: tuple[str, ...] = ()
    own: bool = False  # added, and one of fabricgen's own objects

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cluster": self.cluster, "zone": self.zone, "object": self.object,
                               "status": self.status, "reason": self.reason}
        if self.origin is not None:
            out["origin"] = self.origin
        if self.differences:
            out["differences"] = [d.as_dict() for d in self.differences]
        if self.unexpressed:
            out["notExpressed"] = list(self.unexpressed)
        return out


@dataclass(frozen=True)
class Proof:
    entries: tuple[Entry, ...]
    rendered: bool = True
    why_not: str = ""  # when the fabric could not be rendered
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def exact(self) -> bool:
        return self.rendered and not any(e.status in ("partial", "conflict") or (e.status == "added" and not e.own)
                                         for e in self.entries)


def prove(imported: Imported, fabric: Fabric | None, source_name: str, *, valid: bool) -> Proof:
    """Render `fabric` (the imported file as validated) and compare; `valid` says whether it passed
    validation: a fabric with rule errors is rendered if it can be, one with schema errors is not."""
    entries: list[Entry] = []
    seen: set[tuple[str, ko.ObjectId]] = set()
    rendered = True
    why_not = ""
    build = None
    if fabric is None:
        rendered, why_not = False, "the imported fabric has schema errors, so it cannot be rendered"
    else:
        try:
            build = render_kubernetes(fabric, source_name)
        except (ValueError, KeyError, AssertionError) as exc:
            if valid:
                raise
            rendered, why_not = False, f"the imported fabric's errors keep it from rendering ({exc})"
    if build is not None:
        for zone, cluster in imported.zone_clusters.items():
            uses = imported.uses_of(cluster)
            for obj in build.objects(zone):
                ident = ko.identify(obj)
                use = uses.get(ident)
                if use is None:
                    own = OWN.get(ident) or (NAMESPACE if (ident.group, ident.kind) == ("", "Namespace") else None)
                    entries.append(Entry(cluster, zone, str(ident), "added",
                                         own or "rendered, but not in the captures (capture it, or it is new)",
                                         own=own is not None))
                    continue
                seen.add((cluster, ident))
                if ident == ic_server.IC_SERVER:  # compared on what decides the raft cluster
                    differences = ic_server.differences(obj, use.obj)
                else:
                    differences = kube_compare.compare(obj, use.obj.body, fields="all").differences
                if use.status == "conflict":
                    status = "conflict"
                elif not differences and not use.unexpressed:
                    status = "imported"
                else:
                    status = "partial"
                entries.append(Entry(cluster, zone, str(ident), status, use.reason, use.obj.origin,
                                     differences, tuple(use.unexpressed)))
    for use in imported.uses:
        if (use.cluster, use.id) in seen:
            continue
        if use.status == "conflict":
            status, reason = "conflict", use.reason
        elif use.status == "rendered":
            status = "partial" if rendered else "unmapped"
            reason = (f"{use.reason}; but the imported fabric does not render it" if rendered
                      else f"{use.reason} (not compared: {why_not})")
        else:
            status, reason = "unmapped", use.reason
        entries.append(Entry(use.cluster, use.zone, str(use.id), status, reason, use.obj.origin,
                             (), tuple(use.unexpressed)))
    for az in imported.azs:
        entries.append(Entry(IC_SB, az.name if az.status != "unmapped" else None, f"AvailabilityZone: {az.name}",
                             az.status, az.reason, f"{az.port} (line {az.line})" if az.port else None))
    counts = {s: sum(e.status == s for e in entries) for s in STATUSES}
    return Proof(tuple(_ordered(entries, imported)), rendered, why_not, counts)


def _ordered(entries: list[Entry], imported: Imported) -> list[Entry]:
    """Per cluster in input order, then the IC southbound; within one, by status, then object."""
    clusters = list(dict.fromkeys([u.cluster for u in imported.uses] + list(imported.zone_clusters.values())))
    rank = {c: i for i, c in enumerate([*clusters, IC_SB])}
    return sorted(entries, key=lambda e: (rank.get(e.cluster, len(rank)), STATUSES.index(e.status), e.object))
