"""Health checks for the kinds fabricgen renders that have a status, for Argo CD and Flux.

Neither engine knows a `kubeovn.io` kind. Argo CD without a health check calls an object
healthy the moment it is applied (argoproj/argo-cd `util/lua/lua.go` `GetHealthScript`
finds no script, gitops-engine `pkg/health` returns nil, `pkg/sync/sync_context.go` marks the
task succeeded), so a sync wave waits only `ARGOCD_SYNC_WAVE_DELAY`. Flux `wait: true` reads
kstatus (fluxcd/cli-utils `pkg/kstatus/status/status.go` `Compute`): an object without
conditions is Current, and of a ProviderNetwork's per-node Ready conditions it reads the first.

- Argo CD: Lua scripts in Argo CD's own layout, `health/resource_customizations/<group>/<Kind>/`
  (`health.lua`, `health_test.yaml`, `testdata/`), delivered as `argocd-cm` keys
  `resource.customizations.health.<group>_<Kind>` (argo-cd `docs/operator-manual/health.md`).
  They run without Lua's standard libraries other than `table` (argo-cd `util/lua/lua.go`
  opens only base, table and a safe os for `argocd-cm` scripts). `argoproj.io/Application`
  gets the check Argo CD documents for app-of-apps with sync waves.
- Flux: `healthCheckExprs` (CEL) per stage Kustomization (fluxcd/pkg `runtime/cel`
  `status_evaluator.go`: inProgress, then failed, then current; none true is InProgress).
  The expression sees the object's top-level fields; a missing `status` is an evaluation
  error, which kstatus reports as Unknown (fluxcd/cli-utils `polling/statusreaders/common.go`)
  and the wait holds on (fluxcd/pkg `ssa/manager_wait.go`): "no status yet" holds, as it
  should. Conditions are looked up with `exists`, never `filter(...).all(...)`, which is true
  over an empty list. A Vlan gets no expression: Kube-OVN writes its status only once a
  Subnet uses it (see its `health.lua`), so any expression would hold the stage with the
  Subnets forever; kstatus calls it Current, which is what that stage needs.

The Lua files are package data; the code digest of a render record covers them
(`fabricgen.serialise.render_record`), so a changed script is never answered from the cache.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parent / "health" / "resource_customizations"

Kind = tuple[str, str]  # (API group, kind)

ARGOCD_KINDS: tuple[Kind, ...] = (
    ("kubeovn.io", "Configuration"),
    ("kubeovn.io", "ProviderNetwork"),
    ("kubeovn.io", "Vlan"),
    ("kubeovn.io", "Vpc"),
    ("kubeovn.io", "Subnet"),
    ("kubeovn.io", "VpcNatGateway"),
    ("kubeovn.io", "IptablesEIP"),
    ("kubeovn.io", "IptablesSnatRule"),
    ("kubeovn.io", "IptablesDnatRule"),
    ("argoproj.io", "Application"),
)

_READY = "has(status.conditions) && status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')"
_CONFIGURATION_CHECKS = "['ovnNorthDBLeaderFound', 'ovnSouthDBLeaderFound', 'ovnNBDBHealth', 'ovnSBDBHealth']"


def _echo(field: str) -> str:
    """The status repeats the spec's list (an absent list is an empty one)."""
    return (f"(has(status.{field}) ? status.{field} : []) == "
            f"(has(spec.{field}) ? spec.{field} : [])")


def _same(field: str) -> str:
    """The status holds the spec's value (an absent string is an empty one)."""
    return (f"(has(status.{field}) ? string(status.{field}) : '') == "
            f"(has(spec.{field}) ? string(spec.{field}) : '')")


def _flag(where: str, field: str) -> str:
    return f"(has({where}.{field}) && {where}.{field})"


_RULE_READY = "has(status.ready) && status.ready"

# Flux healthCheckExprs per kind, written from the same upstream code as the Lua scripts: where a
# status is never cleared by a later failure (Vpc standby, the Iptables kinds' ready), current
# also needs the status to echo the spec.
FLUX_EXPRESSIONS: dict[Kind, dict[str, str]] = {
    ("kubeovn.io", "Configuration"): {
        "failed": f"has(status.conditions) && status.conditions.exists(c, c.type in {_CONFIGURATION_CHECKS} "
                  "&& c.status == 'False')",
        "current": f"has(status.status) && status.status == 'Deployed' && has(status.conditions) && "
                   f"{_CONFIGURATION_CHECKS}.all(t, status.conditions.exists(c, c.type == t && c.status == 'True'))",
    },
    ("kubeovn.io", "ProviderNetwork"): {"current": _READY},
    ("kubeovn.io", "Vpc"): {
        "current": f"has(status.standby) && status.standby && {_flag('spec', 'enableExternal')} == "
                   f"{_flag('status', 'enableExternal')} && (!{_flag('spec', 'enableExternal')} || "
                   f"{_flag('spec', 'enableBfd')} == {_flag('status', 'enableBfd')})",
    },
    # As its health.lua: Error is never read (Kube-OVN never clears it); failed only for what
    # retrying cannot fix.
    ("kubeovn.io", "Subnet"): {
        "failed": "has(status.conditions) && (status.conditions.exists(c, c.type == 'Validated' && "
                  "c.status == 'False') || status.conditions.exists(c, c.type == 'Ready' && "
                  "c.status == 'False' && has(c.reason) && "
                  "(c.reason == 'NoReadyGateway' || (c.reason == 'ValidateSubnetVlanFailed' && has(c.message) && "
                  "has(spec.vlan) && c.message == 'failed to validate vlan for subnet ' + metadata.name + "
                  "', subnet ' + metadata.name + ' has invalid conflict vlan ' + spec.vlan))))",
        "current": _READY,
    },
    ("kubeovn.io", "VpcNatGateway"): {"current": f"{_echo('externalSubnets')} && {_echo('selector')}"},
    ("kubeovn.io", "IptablesEIP"): {
        "failed": f"{_RULE_READY} && has(spec.v4ip) && spec.v4ip != '' && (!has(status.ip) || status.ip != spec.v4ip)",
        "current": f"{_RULE_READY} && {_same('qosPolicy')}",
    },
    ("kubeovn.io", "IptablesSnatRule"): {
        "current": f"{_RULE_READY} && has(status.internalCIDR) && has(spec.internalCIDR) && "
                   "(status.internalCIDR == spec.internalCIDR || status.internalCIDR == spec.internalCIDR + '/32')",
    },
    ("kubeovn.io", "IptablesDnatRule"): {
        "current": f"{_RULE_READY} && " + " && ".join(_same(f) for f in ("protocol", "internalIp", "internalPort",
                                                                           "externalPort")),
    },
}

API_VERSIONS = {"kubeovn.io": "kubeovn.io/v1", "argoproj.io": "argoproj.io/v1alpha1"}


def script_path(kind: Kind) -> Path:
    return ROOT / kind[0] / kind[1] / "health.lua"


def script(kind: Kind) -> str:
    return script_path(kind).read_text(encoding="utf-8")


def argocd_key(kind: Kind) -> str:
    """The `argocd-cm` key of a health check (argo-cd `docs/operator-manual/health.md`)."""
    return f"resource.customizations.health.{kind[0]}_{kind[1]}"


def argocd_data() -> dict[str, str]:
    return {argocd_key(kind): script(kind) for kind in ARGOCD_KINDS}


def kind_of(obj: dict[str, Any]) -> Kind:
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    return group, str(obj.get("kind", ""))


def flux_health_checks(objects: Iterable[dict[str, Any]]) -> list[dict[str, str]]:
    """`healthCheckExprs` for the kinds among `objects`, in the order of `FLUX_EXPRESSIONS`."""
    present = {kind_of(o) for o in objects}
    out: list[dict[str, str]] = []
    for kind, exprs in FLUX_EXPRESSIONS.items():
        if kind in present:
            out.append({"apiVersion": API_VERSIONS[kind[0]], "kind": kind[1], **exprs})
    return out
