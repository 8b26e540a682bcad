"""The fabric's watch: `fabricgen status --serve` running all the time, as GitOps output."""

from typing import Annotated

from pydantic import Field

from fabricgen.model.common import Label, Section, WebUrl
from fabricgen.model.interconnect import IMAGE_PATTERN

Image = Annotated[str, Field(pattern=IMAGE_PATTERN, max_length=512)]
PROMETHEUS_LABEL = r"^[a-zA-Z_][a-zA-Z0-9_]*$"  # Prometheus' label name syntax


class Watch(Section):
    """`fabricgen status --serve` as a workload: the exporter Prometheus scrapes, reading the
    fabric every `interval` seconds, and in every zone a read-only ServiceAccount it reads that
    zone's cluster as (docs/watching.md). The image is built from this repository's
    `Containerfile`; the kubeconfig it reads the zones with is a Secret you create."""

    image: Image
    """The exporter's image, built from fabricgen's `Containerfile` (its entry point is
    `fabricgen`), e.g. `registry.example/fabricgen:0.9.0`; a digest (`@sha256:...`) pins it."""
    zone: Label | None = None
    """The zone whose cluster runs the exporter, in `kube-system`. Leave out to run it in the
    cluster Argo CD or Flux runs in, in namespace `fabricgen-watch`. Either way it is written to
    `_monitoring/watch.yaml`, applied apart from the zones' rollouts, which it must never hold
    back."""
    interval: int = Field(default=60, ge=10, le=3600)
    """Seconds between two readings of the whole fabric (`status --interval`); a reading never
    overlaps the one before. Keep it at or above Prometheus' scrape interval."""
    kubeconfig_secret: Label = "fabricgen-watch-kubeconfig"
    """The Secret (beside the exporter) whose key `config` is the kubeconfig the exporter reads
    the zones with: one context per zone, named as the zone's `destination.kubeContext` (else the
    zone's name), each with a token of that zone's `fabricgen-watch` ServiceAccount
    (`kubectl -n kube-system create token fabricgen-watch --duration=8760h`). fabricgen never
    writes it: a token in git is a token for everyone who reads the repository."""
    runbook_url: WebUrl | None = None
    """Where your on-call engineers open the watch's runbook, fabricgen's `docs/watching.md` (or
    your copy of it), e.g. `https://git.example/net/fabric/blob/main/docs/watching.md`: each
    alert's `runbook_url` is it with the alert's anchor. Without it the alerts carry none (a path
    in a repository no pager can open); `fabricgen watching` prints the page."""
    cluster_label: Annotated[str, Field(pattern=PROMETHEUS_LABEL, max_length=64)] = "cluster"
    """The label that tells the zones' clusters apart where their kube-ovn-monitor series meet in
    one Prometheus (an external label of each cluster's Prometheus, a relabelling): the
    kube-ovn-monitor alerts keep it, so one zone's leader never hides another's lost one. A
    series without it is grouped as before."""
