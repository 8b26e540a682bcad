"""The top-level `Fabric` document."""


from typing import Literal

from pydantic import Field

from fabricgen.model.common import Label, Section
from fabricgen.model.delivery import Delivery
from fabricgen.model.interconnect import Interconnection
from fabricgen.model.ovn import OvnDeployment
from fabricgen.model.policy import Policy
from fabricgen.model.watch import Watch
from fabricgen.model.zone import Zone

API_VERSION = "fabricgen.io/v1alpha1"


class Metadata(Section):
    """The site this fabric describes."""

    name: Label
    """Site name: output goes to `rendered/<name>/`."""


class Fabric(Section):
    """One fabric: zones joined by OVN interconnection, and/or OVN deployments with their
    hosts and platforms. A fabric declares at least one zone or one deployment."""

    api_version: Literal["fabricgen.io/v1alpha1"] = Field(alias="apiVersion")
    """The version of this document's format."""
    kind: Literal["Fabric"]
    """Always `Fabric`."""
    metadata: Metadata
    """The site: its name names the output directory."""
    interconnection: Interconnection | None = None
    """How the zones are joined; required when there are zones."""
    zones: list[Zone] = []
    """Kube-OVN clusters joined by OVN-IC. May be empty in a platform-only fabric."""
    ovn_deployments: list[OvnDeployment] = []
    """OVN NB/SB pairs with their chassis and consumers (CloudStack, OpenStack, Kubernetes)."""
    policy: Policy = Policy.model_construct()
    """Who may talk to whom, across every platform of the fabric."""
    watch: Watch | None = None
    """`fabricgen status` running all the time as a Prometheus exporter; without it, only the
    alert rules are written (`_monitoring/`)."""
    delivery: Delivery | None = None
    """The repository Argo CD and Flux read; with it, fabricgen also writes their objects."""
