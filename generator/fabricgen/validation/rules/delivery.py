"""Rules on the Argo CD and Flux objects fabricgen writes with `delivery` (FG8xx)."""

from __future__ import annotations

from collections.abc import Iterator

from fabricgen.diagnostics import Finding
from fabricgen.model import Fabric
from fabricgen.model.consumers import KubernetesCluster
from fabricgen.plan import apply_order
from fabricgen.validation.registry import rule

LABEL_MAX = 63
LAST_STAGE = max(apply_order.role_stage(kind, None) for kind in apply_order.KINDS_RENDERED)


@rule("FG801", "delivery-name-length",
      "A Flux Kustomization or Argo CD Application name would exceed the 63 characters of a label value.")
def name_length(fabric: Fabric) -> Iterator[Finding]:
    if fabric.delivery is None:
        return
    site = fabric.metadata.name
    clusters: list[tuple[tuple[str | int, ...], str]] = [(("zones", z, "name"), zone.name)
                                                         for z, zone in enumerate(fabric.zones)]
    for d, deployment in enumerate(fabric.ovn_deployments):
        for c, consumer in enumerate(deployment.consumers):
            if isinstance(consumer, KubernetesCluster):
                clusters.append((("ovnDeployments", d, "consumers", c, "name"), consumer.name))
    for path, name in clusters:
        longest = f"fabric-{site}-{name}-{apply_order.stage_name(LAST_STAGE)}"
        if len(longest) > LABEL_MAX:
            yield Finding("FG801", path, f"the Flux Kustomization {longest!r} is {len(longest)} characters long; "
                          f"Flux and Argo CD put such names in label values (at most {LABEL_MAX}); shorten "
                          "the site or this name")


@rule("FG802", "watch-zone-unknown",
      "The watch names a zone the fabric does not have, or the fabric has no zone for it to read.")
def watch_zone(fabric: Fabric) -> Iterator[Finding]:
    watch = fabric.watch
    if watch is None:
        return
    names = [z.name for z in fabric.zones]
    if not names:
        yield Finding("FG802", ("watch",), "the watch reads the zones' clusters and this fabric has no zone; "
                      "remove watch, or run `fabricgen status --serve` beside the deployments yourself")
    elif watch.zone is not None and watch.zone not in names:
        yield Finding("FG802", ("watch", "zone"), f"no zone {watch.zone!r} in the fabric; name one of: "
                      f"{', '.join(names)}, or leave zone out to run the exporter where Argo CD or Flux runs")
