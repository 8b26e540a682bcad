"""Per chassis with a loopback tunnel endpoint: `frr.conf`, the BGP snippet that puts
the /32 on `lo` and announces it over every uplink (BGP unnumbered) with ECMP."""

from __future__ import annotations

from fabricgen.plan.zones import Plan
from fabricgen.render.artifacts import Artifact, TextFile
from fabricgen.render.header import header
from fabricgen.render.host_tree import chassis_dir
from fabricgen.render.templating import render_template

FILENAME = "frr.conf"


def render(plan: Plan) -> list[Artifact]:
    out: list[Artifact] = []
    for deployment in plan.fabric.ovn_deployments:
        for host in deployment.hosts:
            loopback, bgp = host.tunnel_endpoint.loopback, host.bgp
            if loopback is None or bgp is None:
                continue
            text = render_template(
                "frr.conf.j2",
                header=header(plan, "!"),
                host=host.name,
                loopback=str(loopback),
                router_id=str(loopback.ip),
                asn=bgp.asn,
                uplinks=bgp.uplinks,
                maximum_paths=bgp.maximum_paths,
            )
            out.append(TextFile(chassis_dir(deployment.name, host.name) / FILENAME, text))
    return out
