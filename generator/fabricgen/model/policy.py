"""Who may talk to whom: named groups of endpoints and the rules between them, one policy for the
VMs and pods of every platform; and the raw subnet ACL fields Kube-OVN clusters already use."""

import re
from typing import Annotated, Literal, Self

from pydantic import BeforeValidator, Field, model_validator

from fabricgen.model import acl_match
from fabricgen.model.common import Label, Network, Section


class SubnetAcl(Section):
    """One entry of a Kube-OVN Subnet's `spec.acls`, as Kube-OVN writes it into the subnet's logical
    switch: an OVN ACL in tier 2 (kubeovn/kube-ovn `pkg/ovs/ovn-nb-acl.go` `UpdateLogicalSwitchACL`).
    Kube-OVN refuses an entry with an empty field (`newACL`); the ranges and names are those of
    OVN's northbound schema (`ovn-nb.ovsschema`, table ACL)."""

    direction: Literal["from-lport", "to-lport"]
    """`to-lport`: traffic into the subnet's ports; `from-lport`: traffic out of them."""
    priority: int = Field(ge=0, le=32767)
    """Higher wins. Kube-OVN's own ACLs on a private subnet sit at 1000 (drop) to 3000 (nodes)."""
    match: acl_match.OvnMatch
    """An OVN match expression (`ovn-nb(5)`, ACL `match`), refused where OVN's own parser refuses it."""
    action: Literal["allow", "allow-related", "allow-stateless", "drop", "reject", "pass"]
    """What OVN does with a packet that matches."""


Protocol = Literal["tcp", "udp", "sctp", "icmp", "any"]
_PORT_SPEC = re.compile(r"[0-9]{1,5}(-[0-9]{1,5})?")


def _port_spec(value: object) -> object:
    """A port (`5432`) or a range (`"8000-8080"`, or `"5432"`), exactly: a boolean or a float is
    not a port (pydantic would take `true` as port 1), and one message says what is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _PORT_SPEC.fullmatch(value):
        return value
    shown = str(value).lower() if isinstance(value, bool) else repr(value)
    raise ValueError(f"{shown} is not a port: write a number (5432) or a range in quotes (\"8000-8080\")")


PortSpec = Annotated[int | str, BeforeValidator(_port_spec),
                     Field(json_schema_extra={"anyOf": [{"type": "integer", "minimum": 1, "maximum": 65535},
                                                        {"type": "string", "pattern": r"^[0-9]{1,5}(-[0-9]{1,5})?$"}]})]


class TenantSubnetRef(Section):
    """A tenant subnet of a zone."""

    zone: Label
    """The zone."""
    name: Label
    """The subnet's name (unique in its zone)."""


class NamespaceRef(Section):
    """Pods of a namespace in a Kubernetes cluster that runs OVN-Kubernetes (a consumer of an OVN
    deployment)."""

    cluster: Label
    """The Kubernetes consumer's name."""
    name: Label
    """The namespace."""
    pod_selector: dict[Label, Label] = {}
    """`matchLabels` of the pods; empty: every pod of the namespace."""
    cidr: Network | None = None
    """The pods' addresses, where other platforms must name them by address (a pod has no fixed
    address: give the range its namespace's pods take theirs from)."""


class OpenStackRef(Section):
    """VMs of an OpenStack cloud (a consumer of an OVN deployment) on networks of these ranges."""

    cloud: Label
    """The OpenStack consumer's name."""
    cidr: Network
    """The range of the VMs' Neutron subnet."""


class Member(Section):
    """One endpoint of a group: exactly one of the fields."""

    tenant_subnet: TenantSubnetRef | None = None
    """A zone's tenant subnet (VMs and pods on it)."""
    backbone: Label | None = None
    """A zone's backbone, by the zone's name."""
    cidr: Network | None = None
    """Addresses outside every platform of the fabric (an office, a monitoring network): a source
    only, as nothing of the fabric filters traffic into them."""
    namespace: NamespaceRef | None = None
    """Pods of a namespace of an OVN-Kubernetes cluster."""
    openstack: OpenStackRef | None = None
    """VMs of an OpenStack cloud."""

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        given = [k for k in ("tenant_subnet", "backbone", "cidr", "namespace", "openstack")
                 if getattr(self, k) is not None]
        if len(given) != 1:
            names = [{"tenant_subnet": "tenantSubnet"}.get(k, k) for k in given]
            raise ValueError("a member is exactly one of tenantSubnet, backbone, cidr, namespace or openstack"
                             + (f"; this one has {' and '.join(names)}: make each a member of its own" if given
                                else ""))
        return self


class Group(Section):
    """A named group of endpoints."""

    name: Label
    """The group's name: rules name it; rendered objects carry it."""
    members: list[Member] = Field(min_length=1)
    """The group's endpoints."""
    default_deny: bool = False
    """Traffic into the group is dropped unless a rule allows it; traffic between the group's own
    members stays allowed. Without it the group is open, and a rule into it allows nothing new."""


class Rule(Section):
    """Traffic one group may start towards another; its replies are allowed with it."""

    name: Label | None = None
    """A name for reviews and reports; default `<from>-to-<to>`."""
    from_: Label = Field(alias="from")
    """The group the connections come from."""
    to: Label
    """The group they go to; it must have `defaultDeny`."""
    protocol: Protocol
    """`any` allows every protocol; `icmp` echo and the rest of ICMP."""
    ports: list[PortSpec] = []
    """Destination ports or ranges (`5432`, `"8000-8080"`), for tcp, udp and sctp; empty: every port."""


class Policy(Section):
    """Who may talk to whom."""

    groups: list[Group] = []
    """The named groups of endpoints."""
    rules: list[Rule] = []
    """The allowed traffic between groups, beside what each group's own members exchange."""
