"""Renderers, one module per output family, and the registry the pipeline runs.

Each renderer is a pure function `render(plan) -> list[Artifact]`; only
`fabricgen.output.emit` touches the filesystem. Text formats come from the jinja2
templates in `templates/` through `templating`'s escaping filters.

May import: `fabricgen.plan`, `fabricgen.model`, `fabricgen.source`, `fabricgen.serialise`,
and the shared `errors`, `exit_codes`, `diagnostics`.
"""

from __future__ import annotations

from fabricgen.render import (
    alerts,
    cloudstack,
    default_vpc,
    host_bgp,
    host_netplan,
    host_ovs,
    icdb,
    kubeovn_ic,
    namespaces,
    nat_gateways,
    neutron,
    overlay,
    ovn_controller,
    ovn_ic_join,
    ovnk8s,
    policy_neutron,
    policy_ovnk8s,
    tenants,
    watch,
)
from fabricgen.render.artifacts import Renderer

RENDERERS: dict[str, Renderer] = {
    "namespaces": namespaces.render,
    "kubeovn-ic": kubeovn_ic.render,
    "ic-database": icdb.render,
    "ic-database-script": icdb.render_external,
    "backbone": overlay.render,
    "default-vpc-routes": default_vpc.render,
    "tenant-vpcs": tenants.render,
    "nat-gateways": nat_gateways.render,
    "ovn-controller": ovn_controller.render,
    "ovn-ic-join": ovn_ic_join.render,
    "host-netplan": host_netplan.render,
    "host-ovs": host_ovs.render,
    "host-bgp": host_bgp.render,
    "cloudstack-agent": cloudstack.render,
    "neutron-ml2": neutron.render,
    "ovn-kubernetes": ovnk8s.render,
    "policy-ovn-kubernetes": policy_ovnk8s.render,
    "policy-neutron": policy_neutron.render,
    "alerts": alerts.render,
    "watch": watch.render,
    "watch-monitoring": watch.render_monitoring,
}

# The renderers whose output is text files only (host scripts, netplan, INI, properties):
# `pipeline.render_kubernetes`, which builds only the Kubernetes objects (the Argo CD plugin,
# the KRM function), does not run them. `pipeline.render` fails if one of them yields a
# Kubernetes manifest, so a renderer listed here by mistake cannot drop objects unnoticed.
TEXT_ONLY = frozenset({
    "ic-database-script",
    "ovn-controller",
    "ovn-ic-join",
    "host-netplan",
    "host-ovs",
    "host-bgp",
    "cloudstack-agent",
    "neutron-ml2",
    "policy-neutron",
    "alerts",
    "watch-monitoring",
})

__all__ = ["RENDERERS", "TEXT_ONLY"]
