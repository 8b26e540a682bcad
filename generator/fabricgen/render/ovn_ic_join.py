"""Per OVN deployment joined to the interconnection, on each database member (controller):

- `configure-ovn-ic.sh`: NB_Global `name` (the AZ) and the route-exchange options,
  the router and its port `<az>-<ts>` (deterministic MAC, the transit address), the
  transit switch port `<ts>-<az>` of type router, the gateway chassis in priority
  order and, with explicit routing, static routes to every other AZ through its
  transit address. Everything is compared before it is written, so a second run
  changes nothing. The ports, routes and (createRouter: true) the router it creates are
  marked `fabricgen-owner=ic/<deployment>`; marked ports and routes that the fabric no
  longer yields are deleted, routers never. The NB_Global values it sets (name, with
  autoRoute the route options) are recorded in NB_Global external_ids
  (`fabricgen-owner-name`, `fabricgen-owner-option-<option>`); it removes only options it
  recorded. A same-name port, a route to the same prefix, (createRouter: true) a same-name
  router, a switch named like the transit switch that ovn-ic did not copy, another AZ name
  or (autoRoute) a route option other than true, without the marker, stops the script
  before its first write, as does one of the four databases not answering or (createRouter:
  false) a missing router. It waits (FABRICGEN_TS_WAIT) for ovn-ic to copy the transit
  switch before it adds ports. Honours OVN_NB_DB, OVN_SB_DB, OVN_IC_NB_DB and OVN_IC_SB_DB.
- `ovn-ic.service.d/10-fabricgen.conf`: the systemd drop-in that starts ovn-ic
  against the deployment's NB/SB and the fabric's IC database.
"""

from __future__ import annotations

from ipaddress import IPv4Network

from fabricgen.plan.deployments import OWNER_KEY, nb_remote, owner_marker, sb_remote
from fabricgen.plan.joins import DeploymentJoin
from fabricgen.plan.zones import Plan
from fabricgen.render.artifacts import Artifact, TextFile
from fabricgen.render.header import header
from fabricgen.render.host_tree import controller_dir
from fabricgen.render.templating import render_template

SCRIPT = "configure-ovn-ic.sh"
DROP_IN_DIR = "ovn-ic.service.d"
DROP_IN = "10-fabricgen.conf"


def systemd_word(value: object) -> str:
    """One word of a systemd ExecStart= line, taken literally (no specifiers, no variables)."""
    text = str(value)
    if any(c in text for c in "\r\n\x00"):
        raise ValueError(f"refusing a line break or NUL in a systemd word: {text!r}")
    if text and all(c.isalnum() or c in "_@+=:,./-" for c in text):
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{escaped}"'


def ovn_prefix(cidr: IPv4Network) -> str:
    """`ip_prefix` as `lr-route-add` stores it: a /32 as the bare address."""
    return str(cidr.network_address) if cidr.prefixlen == cidr.max_prefixlen else str(cidr)


def _explain_routes(join: DeploymentJoin) -> str:
    if join.auto_route:
        return "lets ovn-ic exchange routes (autoRoute)"
    return f"adds {len(join.routes)} static route(s) to the other AZs"


def script(plan: Plan, join: DeploymentJoin, host: str) -> str:
    return render_template(
        "configure-ovn-ic.sh.j2",
        header=header(plan),
        deployment=join.deployment.name,
        host=host,
        az=join.az,
        ts=join.transit_switch,
        router=join.router,
        create_router=join.create_router,
        router_port=join.router_port,
        switch_port=join.switch_port,
        mac=join.mac,
        network=str(join.network),
        gateway_chassis=join.gateway_chassis,
        routes=[{"prefix": ovn_prefix(r.cidr), "next_hop": str(r.next_hop), "via_zone": r.via_zone}
                for r in join.routes],
        explain_routes=_explain_routes(join),
        auto_route=join.auto_route,
        ic_nb=join.ic_nb_remote,
        ic_sb=join.ic_sb_remote,
        owner_key=OWNER_KEY,
        owner=owner_marker("ic", join.deployment),
    )


def drop_in(plan: Plan, join: DeploymentJoin, host: str) -> str:
    db = join.deployment.databases
    ssl = db.ssl_in_use
    return render_template(
        "ovn-ic.service.conf.j2",
        header=header(plan),
        deployment=join.deployment.name,
        host=host,
        az=join.az,
        filename=DROP_IN,
        nb_remote=systemd_word(nb_remote(join.deployment)),
        sb_remote=systemd_word(sb_remote(join.deployment)),
        ssl=None if ssl is None else {
            "private_key": systemd_word(ssl.private_key),
            "certificate": systemd_word(ssl.certificate),
            "ca_certificate": systemd_word(ssl.ca_certificate),
        },
        ic_nb=systemd_word(join.ic_nb_remote),
        ic_sb=systemd_word(join.ic_sb_remote),
    )


def render(plan: Plan) -> list[Artifact]:
    out: list[Artifact] = []
    for join in plan.joins:
        for member in join.deployment.databases.members:
            where = controller_dir(join.deployment.name, member.host)
            out.append(TextFile(where / SCRIPT, script(plan, join, member.host), executable=True))
            out.append(TextFile(where / DROP_IN_DIR / DROP_IN, drop_in(plan, join, member.host)))
    return out
