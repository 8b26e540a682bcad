"""The top-level `Fabric` document."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fabricgen.model.common import Label, Section
from fabricgen.model.interconnect import Interconnection
from fabricgen.model.zone import Zone

API_VERSION = "fabricgen.io/v1alpha1"


class Metadata(Section):
    name: Label
    """Site name: output goes to `rendered/<name>/`."""


class Fabric(Section):
    """One fabric: zones joined by OVN interconnection."""

    api_version: Literal["fabricgen.io/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["Fabric"]
    metadata: Metadata
    interconnection: Interconnection
    zones: list[Zone] = Field(min_length=1)
