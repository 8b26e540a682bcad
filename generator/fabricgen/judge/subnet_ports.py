"""Whether a Subnet's update reached OVN, which Argo CD and Flux cannot tell.

Kube-OVN v1.16.2 writes no generation into a Subnet's conditions (`SubnetStatus.SetCondition` in
`pkg/apis/kubeovn/v1/subnet.go` leaves `observedGeneration` out), and several failures of an
update return before any status patch (`handleAddOrUpdateSubnet` in `pkg/controller/subnet.go`:
`validateVpcBySubnet`, IPAM, `CreateLogicalSwitch`, the DHCP options), so a Subnet whose update
failed keeps `Ready` from its last success and reads Healthy. What OVN holds tells: an overlay
Subnet's logical router port `<router>-<subnet>` (`ovs.LogicalRouterPortName`) carries the
gateway with the CIDR's prefix as its network (`CreateLogicalSwitch`, `util.GetIPAddrWithMask`).
For each rendered overlay Subnet whose object in the cluster is as rendered, that port must be
there with that network; a VLAN Subnet without a logical gateway has no router port.
"""

from __future__ import annotations

from collections.abc import Sequence
from ipaddress import IPv4Network
from typing import Any

from fabricgen.judge import kube_compare
from fabricgen.judge.checks import DRIFT, OK, Check
from fabricgen.observe import kube_objects
from fabricgen.observe.live_fabric import AzLive
from fabricgen.observe.ovsdb_rows import as_list
from fabricgen.plan.zones import DEFAULT_VPC


def _wanted(obj: dict[str, Any]) -> tuple[str, str] | None:
    """(router port name, network) of an overlay Subnet, or None for one without a router port."""
    spec = obj.get("spec") or {}
    if spec.get("vlan") and not spec.get("logicalGateway"):
        return None
    try:
        prefix = IPv4Network(str(spec.get("cidrBlock"))).prefixlen
    except ValueError:
        return None
    router = spec.get("vpc") or DEFAULT_VPC
    return f"{router}-{obj['metadata']['name']}", f"{spec.get('gateway')}/{prefix}"


def check(live: AzLive, rendered: Sequence[dict[str, Any]]) -> list[Check]:
    subject = live.source.subject
    if live.objects is None or live.nb.error is not None:
        return []
    ports = {str(p.get("name")): p for p in live.nb.get("Logical_Router_Port")}
    out: list[Check] = []
    judged = 0
    for obj in rendered:
        if (obj.get("apiVersion"), obj.get("kind")) != ("kubeovn.io/v1", "Subnet"):
            continue
        oid = kube_objects.identify(obj)
        found = live.objects.get(oid)
        wanted = _wanted(obj)
        if found is None or wanted is None or not kube_compare.compare(obj, found.body).equal:
            continue  # not applied yet, or no router port: the object checks say so
        judged += 1
        name, network = wanted
        port = ports.get(name)
        have = sorted(str(n) for n in as_list(port.get("networks", []))) if port is not None else None
        if have is not None and network in have:
            continue
        seen = f"has networks {', '.join(have) or 'none'}" if have is not None else "is not in its northbound database"
        out.append(Check(subject, "subnet.applied", DRIFT,
                         f"Subnet {oid.name} is in the cluster as rendered, but OVN does not have it: router port "
                         f"{name} {seen}, where the Subnet says {network}; Kube-OVN's update of it failed (it records "
                         "no generation in a Subnet's conditions, so Argo CD and Flux still read it Healthy)",
                         "read why in kube-ovn-controller's log (`kubectl -n kube-system logs "
                         f"deploy/kube-ovn-controller | grep {oid.name}`): a VPC not ready, an IPAM or OVN error; fix "
                         "it, and Kube-OVN retries"))
    if judged and not out:
        out.append(Check(subject, "subnet.applied", OK,
                         f"every rendered overlay Subnet ({judged}) has its router port in OVN with its gateway"))
    return out
