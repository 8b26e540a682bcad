"""How an OVN deployment joins the fabric's OVN interconnection as an availability zone."""


from typing import Annotated

from pydantic import AfterValidator, Field

from fabricgen.model.common import Address, Label, Network, Section, Subdomain

# configure-ovn-ic.sh gives the gateway chassis priorities 100, 99, ... in list order (as Kube-OVN
# numbers gw-nodes), and
# ovn-nbctl lrp-set-gateway-chassis takes 0 to 32767 (ovn-org/ovn utilities/ovn-nbctl.c; the NB
# schema's Gateway_Chassis priority).
GATEWAY_PRIORITY_TOP = 100
MAX_GATEWAY_CHASSIS = GATEWAY_PRIORITY_TOP + 1


def _priorities_fit(chassis: list[str]) -> list[str]:
    if len(chassis) > MAX_GATEWAY_CHASSIS:
        raise ValueError(f"{len(chassis)} gateway chassis: configure-ovn-ic.sh gives them priorities "
                         f"{GATEWAY_PRIORITY_TOP}, {GATEWAY_PRIORITY_TOP - 1}, ... in list order and OVN takes 0 to "
                         f"32767, so at most {MAX_GATEWAY_CHASSIS}; list fewer")
    return chassis


class DeploymentInterconnect(Section):
    """The deployment as an OVN-IC availability zone on the fabric's transit switch.

    It uses the fabric's `interconnection` (IC database, transit switch, encapsulation).
    The transit switch itself is created on the IC side (Kube-OVN's IC server); this
    side attaches a router to it by hand, as OpenStack or any other non-Kube-OVN AZ does.
    """

    az_name: Label | None = None
    """OVN availability zone name (`NB_Global name`). Defaults to the deployment name; unique
    across zones and every other deployment."""
    router: Label = "ic-router"
    """Logical router attached to the transit switch (port `<az>-<ts>`)."""
    create_router: bool = True
    """fabricgen owns the router: the script creates it marked as its own and refuses a router
    of the same name that it did not create. Set false for a router a platform owns (e.g.
    Neutron's `neutron-<uuid>`): the script then only checks it exists."""
    transit_address: Address
    """This AZ's router port address on the transit switch. Set by hand, so it must lie in the
    upper half of the transit subnet (.128-.254 of a /24): Kube-OVN picks its zones' addresses
    at random from the lower half."""
    gateway_chassis: Annotated[list[Subdomain], AfterValidator(_priorities_fit)] = Field(
        min_length=1, json_schema_extra={"maxItems": MAX_GATEWAY_CHASSIS})
    """Hosts of this deployment that carry the AZ's transit traffic, in priority order
    (Gateway_Chassis priority 100, 99, ... down to 0, so at most 101). They get `ovn-is-interconn=true`."""
    advertise: list[Network] = []
    """CIDRs reachable in this AZ that the other AZs route here (e.g. OpenStack tenant or
    provider ranges, the OVN-Kubernetes cluster subnet)."""

    def az(self, deployment: str) -> str:
        return self.az_name or deployment
