"""Renderers, one module per output family, and the registry the pipeline runs.

Each renderer is a pure function `render(plan) -> list[Artifact]`; only
`fabricgen.output.emit` touches the filesystem. Text formats come from the jinja2
templates in `templates/` through `templating`'s escaping filters.

Modules:

- `alerts`: the watch's Prometheus alert rules (`_monitoring/`).
- `artifacts`: what renderers return: Kubernetes objects as data, text files.
- `cloudstack`: a CloudStack zone's KVM hosts: `agent.properties` and the host scripts.
- `default_vpc`: each zone's `ovn-cluster` routes and policies (`ic-routes-<zone>.json`).
- `delivery`: the Argo CD Applications and Flux Kustomizations of a site (`_delivery/`).
- `header`: the provenance header every generated file starts with.
- `health_checks`: health checks for the kinds fabricgen renders that have a status, for Argo CD and
  Flux.
- `host_bgp`: a chassis's loopback tunnel endpoint and its FRR BGP snippet.
- `host_netplan`: a chassis's netplan file (tunnel NIC, VLANs, bridges).
- `host_ovs`: a chassis's `configure-ovn-host.sh` (Open_vSwitch external_ids, bridges).
- `host_tree`: where host, controller and platform files go.
- `icdb`: for the zone hosting the IC database.
- `kubeovn_ic`: each zone's `ovn-ic-config` and Configuration patch.
- `kustomization`: per Kubernetes output directory.
- `metadata`: annotations and labels shared by the Kubernetes renderers.
- `namespaces`: the Namespaces a zone's NADs need.
- `nat_gateways`: per zone with VPC NAT gateways.
- `neutron`: per OpenStack cloud.
- `overlay`: each zone's backbone Subnet and its NAD.
- `ovn_controller`: per OVN database member (controller).
- `ovn_ic_join`: per OVN deployment joined to the interconnection, on each database member
  (controller).
- `ovnk8s`: per Kubernetes cluster running OVN-Kubernetes (central mode, pinned <= v1.3).
- `policy_kubeovn`: the policy on Kube-OVN.
- `policy_neutron`: the policy on OpenStack.
- `policy_ovnk8s`: the policy on OVN-Kubernetes.
- `policy_admin`: the policy on OVN-Kubernetes as AdminNetworkPolicies, where a cluster asks for them.
- `tenants`: each zone's tenant VPCs, subnets, NADs and peerings.
- `watch`: the watch's exporter Deployment, ServiceMonitor and read-only RBAC.

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
