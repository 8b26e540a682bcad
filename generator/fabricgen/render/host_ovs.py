"""Per chassis: the Open vSwitch settings ovn-controller reads, and the tunnel firewall.

- `configure-ovn-host.sh`: `ovs-vsctl --no-wait set Open_vSwitch .` with system-id,
  hostname, ovn-remote, ovn-encap-type, ovn-encap-ip (read from the tunnel
  interface and checked against fabric.yaml), ovn-bridge-mappings, the gateway
  flag for Neutron and, for a loopback endpoint on OVN before 24.09,
  `ovn-set-local-ip=true`, and `ovn-is-interconn=true` on the IC gateway chassis of
  an interconnected deployment. The keys it sets are recorded in `external_ids:fabricgen-keys`:
  only those are its own. A key it no longer wants is removed only when it is its own; a key
  someone else wrote (ovnkube-node's `ovn-bridge-mappings`, a deployment tool's
  `ovn-cms-options`) is left as it is, and one with another value than the fabric's stops the
  script having changed nothing. `system-id` and `hostname`, which Open vSwitch's own start-up
  writes (ovs-ctl `set_system_ids`), are set over. The address is checked (OVN_ENCAP_IP must be an
  IPv4 address) before one ovs-vsctl transaction writes everything. Honours OVS_RUNDIR.
- `ovn-tunnel.nft`: the Geneve (UDP 6081) or VXLAN (UDP 4789) port open only to
  the deployment's other chassis and, on an IC gateway chassis, to the other interconnected
  deployments' IC gateways (the AZs' gateways tunnel to each other). Where Kube-OVN zones join
  the interconnection too, an IC gateway accepts the port from any address: the fabric names
  those zones' gateway nodes, not their tunnel addresses.
"""

from __future__ import annotations

import json

from fabricgen.plan.deployments import Chassis, chassis, remote_gateways, sb_remote, tunnel_port
from fabricgen.plan.zones import Plan
from fabricgen.render.artifacts import Artifact, TextFile
from fabricgen.render.header import header
from fabricgen.render.host_tree import chassis_dir
from fabricgen.render.templating import render_template

SCRIPT = "configure-ovn-host.sh"
FIREWALL = "ovn-tunnel.nft"
FIREWALL_TABLE = "fabricgen_ovn_tunnel"
GATEWAY_CMS_OPTION = "enable-chassis-as-gw"
IC_GATEWAY_KEY = "ovn-is-interconn"  # ovn-controller copies it to SB Chassis other_config:is-interconn
OWNED_KEYS = "fabricgen-keys"  # external_ids key: the keys the script set, comma-separated
OVS_OWN_KEYS = ("system-id", "hostname")  # ovs-ctl writes them at every start: set over


def _setting(key: str, value: str) -> str:
    """One `external_ids:key="value"` word; the OVSDB string syntax keeps commas literal."""
    return f"external_ids:{key}={json.dumps(value)}"


def external_ids(item: Chassis) -> tuple[dict[str, str], list[str]]:
    """The keys to set and the keys to remove."""
    host, deployment = item.host, item.deployment
    wanted = {
        "system-id": host.chassis_name,
        "hostname": host.name,
        "ovn-remote": sb_remote(deployment),
        "ovn-encap-type": deployment.encapsulation,
    }
    removed = []
    mappings = ",".join(f"{m.physical_network}:{m.bridge}" for m in host.bridge_mappings)
    if mappings:
        wanted["ovn-bridge-mappings"] = mappings
    else:
        removed.append("ovn-bridge-mappings")
    if host.gateway_chassis:
        wanted["ovn-cms-options"] = GATEWAY_CMS_OPTION
    else:
        removed.append("ovn-cms-options")
    if deployment.interconnect is not None:
        if host.name in deployment.interconnect.gateway_chassis:
            wanted[IC_GATEWAY_KEY] = "true"
        else:
            removed.append(IC_GATEWAY_KEY)
    if host.tunnel_endpoint.loopback is not None and deployment.needs_set_local_ip:
        wanted["ovn-set-local-ip"] = "true"
    else:
        removed.append("ovn-set-local-ip")
    return wanted, removed


def script(plan: Plan, item: Chassis) -> str:
    wanted, removed = external_ids(item)
    db = item.deployment.databases
    return render_template(
        "configure-ovn-host.sh.j2",
        header=header(plan),
        host=item.host.name,
        system_id=item.host.chassis_name,
        deployment=item.deployment.name,
        device=item.device,
        address=str(item.address),
        settings=[_setting(k, v) for k, v in wanted.items()],
        wanted=[(k, v) for k, v in wanted.items() if k not in OVS_OWN_KEYS],
        keys=",".join(sorted([*wanted, "ovn-encap-ip"])),
        owned_key=OWNED_KEYS,
        removed=removed,
        ssl=db.ssl_in_use,
    )


def firewall(plan: Plan, item: Chassis) -> str:
    interconnect = item.deployment.interconnect
    gateway = interconnect is not None and item.host.name in interconnect.gateway_chassis
    zones = [z.name for z in plan.fabric.zones] if gateway else []
    return render_template(
        "ovn-tunnel.nft.j2",
        header=header(plan),
        host=item.host.name,
        deployment=item.deployment.name,
        encapsulation=item.deployment.encapsulation,
        port=tunnel_port(item.deployment),
        table=FIREWALL_TABLE,
        peers=[str(p) for p in item.peers],
        remote=[str(p) for p in remote_gateways(plan.fabric.ovn_deployments, item)],
        zones=zones,
    )


def render(plan: Plan) -> list[Artifact]:
    out: list[Artifact] = []
    for deployment in plan.fabric.ovn_deployments:
        for item in chassis(deployment):
            where = chassis_dir(deployment.name, item.host.name)
            out.append(TextFile(where / SCRIPT, script(plan, item), executable=True))
            out.append(TextFile(where / FIREWALL, firewall(plan, item)))
    return out
