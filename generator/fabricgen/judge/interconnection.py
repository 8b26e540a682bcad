"""The interconnection against the fabric: the IC database's availability zones, each AZ's port
on the transit switch and its address, the gateway chassis in priority order, and the transit
switch's tunnel key everywhere (with VXLAN, `vxlan_mode` and a key in VXLAN's range).

Where each fact is, in ovn-org/ovn: `ovn-ic-sbctl show` lists every AZ, its gateways and the
transit ports bound to them with the router port's `networks` (`ic/ovn-ic.c`
`sync_local_port`); the IC southbound `Datapath_Binding` holds the transit switch's key, which
ovn-ic allocates in VXLAN's range 1024-4095 (from 1025 up: 1024 is its hint) with
`IC_NB_Global options:vxlan_mode` and a VXLAN encap, from 16711681 up otherwise (`ic/ovn-ic.c`
`allocate_dp_key`, `lib/ovn-util.h`), and copies into each AZ's `Logical_Switch
other_config:requested-tnl-key` (`ts_run`), which northd gives the AZ's southbound
`Datapath_Binding`; the gateway chassis are `Gateway_Chassis` rows of the AZ's router port
`<az>-<ts>` (Kube-OVN `establishInterConnection`: the gw-nodes' chassis, priorities from 100 down
in list order), named by system-id, whose host name the AZ's `Chassis` table gives.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from fabricgen.errors import FabricgenError
from fabricgen.judge.checks import DRIFT, OK, UNHEALTHY, UNREACHABLE, Check
from fabricgen.judge.expected import AzIntent
from fabricgen.model import Fabric
from fabricgen.observe.icsb_show import IcSbShow
from fabricgen.observe.live_fabric import AzLive, IcLive
from fabricgen.observe.ovsdb_rows import as_list, as_map

VXLAN_KEYS = range(1024, 4096)  # OVN_MIN_DP_VXLAN_KEY_GLOBAL .. OVN_MAX_DP_VXLAN_KEY_GLOBAL (1025 is handed out first)
SUBJECT = "IC database"


def live_addresses(show: IcSbShow | None, ts: str) -> dict[str, str]:
    """Each AZ's (first) IPv4 address on the transit switch, from `ovn-ic-sbctl show`."""
    if show is None:
        return {}
    out: dict[str, str] = {}
    for port in show.ports:
        if port.transit_switch == ts and port.ipv4 is not None:
            out.setdefault(port.zone, str(port.ipv4.ip))
    return out


def _unknown_az_fix(show: IcSbShow, az: str) -> str:
    """Destroying an AZ's row is advice only where nothing of it runs: an AZ with a gateway
    registered has an ovn-ic and chassis behind it, and the row would come back (ovn-ic registers
    its AZ) while its ports were lost."""
    gateways = sorted({g.chassis for g in show.gateways if g.zone == az})
    if gateways:
        return (f"add it to the fabric (a zone or a deployment), or take it out of the interconnection where it runs "
                f"(its ovn-ic-config enable-ic \"false\", or stop its ovn-ic): it has gateways registered "
                f"({', '.join(gateways)}), so it runs; never destroy its row in the IC database")
    return (f"it has no gateway in the IC database: if no cluster or deployment runs it any more (check every "
            f"ovn-ic-config's az-name and every deployment's ovn-ic), it is a leftover: ovn-ic-sbctl destroy "
            f"Availability_Zone {az}; else add it to the fabric")


def ic_checks(fabric: Fabric, ic: IcLive, intents: Sequence[AzIntent]) -> list[Check]:
    """The IC database as a whole: its AZs, the transit addresses, vxlan_mode, the transit switch's key."""
    assert fabric.interconnection is not None
    ts = fabric.interconnection.transit_switch.name
    out: list[Check] = []
    if ic.show is None:
        out.append(Check(SUBJECT, "ic.read", UNREACHABLE, f"`ovn-ic-sbctl show` could not be read: {ic.show_error}",
                         "check the IC database's pods or remotes (see `fabricgen status --help`)"))
    else:
        known = {i.az for i in intents}
        for az in ic.show.zones:
            if az not in known:
                out.append(Check(SUBJECT, "ic.unknown-az", DRIFT,
                                 f"availability zone {az} is registered in the IC database but is in no zone or "
                                 "deployment of the fabric",
                                 _unknown_az_fix(ic.show, az)))
        claimed: dict[str, list[str]] = {}
        for port in ic.show.ports:
            if port.transit_switch == ts and port.ipv4 is not None:
                claimed.setdefault(str(port.ipv4.ip), []).append(port.zone)
        for address, azs in sorted(claimed.items()):
            if len(set(azs)) > 1:
                out.append(Check(SUBJECT, "ic.transit-address", UNHEALTHY,
                                 f"{' and '.join(sorted(set(azs)))} hold the same address {address} on transit switch "
                                 f"{ts}: traffic to it goes to either", "give one of them another address"))
        out += _transit_switches(fabric, ic.show)
    out += _vxlan(fabric, ic)
    if not [c for c in out if c.verdict != OK]:
        zones = len(ic.show.zones) if ic.show is not None else 0
        out.append(Check(SUBJECT, "ic", OK, f"{zones} availability zone(s), each in the fabric, on distinct "
                                            f"addresses of {ts}"))
    return out


def _transit_switches(fabric: Fabric, show: IcSbShow) -> list[Check]:
    """Live transit switches the IC server the fabric renders would delete: Kube-OVN's keeps
    `ts`, `ts1`, ... up to `TS_NUM` and runs `ovn-ic-nbctl ts-del` on every one beyond it
    (kubeovn/kube-ovn `pkg/ovn_leader_checker/ovn.go` `updateTS`)."""
    assert fabric.interconnection is not None
    switch = fabric.interconnection.transit_switch
    live = sorted({p.transit_switch for p in show.ports})
    kept = set(switch.names())
    extra = [name for name in live if name not in kept]
    if not extra:
        return []
    if fabric.interconnection.database.zone is None:
        # An IC server outside every zone is not fabricgen's: nothing it applies deletes a switch,
        # but the fabric models fewer than run (Kube-OVN's install-ic-server.sh installs 3).
        return [Check(SUBJECT, "ic.transit-switches", DRIFT,
                      f"the IC database has ports on {len(live)} transit switches ({', '.join(live)}) and the fabric "
                      f"models {switch.count}: verify proves, and these checks cover, only the modelled ones, not "
                      f"{', '.join(extra)} (the IC server outside the zones keeps them; nothing fabricgen renders "
                      "deletes a switch)",
                      f"set interconnection.transitSwitch.count to {len(live)} in the fabric (fabricgen import "
                      "reads it), render and commit")]
    return [Check(SUBJECT, "ic.transit-switches", DRIFT,
                  f"the IC database has ports on {len(live)} transit switches ({', '.join(live)}) and the fabric's "
                  f"IC server keeps {switch.count} (TS_NUM={switch.count}): applying it deletes "
                  f"{', '.join(extra)} with their ports (Kube-OVN's updateTS runs ovn-ic-nbctl ts-del beyond TS_NUM)",
                  f"set interconnection.transitSwitch.count to {len(live)} in the fabric (fabricgen import reads it), "
                  "render and commit before the next sync")]


def transit_key(ic: IcLive, ts: str) -> int | None:
    row = next((r for r in ic.sb.get("Datapath_Binding") if r.get("transit_switch") == ts), None)
    value = row.get("tunnel_key") if row is not None else None
    return value if isinstance(value, int) else None


def _vxlan(fabric: Fabric, ic: IcLive) -> list[Check]:
    assert fabric.interconnection is not None
    ts = fabric.interconnection.transit_switch.name
    wanted = fabric.interconnection.vxlan_mode
    out = []
    if ic.nb.error is not None:
        out.append(Check(SUBJECT, "ic.vxlan-mode", UNREACHABLE,
                         f"the IC northbound database could not be read: {ic.nb.error}"))
    else:
        globals_ = ic.nb.get("IC_NB_Global")
        value = as_map(globals_[0].get("options", {})).get("vxlan_mode") if globals_ else None
        if wanted and value != "true":
            out.append(Check(SUBJECT, "ic.vxlan-mode", UNHEALTHY,
                             "options:vxlan_mode is not set on the IC northbound database: with VXLAN, transit "
                             "switches are keyed outside VXLAN's 12 bits and cross-zone packets vanish",
                             "ovn-ic-nbctl set IC_NB_Global . options:vxlan_mode=true (the IC server's sidecar sets "
                             "it within a round; for a database in no zone, run configure-ic-db.sh)"))
        elif not wanted and value == "true":
            out.append(Check(SUBJECT, "ic.vxlan-mode", DRIFT,
                             "options:vxlan_mode=true is set, and the fabric does not want it (Geneve)",
                             "ovn-ic-nbctl remove IC_NB_Global . options vxlan_mode (this re-keys every transit "
                             "switch)"))
        elif wanted:
            out.append(Check(SUBJECT, "ic.vxlan-mode", OK, "options:vxlan_mode=true"))
    if ic.sb.error is not None:
        out.append(Check(SUBJECT, "ic.tunnel-key", UNREACHABLE,
                         f"the IC southbound database could not be read: {ic.sb.error}"))
        return out
    key = transit_key(ic, ts)
    if key is None:
        out.append(Check(SUBJECT, "ic.tunnel-key", UNHEALTHY, f"transit switch {ts} has no datapath in the IC "
                                                              "southbound database",
                         f"create it: ovn-ic-nbctl ts-add {ts} (Kube-OVN's IC server does, with TS_NUM)"))
    elif wanted and key not in VXLAN_KEYS:
        out.append(Check(SUBJECT, "ic.tunnel-key", UNHEALTHY,
                         f"transit switch {ts} has tunnel key {key}, outside VXLAN's range 1024-4095: it was keyed "
                         "without vxlan_mode (or this OVN has no vxlan_mode: it came with 25.03), and every AZ "
                         "computes its own key, so packets between AZs vanish",
                         "set vxlan_mode (ovn-ic re-keys every transit switch) on OVN 25.03 or later"))
    else:
        out.append(Check(SUBJECT, "ic.tunnel-key", OK, f"transit switch {ts} has tunnel key {key}"
                                                       + (" (VXLAN's range)" if wanted else "")))
    return out


def az_checks(fabric: Fabric, intent: AzIntent, live: AzLive, ic: IcLive | None, path: str) -> list[Check]:
    """One AZ's place in the interconnection."""
    assert fabric.interconnection is not None
    ts = fabric.interconnection.transit_switch.name
    subject, out = intent.subject, []
    if ic is not None and ic.show is not None:
        out += _registration(intent, ic.show, ts, shlex.quote(path))
    if live.nb.error is not None:
        out.append(Check(subject, "az", UNREACHABLE, f"its northbound database could not be read: {live.nb.error}",
                         _reach(live)))
        return out
    globals_ = live.nb.get("NB_Global")
    name = globals_[0].get("name", "") if globals_ else ""
    if name != intent.az:
        out.append(Check(subject, "az.name", DRIFT,
                         f"its northbound database names the AZ {name!r}, not {intent.az!r}",
                         "the zone's ovn-ic-config az-name (Kube-OVN sets NB_Global name from it) or the "
                         "deployment's configure-ovn-ic.sh"))
    out += _gateways(fabric, intent, live)
    if ic is not None:
        out += _keys(fabric, intent, live, ic, ts)
    return out


def _reach(live: AzLive) -> str:
    if live.source.kind == "zone":
        return (f"check kubectl's context {getattr(live.source.access, 'context', '')!r} and the zone's "
                "ovn-central pods, or give the zone direct remotes in --endpoints")
    return "check the deployment's database remotes (--endpoints) and the network path to them"


def _registration(intent: AzIntent, show: IcSbShow, ts: str, path: str) -> list[Check]:
    subject = intent.subject
    if intent.az not in show.zones:
        return [Check(subject, "az.registered", DRIFT,
                      f"AZ {intent.az} is not registered in the IC database",
                      "the zone's ovn-ic-config (enable-ic, ic-db-host) and its ovn-ic, or the deployment's "
                      "configure-ovn-ic.sh and ovn-ic service")]
    try:
        port = show.ports_on(ts).get(intent.az)
    except FabricgenError as exc:
        return [Check(subject, "transit.address", UNHEALTHY, f"its port on {ts} is ambiguous: {exc}")]
    if port is None or port.ipv4 is None:
        return [Check(subject, "transit.address", DRIFT,
                      f"AZ {intent.az} has no port on transit switch {ts} bound to a gateway",
                      "check its gateway nodes (gw-nodes) and that their ovn-controller runs")]
    live = str(port.ipv4.ip)
    if intent.transit_address is None:
        return [Check(subject, "transit.address", DRIFT,
                      f"its port {port.name} has {live}, and the fabric has no transitAddress: the other AZs get no "
                      "route to it", f"fabricgen transit {path} SHOW --write (SHOW: `ovn-ic-sbctl show`)")]
    if live != str(intent.transit_address):
        return [Check(subject, "transit.address", DRIFT,
                      f"its port {port.name} has {live}; the fabric says {intent.transit_address} (an IC rebuild or "
                      "an ovn-ic-config change gives a Kube-OVN zone a new random address), so the other AZs' "
                      "routes to it are stale",
                      f"fabricgen transit {path} SHOW --write (SHOW: `ovn-ic-sbctl show`), render, commit, sync"
                      if intent.kind == "zone" else
                      f"run the deployment's configure-ovn-ic.sh (it sets {intent.transit_address})")]
    return [Check(subject, "transit.address", OK, f"its port {port.name} has {live}, as the fabric says")]


def _gateway_fix(fabric: Fabric) -> str:
    """What moves a zone's gateway chassis, and what else it does. Kube-OVN's IC controller acts on
    a change of ovn-ic-config only (`getICState`: the same ConfigMap is no action, kube-ovn issue
    3847), so applying it unchanged does nothing."""
    in_place = fabric.interconnection.gateway_change_in_place if fabric.interconnection else None
    check = ("check that the gateway nodes exist, are Ready and run ovn-controller (the chassis must be registered "
             "in the zone's southbound); applying an unchanged ovn-ic-config does nothing, as Kube-OVN acts on a "
             "change of it only")
    if in_place:
        return (f"{check}; then a change of gw-nodes alone (reorder it, or drop and add a node) moves the gateways "
                "in place, keeping the transit address")
    return (f"{check}; a change of ovn-ic-config (gw-nodes included) then tears the zone's interconnection down and "
            "re-establishes it with a new random transit address" + (" (Kube-OVN up to v1.16.2; from v1.16.3 and "
            "v1.15.24 a change of gw-nodes alone is made in place)" if in_place is False else "")
            + ": after it, run fabricgen transit --write, render, commit and sync")


def _gateways(fabric: Fabric, intent: AzIntent, live: AzLive) -> list[Check]:
    subject = intent.subject
    port = next((p for p in live.nb.get("Logical_Router_Port") if p.get("name") == intent.router_port), None)
    if port is None:
        return [Check(subject, "gateways", DRIFT, f"router port {intent.router_port} is not in its northbound database",
                      "the AZ has not joined the transit switch: see az.registered")]
    rows = {r.get("_uuid"): r for r in live.nb.get("Gateway_Chassis")}
    chassis = sorted((rows[u] for u in as_list(port.get("gateway_chassis", [])) if u in rows),
                     key=lambda r: -int(r.get("priority", 0)))
    hosts = {str(c.get("name")): str(c.get("hostname") or c.get("name")) for c in live.sb.get("Chassis")}
    names = [str(c.get("chassis_name", "")) for c in chassis]
    shown = [hosts.get(n, n) if intent.kind == "zone" else n for n in names]
    if shown != list(intent.gateways):
        priorities = ", ".join(f"{s} ({c.get('priority')})" for s, c in zip(shown, chassis, strict=True)) or "none"
        fix = _gateway_fix(fabric) if intent.kind == "zone" else "run the deployment's configure-ovn-ic.sh"
        return [Check(subject, "gateways", DRIFT,
                      f"the gateway chassis of {intent.router_port} are {priorities}; the fabric says "
                      f"{', '.join(intent.gateways)} in that order", fix)]
    return [Check(subject, "gateways", OK, f"gateway chassis {', '.join(shown)}, in the fabric's order")]


def _keys(fabric: Fabric, intent: AzIntent, live: AzLive, ic: IcLive, ts: str) -> list[Check]:
    subject = intent.subject
    key = transit_key(ic, ts) if ic.sb.error is None else None
    if key is None:
        return []
    switch = next((s for s in live.nb.get("Logical_Switch") if s.get("name") == ts), None)
    requested = as_map(switch.get("other_config", {})).get("requested-tnl-key") if switch is not None else None
    datapath = next((d for d in live.sb.get("Datapath_Binding")
                     if as_map(d.get("external_ids", {})).get("name") == ts), None)
    have = datapath.get("tunnel_key") if datapath is not None else None
    if switch is None:
        return [Check(subject, "transit.tunnel-key", DRIFT, f"transit switch {ts} is not in its northbound database "
                                                            "(ovn-ic copies it there)", "check its ovn-ic")]
    if requested != str(key) or (live.sb.error is None and have != key):
        return [Check(subject, "transit.tunnel-key", UNHEALTHY,
                      f"its transit switch {ts} is keyed {have if have is not None else '(no datapath)'} "
                      f"(requested-tnl-key {requested!r}) while the IC database keys it {key}: its packets to the "
                      "other AZs carry another key and vanish",
                      "restart its ovn-ic, which copies the key, or check its northd")]
    return [Check(subject, "transit.tunnel-key", OK, f"its transit switch {ts} has the IC database's key {key}")]
