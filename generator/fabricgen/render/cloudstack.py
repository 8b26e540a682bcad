"""Per KVM host of a CloudStack zone: `agent.properties`, the agent lines that put guest
NICs on OVN's `br-int` through the Open vSwitch VIF driver."""

from __future__ import annotations

from fabricgen.model.consumers import CloudStackZone
from fabricgen.plan.deployments import INTEGRATION_BRIDGE
from fabricgen.plan.zones import Plan
from fabricgen.render.artifacts import Artifact, TextFile
from fabricgen.render.header import header
from fabricgen.render.host_tree import chassis_dir
from fabricgen.render.templating import render_template

FILENAME = "agent.properties"


def render(plan: Plan) -> list[Artifact]:
    out: list[Artifact] = []
    for deployment in plan.fabric.ovn_deployments:
        for consumer in deployment.consumers:
            if not isinstance(consumer, CloudStackZone):
                continue
            for host in consumer.hosts:
                text = render_template(
                    "agent.properties.j2",
                    header=header(plan),
                    zone=consumer.name,
                    host=host,
                    private=consumer.private_network_device,
                    public=consumer.public_network_device,
                    guest=INTEGRATION_BRIDGE,
                )
                out.append(TextFile(chassis_dir(deployment.name, host) / FILENAME, text))
    return out
