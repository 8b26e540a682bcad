"""A pull-request view of what a fabric change does to the rendered output.

Objects are matched by zone, kind, namespace and name (not by position), text
files by path. An object that leaves the output but that GitOps never deletes
(`Prune=false`/`Delete=false`, Flux `prune: disabled`: the partial Configuration and
Vpc `ovn-cluster`) is reported as kept, not deleted. The merge-patch file
`ic-routes-<zone>.json` carries the same routes as the Vpc `ovn-cluster`, so when both
change only the Vpc is shown.

Cautions come from comparing the two fabrics: changes that disrupt traffic when
applied, each naming the zones concerned and what to do. The Markdown form has a
summary with counts, the cautions, a table per zone and one collapsible section per
zone with a fenced `diff` per object; only the object diffs are cut to stay under
GitHub's comment limit.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from fabricgen.model import Fabric
from fabricgen.model.zone import Zone
from fabricgen.pipeline import Build
from fabricgen.serialise.manifest_yaml import dump

COMMENT_LIMIT = 65536  # GitHub rejects comments over 65,536 characters
STATUSES = ("added", "modified", "deleted", "kept")
IC_CONFIG = "ConfigMap: kube-system/ovn-ic-config"
IC_DB_SCRIPT = "ConfigMap: kube-system/fabricgen-ic-db-setup"
DEFAULT_VPC = "Vpc: ovn-cluster"
_ROUTE_PATCH = re.compile(r"^File: .*ic-routes-[^/]*\.json$")


@dataclass(frozen=True)
class Change:
    directory: str  # output directory ('' for the site's top)
    title: str  # "Kind: namespace/name" or "File: path"
    status: str  # added | modified | deleted | kept
    diff: str
    note: str = ""

    @property
    def zone(self) -> str:
        """The zone (or `_host`) the change belongs to: the first part of its directory."""
        return self.directory.split("/", 1)[0]

    def as_dict(self) -> dict[str, str]:
        return {"zone": self.zone, "directory": self.directory, "title": self.title, "status": self.status,
                "note": self.note, "diff": self.diff}


@dataclass(frozen=True)
class Caution:
    zones: tuple[str, ...]
    text: str
    ic_config: bool = False  # explains the ovn-ic-config change of its zones

    def line(self) -> str:
        return f"{', '.join(self.zones) or '.'}: {self.text}"

    def as_dict(self) -> dict[str, object]:
        return {"zones": list(self.zones), "text": self.text}


@dataclass(frozen=True)
class Review:
    changes: tuple[Change, ...]
    cautions: tuple[Caution, ...]

    def __bool__(self) -> bool:
        return bool(self.changes)

    def zones(self) -> list[str]:
        return sorted({c.zone for c in self.changes})


# ------------------------------------------------------------------ objects and files
def _kept(obj: dict[str, Any]) -> bool:
    """GitOps never deletes this object when it leaves git (Argo CD Prune=false/Delete=false,
    Flux prune: disabled)."""
    notes = obj.get("metadata", {}).get("annotations", {}) or {}
    options = str(notes.get("argocd.argoproj.io/sync-options", "")).split(",")
    return ("Prune=false" in options and "Delete=false" in options) or \
        notes.get("kustomize.toolkit.fluxcd.io/prune") == "disabled"


def _objects(build: Build | None) -> dict[tuple[str, str], tuple[str, bool]]:
    """(directory, title) -> (text, kept when removed)."""
    found: dict[tuple[str, str], tuple[str, bool]] = {}
    if build is None:
        return found
    for directory in build.manifests:
        for obj in build.objects(directory):
            meta = obj.get("metadata", {})
            ns = meta.get("namespace")
            name = f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))
            found[(directory, f"{obj.get('kind')}: {name}")] = (dump(obj), _kept(obj))
    # Manifest files and kustomizations are compared object by object above.
    # (a stage's kustomization.yaml sits beside its manifests: stage-<n>/<file>).
    skip = {PurePosixPath(build.site, d, "kustomization.yaml") for d in build.manifests}
    skip |= {PurePosixPath(build.site, m.directory, m.filename) for ms in build.manifests.values() for m in ms}
    skip |= {PurePosixPath(build.site, m.directory, m.filename).with_name("kustomization.yaml")
             for ms in build.manifests.values() for m in ms}
    for path, out in build.files.items():
        if path in skip:
            continue
        parts = path.parts[1:]
        directory = "/".join(parts[:-1]) if len(parts) > 1 else ""
        found[(directory, f"File: {'/'.join(parts)}")] = (out.text, False)
    return found


def changes(base: Build | None, head: Build | None) -> list[Change]:
    old, new = _objects(base), _objects(head)
    out: list[Change] = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key, ("", False))[0], new.get(key, ("", False))[0]
        if before == after:
            continue
        note = ""
        if key not in old:
            status = "added"
        elif key not in new:
            status = "kept" if old[key][1] else "deleted"
            if status == "kept":
                note = ("kept in the cluster: GitOps never deletes it (Prune=false, Delete=false); "
                        "fabricgen's fields stay in the live object")
        else:
            status = "modified"
        diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), "base", "head", n=3))
        out.append(Change(key[0], key[1], status, diff, note))
    return _routes_once(out)


def _routes_once(items: list[Change]) -> list[Change]:
    """A zone's `ic-routes-<zone>.json` holds the routes of its Vpc `ovn-cluster`: when both change,
    show the Vpc and name the file in its note."""
    vpc_zones = {c.zone for c in items if c.title == DEFAULT_VPC}
    patches = [c for c in items if _ROUTE_PATCH.match(c.title) and c.zone in vpc_zones]
    out = []
    for change in items:
        if change in patches:
            continue
        if change.title == DEFAULT_VPC:
            for patch in (p for p in patches if p.zone == change.zone):
                extra = (f"{patch.title[len('File: '):]}, the same routes as a merge patch, is {patch.status} "
                         "too; shown once")
                change = Change(change.directory, change.title, change.status, change.diff,
                                f"{change.note}; {extra}" if change.note else extra)
        out.append(change)
    return out


# ------------------------------------------------------------------ cautions
def _zone_map(fabric: Fabric | None) -> dict[str, Zone]:
    return {z.name: z for z in fabric.zones} if fabric is not None else {}


def _names(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "none"


def _transit_check(fabric: str) -> str:
    return f"`kubectl ko icsbctl show | fabricgen transit {shlex.quote(fabric)}`"


def _rebuild(fabric: str) -> str:
    return (f"once it is synced, run `kubectl ko icsbctl show | fabricgen transit {shlex.quote(fabric)} --write` "
            "(in the cluster hosting the IC database), render and commit, or the other zones' routes point at a "
            "stale next hop")


# How Kube-OVN's IC controller treats a changed ovn-ic-config (kubeovn/kube-ovn
# pkg/ovn_ic_controller): up to v1.16.2 `getICState` calls any difference icConfigChange, and
# resyncInterConnection tears that zone's interconnection down (its ports, learned routes and
# gateway labels) and re-establishes it, so the zone gets a new random transit address; the
# other zones are untouched. `classifyICConfig` (commit 37d4da488 on release-1.16, first in
# v1.16.3; fb3d77631 on release-1.15, first in v1.15.24; master's ad10f798) calls a change of
# gw-nodes alone icGatewayChange and moves the gateways in place.
GATEWAY_CHANGE_IN_PLACE = ((1, 15, 24), (1, 16, 3))


def gateway_change_in_place(fabric: Fabric) -> bool | None:
    """Whether the zones' Kube-OVN moves gw-nodes without rebuilding (None: version unknown)."""
    ic = fabric.interconnection
    version = ic.kube_ovn_full_version if ic is not None else None
    if version is None:
        return None
    major, minor, patch = version[0], version[1], version[2] or 0
    if (major, minor) == (1, 15):
        return (major, minor, patch) >= GATEWAY_CHANGE_IN_PLACE[0]
    return (major, minor, patch) >= GATEWAY_CHANGE_IN_PLACE[1]


def _kube_ovn(fabric: Fabric) -> str:
    ic = fabric.interconnection
    version = ic.kube_ovn_full_version if ic is not None else None
    if version is None:
        return "Kube-OVN"
    return f"Kube-OVN {version[0]}.{version[1]}" + (f".{version[2]}" if version[2] is not None else "")


def fabric_cautions(base: Fabric | None, head: Fabric | None, fabric: str = "FABRIC") -> list[Caution]:
    """Disruptive differences between two fabrics, each naming its zones and the remedy."""
    if base is None or head is None:
        return []
    old, new = _zone_map(base), _zone_map(head)
    staying = [z for z in new if z in old]
    notes: list[Caution] = []
    ts = head.interconnection.transit_switch.name if head.interconnection else "ts"
    for name, zone in old.items():
        if name in new:
            continue
        others = [z for z in new if z in old]
        notes.append(Caution((name, *others), (
            f"zone {name} is removed and leaves the interconnection: its ovn-ic-config is deleted, so Kube-OVN "
            f"takes {name} off transit switch {ts}, and the other zones ({_names(others)}) drop their routes to "
            f"{name}'s backbone {zone.backbone.cidr}. Configuration kubeovn and Vpc ovn-cluster are kept in "
            f"{name}'s cluster (Prune=false, Delete=false): if the cluster stays, remove fabricgen's routes from "
            "its Vpc ovn-cluster by hand, and delete the zone's Argo CD Application or Flux Kustomization")))
    for name in staying:
        a, b = old[name], new[name]
        others = [z for z in staying if z != name]
        if a.backbone.cidr != b.backbone.cidr:
            notes.append(Caution((name, *others), (
                f"the backbone of {name} changes {a.backbone.cidr} -> {b.backbone.cidr}: VMs and hosts on it must "
                f"be re-addressed, and the other zones ({_names(others)}) route to the new CIDR only once their "
                "routes are synced; sync every zone together")))
        if a.transit_address is not None and a.transit_address != b.transit_address:
            notes.append(Caution((name, *others), (
                f"the transit address of {name} changes {a.transit_address} -> {b.transit_address or '(unset)'}: "
                f"it must be {name}'s port address on the live transit switch {ts}, or every route to {name} "
                f"points at a stale next hop; check with {_transit_check(fabric)} "
                f"or `fabricgen verify {shlex.quote(fabric)} --actual SHOW`")))
        if a.gateway_nodes != b.gateway_nodes:
            change = (f"the gateway nodes of {name} change {_names(a.gateway_nodes)} -> "
                      f"{_names(b.gateway_nodes)}: ovn-ic-config changes, and ")
            in_place = gateway_change_in_place(head)
            if in_place and _ic_config_besides_gateways(base) == _ic_config_besides_gateways(head):
                notes.append(Caution((name,), change + (
                    f"{_kube_ovn(head)} moves {name}'s transit switch gateways in place (its transit address "
                    "stays); traffic of that zone pauses while the gateway port moves"), ic_config=True))
            else:
                later = "" if in_place is not False else (
                    " (from Kube-OVN v1.15.24 and v1.16.3 on, a change of gw-nodes alone is made in place)")
                notes.append(Caution((name,), change + (
                    f"{_kube_ovn(head)} tears {name}'s interconnection down and re-establishes it with a new "
                    f"random transit address{later}; the other zones are not rebuilt, but their routes to {name} "
                    f"point at its old address until they follow; {_rebuild(fabric)}"), ic_config=True))
        notes += _tenant_cautions(a, b)
    notes += _interconnection_cautions(base, head, staying, fabric)
    return notes


def _ic_config_besides_gateways(fabric: Fabric) -> tuple[object, ...]:
    """What ovn-ic-config holds besides az-name (the zone's name) and gw-nodes
    (render/kubeovn_ic.py): ic-db-host, ic-nb-port, ic-sb-port, auto-route."""
    ic = fabric.interconnection
    if ic is None:
        return ()
    db = ic.database
    return tuple(str(m.address) for m in db.members), db.nb_port, db.sb_port, ic.auto_route


def _tenant_cautions(a: Zone, b: Zone) -> list[Caution]:
    notes = []
    kept = {v.name: v for v in b.vpcs}
    for vpc in a.vpcs:
        if vpc.name not in kept:
            subnets = ", ".join(f"{s.name} {s.cidr}" for s in vpc.subnets) or "no subnets"
            notes.append(Caution((a.name,), (
                f"tenant VPC {vpc.name} is removed from {a.name} ({subnets}): VMs attached to its subnets lose "
                "their network; move or stop them before this syncs")))
            continue
        still = {s.name for s in kept[vpc.name].subnets}
        for subnet in vpc.subnets:
            if subnet.name not in still:
                notes.append(Caution((a.name,), (
                    f"subnet {subnet.name} ({subnet.cidr}) of tenant VPC {vpc.name} is removed from {a.name}: VMs "
                    "attached to it lose their network; move or stop them before this syncs")))
    return notes


def _interconnection_cautions(base: Fabric, head: Fabric, zones: list[str], fabric: str) -> list[Caution]:
    notes: list[Caution] = []
    a, b = base.interconnection, head.interconnection
    if a is None or b is None:
        return notes
    deployments = [d.name for d in head.ovn_deployments if d.interconnect is not None]
    members = [(m.node, str(m.address)) for m in a.database.members]
    if members != [(m.node, str(m.address)) for m in b.database.members]:
        old = _names([f"{n} {ip}" for n, ip in members])
        new = _names([f"{m.node} {m.address}" for m in b.database.members])
        notes.append(Caution((*zones, *deployments), (
            f"the IC database members change ({old} -> {new}): every zone's ovn-ic-config changes (ic-db-host), so "
            "Kube-OVN re-establishes every zone's interconnection with new random transit addresses, and each OVN "
            "deployment's ovn-ic must be restarted with the new ovn-ic.service.d settings; " + _rebuild(fabric)),
            ic_config=True))
    if a.encapsulation != b.encapsulation:
        notes.append(Caution((*zones, *deployments), (
            f"the interconnection's encapsulation changes {a.encapsulation} -> {b.encapsulation}: the IC gateways "
            "of every AZ must switch tunnel type together (Kube-OVN's network type, the deployments' "
            "ovn-encap-type); until all have, traffic between AZs drops. Plan a maintenance window")))
    old_deployments = {d.name: d for d in base.ovn_deployments}
    for d in head.ovn_deployments:
        before = old_deployments.get(d.name)
        if before is not None and before.encapsulation != d.encapsulation:
            notes.append(Caution((d.name,), (
                f"the encapsulation of OVN deployment {d.name} changes {before.encapsulation} -> {d.encapsulation}: "
                "every chassis re-creates its tunnels when configure-ovn-host.sh runs; run it on every host in "
                "one window, as mixed tunnel types do not reach each other")))
    return notes


def cautions(items: Sequence[Change], fabric: str = "FABRIC", covered: frozenset[str] = frozenset(),
             kube_ovn: str = "Kube-OVN") -> list[Caution]:
    """Cautions read from the output itself; `covered`: zones whose ovn-ic-config change a fabric
    caution already explains."""
    notes: list[Caution] = []
    for change in items:
        if change.title == IC_CONFIG and change.status == "modified" and change.zone not in covered:
            notes.append(Caution((change.zone,), (
                f"ovn-ic-config modified: {kube_ovn} tears this zone's interconnection down and re-establishes "
                f"it, with a new random transit address (the other zones are not rebuilt); {_rebuild(fabric)}")))
        if change.title == IC_DB_SCRIPT and change.status == "modified" and "vxlan_mode" in change.diff:
            notes.append(Caution((change.zone,), (
                "the IC database's vxlan_mode changes: this re-keys every existing transit switch "
                "and interrupts traffic between all zones until each AZ has re-synced")))
    return notes


def review(base: Build | None, head: Build, fabric: str = "FABRIC") -> Review:
    items = changes(base, head)
    if not items:
        return Review((), ())
    from_fabrics = fabric_cautions(base.plan.fabric if base else None, head.plan.fabric, fabric)
    covered = frozenset(z for c in from_fabrics if c.ic_config for z in c.zones)
    return Review(tuple(items), tuple(from_fabrics + cautions(items, fabric, covered, _kube_ovn(head.plan.fabric))))


# ------------------------------------------------------------------ output
def _counts(items: Sequence[Change]) -> str:
    counts = {s: sum(c.status == s for c in items) for s in STATUSES}
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no changes"


def _section(change: Change) -> list[str]:
    lines = [f"#### {change.title} ({change.status})"]
    if change.note:
        lines.append(f"_{change.note}_")
    return [*lines, "```diff", change.diff.rstrip("\n"), "```", ""]


def markdown(result: Review, title: str, extra: Sequence[str] = ()) -> str:
    """The comment: summary, cautions, the per-zone table, `extra` sections (topology, lab), then the
    object diffs, as many as fit under GitHub's limit; the rest are listed by name."""
    items = result.changes
    lines = [f"## {title}", "", f"Summary: {_counts(items)}", ""]
    if not items:
        return "\n".join(lines)
    lines += [f"> **Caution** {c.line()}\n" for c in result.cautions]
    zones = result.zones()
    lines += ["| zone | changes |", "| --- | --- |"]
    lines += [f"| `{z or '.'}` | {_counts([c for c in items if c.zone == z])} |" for z in zones]
    lines.append("")
    for block in extra:  # each only if it leaves room for the list of object diffs
        if sum(len(line) + 1 for line in lines) + len(block) + 4000 < COMMENT_LIMIT:
            lines += [block.rstrip("\n"), ""]
        else:
            first = block.strip().splitlines()[0] if block.strip() else ""
            lines += [f"_Left out, too long for one comment: {first}_", ""]
    text = "\n".join(lines)
    cut = ("\n_Some object diffs are left out: the comment would exceed GitHub's limit of 65,536 characters. "
           "Run `fabricgen diff` locally to see them._\n")
    room = COMMENT_LIMIT - len(text) - len(cut) - 2
    body: list[str] = []
    left: list[Change] = []
    for zone in zones:
        head, foot = f"<details>\n<summary>{zone or '.'}</summary>\n", "</details>\n"
        parts: list[str] = []
        used = len(head) + len(foot) + 2
        for change in (c for c in items if c.zone == zone):
            part = "\n".join(_section(change))
            if not left and used + len(part) + 1 <= room:
                parts.append(part)
                used += len(part) + 1
            else:
                left.append(change)
        if parts:
            body.append("\n".join([head, *parts, foot]))
            room -= used
    if not left:
        return text + "\n" + "\n".join(body)
    listing: list[str] = []
    for n, c in enumerate(left):
        line = f"- `{c.zone or '.'}` {c.title} ({c.status})"
        if len(line) + 1 > room - 40:
            listing.append(f"- and {len(left) - n} more")
            break
        listing.append(line)
        room -= len(line) + 1
    return text + "\n" + "\n".join(body) + cut + "\n".join(listing) + "\n"


def plain(result: Review) -> Iterator[str]:
    for caution in result.cautions:
        yield f"caution: {caution.line()}\n"
    for change in result.changes:
        yield f"=== {change.directory or '.'}: {change.title} ({change.status})\n"
        if change.note:
            yield f"# {change.note}\n"
        yield change.diff


def as_json(result: Review, fabric: str, base: str) -> str:
    zones = [{"zone": z, **{s: sum(c.status == s and c.zone == z for c in result.changes) for s in STATUSES}}
             for z in result.zones()]
    doc = {"fabric": fabric, "base": base, "changed": bool(result),
           "summary": {s: sum(c.status == s for c in result.changes) for s in STATUSES},
           "cautions": [c.as_dict() for c in result.cautions], "zones": zones,
           "changes": [c.as_dict() for c in result.changes]}
    return json.dumps(doc, indent=2) + "\n"
