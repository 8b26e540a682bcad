"""Rules on OVN deployments joined to the interconnection (FG7xx): the IC section, AZ names,
transit addresses set by hand, IC gateway chassis and advertised CIDRs."""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from ipaddress import IPv4Address, IPv4Network

from fabricgen.diagnostics import Finding, Path, Severity
from fabricgen.model import Fabric
from fabricgen.model.deployment_interconnect import DeploymentInterconnect
from fabricgen.validation.network_index import NetworkIndex
from fabricgen.validation.registry import rule
from fabricgen.validation.rules.addressing import reserved


def _joins(fabric: Fabric) -> Iterator[tuple[Path, str, DeploymentInterconnect]]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        if deployment.interconnect is not None:
            yield ("ovnDeployments", d, "interconnect"), deployment.name, deployment.interconnect


@rule("FG701", "interconnect-without-interconnection",
      "A deployment interconnects but the fabric has no interconnection section.")
def without_interconnection(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is not None:
        return
    for path, name, _ic in _joins(fabric):
        yield Finding("FG701", path,
                      f"deployment {name!r} joins the OVN interconnection, but the fabric has no "
                      "interconnection section; add interconnection (its IC database and transit "
                      "switch; database.zone may be left out for an IC database outside the fabric)")


@rule("FG702", "deployment-transit-outside",
      "A deployment's transit address is outside the transit subnet or reserved.")
def transit_outside(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None:
        return
    subnet = fabric.interconnection.transit_switch.subnet
    for path, _name, ic in _joins(fabric):
        address = ic.transit_address
        if address not in subnet:
            yield Finding("FG702", (*path, "transitAddress"),
                          f"transit address {address} is outside the transit subnet {subnet}; pick an "
                          f"unused address from {_upper(subnet)}")
        elif (which := reserved(address, subnet)) is not None:
            yield Finding("FG702", (*path, "transitAddress"),
                          f"transit address {address} is the {which} address of {subnet}; pick an "
                          f"unused address from {_upper(subnet)}")


def _upper(subnet: IPv4Network) -> str:
    half = subnet.num_addresses // 2
    return f"{subnet.network_address + half}-{subnet.broadcast_address - 1}"


@rule("FG703", "deployment-transit-range",
      "A deployment's transit address is in the lower half, where Kube-OVN picks zones' addresses at random.")
def transit_range(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None:
        return
    subnet = fabric.interconnection.transit_switch.subnet
    half = subnet.num_addresses // 2
    for path, _name, ic in _joins(fabric):
        address = ic.transit_address
        if address in subnet and int(address) - int(subnet.network_address) < half:
            low = subnet.network_address
            yield Finding("FG703", (*path, "transitAddress"),
                          f"transit address {address} is in {low}-{low + half - 1}, where Kube-OVN picks "
                          "its zones' addresses at random, so a zone may take it on its next join; "
                          f"set an address from {_upper(subnet)}")


@rule("FG704", "deployment-transit-duplicate", "A deployment's transit address is a zone's or another deployment's.")
def transit_duplicate(fabric: Fabric) -> Iterator[Finding]:
    seen: dict[IPv4Address, str] = {
        z.transit_address: f"zone {z.name!r}" for z in reversed(fabric.zones) if z.transit_address is not None
    }
    for path, name, ic in _joins(fabric):
        address = ic.transit_address
        if address in seen:
            yield Finding("FG704", (*path, "transitAddress"),
                          f"transit address {address} is already the address of {seen[address]}; every AZ "
                          "has its own port on the transit switch; pick another address")
        else:
            seen[address] = f"deployment {name!r}"


@rule("FG705", "az-name", "A deployment's AZ name is a zone's name or another deployment's.")
def az_name(fabric: Fabric) -> Iterator[Finding]:
    zones = {z.name for z in fabric.zones}
    deployments = fabric.ovn_deployments
    first: dict[str, int] = {}  # name or AZ name -> the first deployment that has it
    unnamed: dict[str, list[int]] = {}  # name -> the deployments of that name whose AZ has another
    for o, other in enumerate(deployments):
        first.setdefault(other.name, o)
        if other.az_name is not None:
            first.setdefault(other.az_name, o)
        if other.az_name != other.name:
            unnamed.setdefault(other.name, []).append(o)
    for d, deployment in enumerate(deployments):
        az = deployment.az_name
        if az is None:
            continue
        # Each pair is reported once, at the later deployment, unless only the earlier one
        # has an AZ name (the later one never reports itself then).
        earlier = first.get(az, d)
        later = unnamed.get(az, [])
        after = bisect.bisect_right(later, d)
        clashing = earlier if earlier < d else later[after] if after < len(later) else None
        clash = f"zone {az!r}" if az in zones else (
            None if clashing is None else f"deployment {deployments[clashing].name!r}")
        if clash is None:
            continue
        explicit = deployment.interconnect is not None and deployment.interconnect.az_name is not None
        path = ("ovnDeployments", d, "interconnect", "azName") if explicit else ("ovnDeployments", d, "name")
        yield Finding("FG705", path,
                      f"AZ name {az!r} is already taken by {clash}; ovn-ic registers every AZ by name "
                      "in the IC database and the transit port is named after it; set a unique "
                      "interconnect.azName")


@rule("FG706", "ic-gateway-chassis", "An IC gateway chassis is not a host of its deployment, or is listed twice.")
def gateway_chassis(fabric: Fabric) -> Iterator[Finding]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        if deployment.interconnect is None:
            continue
        names = [h.name for h in deployment.hosts]
        declared = set(names)
        seen: set[str] = set()
        for g, host in enumerate(deployment.interconnect.gateway_chassis):
            path = ("ovnDeployments", d, "interconnect", "gatewayChassis", g)
            if host not in declared:
                yield Finding("FG706", path,
                              f"{host!r} is not a host of deployment {deployment.name!r}; the transit port "
                              f"can only be bound on its own chassis (hosts: {', '.join(names) or 'none'})")
            elif host in seen:
                yield Finding("FG706", path, f"{host!r} is listed twice; list each gateway chassis once")
            seen.add(host)


@rule("FG707", "advertise-overlap",
      "An advertised CIDR overlaps a zone backbone, the transit subnet or another AZ's advertised range.")
def advertise_overlap(fabric: Fabric) -> Iterator[Finding]:
    owned: list[tuple[IPv4Network, str]] = [(z.backbone.cidr, f"the backbone of zone {z.name!r}") for z in fabric.zones]
    if fabric.interconnection is not None:
        owned.append((fabric.interconnection.transit_switch.subnet, "the transit subnet"))
    index = NetworkIndex([other for other, _what in owned])
    for path, name, ic in _joins(fabric):
        for a, cidr in enumerate(ic.advertise):
            # the first clash in the order added: zones, the transit subnet, then advertised ranges
            clash = next((owned[k][1] for k in index.overlapping(cidr)), None)
            if clash is not None:
                yield Finding("FG707", (*path, "advertise", a),
                              f"{cidr} overlaps {clash}; the other AZs could not tell where to send it; "
                              "advertise only ranges that live in this AZ alone")
            owned.append((cidr, f"{cidr}, advertised by deployment {name!r}"))
            index.add(cidr)


@rule("FG708", "ic-encapsulation", "An interconnected deployment's encapsulation differs from the interconnection's.")
def encapsulation(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None:
        return
    want = fabric.interconnection.encapsulation
    for d, deployment in enumerate(fabric.ovn_deployments):
        if deployment.interconnect is not None and deployment.encapsulation != want:
            yield Finding("FG708", ("ovnDeployments", d, "encapsulation"),
                          f"the interconnection uses {want}, but deployment {deployment.name!r} uses "
                          f"{deployment.encapsulation}; IC gateways of every AZ tunnel to each other "
                          "over one type; use the same encapsulation")


VXLAN_MODE_SINCE = (25, 3)


@rule("FG709", "ic-vxlan-ovn-version",
      "A deployment joins a vxlan interconnection on an OVN without vxlan_mode (< 25.03).")
def vxlan_version(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None or fabric.interconnection.encapsulation != "vxlan":
        return
    for d, deployment in enumerate(fabric.ovn_deployments):
        if deployment.interconnect is not None and deployment.version < VXLAN_MODE_SINCE:
            yield Finding("FG709", ("ovnDeployments", d, "ovnVersion"),
                          f"OVN {deployment.ovn_version} has no vxlan_mode for interconnection (it came in "
                          "25.03): its ovn-ic would give the transit switch a tunnel key VXLAN cannot carry; "
                          "run OVN 25.03 or later on this deployment (and set ovnVersion), or use geneve "
                          "for the whole interconnection")


@rule("FG710", "ic-ovn-kubernetes",
      "OVN-Kubernetes (central mode) on an interconnected deployment removes what ovn-ic creates.")
def ovn_kubernetes_join(fabric: Fabric) -> Iterator[Finding]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        if deployment.interconnect is None:
            continue
        for c, consumer in enumerate(deployment.consumers):
            if consumer.platform == "kubernetes":
                yield Finding("FG710", ("ovnDeployments", d, "consumers", c, "platform"),
                              "OVN-Kubernetes in central mode deletes, at start-up, logical switches it does "
                              "not own that carry other_config (the transit switch among them), and every "
                              "5 minutes SB chassis that are not its nodes (the remote IC gateways ovn-ic "
                              "registers); ovn-ic restores both, but cross-AZ traffic drops meanwhile; "
                              "re-run configure-ovn-ic.sh after each ovnkube restart and monitor the "
                              "transit switch, or keep this cluster out of the interconnection",
                              Severity.WARNING)


@rule("FG711", "advertise-cluster-overlap",
      "An advertised CIDR overlaps a zone's pod, join or service CIDR, which the zone keeps for itself.")
def advertise_cluster_overlap(fabric: Fabric) -> Iterator[Finding]:
    if fabric.interconnection is None:
        return
    clusters = [(z.name, what, cidr) for z in fabric.zones
                for what, cidr in (("pod", z.cluster.pod_cidr), ("join", z.cluster.join_cidr),
                                   ("service", z.cluster.service_cidr))]
    for path, _name, ic in _joins(fabric):
        for a, cidr in enumerate(ic.advertise):
            for zone, what, other in clusters:
                if cidr.overlaps(other):
                    yield Finding("FG711", (*path, "advertise", a),
                                  f"{cidr} overlaps the {what} CIDR {other} of zone {zone!r}, which its "
                                  "router reaches directly: the longer prefix wins, so traffic from "
                                  f"{zone!r} to this AZ stays in {zone!r}, or {zone!r} loses its own "
                                  "addresses to the route; advertise a range no zone uses for pods, join "
                                  "or services")
                    break
