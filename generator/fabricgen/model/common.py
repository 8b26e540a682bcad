"""Shared field types and the base model for every fabric.yaml section."""


import re
from ipaddress import IPv4Address, IPv4Network
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.alias_generators import to_camel

from fabricgen.escapes import escaped

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
def _no_boolean(value: object) -> object:
    """Refuse a YAML boolean where a number belongs: pydantic takes `true` as 1 (a bool is an int)."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is a boolean, not a number")
    return value


Port = Annotated[int, Field(ge=1, le=65535), BeforeValidator(_no_boolean)]


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


def _printable(value: str) -> str:
    odd = next((i for i, c in enumerate(value) if not c.isprintable()), None)
    if odd is not None:
        raise ValueError(f"character {odd + 1}, {escaped(value[odd])}, is not printable (a control, a line or "
                         "paragraph separator, a bidirectional override or another character a terminal or a "
                         "reviewer's diff shows as something else, or not at all); remove it")
    return value


PrintableText = Annotated[str, AfterValidator(_printable)]
"""Free text that reaches rendered files and terminals: printable characters only."""

Network = Annotated[IPv4Network, written_as_text("10.0.0.0/16")]
Address = Annotated[IPv4Address, written_as_text("192.0.2.10")]


def _has_hosts(network: IPv4Network) -> IPv4Network:
    if network.prefixlen > 30:
        raise ValueError(f"{network} is too small for a subnet: it leaves no host address for the gateway "
                         "and the ports on it; use a /30 or larger")
    return network


SubnetCIDR = Annotated[IPv4Network, written_as_text("172.30.10.0/24"), AfterValidator(_has_hosts)]
"""A network that holds a gateway and ports (backbones, tenant subnets, the transit switch): at most /30."""


# A URL as printable ASCII (RFC 3986: anything else is percent-encoded): no blank, quote or
# backslash, no control, and no bidirectional or other non-ASCII character that a terminal or a
# reviewer's diff would show as something else.
_URL_CHARACTERS = r"[!#-&(-\[\]-~]+"


def _url(schemes: tuple[str, ...], *, user: bool) -> AfterValidator:
    """A URL of one of `schemes` in printable ASCII, without a credential: a password never, a
    user name only where `user` allows one (`ssh://git@host/...`): fabricgen copies the URL into
    rendered files and `diff` prints it."""
    allowed = re.compile(_URL_CHARACTERS)

    def check(value: str) -> str:
        scheme, sep, _rest = value.partition("://")
        if not sep or scheme not in schemes:
            raise ValueError(f"{value!r} is not a URL of {' or '.join(f'{s}://' for s in schemes)}")
        odd = next((i for i, c in enumerate(value) if not allowed.fullmatch(c)), None)
        if odd is not None:
            char = value[odd]
            shown = repr(char) if char.isprintable() and ord(char) < 0x7F else escaped(char)
            raise ValueError(f"character {odd + 1} of the URL, {shown}, is not printable ASCII (a blank, "
                             "a quote, a backslash, a control or a character a terminal may show as another); "
                             "percent-encode it")
        parts = urlsplit(value)
        if parts.password is not None or (parts.username is not None and not (user and parts.scheme == "ssh")):
            held = "user:password@" if parts.password is not None else "user@"
            raise ValueError(f"the URL holds a credential ({held}), which fabricgen would copy into rendered files "
                             "and print; give the URL without it, and the credential to the tool that needs it (a "
                             "Secret, an SSH key)")
        if not parts.hostname:
            raise ValueError("the URL names no host")
        return value

    return AfterValidator(check)


GitUrl = Annotated[str, Field(max_length=2048, description="URL of a git repository (https://, http:// or ssh://).",
                              json_schema_extra={"pattern": rf"^(https|ssh|http)://{_URL_CHARACTERS}$"}),
                   _url(("https", "ssh", "http"), user=True)]
HttpsUrl = Annotated[str, Field(max_length=2048, json_schema_extra={"pattern": rf"^https://{_URL_CHARACTERS}$"}),
                     _url(("https",), user=False)]
WebUrl = Annotated[str, Field(max_length=2048, json_schema_extra={"pattern": rf"^https?://{_URL_CHARACTERS}$"}),
                   _url(("https", "http"), user=False)]


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
