"""Each zone's transit-switch address in the fabric against `ovn-ic-sbctl show`.

Kube-OVN picks each zone's transit-switch address at random when the zone joins,
and picks new ones whenever the interconnection is rebuilt; the fabric's
`zones[].transitAddress` (and so every route to that zone) then goes stale. `compare`
takes each AZ's port on the fabric's transit switch and says where the fabric differs;
`update_fabric` writes the addresses into fabric.yaml in place, changing only those
scalars (`fabricgen.source.writer`), and only if the result is still a valid fabric.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from fabricgen import report
from fabricgen.errors import FabricgenError, InvalidFabricError
from fabricgen.model import Fabric
from fabricgen.observe import icsb_show
from fabricgen.pipeline import load_text
from fabricgen.source.reader import Source
from fabricgen.source.writer import EditError, EditPath, read_target, replace_file, set_scalars

KEY = "transitAddress"
INSERT_AFTER = ("gatewayNodes", "platform", "name")

CHANGED = "changed"  # the fabric has another address
ADDED = "added"  # the fabric has none yet
MISSING = "missing"  # the fabric has one, the IC SB lists no port for the zone
OK = "ok"
UNKNOWN = "unknown"  # neither has one
DIFFERENT = (CHANGED, ADDED, MISSING)


@dataclass(frozen=True)
class ZoneReport:
    zone: str
    index: int
    status: str
    fabric: str | None
    icsb: str | None
    port: str | None
    line: int  # in the fabric: the transitAddress value, or the zone
    column: int
    listed: bool  # the AZ appears in the show output (with or without a port)

    def as_dict(self) -> dict[str, object]:
        return {"zone": self.zone, "status": self.status, "fabric": self.fabric, "icsb": self.icsb,
                "port": self.port, "listed": self.listed, "line": self.line, "column": self.column}


def transit_switch(fabric: Fabric) -> str:
    if fabric.interconnection is None:
        raise FabricgenError("the fabric has no interconnection, so no transit switch to compare with")
    return fabric.interconnection.transit_switch.name


def compare(fabric: Fabric, source: Source, show: icsb_show.IcSbShow) -> tuple[list[ZoneReport], list[str]]:
    """Per fabric zone, how its transit address compares; and the AZs the fabric does not know."""
    ports = show.ports_on(transit_switch(fabric))
    reports = []
    for i, zone in enumerate(fabric.zones):
        port = ports.get(zone.name)
        observed = port.ipv4 if port is not None else None
        have = str(zone.transit_address) if zone.transit_address is not None else None
        seen = str(observed.ip) if observed is not None else None
        if seen is None:
            status = UNKNOWN if have is None else MISSING
        elif have is None:
            status = ADDED
        else:
            status = OK if have == seen else CHANGED
        line, col = source.locate(("zones", i, KEY), value=True)
        reports.append(ZoneReport(zone.name, i, status, have, seen, port.name if port else None, line, col,
                                  zone.name in show.zones))
    known = {z.name for z in fabric.zones}
    extra = sorted(set(ports) - known)
    return reports, extra


def write_report(source: Source, reports: list[ZoneReport], extra: list[str], ts: str, out: TextIO) -> None:
    for r in reports:
        where = f"{source.name}:{r.line}:{r.column}: zones[{r.index}].{KEY}"
        if r.status == CHANGED:
            out.write(f"{where}: {r.fabric} -> {r.icsb} (zone {r.zone}: port {r.port} on {ts})\n")
        elif r.status == ADDED:
            out.write(f"{where}: (unset) -> {r.icsb} (zone {r.zone}: port {r.port} on {ts})\n")
        elif r.status == MISSING and r.listed:
            out.write(f"{where}: {r.fabric} -> ? (zone {r.zone} is listed but has no port on {ts}: "
                      "its gateway has not claimed the port yet; left as it is)\n")
        elif r.status == MISSING:
            out.write(f"{where}: {r.fabric} -> ? (zone {r.zone} is not in this ovn-ic-sbctl show output: "
                      "not joined, or another IC database; left as it is)\n")
    for name in extra:
        out.write(f"note: availability zone {name!r} has a port on {ts} but is not a zone of this fabric\n")


# Places in a fabric where an alias of a zone's transit address means "that zone's transit
# address", so they take its new value with it: the next hops of extra default-VPC routes.
FOLLOWERS = ("staticRoutes", "policyRoutes")


def follows_transit_address(path: EditPath) -> bool:
    return (len(path) == 6 and path[0] == "zones" and path[2] == "defaultVpc" and path[3] in FOLLOWERS
            and path[5] == "nextHopIP")


def updated_text(source: Source, reports: list[ZoneReport]) -> str:
    edits: dict[EditPath, str] = {
        ("zones", r.index, KEY): str(r.icsb) for r in reports if r.status in (CHANGED, ADDED)
    }
    try:
        return set_scalars(source.text, edits, after=INSERT_AFTER, follows=follows_transit_address)
    except EditError as exc:
        for p in exc.problems:
            sys.stderr.write(f"{source.name}:{p.line}:{p.column}: {p.path}: {p.message}\n")
        raise FabricgenError(
            "the transit addresses cannot be written in place as the file is written (an alias may "
            "follow a zone's transit address only as a route's nextHopIP in zones[].defaultVpc); "
            f"{source.name} left unchanged") from None


def update_fabric(fabric: Path, source: Source, reports: list[ZoneReport]) -> bool:
    """Update the fabric file if anything can be updated; refuse a result that would be invalid."""
    if not any(r.status in (CHANGED, ADDED) for r in reports):
        return False
    try:
        _real, original, _status = read_target(fabric)
    except OSError as exc:
        raise FabricgenError(f"cannot read {source.name} again: {exc.strerror or exc}; left unchanged") from None
    if original != source.text.encode("utf-8"):
        raise FabricgenError(f"{source.name} changed while fabricgen read it; left unchanged; run the command again")
    new_text = updated_text(source, reports)
    try:
        load_text(new_text, source.name)
    except InvalidFabricError as exc:
        sys.stderr.write(report.format_diagnostics(exc.diagnostics, "text"))
        raise FabricgenError("the addresses from ovn-ic-sbctl show would make the fabric invalid; "
                             f"{source.name} left unchanged") from None
    replace_file(fabric, new_text.encode("utf-8"), expected=original, name=source.name)
    return True
