"""What runs of the IC database, so that `import` declares every raft member that runs.

`ic-db-host` in `ovn-ic-config` is what the zones connect to, not who the members are: Kube-OVN's
docs and `yamls/ovn-ic-config.yaml` show it as one address, while its
`dist/images/install-ic-server.sh` runs one member per `kube-ovn/role=master` node (`replicas:
$count`, `NODE_IPS` their InternalIPs, comma-separated, in `kubectl get no -o wide` order), and
`start-ic-db.sh` bootstraps the raft cluster on the first `NODE_IPS` address and joins the others
to it. A fabric declaring fewer members than run renders an IC server with fewer replicas:
applying it stops members until the cluster has no quorum, and `start-ic-db.sh` does not
bootstrap it again.

So the members come from what runs: the IC server's own Deployment (`kube-system/ovn-ic-server`,
`LiveIcServer`) and, where captured, the raft server list one member printed
(`cluster/status OVN_IC_Northbound`, `running_members`); `ic-db-host` only where neither was
captured, and then import does not take the IC server over (`interconnect_mapping`)."""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address
from typing import Any

from fabricgen.adopt import live_values as lv
from fabricgen.judge.kube_compare import MISSING, FieldDifference
from fabricgen.model.names import KUBE_SYSTEM
from fabricgen.observe import kube_objects as ko
from fabricgen.observe.raft_address import key as address_key
from fabricgen.observe.raft_status import ClusterStatus

IC_SERVER = ko.ObjectId("apps", "Deployment", KUBE_SYSTEM, "ovn-ic-server")
CONTAINER = "ovn-ic-server"
# start-ic-db.sh's environment that decides the raft cluster and the transit switches, and what
# each is in fabricgen's Deployment (render/icdb.py).
MEANINGFUL_ENV = ("NODE_IPS", "TS_NUM", "ENABLE_SSL", "OVN_LEADER_PROBE_INTERVAL")
DOCKER_HUB = "docker.io/"


@dataclass(frozen=True)
class LiveIcServer:
    """The live `kube-system/ovn-ic-server` Deployment, as far as it decides the raft cluster."""

    obj: ko.LiveObject
    replicas: int | None  # None: not an integer (the API server defaults a missing one to 1)
    env: dict[str, str]  # the ovn-ic-server container's literal env values
    image: str | None

    @property
    def node_ips(self) -> list[str]:
        """`NODE_IPS` as start-ic-db.sh splits it (on commas, blanks dropped)."""
        return [part.strip() for part in self.env.get("NODE_IPS", "").split(",") if part.strip()]


def read(obj: ko.LiveObject) -> LiveIcServer:
    spec = lv.spec(obj)
    replicas = lv.integer(spec.get("replicas", 1))
    template = lv.as_dict(lv.as_dict(spec.get("template")).get("spec"))
    container = next((c for c in lv.as_list(template.get("containers"))
                      if isinstance(c, dict) and c.get("name") == CONTAINER), {})
    env = {str(e["name"]): str(e["value"]) for e in lv.as_list(container.get("env"))
           if isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("value"), str | int)}
    image = container.get("image")
    return LiveIcServer(obj, replicas, env, image if isinstance(image, str) else None)


def same_image(first: str | None, second: str | None) -> bool:
    """One image however the registry is spelled: `kubeovn/kube-ovn:v1.16.2` is Docker Hub's."""
    if first is None or second is None:
        return first == second
    return first.removeprefix(DOCKER_HUB) == second.removeprefix(DOCKER_HUB)


def raft_hosts(status: ClusterStatus) -> list[str]:
    """The hosts of the server list's entries, as written (`tcp:[10.0.0.1]:6647` -> `10.0.0.1`)."""
    hosts: list[str] = []
    for server in status.servers:
        key = address_key(server.address)
        if key.startswith("inet:["):
            hosts.append(key[len("inet:["):key.rindex("]")])
        else:
            hosts.append(server.address)
    return hosts


@dataclass(frozen=True)
class Running:
    """The members that run, in the order the fabric declares them (NODE_IPS first: its first
    bootstraps the raft cluster), and what each source said."""

    addresses: tuple[IPv4Address | IPv6Address, ...]
    unreadable: tuple[str, ...]  # entries that are no IP address
    from_deployment: tuple[str, ...]
    from_raft: tuple[str, ...] | None
    sources: str  # what told, for comments and notes


def running_members(server: LiveIcServer | None, raft: ClusterStatus | None, raft_name: str | None) -> Running | None:
    """The IC database's members as they run; None when neither the Deployment nor a server
    list was captured."""
    if server is None and raft is None:
        return None
    from_deployment = tuple(server.node_ips) if server is not None else ()
    from_raft = tuple(raft_hosts(raft)) if raft is not None else None
    ordered = list(dict.fromkeys([*from_deployment, *(from_raft or ())]))
    addresses = [a for a in map(lv.ip, ordered) if a is not None]
    unreadable = tuple(h for h in ordered if lv.ip(h) is None)
    told = []
    if server is not None:
        told.append("the IC server's Deployment (NODE_IPS)")
    if raft is not None:
        told.append(f"the raft server list ({raft_name})")
    return Running(tuple(dict.fromkeys(addresses)), unreadable, from_deployment, from_raft, " and ".join(told))


def differences(rendered: dict[str, Any], live_obj: ko.LiveObject) -> tuple[FieldDifference, ...]:
    """Where fabricgen's IC server differs from the live one in what decides the raft cluster and
    the transit switches: replicas, the image, and start-ic-db.sh's MEANINGFUL_ENV. The rest of
    the live Deployment (install-ic-server.sh's nodeSelector, no sidecar) is replaced by
    fabricgen's form, which is not a difference of the fabric."""
    live = read(live_obj)
    spec = lv.as_dict(rendered.get("spec"))
    out: list[FieldDifference] = []
    if spec.get("replicas") != live.replicas:
        out.append(FieldDifference(("spec", "replicas"), spec.get("replicas"),
                                   live.replicas if live.replicas is not None else lv.spec(live_obj).get("replicas")))
    containers = lv.as_list(lv.as_dict(lv.as_dict(spec.get("template")).get("spec")).get("containers"))
    own = next((c for c in containers if isinstance(c, dict) and c.get("name") == CONTAINER), {})
    at: tuple[Any, ...] = ("spec", "template", "spec", "containers", {"name": CONTAINER})
    if not same_image(own.get("image"), live.image):
        out.append(FieldDifference((*at, "image"), own.get("image"), live.image if live.image else MISSING))
    values = {str(e["name"]): str(e["value"]) for e in lv.as_list(own.get("env"))
              if isinstance(e, dict) and "value" in e}
    for name in MEANINGFUL_ENV:
        mine, theirs = values.get(name), live.env.get(name)
        if _words(name, mine) != _words(name, theirs):
            out.append(FieldDifference((*at, "env", {"name": name}, "value"), MISSING if mine is None else mine,
                                       MISSING if theirs is None else theirs))
    return tuple(out)


def _words(name: str, value: str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    return tuple(p.strip() for p in value.split(",")) if name == "NODE_IPS" else (value.strip(),)
