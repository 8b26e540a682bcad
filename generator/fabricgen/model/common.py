"""Shared field types and the base model for every fabric.yaml section."""


from ipaddress import IPv4Address, IPv4Network
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.alias_generators import to_camel

# RFC 1123 label: zone names, namespaces, VPC and subnet names. These end up in
# file paths and OVN object names, so nothing else may pass.
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
# RFC 1123 subdomain: Kubernetes node names.
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"

Label = Annotated[
    str,
    Field(
        pattern=DNS_LABEL,
        max_length=63,
        description="DNS-1123 label: lower-case letters, digits and '-', at most 63 characters.",
    ),
]
NodeName = Annotated[
    str,
    Field(
        pattern=DNS_SUBDOMAIN,
        max_length=253,
        description="Kubernetes node name (DNS-1123 subdomain); equals the OVN chassis hostname.",
    ),
]
Subdomain = Annotated[
    str,
    Field(
        pattern=DNS_SUBDOMAIN,
        max_length=253,
        description="DNS-1123 subdomain (checked further by the rules that use it).",
    ),
]
Port = Annotated[int, Field(ge=1, le=65535)]


def written_as_text(example: str) -> BeforeValidator:
    """Refuse a YAML number or boolean where an address belongs: pydantic would take `5` as
    0.0.0.5 and `true` as 0.0.0.1 (an int and its subclass), so a typo would become an address."""

    def check(value: object) -> object:
        if isinstance(value, bool | int | float):
            kind = "a boolean" if isinstance(value, bool) else "a number"
            shown = str(value).lower() if isinstance(value, bool) else str(value)
            raise ValueError(f"{shown} is {kind}, not an address: write it in dotted form, such as {example}")
        return value

    return BeforeValidator(check)


Network = Annotated[IPv4Network, written_as_text("10.0.0.0/16")]
Address = Annotated[IPv4Address, written_as_text("192.0.2.10")]


def _has_hosts(network: IPv4Network) -> IPv4Network:
    if network.prefixlen > 30:
        raise ValueError(f"{network} is too small for a subnet: it leaves no host address for the gateway "
                         "and the ports on it; use a /30 or larger")
    return network


SubnetCIDR = Annotated[IPv4Network, written_as_text("172.30.10.0/24"), AfterValidator(_has_hosts)]
"""A network that holds a gateway and ports (backbones, tenant subnets, the transit switch): at most /30."""


class Section(BaseModel):
    """Base of every section: camelCase keys, unknown keys rejected, immutable."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=False,
        defer_build=True,
        use_attribute_docstrings=False,  # see model/docstrings.py: read only for the schema
    )
