"""One zone's Kubernetes objects: what the Argo CD plugin prints and the KRM function returns.

Both integrations build the objects with `zone_build` (`pipeline.render_kubernetes`) and go
through `zone_objects`, so they emit exactly the objects `fabricgen render` writes
under `rendered/<site>/<zone>/` (in the same apply order), and both refuse to
produce an empty result: an empty manifest set makes a GitOps tool prune
everything it deployed.
"""

from __future__ import annotations

import difflib

from fabricgen import exit_codes
from fabricgen.errors import FabricgenError
from fabricgen.model import Fabric
from fabricgen.pipeline import KubernetesBuild, render_kubernetes
from fabricgen.render.artifacts import KubeObject


class ZoneError(FabricgenError):
    """No zone, an unknown zone, or a zone without Kubernetes objects."""

    exit_code = exit_codes.USAGE


def zone_names(build: KubernetesBuild) -> list[str]:
    """Every Kubernetes output directory: the zones, and the clusters of OVN deployments
    (an OVN-Kubernetes consumer gets its own directory)."""
    return list(build.manifests)


def pick_zone(build: KubernetesBuild, zone: str | None, *, hint: str) -> str:
    """The zone to emit; `hint` tells the user how to set it (it differs per integration)."""
    names = zone_names(build)
    if zone is None:
        if len(names) == 1:
            return names[0]
        raise ZoneError(f"{build.plan.source_name}: no zone chosen; {hint} "
                        f"(one of: {', '.join(names)})")
    if zone not in names:
        close = difflib.get_close_matches(zone, names, n=1)
        guess = f"; did you mean {close[0]!r}?" if close else ""
        raise ZoneError(f"{build.plan.source_name}: no zone {zone!r} in site {build.site!r} "
                        f"(zones: {', '.join(names)}){guess}")
    return zone


def zone_build(fabric: Fabric, source_name: str, zone: str | None, *, hint: str) -> tuple[KubernetesBuild, str]:
    """The build holding the chosen zone's objects, and the zone. A zone of the fabric is
    built alone; anything else (no zone, an OVN-Kubernetes cluster's directory, a name that
    is not there) gets the whole build, which `pick_zone` chooses from or explains."""
    if zone is not None and any(z.name == zone for z in fabric.zones):
        return render_kubernetes(fabric, source_name, zone=zone), zone
    build = render_kubernetes(fabric, source_name)
    return build, pick_zone(build, zone, hint=hint)


def zone_objects(build: KubernetesBuild, zone: str) -> list[KubeObject]:
    objects = build.objects(zone)
    if not objects:
        raise ZoneError(f"{build.plan.source_name}: zone {zone!r} has no Kubernetes objects; "
                        "refusing to emit an empty manifest set")
    return objects
