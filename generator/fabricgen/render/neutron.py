"""Per OpenStack cloud: `ml2_conf.ini` with the `[ml2]`, `[ml2_type_geneve]` (or vxlan)
and `[ovn]` settings that point Neutron ML2/OVN at the deployment's databases.

`path_mtu` is the overlay MTU plus 20 (IPv4) plus `max_header_size` (38 for OVN's
Geneve), so Neutron's networks get the same MTU as every other consumer (1442
over a 1500 underlay).
"""

from __future__ import annotations

from fabricgen.model.consumers import OpenStackCloud
from fabricgen.model.ovn import OvnDeployment
from fabricgen.plan.deployments import consumer_encapsulation, consumer_mtu, nb_remote, sb_remote
from fabricgen.plan.zones import Plan
from fabricgen.render.artifacts import Artifact, TextFile
from fabricgen.render.header import header
from fabricgen.render.host_tree import platform_dir
from fabricgen.render.templating import render_template

FILENAME = "ml2_conf.ini"
# The first release whose Neutron reads project_network_types (Neutron 28.0.0).
PROJECT_NETWORK_TYPES = "2026.1"
IPV4_HEADER = 20
HEADER_SIZE = {"geneve": 38, "vxlan": 30}


def ini(plan: Plan, deployment: OvnDeployment, cloud: OpenStackCloud) -> str:
    encapsulation = consumer_encapsulation(deployment, cloud)
    mtu = consumer_mtu(deployment, cloud)
    db = deployment.databases
    return render_template(
        "ml2_conf.ini.j2",
        header=header(plan),
        cloud=cloud.name,
        deployment=deployment.name,
        encapsulation=encapsulation,
        mtu=mtu,
        path_mtu=mtu + IPV4_HEADER + HEADER_SIZE[encapsulation],
        header_size=HEADER_SIZE[encapsulation],
        physnets=sorted({n.physical_network for n in deployment.provider_networks}),
        vni_ranges=cloud.vni_ranges,
        nb=nb_remote(deployment),
        sb=sb_remote(deployment),
        ssl=db.ssl_in_use,
        l3_scheduler=cloud.l3_scheduler,
        metadata="True" if cloud.metadata else "False",
        distributed_fip="True" if cloud.distributed_floating_ips else "False",
        network_types_option=network_types_option(cloud),
    )


def network_types_option(cloud: OpenStackCloud) -> str:
    """The `[ml2]` option the cloud's Neutron reads without a deprecation warning."""
    if cloud.release is not None and cloud.release >= PROJECT_NETWORK_TYPES:
        return "project_network_types"
    return "tenant_network_types"


def render(plan: Plan) -> list[Artifact]:
    return [
        TextFile(platform_dir(d.name, "openstack", c.name) / FILENAME, ini(plan, d, c))
        for d in plan.fabric.ovn_deployments
        for c in d.consumers
        if isinstance(c, OpenStackCloud)
    ]
