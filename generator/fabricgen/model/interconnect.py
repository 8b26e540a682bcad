"""The OVN interconnection (OVN-IC): IC database, transit switch, encapsulation."""


import re
from ipaddress import IPv4Address, IPv4Network, IPv6Address, ip_address
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from fabricgen.model.common import DNS_SUBDOMAIN, Label, NodeName, Port, Section, SubnetCIDR, written_as_text

MAX_TRANSIT_SWITCHES = 156  # getTSCidr: 169.254.(100 + index).0/24
_RELEASE = re.compile(r"^v?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?")
KUBE_OVN_IMAGE = "docker.io/kubeovn/kube-ovn"
IMAGE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._/:@-]*$"  # an image reference, as the fabric holds one
DEFAULT_KUBE_OVN = "v1.16.2"
# The first releases whose IC controller moves gw-nodes in place (kubeovn/kube-ovn commits fb3d77631
# on release-1.15 and 37d4da488 on release-1.16, `classifyICConfig`).
GATEWAY_CHANGE_IN_PLACE = ((1, 15, 24), (1, 16, 3))


_HOST_NAME = re.compile(DNS_SUBDOMAIN)


def _ic_host(value: str) -> str:
    """An IP address (as `ip_address` writes it) or a DNS name, as `ic-db-host` may hold one."""
    try:
        return ip_address(value).compressed
    except ValueError:
        pass
    if len(value) > 253 or not _HOST_NAME.fullmatch(value):
        raise ValueError(f"{value!r} is neither an IP address nor a DNS name (lower-case letters, digits, '-' "
                         "and '.'); give the address or the name the zones reach the IC database at")
    return value


IcHost = Annotated[str, AfterValidator(_ic_host)]
MemberAddress = Annotated[IPv4Address | IPv6Address, written_as_text("192.0.2.10")]


def stream(protocol: str, host: str | IPv4Address | IPv6Address, port: int) -> str:
    """An OVSDB remote, `PROTOCOL:HOST:PORT`, an IPv6 host in brackets as OVS writes it."""
    text = str(host)
    return f"{protocol}:[{text}]:{port}" if ":" in text else f"{protocol}:{text}:{port}"


class DatabaseMember(Section):
    """One raft member of the IC database (an `ovn-ic-server` replica)."""

    node: NodeName
    """Kubernetes node name the member runs on; the IC server's replica is pinned to it by
    `kubernetes.io/hostname`, so the node needs no label."""
    address: MemberAddress
    """The node's InternalIP (IPv4 or IPv6, as Kube-OVN's `NODE_IPS` holds it); its raft peers
    and, unless `hosts` says otherwise, the zones reach the IC database on it."""


class Database(Section):
    """The shared IC northbound/southbound database pair."""

    zone: Label | None = None
    """Zone whose cluster hosts the IC database; fabricgen renders the IC server there.
    Leave out for an IC database run outside every zone."""
    members: list[DatabaseMember] = Field(min_length=1)
    """Raft members: 1, or an odd number of at least 3. Two members cannot lose either."""
    hosts: list[IcHost] | None = Field(default=None, min_length=1)
    """What every zone's `ovn-ic-config` names in `ic-db-host`, and the OVN deployments' `ovn-ic`
    connect to: IP addresses or DNS names (a VIP or load balancer in front of the members).
    Kube-OVN makes `tcp:[HOST]:PORT` of each (`genHostAddress`). Default: every member's address.
    Changing it changes every zone's `ovn-ic-config`, which rebuilds its interconnection (see
    `diff`); naming fewer members than run leaves the zones without the IC database when those
    are down (FG115). `fabricgen import` keeps what runs."""
    nb_port: Port = 6645
    """IC northbound port (`ic-nb-port`)."""
    sb_port: Port = 6646
    """IC southbound port (`ic-sb-port`)."""
    vxlan_mode: bool | None = None
    """Set `options:vxlan_mode=true` on the IC northbound database. Defaults to true when
    the encapsulation is vxlan; VXLAN without it drops cross-zone traffic silently."""
    image: Annotated[str, Field(pattern=IMAGE_PATTERN)] | None = None
    """Kube-OVN image of the IC server and of its sidecar that configures the IC database.
    Default: `docker.io/kubeovn/kube-ovn:<kubeOvnVersion>` when `interconnection.kubeOvnVersion`
    names a release (`v1.15.0`), else `docker.io/kubeovn/kube-ovn:v1.16.2`. A different release
    than `kubeOvnVersion` is warning FG112."""
    leader_probe_interval: int = Field(default=5, ge=1, le=3600)
    """`OVN_LEADER_PROBE_INTERVAL` of the IC server, in seconds."""


    def client_hosts(self) -> list[str]:
        """`ic-db-host`'s entries: `hosts`, else every member's address."""
        return list(self.hosts) if self.hosts is not None else [str(m.address) for m in self.members]

    def remote(self, port: int) -> str:
        """`tcp:HOST:PORT,...` over `client_hosts`: what a zone's or a deployment's ovn-ic reaches."""
        return ",".join(stream("tcp", host, port) for host in self.client_hosts())


class TransitSwitch(Section):
    """The transit switch every zone's cluster router attaches to."""

    name: Label = "ts"
    """Transit switch name; Kube-OVN's IC server names the first one `ts`."""
    subnet: SubnetCIDR = IPv4Network("169.254.100.0/24")
    """Transit subnet; Kube-OVN's IC server uses 169.254.100.0/24 for `ts`."""
    count: int = Field(default=1, ge=1, le=MAX_TRANSIT_SWITCHES)
    """How many transit switches the IC server keeps: its `TS_NUM`. Kube-OVN names them `ts`,
    `ts1`, `ts2`, ... on 169.254.100.0/24, 169.254.101.0/24, ... (kubeovn/kube-ovn
    `pkg/ovn_leader_checker/ovn.go` `getTSName`, `getTSCidr`), and each zone attaches its router to
    every one, its gateways in rotated order, for ECMP between zones. Kube-OVN's own
    `install-ic-server.sh` installs 3; fabricgen's default is 1, as its explicit routes go over
    `ts` alone. The IC server deletes every switch beyond the count with its ports
    (`updateTS` runs `ovn-ic-nbctl ts-del`): never set it below what runs. `fabricgen import`
    takes it from the live IC server's `TS_NUM` and the IC database, `status` reports live switches
    beyond it, and `diff` cautions on every change: up or down, every zone rebuilds its
    interconnection with new transit addresses. Up to 156 (169.254.255.0/24 is the last subnet)."""

    def names(self) -> list[str]:
        """The transit switches the IC server keeps, in its order: `ts`, `ts1`, ..."""
        return [transit_switch_name(self.name, index) for index in range(self.count)]


class Interconnection(Section):
    """How the zones are joined: OVN-IC with one shared IC database."""

    encapsulation: Literal["geneve", "vxlan"] = "geneve"
    """Tunnel type of the zones' gateways. SUSE Virtualization's Kube-OVN uses vxlan."""
    auto_route: bool = False
    """Let OVN-IC exchange routes (`auto-route`). Off by default: fabricgen writes explicit
    routes, which survive overlapping pod CIDRs and give full control over the paths."""
    transit_switch: TransitSwitch = TransitSwitch.model_construct()
    """`name` (`ts`) and `subnet` (`169.254.100.0/24`), as Kube-OVN's IC server creates them."""
    database: Database
    """The IC database: the zone that runs it and its raft members."""
    kube_ovn_version: str | None = Field(default=None, pattern=r"^v?[0-9]+\.[0-9]+(\.[0-9]+)?$")
    """Kube-OVN version of the zones' clusters (the oldest, if they differ), e.g. `v1.15.0`.
    Defaults to the tag of `database.image`. VXLAN interconnection needs `vxlan_mode`, which
    only OVN 25.03 has: Kube-OVN 1.15 and later (1.13 and 1.14 run OVN 24.03 and ignore it;
    FG111). The IC server's image follows it, and `fabricgen diff` words its cautions about
    `ovn-ic-config` changes by it: up to v1.16.2 a change of `gw-nodes` rebuilds the zone's
    interconnection with a new random transit address, from v1.16.3 and v1.15.24 the gateways
    move in place."""

    @property
    def ic_image(self) -> str:
        """The IC server's image: `database.image`, else Kube-OVN's image of `kubeOvnVersion`
        when that names a release, else the default release's."""
        if self.database.image is not None:
            return self.database.image
        return default_image(self.kube_ovn_version)

    @property
    def image_version(self) -> tuple[int, int, int | None] | None:
        """(major, minor, patch) of the IC image's tag; None if the tag is no version."""
        name = self.ic_image.split("@", 1)[0]
        last = name.rsplit("/", 1)[-1]
        return _version(last.rsplit(":", 1)[1] if ":" in last else "")

    @property
    def kube_ovn_full_version(self) -> tuple[int, int, int | None] | None:
        """(major, minor, patch or None) of `kube_ovn_version`, else of the IC image's tag."""
        if self.kube_ovn_version is not None:
            return _version(self.kube_ovn_version)
        return self.image_version

    @property
    def kube_ovn_release(self) -> tuple[int, int] | None:
        """(major, minor) of `kube_ovn_version`, else of the IC image's tag; None if neither says."""
        version = self.kube_ovn_full_version
        return (version[0], version[1]) if version else None

    @property
    def gateway_change_in_place(self) -> bool | None:
        """Whether the zones' Kube-OVN moves a zone's gateways in place when `gw-nodes` alone
        changes (None: the version is not known). Up to v1.16.2 its IC controller's `getICState`
        calls any change of ovn-ic-config icConfigChange and rebuilds the zone's interconnection
        with a new random transit address; `classifyICConfig` (first in v1.16.3 and v1.15.24)
        calls a change of gw-nodes alone icGatewayChange and moves the gateways in place."""
        version = self.kube_ovn_full_version
        if version is None:
            return None
        major, minor, patch = version[0], version[1], version[2] or 0
        if (major, minor) == (1, 15):
            return (major, minor, patch) >= GATEWAY_CHANGE_IN_PLACE[0]
        return (major, minor, patch) >= GATEWAY_CHANGE_IN_PLACE[1]

    @property
    def vxlan_mode(self) -> bool:
        """What fabricgen sets on the IC database: the explicit value, else on for vxlan."""
        if self.database.vxlan_mode is not None:
            return self.database.vxlan_mode
        return self.encapsulation == "vxlan"


def default_image(kube_ovn_version: str | None) -> str:
    """Kube-OVN's image of `kube_ovn_version` when that names a release, else the default release's."""
    if kube_ovn_version is not None and (match := _RELEASE.fullmatch(kube_ovn_version)) and match[3] is not None:
        return f"{KUBE_OVN_IMAGE}:v{match[1]}.{match[2]}.{match[3]}"
    return f"{KUBE_OVN_IMAGE}:{DEFAULT_KUBE_OVN}"


def transit_switch_name(first: str, index: int) -> str:
    """Kube-OVN's name of transit switch `index` (`getTSName`): the first's, then first + index."""
    return first if index == 0 else f"{first}{index}"


def _version(text: str) -> tuple[int, int, int | None] | None:
    match = _RELEASE.match(text)
    if match is None:
        return None
    return int(match[1]), int(match[2]), int(match[3]) if match[3] is not None else None
