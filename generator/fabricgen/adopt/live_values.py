"""The values `fabricgen import` reads from live objects, each read as what the fabric can say
or None (a name that is not a DNS-1123 label, a CIDR that is not IPv4): never guessed.

The names and defaults of what Kube-OVN and SUSE Virtualization keep, too."""

from __future__ import annotations

import json
import re
from ipaddress import IPv4Address, IPv4Network, IPv6Address, ip_address
from typing import Any

from pydantic import ValidationError

from fabricgen.model import acl_match
from fabricgen.model.common import DNS_LABEL, DNS_SUBDOMAIN
from fabricgen.model.interconnect import IMAGE_PATTERN
from fabricgen.model.names import KUBE_SYSTEM
from fabricgen.model.policy import SubnetAcl
from fabricgen.model.zone import ClusterNetworks
from fabricgen.observe import json_bounds
from fabricgen.observe import kube_objects as ko
from fabricgen.source.provenance import printable

IC_CONFIG = ko.ObjectId("", "ConfigMap", KUBE_SYSTEM, "ovn-ic-config")
NAT_GW_CONFIG = ko.ObjectId("", "ConfigMap", KUBE_SYSTEM, "ovn-vpc-nat-gw-config")
CONFIGURATION = ko.ObjectId("kubeovn.io", "Configuration", KUBE_SYSTEM, "kubeovn")
CANAL = ko.ObjectId("helm.cattle.io", "HelmChart", KUBE_SYSTEM, "rke2-canal")
HARVESTER_TYPE = "network.harvesterhci.io/type"
HARVESTER_CLUSTER_NETWORK = "network.harvesterhci.io/clusternetwork"
# What Kube-OVN defaults a cluster's ranges to: the fabric's own defaults (model.zone.ClusterNetworks).
DEFAULTS = {f.alias or name: str(f.default) for name, f in ClusterNetworks.model_fields.items()
            if f.alias in ("podCIDR", "joinCIDR", "serviceCIDR")}
LABEL = re.compile(DNS_LABEL)
SUBDOMAIN = re.compile(DNS_SUBDOMAIN)
DNS_OPTION = re.compile(r"dns_server=\{([0-9.;]+)\}")  # matched whole (fullmatch)


def label(value: Any) -> str | None:
    return value if isinstance(value, str) and len(value) <= 63 and LABEL.fullmatch(value) else None


def node_name(value: Any) -> str | None:
    return value if isinstance(value, str) and len(value) <= 253 and SUBDOMAIN.fullmatch(value) else None


def network(value: Any) -> IPv4Network | None:
    """One IPv4 network in CIDR form without host bits, or None."""
    if not isinstance(value, str):
        return None
    try:
        return IPv4Network(value.strip(), strict=True)
    except ValueError:
        return None


def ip(value: Any) -> IPv4Address | IPv6Address | None:
    """An IPv4 or IPv6 address, as an IC database member's may be (NODE_IPS)."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        return ip_address(value.strip())
    except ValueError:
        return None


def address(value: Any) -> IPv4Address | None:
    if not isinstance(value, str):
        return None
    try:
        return IPv4Address(value.strip())
    except ValueError:
        return None


IMAGE = re.compile(IMAGE_PATTERN)


def image(value: Any) -> str | None:
    return value if isinstance(value, str) and len(value) <= 512 and IMAGE.fullmatch(value) else None


def first_ipv4_network(value: Any) -> IPv4Network | None:
    """The IPv4 network of a comma-separated dual-stack value such as `10.52.0.0/16,fd00::/56`."""
    if not isinstance(value, str):
        return None
    return next((n for n in map(network, value.split(",")) if n is not None), None)


def as_dict(value: Any) -> dict[str, Any]:
    """A mapping of the live object, or {} when it holds anything else there."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def spec(obj: ko.LiveObject) -> dict[str, Any]:
    return as_dict(obj.body.get("spec"))


def data(obj: ko.LiveObject) -> dict[str, Any]:
    data = obj.body.get("data")
    return data if isinstance(data, dict) else {}


def labels(obj: ko.LiveObject) -> dict[str, Any]:
    return as_dict(as_dict(obj.body.get("metadata")).get("labels"))


def nad_config(nad: ko.LiveObject) -> dict[str, Any]:
    try:
        config = json.loads(str(spec(nad).get("config", "")))
    except ValueError:
        return {}
    return config if isinstance(config, dict) else {}


def ovn_provider(provider: Any) -> tuple[str, str] | None:
    """`<nad>.<namespace>.ovn` -> (nad, namespace): an attachment's provider (kube-ovn pkg/util IsOvnProvider)."""
    if not isinstance(provider, str):
        return None
    parts = provider.split(".")
    if len(parts) != 3 or parts[2] != "ovn" or not parts[0] or not parts[1]:
        return None
    return parts[0], parts[1]


def shown(text: object) -> str:
    """A live value as a comment shows it: one printable line."""
    return printable(str(text))


def port(value: Any, default: int) -> int:
    number = integer(value)
    return number if number is not None and 1 <= number <= 65535 else default


def integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= json_bounds.MAX_INT_DIGITS:
        return int(value.strip())
    return None


def interface_network(value: str) -> IPv4Network | None:
    """A route's destination written as one address (Kube-OVN accepts an IP without a prefix)."""
    single = address(value)
    return IPv4Network(f"{single}/32") if single is not None else None


def match_refusal(text: str) -> str | None:
    """Why OVN's parser refuses a live match (`acl_match`), or None where it parses."""
    try:
        acl_match.parse(text)
    except acl_match.MatchError as exc:
        return printable(str(exc))
    return None


def subnet_acl(value: Any) -> tuple[str, int, str, str] | None:
    """A Subnet `acls` entry as (direction, priority, match, action), or None where the fabric
    cannot hold it: the model's own `SubnetAcl` decides (its enums, range and OVN's grammar), on
    values that are already what kubectl prints, so that nothing is coerced on the way. Kube-OVN's
    Go struct leaves a zero priority out (`omitempty`)."""
    entry = as_dict(value)
    fields = {"direction": entry.get("direction"), "priority": entry.get("priority", 0),
              "match": entry.get("match"), "action": entry.get("action")}
    if isinstance(fields["priority"], bool) or not isinstance(fields["priority"], int) or \
            not all(isinstance(fields[k], str) for k in ("direction", "match", "action")):
        return None
    try:
        acl = SubnetAcl.model_validate(fields)
    except ValidationError:
        return None
    return acl.direction, acl.priority, acl.match, acl.action
