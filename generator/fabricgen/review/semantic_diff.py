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
from fabricgen.model.interconnect import Interconnection
from fabricgen.model.zone import Zone
from fabricgen.pipeline import Build
from fabricgen.review.policy_changes import policy_notes
from fabricgen.serialise.manifest_yaml import dump

COMMENT_LIMIT = 65536  # GitHub rejects comments over 65,536 characters
CAUTION_FLOOR = 400  # characters each caution keeps however long the table is
STATUSES = ("added", "modified", "deleted", "kept", "orphaned")
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
    """One kind of disruptive change, with every zone it concerns listed once."""

    zones: tuple[str, ...]
    text: str
    ic_config: bool = False  # explains the ovn-ic-config change of its zones
    names_zones: bool = False  # the text names each zone with its detail: no list of zones before it

    def line(self) -> str:
        return self.text if self.names_zones else f"{', '.join(self.zones) or '.'}: {self.text}"

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


ORPHANED_NOTE = ("left in the cluster: its zone is no longer rendered, and fabricgen's Argo CD Application and "
                 "Flux Kustomizations of a removed zone are pruned without deleting what they applied (no resources "
                 "finalizer, deletionPolicy: Orphan); delete it by hand if it must go")


def changes(base: Build | None, head: Build | None) -> list[Change]:
    old, new = _objects(base), _objects(head)
    retired = set(base.manifests) - set(head.manifests) if base is not None and head is not None else set()
    out: list[Change] = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key, ("", False))[0], new.get(key, ("", False))[0]
        if before == after:
            continue
        note = ""
        if key not in old:
            status = "added"
        elif key not in new and key[0] in retired and not key[1].startswith("File: "):
            status, note = "orphaned", ORPHANED_NOTE
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
    patches = [c for c in items if _ROUTE_PATCH.fullmatch(c.title) and c.zone in vpc_zones]
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


def _each(pairs: Sequence[tuple[str, str]]) -> str:
    """`zone detail; zone detail`: each zone once, with what changes in it."""
    return "; ".join(f"{zone} {detail}" for zone, detail in pairs)


def gateway_change_in_place(fabric: Fabric) -> bool | None:
    """Whether the zones' Kube-OVN moves gw-nodes without rebuilding (None: version unknown)."""
    ic = fabric.interconnection
    return ic.gateway_change_in_place if ic is not None else None


def _kube_ovn(fabric: Fabric) -> str:
    ic = fabric.interconnection
    version = ic.kube_ovn_full_version if ic is not None else None
    if version is None:
        return "Kube-OVN"
    return f"Kube-OVN {version[0]}.{version[1]}" + (f".{version[2]}" if version[2] is not None else "")


def fabric_cautions(base: Fabric | None, head: Fabric | None, fabric: str = "FABRIC") -> list[Caution]:
    """Disruptive differences between two fabrics: one caution per kind of change, naming each zone
    it concerns once, and the remedy."""
    if base is None or head is None:
        return []
    old, new = _zone_map(base), _zone_map(head)
    staying = [z for z in new if z in old]
    notes: list[Caution] = []
    ts = head.interconnection.transit_switch.name if head.interconnection else "ts"
    removed = [(name, zone) for name, zone in old.items() if name not in new]
    if removed:
        names = [name for name, _zone in removed]
        one = len(removed) == 1
        notes.append(Caution(tuple(names), (
            f"{'zone' if one else 'zones'} {_names(names)} {'is' if one else 'are'} removed from the fabric, but "
            f"nothing is deleted in {'its cluster' if one else 'their clusters'}: fabricgen's Argo CD Application "
            "and Flux Kustomizations of a removed zone are pruned without deleting what they applied (no resources "
            "finalizer, deletionPolicy: Orphan), so its ovn-ic-config stays and it stays on transit switch "
            f"{ts}, while the other zones drop their routes to its backbone "
            f"({_each([(name, str(zone.backbone.cidr)) for name, zone in removed])}). By hand, in "
            f"{'its cluster' if one else 'each of those clusters'}: delete ovn-ic-config (or set enable-ic to "
            "\"false\"), check with `ovn-ic-sbctl show` that the AZ and its transit switch port are gone, then "
            "delete the objects you no longer need in reverse stage order (NAT rules, elastic IPs, gateways, "
            "Subnets, NADs, Vpcs); the kept Configuration kubeovn and Vpc ovn-cluster keep fabricgen's fields")))
    backbones = [(n, f"{old[n].backbone.cidr} -> {new[n].backbone.cidr}") for n in staying
                 if old[n].backbone.cidr != new[n].backbone.cidr]
    if backbones:
        notes.append(Caution(tuple(n for n, _ in backbones), (
            f"the backbone changes: {_each(backbones)}: VMs and hosts on it must be re-addressed, and every other "
            "zone routes to the new CIDR only once its routes are synced; sync every zone together"),
            names_zones=True))
    transits = [(n, f"{old[n].transit_address} -> {new[n].transit_address or '(unset)'}") for n in staying
                if old[n].transit_address is not None and old[n].transit_address != new[n].transit_address]
    if transits:
        notes.append(Caution(tuple(n for n, _ in transits), (
            f"the transit address changes: {_each(transits)}: each must be its zone's port address on the live "
            f"transit switch {ts}, or every route to that zone points at a stale next hop; check with "
            f"{_transit_check(fabric)} or `fabricgen verify {shlex.quote(fabric)} --actual SHOW`"),
            names_zones=True))
    gateways = [(n, f"{_names(old[n].gateway_nodes)} -> {_names(new[n].gateway_nodes)}") for n in staying
                if old[n].gateway_nodes != new[n].gateway_nodes]
    if gateways:
        in_place = gateway_change_in_place(head)
        if in_place and _ic_config_besides_gateways(base) == _ic_config_besides_gateways(head):
            notes.append(Caution(tuple(n for n, _ in gateways), (
                f"the gateway nodes change: {_each(gateways)}: ovn-ic-config changes, and {_kube_ovn(head)} moves "
                "each such zone's transit switch gateways in place (its transit address stays); traffic of that "
                "zone pauses while the gateway port moves"), ic_config=True, names_zones=True))
        else:
            later = "" if in_place is not False else (
                " (from Kube-OVN v1.15.24 and v1.16.3 on, a change of gw-nodes alone is made in place)")
            notes.append(Caution(tuple(n for n, _ in gateways), (
                f"the gateway nodes change: {_each(gateways)}: ovn-ic-config changes, and {_kube_ovn(head)} tears "
                f"each such zone's interconnection down and re-establishes it with a new random transit "
                f"address{later}; the other zones are not rebuilt, but their routes to it point at its old address "
                f"until they follow; {_rebuild(fabric)}"), ic_config=True, names_zones=True))
    notes += _tenant_cautions([(old[n], new[n]) for n in staying])
    notes += _interconnection_cautions(base, head, staying, fabric)
    return notes + _deployment_cautions(base, head)


def _ic_config_besides_gateways(fabric: Fabric) -> tuple[object, ...]:
    """What ovn-ic-config holds besides az-name (the zone's name) and gw-nodes
    (render/kubeovn_ic.py): ic-db-host, ic-nb-port, ic-sb-port, auto-route."""
    ic = fabric.interconnection
    if ic is None:
        return ()
    db = ic.database
    return tuple(db.client_hosts()), db.nb_port, db.sb_port, ic.auto_route


def _tenant_cautions(pairs: Sequence[tuple[Zone, Zone]]) -> list[Caution]:
    vpcs: list[tuple[str, str]] = []
    subnets: list[tuple[str, str]] = []
    for a, b in pairs:
        kept = {v.name: v for v in b.vpcs}
        for vpc in a.vpcs:
            if vpc.name not in kept:
                listed = ", ".join(f"{s.name} {s.cidr}" for s in vpc.subnets) or "no subnets"
                vpcs.append((a.name, f"{vpc.name} ({listed})"))
                continue
            still = {s.name for s in kept[vpc.name].subnets}
            subnets += [(a.name, f"{s.name} {s.cidr} of {vpc.name}") for s in vpc.subnets if s.name not in still]
    notes = []
    if subnets:
        notes.append(Caution(tuple(dict.fromkeys(z for z, _ in subnets)), (
            f"tenant subnets are removed: {_each(subnets)}: VMs attached to them lose their network; move or stop "
            "them before this syncs"), names_zones=True))
    if vpcs:
        notes.append(Caution(tuple(dict.fromkeys(z for z, _ in vpcs)), (
            f"tenant VPCs are removed: {_each(vpcs)}: VMs attached to their subnets lose their network; move or "
            "stop them before this syncs"), names_zones=True))
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
        hosting = b.database.zone or a.database.zone
        notes.append(Caution((hosting,) if hosting else (), (
            f"the IC database members change ({old} -> {new}): the raft cluster must change with them, one member "
            "at a time (join a new member before you remove one, cluster/leave on a member before it goes), never "
            "below a majority of what runs; the IC server's replicas and NODE_IPS follow the fabric")))
    if a.database.client_hosts() != b.database.client_hosts():
        notes.append(Caution((*zones, *deployments), (
            f"ic-db-host changes ({_names(a.database.client_hosts())} -> {_names(b.database.client_hosts())}): "
            "every zone's ovn-ic-config changes, so Kube-OVN re-establishes every zone's interconnection with new "
            "random transit addresses, and each OVN deployment's ovn-ic must be restarted with the new "
            "ovn-ic.service.d settings; " + _rebuild(fabric)), ic_config=True))
    if a.encapsulation != b.encapsulation:
        notes.append(Caution((*zones, *deployments), (
            f"the interconnection's encapsulation changes {a.encapsulation} -> {b.encapsulation}: the IC gateways "
            "of every AZ must switch tunnel type together (Kube-OVN's network type, the deployments' "
            "ovn-encap-type); until all have, traffic between AZs drops. Plan a maintenance window")))
    if a.transit_switch.names() != b.transit_switch.names() and b.database.zone is not None:
        notes.append(Caution((*zones, *deployments), _transit_switches_change(a, b, fabric), ic_config=True))
    return notes


def _transit_switches_change(a: Interconnection, b: Interconnection, fabric: str) -> str:
    """What a change of the IC server's transit switch list does. Kube-OVN's IC server creates or
    deletes switches to keep TS_NUM (`updateTS` in pkg/ovn_leader_checker/ovn.go; `ts-del` beyond
    it), and every zone's IC controller calls any change of the IC northbound's switch list an
    icConfigChange (`getICState` in pkg/ovn_ic_controller, v1.16.2 to master): it tears the zone's
    interconnection down and re-establishes it, each zone with new random transit addresses
    (`acquireLrpAddress`), up or down alike."""
    old, new = a.transit_switch.names(), b.transit_switch.names()
    added = [n for n in new if n not in old]
    dropped = [n for n in old if n not in new]
    what = []
    if added:
        what.append(f"the IC server creates {_names(added)}")
    if dropped:
        what.append(f"the IC server deletes {_names(dropped)} with every zone's port on them (updateTS runs "
                    "ovn-ic-nbctl ts-del beyond TS_NUM), and the ECMP paths over them go")
    return (f"the transit switches go {_names(old)} -> {_names(new)}: {'; '.join(what) or 'the list changes'}; "
            "every zone's Kube-OVN then sees the IC northbound's transit switch list change and tears its "
            "interconnection down and re-establishes it with new random transit addresses (getICState in "
            "pkg/ovn_ic_controller calls it icConfigChange, in every release), so every rendered route's next hop "
            f"is stale until the addresses are read again; {_rebuild(fabric)}")


def _deployment_cautions(base: Fabric, head: Fabric) -> list[Caution]:
    old = {d.name: d for d in base.ovn_deployments}
    changed = [(d.name, f"{old[d.name].encapsulation} -> {d.encapsulation}") for d in head.ovn_deployments
               if d.name in old and old[d.name].encapsulation != d.encapsulation]
    notes = []
    if changed:
        notes.append(Caution(tuple(n for n, _ in changed), (
            f"the encapsulation of OVN deployments changes: {_each(changed)}: every chassis re-creates its tunnels "
            "when configure-ovn-host.sh runs; run it on every host of a deployment in one window, as mixed tunnel "
            "types do not reach each other"), names_zones=True))
    mtus = [(d.name, f"{old[d.name].underlay_mtu} -> {d.underlay_mtu}") for d in head.ovn_deployments
            if d.name in old and old[d.name].underlay_mtu != d.underlay_mtu]
    if mtus:
        notes.append(Caution(tuple(n for n, _ in mtus), (
            f"the underlay MTU of OVN deployments changes: {_each(mtus)}: the hosts' tunnel NICs (their netplan "
            "files) and the overlay MTU of every consumer's networks change with it; raise it on the switches "
            "between the hosts first, then apply netplan on every host before the overlay grows (a host still "
            "at the old MTU drops the larger encapsulated packets), and lower it in the opposite order"),
            names_zones=True))
    return notes


def cautions(items: Sequence[Change], fabric: str = "FABRIC", covered: frozenset[str] = frozenset(),
             kube_ovn: str = "Kube-OVN") -> list[Caution]:
    """Cautions read from the output itself; `covered`: zones whose ovn-ic-config change a fabric
    caution already explains."""
    notes: list[Caution] = []
    modified = [c.zone for c in items if c.title == IC_CONFIG and c.status == "modified" and c.zone not in covered]
    if modified:
        notes.append(Caution(tuple(modified), (
            f"ovn-ic-config modified: {kube_ovn} tears each such zone's interconnection down and re-establishes it, "
            f"with a new random transit address (the other zones are not rebuilt); {_rebuild(fabric)}")))
    for change in items:
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
    policy = [Caution(zones, text, names_zones=not zones) for zones, text in policy_notes(base, head)]
    return Review(tuple(items), tuple(from_fabrics + policy + cautions(items, fabric, covered,
                                                                       _kube_ovn(head.plan.fabric))))


# ------------------------------------------------------------------ output
def _counts(items: Sequence[Change]) -> str:
    counts = {s: sum(c.status == s for c in items) for s in STATUSES}
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no changes"


def _section(change: Change) -> list[str]:
    lines = [f"#### {change.title} ({change.status})"]
    if change.note:
        lines.append(f"_{change.note}_")
    return [*lines, "```diff", change.diff.rstrip("\n"), "```", ""]


_CUT_NOTE = "run `fabricgen diff` locally for all of it"


def _table(result: Review, room: int) -> list[str]:
    """The per-zone table: a row per zone; when that is longer than `room`, zones with the same
    counts share a row (each zone still named once); past that, the zones that fit and a count
    of the rest (only when the names alone overflow a comment: about 900 zones of 63 characters)."""
    zones = result.zones()
    counts = {z: _counts([c for c in result.changes if c.zone == z]) for z in zones}
    top = ["| zone | changes |", "| --- | --- |"]
    groups: list[tuple[list[str], str]] = [([f"`{z or '.'}`"], counts[z]) for z in zones]
    if _size(top + [_row(g) for g in groups]) > room:
        shared: dict[str, list[str]] = {}
        for z in zones:
            shared.setdefault(counts[z], []).append(f"`{z or '.'}`")
        groups = [(names, text) for text, names in shared.items()]
    out, named = list(top), 0
    for names, text in groups:
        left = len(zones) - named
        tail = f"| ... | {left} more zone(s): {_CUT_NOTE} (`--format json` lists them) |"
        if _size([*out, _row((names, text)), tail]) <= room:
            out.append(_row((names, text)))
            named += len(names)
            continue
        fits = names[:0]
        for name in names:  # as many of this row's zones as fit, then the count of the rest
            if _size([*out, _row(([*fits, name], text)), tail]) > room:
                break
            fits.append(name)
        if fits:
            out.append(_row((fits, text)))
            named += len(fits)
        out.append(f"| ... | {len(zones) - named} more zone(s): {_CUT_NOTE} (`--format json` lists them) |")
        break
    return [*out, ""]


def _row(group: tuple[list[str], str]) -> str:
    return f"| {', '.join(group[0])} | {group[1]} |"


def _size(lines: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _caution_lines(cautions: Sequence[Caution], room: int) -> list[str]:
    """One quote per caution; a caution longer than its share of `room` is cut, saying so."""
    out: list[str] = []
    for n, caution in enumerate(cautions):
        share = (room - _size(out)) // (len(cautions) - n)
        line = f"> **Caution** {caution.line()}\n"
        if len(line) + 1 > share:
            keep = max(0, share - len(_CUT_NOTE) - 40)
            line = f"> **Caution** {caution.line()[:keep]}... (cut: {_CUT_NOTE})\n"
        out.append(line)
    return out


def markdown(result: Review, title: str, extra: Sequence[str] = ()) -> str:
    """The comment: summary, cautions, the per-zone table, `extra` sections (topology, lab), then the
    object diffs, as many as fit. It never exceeds GitHub's limit, whatever the change: every zone
    keeps its row in the table (zones with the same counts share one when there are many) as long as
    the zones' names fit one comment, before any caution is cut below CAUTION_FLOOR; every caution
    keeps at least its start; what does not fit is listed or counted."""
    items = result.changes
    lines = [f"## {title}", "", f"Summary: {_counts(items)}", ""]
    if not items:
        return "\n".join(lines)
    reserve = 2000  # for the note on what was left out and the start of the listing
    # The table comes first: cautions keep at least the start of each, object diffs what is left.
    floor = sum(min(len(c.line()) + 20, CAUTION_FLOOR) for c in result.cautions)
    table = _table(result, COMMENT_LIMIT - reserve - _size(lines) - floor)
    lines += _caution_lines(result.cautions, COMMENT_LIMIT - reserve - _size(lines) - _size(table))
    lines += table
    zones = result.zones()
    for block in extra:  # each only if it leaves room for the list of object diffs
        if sum(len(line) + 1 for line in lines) + len(block) + 4000 < COMMENT_LIMIT:
            lines += [block.rstrip("\n"), ""]
        else:
            first = block.strip().splitlines()[0] if block.strip() else ""
            lines += [f"_Left out, too long for one comment: {first[:200]}_", ""]
    text = "\n".join(lines)
    cut = ("\n_Some object diffs are left out: the comment would exceed GitHub's limit of 65,536 characters. "
           "Run `fabricgen diff` locally to see them._\n")
    tail = 60  # kept for the line that counts the object diffs left out
    room = COMMENT_LIMIT - len(text) - len(cut) - 2 - tail
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
            room -= used + 1  # and the line break that joins it to the next
    if not left:
        return text + "\n" + "\n".join(body)
    room += tail
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
