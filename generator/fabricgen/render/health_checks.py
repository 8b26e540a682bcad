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

The Lua files are package data, which the code digest in the stamps does not cover:
`DIGESTS` pins each script, so changing one changes this module too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fabricgen.errors import FabricgenError

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

# SHA-256 of each health.lua (see the module docstring).
DIGESTS: dict[Kind, str] = {
    ("kubeovn.io", "Configuration"): "bf0255a978adc3bbfe32017e0fa0fd2255e6b488e4e5479ddbcaa0f20957bec1",
    ("kubeovn.io", "ProviderNetwork"): "2eaae0a7f20c2375fa42b83ea0c92ae9e0edade6c0c5cc51abaf1877aece24c0",
    ("kubeovn.io", "Vlan"): "b92d0fc72460046c6ff81d197b4b189e4cc8122d3cf107e154f45eca783d582d",
    ("kubeovn.io", "Vpc"): "ed67f915cc34e06f52f25e6f6d001187a755c05d364f1e1b601e3268f930f11f",
    ("kubeovn.io", "Subnet"): "10cbc720ed6cb3d190de4945039f4d79fad7f2842328b226791db2e484358c74",
    ("kubeovn.io", "VpcNatGateway"): "3c786a54757242b83e58a9f905c1c2803f432ad1beaaf146f6264a72158efd77",
    ("kubeovn.io", "IptablesEIP"): "ae5342b6442df14e7d66a903616cca7fbdb7167a42e407d48e6590a3e4a6e247",
    ("kubeovn.io", "IptablesSnatRule"): "180876c00b8eca0f221cf9b38be1a07d2ebab3f1df6cf4a1e1ec839454b3a9e8",
    ("kubeovn.io", "IptablesDnatRule"): "5a1d555abaf82bdc46143581d669d9876cdddecae3d503886075b5361bc26248",
    ("argoproj.io", "Application"): "2e7fecd25aecc54c3f05302d98a92b1424c8d0aaf3aa371e2574729f1d144749",
}

_READY = "has(status.conditions) && status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')"
_CONFIGURATION_CHECKS = "['ovnNorthDBLeaderFound', 'ovnSouthDBLeaderFound', 'ovnNBDBHealth', 'ovnSBDBHealth']"


def _echo(field: str) -> str:
    """The status repeats the spec's list (an absent list is an empty one)."""
    return (f"(has(status.{field}) ? status.{field} : []) == "
            f"(has(spec.{field}) ? spec.{field} : [])")


# Flux healthCheckExprs per kind, written from the same upstream code as the Lua scripts.
FLUX_EXPRESSIONS: dict[Kind, dict[str, str]] = {
    ("kubeovn.io", "Configuration"): {
        "failed": f"has(status.conditions) && status.conditions.exists(c, c.type in {_CONFIGURATION_CHECKS} "
                  "&& c.status == 'False')",
        "current": f"has(status.status) && status.status == 'Deployed' && has(status.conditions) && "
                   f"{_CONFIGURATION_CHECKS}.all(t, status.conditions.exists(c, c.type == t && c.status == 'True'))",
    },
    ("kubeovn.io", "ProviderNetwork"): {"current": _READY},
    ("kubeovn.io", "Vpc"): {"current": "has(status.standby) && status.standby"},
    ("kubeovn.io", "Subnet"): {
        "failed": "has(status.conditions) && !status.conditions.exists(c, c.type == 'Ready' && c.status == 'True') "
                  "&& status.conditions.exists(c, c.type == 'Error' && c.status == 'True')",
        "current": _READY,
    },
    ("kubeovn.io", "VpcNatGateway"): {"current": f"{_echo('externalSubnets')} && {_echo('selector')}"},
    ("kubeovn.io", "IptablesEIP"): {"current": "has(status.ready) && status.ready"},
    ("kubeovn.io", "IptablesSnatRule"): {"current": "has(status.ready) && status.ready"},
    ("kubeovn.io", "IptablesDnatRule"): {"current": "has(status.ready) && status.ready"},
}

API_VERSIONS = {"kubeovn.io": "kubeovn.io/v1", "argoproj.io": "argoproj.io/v1alpha1"}


class HealthCheckError(FabricgenError):
    """A health check shipped with fabricgen is missing or was changed without its digest."""


def script_path(kind: Kind) -> Path:
    return ROOT / kind[0] / kind[1] / "health.lua"


def script(kind: Kind) -> str:
    text = script_path(kind).read_text(encoding="utf-8")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if DIGESTS.get(kind) != digest:
        raise HealthCheckError(f"{script_path(kind)}: SHA-256 {digest} is not the one fabricgen.render."
                               "health_checks.DIGESTS pins; update DIGESTS with the script")
    return text


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
