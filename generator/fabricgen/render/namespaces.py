"""Per zone: the Namespaces its NetworkAttachmentDefinitions live in.

A NAD in namespace `prod` needs namespace `prod`: the API server admits nothing into a
namespace that does not exist (NamespaceLifecycle), and Flux's server-side dry run of a whole
stage then fails it. fabricgen writes every namespace the zone's NADs name, other than
`default` and `kube-system`, in their stage: both engines apply Namespaces before anything
else there (`fabricgen.plan.apply_order.FIRST_IN_STAGE`). The namespace usually exists
already, holding the VMs: it is merged server-side and never pruned or deleted
(`Prune=false,Delete=false`, Flux `prune: disabled`), so removing a network from the fabric
never deletes a namespace.
"""

from __future__ import annotations

from fabricgen.plan import apply_order
from fabricgen.plan.zones import Plan, ZonePlan, tenant_network
from fabricgen.render import metadata as md
from fabricgen.render.artifacts import Artifact, KubeObject, Manifest

PREINSTALLED = frozenset(name for kind, _ns, name in apply_order.PREINSTALLED if kind == "Namespace")


def names(zone: ZonePlan) -> list[str]:
    """The namespaces the zone's NADs name, in the order the fabric names them."""
    found = [zone.zone.backbone.network.namespace]
    found += [tenant_network(sub)[1] for vpc in zone.zone.vpcs for sub in vpc.subnets]
    return [n for n in dict.fromkeys(found) if n not in PREINSTALLED]


def namespace(plan: Plan, name: str) -> KubeObject:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": md.metadata(name, None, plan.source_name, md.PARTIAL)}


def render(plan: Plan) -> list[Artifact]:
    out: list[Artifact] = []
    for zone in plan.zones:
        found = names(zone)
        if found:
            out.append(Manifest(zone.name, "namespaces.yaml", tuple(namespace(plan, n) for n in found)))
    return out
