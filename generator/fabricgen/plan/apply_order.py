"""What must exist before what: the one dependency model behind every apply order.

`RULES` says, for every kind fabricgen renders, which objects it needs before it can be
created or do its work: the admission webhooks of SUSE Virtualization
(harvester/network-controller-harvester `pkg/webhook/subnet/validator.go`: a Subnet's NAD,
named by its provider, and its custom Vpc must exist) and of Kube-OVN (kubeovn/kube-ovn
`pkg/webhook/vpc_nat_gateway.go`: a VpcNatGateway needs its Vpc and Subnet, an IptablesEIP
its external Subnet, SNAT and DNAT rules their IptablesEIP, all of them the ConfigMap
`ovn-vpc-nat-gw-config`), and the controllers that read one object through another (a Vlan
its ProviderNetwork, `ovn-ic-config` the Configuration that enables IC and the IC server).

From the rules come the stages. A role (a kind, or one named object of a kind) sits one
stage above the highest stage of anything it needs, so every dependency is in a strictly
lower stage. Stages are computed over roles, not over one fabric's objects, so an object
lands in the same stage whatever else the fabric holds, and never moves from one Flux
Kustomization to another when the fabric changes. The stage is:

- the object's `argocd.argoproj.io/sync-wave` (Argo CD applies one wave at a time);
- the directory `stage-<n>/` inside the zone, listed in order by the zone's
  `kustomization.yaml` (plain `kubectl apply -k`, the plugin and the KRM function);
- one Flux Kustomization per stage directory, each `dependsOn` the one below with
  `wait: true` (Flux dry-runs a whole Kustomization before applying any of it).

Vpc peerings are not a dependency: two peered VPCs name each other (a cycle), and
Kube-OVN's VPC controller retries a peering until the remote VPC exists.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from fabricgen.model.names import KUBE_SYSTEM
from fabricgen.serialise.manifest_yaml import KubeObject

WAVE = "argocd.argoproj.io/sync-wave"

Identity = tuple[str, str, str]
"""(kind, namespace or "", name)"""


@dataclass(frozen=True)
class Ref:
    """One thing an object needs: an object of `kind`, named by the value at `path`
    (a list there names several), or always the object `name` in `namespace`."""

    kind: str
    path: tuple[str, ...] = ()
    name: str | None = None
    namespace: str | None = None
    provider: bool = False  # the value is a Kube-OVN provider `<nad>.<namespace>[.ovn]`
    same_namespace: bool = False  # the value names an object in the referrer's namespace
    optional: bool = False  # only when the zone renders it (the IC server runs in one zone)
    same_stage: bool = False  # met inside the stage: a kind of FIRST_IN_STAGE, which both engines apply first


@dataclass(frozen=True)
class Rule:
    kind: str
    name: str | None  # a rule for one named object; None for every object of the kind
    needs: tuple[Ref, ...]
    why: str


NAT_GW_CONFIG = Ref("ConfigMap", name="ovn-vpc-nat-gw-config", namespace=KUBE_SYSTEM)

# Kinds both engines apply before anything else of the same stage, and wait for: Argo CD
# applies one kind at a time in `kindOrder`, Namespace first (gitops-engine
# pkg/sync/sync_tasks.go, pkg/sync/sync_context.go runTasks), and Flux applies Namespaces
# (with CRDs and ClusterRoles) and waits for them before it dry-runs the rest (fluxcd/pkg
# ssa/manager_apply.go ApplyAllStaged). So an object's Namespace may share its stage, and
# does: a Namespace in a stage of its own would move every NAD out of stage 0, and Flux's old
# stage-0 Kustomization would prune them on the way.
FIRST_IN_STAGE: frozenset[str] = frozenset({"Namespace"})

# Named rules come before the rule for their kind: the first match wins.
RULES: tuple[Rule, ...] = (
    Rule("ConfigMap", "ovn-ic-config", (
        Ref("Configuration", name="kubeovn", namespace=KUBE_SYSTEM),
        Ref("Deployment", name="ovn-ic-server", namespace=KUBE_SYSTEM, optional=True),
    ), "the kubeovn-operator enables IC (Configuration), and the IC database must answer"),
    Rule("ConfigMap", "ovn-vpc-nat-gw-config", (
        Ref("Configuration", name="kubeovn", namespace=KUBE_SYSTEM),
    ), "the kubeovn-operator templates it from Configuration enableNATGateway"),
    Rule("Vpc", "ovn-cluster", (
        Ref("ConfigMap", name="ovn-ic-config", namespace=KUBE_SYSTEM),
    ), "routes to other zones go through the transit switch that ovn-ic-config joins"),
    Rule("NetworkAttachmentDefinition", None, (
        Ref("Namespace", path=("metadata", "namespace"), optional=True, same_stage=True),
    ), "the API server admits no object into a namespace that does not exist (NamespaceLifecycle)"),
    Rule("NetworkPolicy", None, (
        Ref("Namespace", path=("metadata", "namespace"), optional=True, same_stage=True),
    ), "the API server admits no object into a namespace that does not exist (NamespaceLifecycle)"),
    Rule("Vlan", None, (Ref("ProviderNetwork", path=("spec", "provider")),),
         "Kube-OVN's vlan controller binds the VLAN to its provider network"),
    Rule("Subnet", None, (
        Ref("NetworkAttachmentDefinition", path=("spec", "provider"), provider=True),
        Ref("Vpc", path=("spec", "vpc")),
        Ref("Vlan", path=("spec", "vlan")),
    ), "SUSE Virtualization's subnet webhook denies a Subnet whose NAD or Vpc is missing"),
    Rule("VpcNatGateway", None, (
        Ref("Vpc", path=("spec", "vpc")),
        Ref("Subnet", path=("spec", "subnet")),
        Ref("Subnet", path=("spec", "externalSubnets", "*")),
        NAT_GW_CONFIG,
    ), "Kube-OVN's webhook reads the Vpc, the Subnet and ovn-vpc-nat-gw-config"),
    Rule("IptablesEIP", None, (
        Ref("VpcNatGateway", path=("spec", "natGwDp")),
        Ref("Subnet", path=("spec", "externalSubnet")),
        NAT_GW_CONFIG,
    ), "Kube-OVN's webhook reads the external Subnet; the gateway pod holds the address"),
    Rule("IptablesSnatRule", None, (Ref("IptablesEIP", path=("spec", "eip")), NAT_GW_CONFIG),
         "Kube-OVN's webhook reads the IptablesEIP"),
    Rule("IptablesDnatRule", None, (Ref("IptablesEIP", path=("spec", "eip")), NAT_GW_CONFIG),
         "Kube-OVN's webhook reads the IptablesEIP"),
)

# Objects every target cluster has before fabricgen's first sync: a reference to one of
# them needs nothing from the zone (the `Vpc ovn-cluster` the zone renders is a partial
# patch of the existing one, not its creation).
PREINSTALLED: frozenset[Identity] = frozenset({
    ("Namespace", "", "default"),
    ("Namespace", "", KUBE_SYSTEM),
    ("Vpc", "", "ovn-cluster"),
    ("Subnet", "", "ovn-default"),
    ("Subnet", "", "join"),
    ("ConfigMap", KUBE_SYSTEM, "ovn-vpc-nat-config"),
})

KINDS_RENDERED: tuple[str, ...] = (
    "Namespace", "Configuration", "ConfigMap", "Deployment", "Service", "Endpoints", "Vpc",
    "NetworkAttachmentDefinition", "ProviderNetwork", "Vlan", "Subnet", "VpcNatGateway",
    "IptablesEIP", "IptablesSnatRule", "IptablesDnatRule", "NetworkPolicy", "AdminNetworkPolicy",
    "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
)
"""Every kind a renderer writes; a kind without a rule needs nothing."""


def rule_for(kind: str, name: str) -> Rule | None:
    for rule in RULES:
        if rule.kind == kind and rule.name in (None, name):
            return rule
    return None


def _roles() -> list[tuple[str, str | None]]:
    named = [(r.kind, r.name) for r in RULES if r.name is not None]
    return named + [(kind, None) for kind in KINDS_RENDERED]


def _targets(ref: Ref) -> list[tuple[str, str | None]]:
    """The roles a reference can land on (never a preinstalled object)."""
    if ref.name is not None:
        return [(ref.kind, ref.name)]
    preinstalled = {name for kind, _ns, name in PREINSTALLED if kind == ref.kind}
    return [(kind, name) for kind, name in _roles() if kind == ref.kind and name not in preinstalled]


@cache
def role_stage(kind: str, name: str | None) -> int:
    """The stage of a role: one above everything it needs (0 for a role that needs nothing)."""
    return _stage(kind, name, ())


def _stage(kind: str, name: str | None, seen: tuple[tuple[str, str | None], ...]) -> int:
    if (kind, name) in seen:
        raise ValueError(f"dependency cycle through {kind} {name or '*'}: {seen}")
    rule = next((r for r in RULES if r.kind == kind and r.name == name), None)
    if rule is None and name is not None:
        rule = next((r for r in RULES if r.kind == kind and r.name is None), None)
    if rule is None:
        return 0
    below = [_stage(k, n, (*seen, (kind, name))) + (0 if ref.same_stage else 1)
             for ref in rule.needs for k, n in _targets(ref)]
    return max(below, default=0)


def stage_of(obj: KubeObject) -> int:
    kind, name = obj["kind"], obj["metadata"]["name"]
    if kind not in KINDS_RENDERED:
        raise ValueError(f"{kind} {name}: a kind the dependency model does not know; add it to "
                         "fabricgen.plan.apply_order (KINDS_RENDERED, and RULES if it needs anything)")
    named = any(r.kind == kind and r.name == name for r in RULES)
    return role_stage(kind, name if named else None)


def identity(obj: KubeObject) -> Identity:
    meta = obj["metadata"]
    return obj["kind"], meta.get("namespace", ""), meta["name"]


def _values(obj: Any, path: Sequence[str]) -> list[str]:
    if not path:
        return [obj] if isinstance(obj, str) and obj else []
    head, rest = path[0], path[1:]
    if head == "*":
        return [v for item in obj for v in _values(item, rest)] if isinstance(obj, list) else []
    return _values(obj.get(head), rest) if isinstance(obj, dict) else []


def _provider_nad(provider: str) -> tuple[str, str] | None:
    parts = provider.split(".")
    return (parts[1], parts[0]) if len(parts) >= 2 else None


def references(obj: KubeObject) -> list[tuple[Identity, Ref]]:
    """Everything `obj` names that must exist before it, by the rules."""
    kind, meta = obj["kind"], obj["metadata"]
    rule = rule_for(kind, meta["name"])
    if rule is None:
        return []
    out: list[tuple[Identity, Ref]] = []
    for ref in rule.needs:
        if ref.name is not None:
            out.append(((ref.kind, ref.namespace or "", ref.name), ref))
            continue
        for value in _values(obj, ref.path):
            if ref.provider:
                nad = _provider_nad(value)
                if nad is not None:
                    out.append(((ref.kind, *nad), ref))
            elif ref.same_namespace:
                out.append(((ref.kind, meta.get("namespace", ""), value), ref))
            else:
                out.append(((ref.kind, "", value), ref))
    return out


def dependencies(objects: Iterable[KubeObject], *, same_stage: bool = True) -> dict[Identity, list[Identity]]:
    """Per object of one cluster, the objects of that same set it needs (with `same_stage`
    False, leaving out what may share its stage).

    A reference to a preinstalled object needs nothing; an optional one only when the set
    holds it; any other reference the set does not hold is a renderer bug.
    """
    objects = list(objects)
    present = {identity(o) for o in objects}
    out: dict[Identity, list[Identity]] = {}
    for obj in objects:
        needs: list[Identity] = []
        for target, ref in references(obj):
            if target in PREINSTALLED or (ref.same_stage and not same_stage):
                continue
            if target in present:
                if target not in needs:
                    needs.append(target)
            elif not ref.optional:
                raise ValueError(f"{identity(obj)} needs {target}, which is neither rendered nor preinstalled")
        out[identity(obj)] = needs
    return out


def stage_name(stage: int) -> str:
    return f"stage-{stage}"


def with_wave(obj: KubeObject, stage: int) -> KubeObject:
    """A copy of `obj` carrying its sync wave, placed after `fabricgen.io/source`."""
    meta = obj["metadata"]
    notes: dict[str, str] = {}
    placed = False
    for key, value in meta.get("annotations", {}).items():
        notes[key] = value
        if key == "fabricgen.io/source":
            notes[WAVE] = str(stage)
            placed = True
    if not placed:
        notes = {WAVE: str(stage), **notes}
    return {**obj, "metadata": {**meta, "annotations": notes}}
