"""Rules on the platforms using an OVN deployment (FG6xx): ownership, MTU, encapsulation, sharing."""

from __future__ import annotations

from collections.abc import Iterator

from fabricgen.diagnostics import Finding, Severity
from fabricgen.model import Fabric
from fabricgen.model.consumers import CloudStackZone, KubernetesCluster, OpenStackCloud
from fabricgen.model.hosts import Host
from fabricgen.plan.deployments import consumer_encapsulation, consumer_mtu
from fabricgen.validation.registry import rule

CENTRAL_MODE_LAST = (1, 3)


@rule("FG601", "consumer-host", "A consumer lists a host the deployment lacks, or a host two consumers claim.")
def consumer_host(fabric: Fabric) -> Iterator[Finding]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        names = [h.name for h in deployment.hosts]
        declared = set(names)
        owners: dict[str, str] = {}
        for c, consumer in enumerate(deployment.consumers):
            for h, host in enumerate(consumer.hosts):
                path = ("ovnDeployments", d, "consumers", c, "hosts", h)
                if host not in declared:
                    yield Finding("FG601", path, f"host {host!r} is not a host of deployment "
                                  f"{deployment.name!r}; declare it under hosts (declared: "
                                  f"{', '.join(names) or 'none'})")
                elif host in owners:
                    yield Finding("FG601", path, f"host {host!r} already belongs to {owners[host]!r}; a "
                                  "chassis serves one platform: each platform's agent (nova-compute and Neutron's OVN "
                                  "agents, the CloudStack agent, ovnkube-node) owns the host's Open vSwitch "
                                  "settings (bridge mappings, gateway options, the VM or pod ports), and "
                                  "configure-ovn-host.sh writes one platform's; give each platform hosts of its own")
                owners.setdefault(host, consumer.name)


@rule("FG602", "consumer-encapsulation", "A consumer's encapsulation differs from its deployment's.")
def encapsulation(fabric: Fabric) -> Iterator[Finding]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        for c, consumer in enumerate(deployment.consumers):
            encap = consumer_encapsulation(deployment, consumer)
            if encap != deployment.encapsulation:
                yield Finding("FG602", ("ovnDeployments", d, "consumers", c, "encapsulation"),
                              f"{consumer.name!r} uses {encap} but the deployment's chassis use "
                              f"{deployment.encapsulation}; chassis only build tunnels over a common "
                              "type (one vxlan chassis puts the whole deployment in VXLAN mode); "
                              "use the deployment's encapsulation")


@rule("FG603", "consumer-mtu", "A consumer's overlay MTU exceeds the underlay or disagrees with another consumer's.")
def mtu(fabric: Fabric) -> Iterator[Finding]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        first: tuple[str, int] | None = None
        for c, consumer in enumerate(deployment.consumers):
            value = consumer_mtu(deployment, consumer)
            path = ("ovnDeployments", d, "consumers", c, "overlayMTU")
            if value > deployment.overlay_mtu:
                yield Finding("FG603", path,
                              f"overlay MTU {value} does not fit a {deployment.underlay_mtu} underlay: "
                              f"{deployment.encapsulation} needs {deployment.underlay_mtu - deployment.overlay_mtu} "
                              f"bytes, so at most {deployment.overlay_mtu}; lower it or raise underlayMTU")
            elif first is not None and value != first[1]:
                yield Finding("FG603", path,
                              f"overlay MTU {value} disagrees with the {first[1]} of {first[0]!r} on the same "
                              "deployment; traffic between them is dropped or fragmented; use one MTU")
            if first is None:
                first = (consumer.name, value)


@rule("FG604", "shared-database", "OVN-Kubernetes shares an NB/SB pair with another platform, which it deletes.")
def shared_database(fabric: Fabric) -> Iterator[Finding]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        kinds = [c for c in deployment.consumers if isinstance(c, KubernetesCluster)]
        if not kinds or len(deployment.consumers) < 2:
            continue
        for c, consumer in enumerate(deployment.consumers):
            if not isinstance(consumer, KubernetesCluster):
                continue
            others = ", ".join(repr(o.name) for o in deployment.consumers if o is not consumer)
            acknowledged = deployment.shared_database_acknowledged is not None
            yield Finding(
                "FG604", ("ovnDeployments", d, "consumers", c, "platform"),
                f"OVN-Kubernetes {consumer.name!r} shares this NB/SB pair with {others}: it deletes every "
                "logical switch it does not own at startup (Neutron's included) and every chassis that "
                "is not a Kubernetes node every 5 minutes; give each platform its own deployment and "
                "join them with OVN interconnection by setting interconnect on each"
                + ("" if not acknowledged else " (accepted by sharedDatabaseAcknowledged)")
                + ("" if acknowledged else ", or set sharedDatabaseAcknowledged: \"<your reason>\" "
                   "on the deployment to run it anyway"),
                Severity.WARNING if acknowledged else Severity.ERROR)


@rule("FG605", "gateway-chassis", "A host that is not an OpenStack chassis is marked as a gateway chassis.")
def gateway_chassis(fabric: Fabric) -> Iterator[Finding]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        neutron_hosts = {h for c in deployment.consumers if isinstance(c, OpenStackCloud) for h in c.hosts}
        for h, host in enumerate(deployment.hosts):
            if host.gateway_chassis and host.name not in neutron_hosts:
                yield Finding("FG605", ("ovnDeployments", d, "hosts", h, "gatewayChassis"),
                              f"host {host.name!r} is no OpenStack chassis: enable-chassis-as-gw is read "
                              "only by Neutron, which would schedule its router gateways here; remove "
                              "gatewayChassis or add the host to an OpenStack consumer")
            elif host.gateway_chassis and not host.bridge_mappings:
                yield Finding("FG605", ("ovnDeployments", d, "hosts", h, "gatewayChassis"),
                              f"gateway chassis {host.name!r} has no bridge mappings, so a router "
                              "gateway scheduled here reaches no provider network; map the external "
                              "physical network to a bridge")


@rule("FG606", "ovn-kubernetes-version", "OVN-Kubernetes newer than v1.3 has no central mode for external databases.")
def ovnk_version(fabric: Fabric) -> Iterator[Finding]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        for c, consumer in enumerate(deployment.consumers):
            if not isinstance(consumer, KubernetesCluster):
                continue
            if consumer.release[:2] > CENTRAL_MODE_LAST:
                yield Finding("FG606", ("ovnDeployments", d, "consumers", c, "version"),
                              f"OVN-Kubernetes {consumer.version} removed central mode (--nb-address, "
                              "--sb-address): it runs its own databases per node; pin v1.3.0 (the last "
                              "release with central mode) to use this deployment's databases")


@rule("FG607", "consumer-directory", "A Kubernetes consumer's name collides with a zone or another consumer.")
def consumer_directory(fabric: Fabric) -> Iterator[Finding]:
    taken = {z.name: "zone" for z in fabric.zones}
    for d, deployment in enumerate(fabric.ovn_deployments):
        for c, consumer in enumerate(deployment.consumers):
            if not isinstance(consumer, KubernetesCluster):
                continue
            if consumer.name in taken:
                yield Finding("FG607", ("ovnDeployments", d, "consumers", c, "name"),
                              f"{consumer.name!r} is already the name of a {taken[consumer.name]}; both would "
                              f"write rendered/<site>/{consumer.name}/; rename the cluster")
            taken.setdefault(consumer.name, "Kubernetes cluster")


@rule("FG608", "cloudstack-device", "A CloudStack network device is not a bridge on every host of the zone.")
def cloudstack_device(fabric: Fabric) -> Iterator[Finding]:
    for d, deployment in enumerate(fabric.ovn_deployments):
        hosts: dict[str, Host] = {}
        for item in deployment.hosts:
            hosts.setdefault(item.name, item)  # deployment.host(): the first of a name
        for c, consumer in enumerate(deployment.consumers):
            if not isinstance(consumer, CloudStackZone):
                continue
            for field, device, network in (
                ("privateNetworkDevice", consumer.private_network_device, "management"),
                ("publicNetworkDevice", consumer.public_network_device, "public"),
            ):
                for name in consumer.hosts:
                    host = hosts.get(name)
                    if host is not None and all(b.name != device for b in host.bridges):
                        declared = ", ".join(b.name for b in host.bridges) or "none"
                        yield Finding("FG608", ("ovnDeployments", d, "consumers", c, field),
                                      f"{device!r} is not a bridge on host {name!r} (bridges: {declared}); "
                                      f"the CloudStack agent plugs the {network} network into this device, "
                                      "so it must be an OVS bridge: name a declared bridge, or declare "
                                      f"{device!r} under the host's bridges")
