"""Per zone: enable interconnection in Kube-OVN.

- `configurations.kubeovn.io` `kube-system/kubeovn`, partial: only
  `spec.components.enableIC: true` (and `enableNATGateway: true` in a zone with VPC NAT
  gateways: the operator then sets `enable-vpc-nat-gw` in `ovn-vpc-nat-gw-config`), merged
  server-side and never pruned (the kubeovn-operator owns the object).
- ConfigMap `kube-system/ovn-ic-config`, every value a string. Any change makes
  Kube-OVN 1.16.2 tear the interconnection down, so it is replaced, not patched.
"""

from __future__ import annotations

from fabricgen.plan.zones import Plan, ZonePlan
from fabricgen.render import metadata as md
from fabricgen.render.artifacts import Artifact, KubeObject, Manifest


def _bool(value: bool) -> str:
    return "true" if value else "false"


def configuration(plan: Plan, zone: ZonePlan) -> KubeObject:
    components: dict[str, bool] = {"enableIC": True}
    if zone.uses_nat_gateways:
        components["enableNATGateway"] = True
    return {
        "apiVersion": "kubeovn.io/v1",
        "kind": "Configuration",
        "metadata": md.metadata(
            "kubeovn", "kube-system", plan.source_name, md.PARTIAL
        ),
        "spec": {"components": components},
    }


def ic_config(plan: Plan, zone: ZonePlan) -> KubeObject:
    ic = plan.interconnection
    db = ic.database
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": md.metadata(
            "ovn-ic-config", "kube-system", plan.source_name, md.REPLACE
        ),
        "data": {
            "enable-ic": "true",
            "az-name": zone.name,
            "ic-db-host": ",".join(db.client_hosts()),
            "ic-nb-port": str(db.nb_port),
            "ic-sb-port": str(db.sb_port),
            "gw-nodes": ",".join(zone.zone.gateway_nodes),
            "auto-route": _bool(ic.auto_route),
        },
    }


def render(plan: Plan) -> list[Artifact]:
    out: list[Artifact] = []
    for zone in plan.zones:
        out.append(
            Manifest(zone.name, "configuration.yaml", (configuration(plan, zone),))
        )
        out.append(Manifest(zone.name, "ovn-ic-config.yaml", (ic_config(plan, zone),)))
    return out
