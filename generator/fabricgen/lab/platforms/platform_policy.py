"""The policy's members in the lab, each with the rows its platform's controller writes from the
rendered objects.

A zone's backbone, when a group names it: the lab's backbone VM, and the rendered backbone
Subnet's `acls` on its switch as Kube-OVN writes them (`kubeovn.acl_commands`).

On an interconnected deployment's platforms, a VM (or pod) per member, on the lab network of the
deployment whose range holds the member's:

- an OpenStack cloud's member (`openstack`): a VM port in the cloud's rendered security group
  and in `neutron_pg_drop`, with the group's rules (`neutron`), from the rendered
  `security-groups.yml`;
- an OVN-Kubernetes cluster's member (`namespace`): a pod port with the member's namespace and
  labels, and the rows of every NetworkPolicy and AdminNetworkPolicy rendered for the cluster
  (`ovn_kubernetes`).

The VM's address is the tenth of the member's range (or the next free one), so that it is not the
lab network's gateway or its own VM, which stays outside every policy group as far as the
platform knows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Address

from fabricgen.lab.platforms import kubeovn, neutron, ovn_kubernetes
from fabricgen.lab.platforms.kubeovn import Backbone, mac
from fabricgen.model.consumers import KubernetesCluster
from fabricgen.pipeline import Build
from fabricgen.plan.joins import DeploymentJoin
from fabricgen.plan.policy import Endpoint, object_name
from fabricgen.platform_rows import neutron as neutron_rows
from fabricgen.platform_rows.acls import Acl

MEMBER_OFFSET = 10  # a member VM's address: this far into the member's range


@dataclass
class Members:
    """One deployment's policy members in the lab."""

    vms: dict[str, Backbone] = field(default_factory=dict)  # group -> its member's VM (or pod)
    acls: list[Acl] = field(default_factory=list)  # every row's ACL, with its owner
    commands: list[list[str]] = field(default_factory=list)


def _consumers(join: DeploymentJoin, platform: str) -> set[str]:
    return {c.name for c in join.deployment.consumers if c.platform == platform}


def _member_vm(az: str, member: Endpoint, networks: Sequence[Backbone], taken: set[IPv4Address]) -> Backbone | None:
    """A VM for the member on the lab network that holds its range, or None (no such network)."""
    if member.cidr is None:
        return None
    network = next((n for n in networks if member.cidr.subnet_of(n.cidr)), None)
    if network is None:
        return None
    hosts = (a for a in member.cidr.hosts() if a >= member.cidr.network_address + MEMBER_OFFSET or
             member.cidr.num_addresses <= 2 * MEMBER_OFFSET)
    address = next((a for a in hosts if a not in taken and a != network.gateway), None)
    if address is None:
        return None
    taken.add(address)
    name = f"{'pod' if member.kind == 'namespace' else 'vm'}-{az}-{member.group}"
    return Backbone(az, network.switch, network.cidr, network.gateway, network.router_mac, name,
                    mac("00:00:03", address), address)


def zone_members(build: Build, zone: str, backbone: Backbone, *, tiers: bool) -> Members:
    """A zone's backbone as the member of every group that names it, with the rendered backbone
    Subnet's `acls` (the Subnet of the backbone's range in the default VPC)."""
    policy = build.plan.policy
    out = Members()
    for group in sorted(policy.groups):
        if any(e.kind == "backbone" and e.zone == zone for e in policy.groups[group]):
            out.vms[group] = backbone
    subnet = next((o for o in build.objects_within(zone) if o.get("kind") == "Subnet" and
                   o.get("spec", {}).get("cidrBlock") == str(backbone.cidr)), None)
    acls = list(subnet.get("spec", {}).get("acls", [])) if subnet is not None else []
    if out.vms and subnet is not None and acls:
        name = str(subnet["metadata"]["name"])
        out.commands = kubeovn.acl_commands(backbone.switch, name, acls, tiers=tiers)
        out.acls = [Acl(str(a["direction"]), int(a.get("priority", 0)), str(a["match"]), str(a["action"]),
                        f"Kube-OVN Subnet {name}") for a in acls]
    return out


def members(build: Build, join: DeploymentJoin, networks: Sequence[Backbone], *, tiers: bool) -> Members:
    """The member VMs of a deployment and their platforms' rows."""
    policy = build.plan.policy
    clouds, clusters = _consumers(join, "openstack"), _consumers(join, "kubernetes")
    out = Members()
    taken = {n.vm_ip for n in networks}
    pods: dict[str, list[ovn_kubernetes.Pod]] = {}  # cluster -> its pods
    sg_ports: dict[str, dict[str, tuple[str, str]]] = {}  # cloud -> security group -> (port, "MAC IP")
    for group in sorted(policy.groups):
        for member in policy.groups[group]:
            ours = (member.kind == "openstack" and member.cloud in clouds) or \
                (member.kind == "namespace" and member.cluster in clusters)
            vm = _member_vm(join.az, member, networks, taken) if ours and group not in out.vms else None
            if vm is None:
                continue
            out.vms[group] = vm
            out.commands += [["lsp-add", vm.switch, vm.vm], ["lsp-set-addresses", vm.vm, f"{vm.vm_mac} {vm.vm_ip}"]]
            if member.kind == "openstack" and group in policy.protected:
                assert member.cloud is not None
                sg_ports.setdefault(member.cloud, {})[object_name(group)] = (vm.vm, f"{vm.vm_mac} {vm.vm_ip}")
            elif member.kind == "namespace":
                assert member.namespace is not None and member.cluster is not None
                pods.setdefault(member.cluster, []).append(
                    ovn_kubernetes.Pod(member.namespace, member.pod_selector, vm.vm, str(vm.vm_ip)))
    for cloud, ports in sorted(sg_ports.items()):
        acls, commands = neutron.commands(cloud, neutron_rows.playbook(build, join.deployment.name, cloud), ports)
        out.acls += acls
        out.commands += commands
    for cluster in sorted(clusters):
        policies = [o for o in build.objects_within(cluster)
                    if o.get("kind") in ("NetworkPolicy", "AdminNetworkPolicy")]
        if policies and pods.get(cluster):
            acls, commands = ovn_kubernetes.commands(policies, pods[cluster], tiers=tiers,
                                                     version=_version(join, cluster))
            out.acls += acls
            out.commands += commands
    return out


def _version(join: DeploymentJoin, cluster: str) -> str:
    """The OVN-Kubernetes release a cluster of the deployment declares."""
    return next(c.version for c in join.deployment.consumers if isinstance(c, KubernetesCluster) and c.name == cluster)
