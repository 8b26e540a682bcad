"""Consumers of an OVN deployment: the cloud platforms that drive its northbound database."""


from ipaddress import IPv4Network
from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from fabricgen.model.common import HttpsUrl, Label, Network, Section, Subdomain
from fabricgen.model.delivery import Destination
from fabricgen.model.hosts import IFNAME

Encapsulation = Literal["geneve", "vxlan"]


class ConsumerBase(Section):
    name: Label
    """Consumer name (CloudStack zone, OpenStack region, Kubernetes cluster)."""
    hosts: list[Subdomain] = []
    """The deployment's hosts (chassis) this platform owns."""
    encapsulation: Encapsulation | None = None
    """Tunnel type the platform is configured for. Defaults to the deployment's; a
    different value is an error (chassis only build tunnels over a common type)."""
    overlay_mtu: int | None = Field(default=None, alias="overlayMTU", ge=576, le=9216)
    """MTU of the platform's overlay networks. Defaults to the underlay MTU minus the
    tunnel overhead (58 for Geneve, 50 for VXLAN): 1442 over a 1500 underlay."""


class CloudStackZone(ConsumerBase):
    """A CloudStack zone whose KVM hosts put guest NICs on OVN's `br-int`."""

    platform: Literal["cloudstack"]
    private_network_device: str = Field(default="cloudbr0", pattern=IFNAME)
    """`private.network.device`: the management bridge."""
    public_network_device: str = Field(default="cloudbr1", pattern=IFNAME)
    """`public.network.device`: the bridge that is also the provider network uplink."""


class OpenStackCloud(ConsumerBase):
    """An OpenStack cloud whose Neutron uses the ML2/OVN mechanism driver."""

    platform: Literal["openstack"]
    vni_ranges: str = Field(default="1:65536", pattern=r"^[0-9]+:[0-9]+(,[0-9]+:[0-9]+)*$")
    """`[ml2_type_geneve] vni_ranges` (OVN does not use the values, Neutron allocates from them)."""
    metadata: bool = True
    """`ovn_metadata_enabled`."""
    distributed_floating_ips: bool = False
    """`enable_distributed_floating_ip`; needs bridge mappings on every compute host."""
    l3_scheduler: Literal["leastloaded", "chance"] = "leastloaded"
    release: str | None = Field(default=None, pattern=r"^20[0-9]{2}\.[12]$")
    """OpenStack release series of the cloud's Neutron, e.g. `2026.1`. From 2026.1 (Neutron 28)
    `[ml2] project_network_types` replaces `tenant_network_types`, which it still reads with a
    deprecation warning (openstack/neutron `neutron/conf/plugins/ml2/config.py`, commit
    dd8d87b2); older releases know only `tenant_network_types` and would ignore the new name.
    Default: unknown, so fabricgen writes the name every release reads."""


OVN_KUBERNETES_VERSION = "v1.3.0"  # the default pin: the last release with central mode
ANP_PRIORITY_MAX = 99  # OVN-Kubernetes ignores an AdminNetworkPolicy above it (`ovnkSupportedPriorityUpperBound`)


class AdminNetworkPolicies(Section):
    """The policy's protected groups on this cluster also as AdminNetworkPolicies
    (policy.networking.k8s.io/v1alpha1, network-policy-api v0.1.5, which OVN-Kubernetes v1.0.0 to
    v1.3.0 implement): one per protected namespace member, which passes to the NetworkPolicies
    what the policy admits from the cluster's pods and denies every other pod, so that a
    NetworkPolicy a namespace owner adds cannot open the group to more pods. Pods only: an
    AdminNetworkPolicy's ingress names no address ranges, so sources outside the cluster stay the
    NetworkPolicy's alone. Turns on `enable-admin-network-policy` in `ovn_k8s.conf` (off by default
    upstream); the cluster needs network-policy-api v0.1.5's CRDs."""

    priority: int = Field(ge=0, le=ANP_PRIORITY_MAX)
    """The first priority (0 is first, OVN-Kubernetes takes 0 to 99); each further protected
    member of the cluster takes the next, by group name, then as the group lists them. Keep them apart
    from other AdminNetworkPolicies': two at one priority are ordered by chance."""


def ovn_kubernetes_release(version: str) -> tuple[int, int, int]:
    """An OVN-Kubernetes version as numbers, for comparisons: `v1.3.0` -> (1, 3, 0)."""
    major, minor, patch = (int(part) for part in version.lstrip("v").split("."))
    return major, minor, patch


class KubernetesCluster(ConsumerBase):
    """A Kubernetes cluster running OVN-Kubernetes in central mode against the external DBs."""

    platform: Literal["kubernetes"]
    version: str = Field(default=OVN_KUBERNETES_VERSION, pattern=r"^v[0-9]+\.[0-9]+\.[0-9]+$")
    """Pinned OVN-Kubernetes release. Central mode (external NB/SB) exists up to v1.3.x only."""
    namespace: Label = "ovn-kubernetes"
    """Namespace of OVN-Kubernetes (`ovn-config`, `ovnkube-db`)."""
    host_network_namespace: Label = "ovn-host-network"
    """`host_network_namespace`: the namespace whose NetworkPolicy selectors match host-network
    traffic. Upstream's dedicated `ovn-host-network` by default; fabricgen creates it. Not
    OVN-Kubernetes' own namespace, whose policies would then match host traffic."""
    api_server: HttpsUrl
    """Kubernetes API server URL (`k8s_apiserver`)."""
    cluster_subnet: Network = Field(default=IPv4Network("10.128.0.0/14"), alias="clusterSubnet")
    """Pod network (`cluster-subnets`)."""
    host_prefix: int = Field(default=23, ge=8, le=30)
    """Per-node pod subnet size."""
    service_cidr: Network = Field(default=IPv4Network("172.30.0.0/16"), alias="serviceCIDR")
    """Kubernetes service range (`service-cidrs`)."""
    gateway_mode: Literal["shared", "local"] = "shared"
    gateway_interface: str | None = Field(default=None, pattern=IFNAME)
    """`[gateway] interface`; defaults to the interface holding the default route."""
    destination: Destination = Destination.model_construct()
    """The cluster for Argo CD and Flux (with `delivery`)."""
    admin_network_policies: AdminNetworkPolicies | None = None
    """Render the protected groups also as AdminNetworkPolicies (see there). Default: off."""

    @model_validator(mode="after")
    def _host_network_namespace_is_its_own(self) -> Self:
        if self.host_network_namespace == self.namespace:
            raise ValueError(f"hostNetworkNamespace is OVN-Kubernetes' own namespace {self.namespace}: its "
                             "NetworkPolicies would match host-network traffic; keep the default ovn-host-network")
        return self

    @property
    def release(self) -> tuple[int, int, int]:
        """`version` as numbers, for comparisons."""
        return ovn_kubernetes_release(self.version)


Consumer = Annotated[CloudStackZone | OpenStackCloud | KubernetesCluster, Field(discriminator="platform")]
