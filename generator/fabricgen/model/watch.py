"""The fabric's watch: `fabricgen status --serve` running all the time, as GitOps output."""

from typing import Annotated

from pydantic import Field

from fabricgen.model.common import Label, Section

Image = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/:@-]*$", max_length=512)]


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
