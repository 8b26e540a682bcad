"""OVN deployments: one northbound/southbound database pair, its chassis and consumers."""


from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from fabricgen.model.common import Address, Label, Network, Port, PrintableText, Section, Subdomain
from fabricgen.model.consumers import Consumer
from fabricgen.model.deployment_interconnect import DeploymentInterconnect
from fabricgen.model.hosts import Host

# An absolute path with no blanks and no control characters (NUL cannot be written to any
# file or command line; the others would hide in it).
PATH = r"^/[^\s\x00-\x1f\x7f]*$"

# Tunnel overhead over an IPv4 underlay: outer IPv4 + UDP + tunnel header + inner Ethernet.
# Geneve as OVN uses it (with options): 58; VXLAN: 50.
TUNNEL_OVERHEAD = {"geneve": 58, "vxlan": 50}
TUNNEL_PORT = {"geneve": 6081, "vxlan": 4789}
# The raft cluster ports of the NB and SB databases, ovn-ctl's defaults (ovn-org/ovn utilities/ovn-ctl,
# DB_NB_CLUSTER_LOCAL_PORT and DB_SB_CLUSTER_LOCAL_PORT).
RAFT_PORTS = {"northbound": 6643, "southbound": 6644}

# ovsdb-server reads Connection inactivity_probe into a C int (openvswitch/ovs ovsdb/ovsdb-server.c,
# add_manager_options; ovsdb/jsonrpc-server.h) and reconnect_set_probe_interval (lib/reconnect.c)
# raises any non-zero value below 1000 ms to 1000.
PROBE_MIN, PROBE_MAX = 1000, 2**31 - 1


def _probe(value: int) -> int:
    if value != 0 and not PROBE_MIN <= value <= PROBE_MAX:
        raise ValueError(f"{value} ms is not an interval ovsdb-server keeps: it reads inactivity_probe into a C "
                         f"int (at most {PROBE_MAX}) and raises any value below {PROBE_MIN} to {PROBE_MIN}; use 0 "
                         f"to turn the probe off, or {PROBE_MIN} to {PROBE_MAX}")
    return value


ProbeInterval = Annotated[int, AfterValidator(_probe), Field(json_schema_extra={"minimum": 0, "maximum": PROBE_MAX})]
"""`inactivity_probe` of a Connection row in ms: 0 (off) or 1000 to 2147483647."""


class DatabaseMember(Section):
    """A host running the OVN NB and SB ovsdb-servers (and ovn-northd)."""

    host: Subdomain
    """Controller host name, e.g. `mgmt2`; its script goes to `_host/<deployment>/controllers/<host>/`."""
    address: Address
    """The address the databases listen on and clients connect to."""


class Ssl(Section):
    """Certificate files for `ssl:` connections (paths on the hosts)."""

    private_key: str = Field(pattern=PATH)
    """Absolute path of the private key on the hosts."""
    certificate: str = Field(pattern=PATH)
    """Absolute path of the certificate on the hosts."""
    ca_certificate: str = Field(pattern=PATH)
    """Absolute path of the CA certificate on the hosts."""
    nb_common_name: str = Field(default="ovnnb", pattern=r"^[A-Za-z0-9._-]+$")
    """CN of the northbound server certificate (OVN-Kubernetes checks it)."""
    sb_common_name: str = Field(default="ovnsb", pattern=r"^[A-Za-z0-9._-]+$")
    """CN of the southbound server certificate."""


class Databases(Section):
    """The NB/SB database pair: a single controller or a raft cluster."""

    members: list[DatabaseMember] = Field(min_length=1)
    """1 member, or an odd number of at least 3 raft members (FG512)."""
    nb_port: Port = 6641
    """Northbound port. NB and SB each have a port of their own, never a raft port (6643, 6644)
    with raft members, nor another deployment's port on a shared controller (FG517)."""
    sb_port: Port = 6642
    """Southbound port; the same rules as `nbPort`."""
    protocol: Literal["tcp", "ssl"] = "tcp"
    ssl: Ssl | None = None
    """Required with `protocol: ssl`."""
    client_networks: list[Network] = Field(min_length=1)
    """Networks allowed to reach 6641/6642 (the compute subnet); every other source is dropped."""
    inactivity_probe: ProbeInterval = 60000
    """`inactivity_probe` of the NB and SB Connection rows, in ms: 0 disables it, else 1000 to
    2147483647 (what ovsdb-server keeps)."""

    @property
    def ssl_in_use(self) -> Ssl | None:
        """The certificates clients need: only with `protocol: ssl`."""
        return self.ssl if self.protocol == "ssl" else None


class ProviderNetwork(Section):
    """A localnet logical switch that bridges the overlay onto a physical network."""

    name: Label
    """Logical switch name, e.g. `public`. Names and ports are unique in the deployment, and
    never the transit switch's name (FG518)."""
    port: Label | None = None
    """Localnet port name; defaults to `<name>-external`."""
    physical_network: Label
    """`network_name` of the localnet port; hosts map it to a bridge."""
    vlan: int | None = Field(default=None, ge=1, le=4094)
    """VLAN tag of the localnet port, if the physical network is tagged."""

    @property
    def port_name(self) -> str:
        return self.port or f"{self.name}-external"


class OvnDeployment(Section):
    """One OVN: a NB/SB database pair, the chassis attached to it and the platforms using it."""

    name: Label
    """Deployment name; output goes to `rendered/<site>/_host/<name>/` (never listed in a
    kustomization)."""
    databases: Databases
    """The NB/SB pair: raft `members`, ports, `protocol`, `clientNetworks`, `inactivityProbe`."""
    encapsulation: Literal["geneve", "vxlan"] = "geneve"
    """`ovn-encap-type` of every chassis."""
    underlay_mtu: int = Field(default=1500, alias="underlayMTU", ge=1280, le=9216)
    """MTU of the network between tunnel endpoints. The overlay MTU is the underlay's less 58
    (Geneve) or 50 (VXLAN): 1442 over 1500."""
    ovn_version: str = Field(default="23.03", pattern=r"^[0-9]+\.[0-9]+$")
    """OVN release on the chassis. Before 24.09 a loopback tunnel endpoint also needs
    `ovn-set-local-ip=true`."""
    provider_networks: list[ProviderNetwork] = []
    """Localnet switches onto physical networks."""
    hosts: list[Host] = []
    """The chassis only: a controller that runs no ovn-controller is just a `databases` member."""
    consumers: list[Consumer] = []
    """Platforms driving this deployment's northbound database."""
    interconnect: DeploymentInterconnect | None = None
    """Join this deployment to the fabric's OVN interconnection as its own availability zone
    (needs the `interconnection` section, FG701). The supported way for two platforms that must not
    share one NB/SB pair to exchange traffic."""
    shared_database_acknowledged: PrintableText | None = Field(default=None, min_length=20)
    """Only for a deployment shared by OVN-Kubernetes and another platform, which fabricgen
    refuses (FG604): your reason, in words, for running it anyway. The error becomes a warning.
    Without it, give each platform its own deployment and join them with OVN interconnection."""

    @property
    def overlay_mtu(self) -> int:
        return self.underlay_mtu - TUNNEL_OVERHEAD[self.encapsulation]

    @property
    def version(self) -> tuple[int, int]:
        """`ovnVersion` as (major, minor), for comparisons."""
        major, minor = (int(p) for p in self.ovn_version.split("."))
        return major, minor

    @property
    def needs_set_local_ip(self) -> bool:
        return self.version < (24, 9)

    def host(self, name: str) -> Host | None:
        return next((h for h in self.hosts if h.name == name), None)

    @property
    def az_name(self) -> str | None:
        """The OVN-IC availability zone name, if the deployment interconnects."""
        return self.interconnect.az(self.name) if self.interconnect is not None else None
