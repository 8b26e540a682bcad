"""Per OVN database member (controller):

- `configure-ovn-central.sh`: the NB/SB Connection rows (listeners), their SSL
  rows and the provider networks (localnet switches and ports), all marked
  `fabricgen-owner=central/<deployment>` and compared before they are written, so a
  second run changes nothing; marked rows that fabric.yaml no longer lists are
  deleted. A same-name row without the marker, or a listener without it on the NB or
  SB port (any address), stops the script before its first write, as does a database
  that does not answer. Honours OVN_NB_DB / OVN_SB_DB.
- `ovn-central.nft`: an nftables table that lets only the client networks (and,
  for raft, the other members) reach the database ports. On a controller that serves two
  deployments each has its own table (`fabricgen_ovn_central_<deployment>`), and each file
  removes the one-deployment table a host may still hold from before.
"""

from __future__ import annotations

from fabricgen.model.ovn import RAFT_PORTS, OvnDeployment
from fabricgen.plan.deployments import OWNER_KEY, listen_target, owner_marker
from fabricgen.plan.zones import Plan
from fabricgen.render.artifacts import Artifact, TextFile
from fabricgen.render.header import header
from fabricgen.render.host_tree import controller_dir
from fabricgen.render.templating import render_template

SCRIPT = "configure-ovn-central.sh"
FIREWALL = "ovn-central.nft"
FIREWALL_TABLE = "fabricgen_ovn_central"


def _provider_networks(deployment: OvnDeployment) -> list[dict[str, object]]:
    return [{"name": n.name, "port": n.port_name, "physnet": n.physical_network, "vlan": n.vlan}
            for n in deployment.provider_networks]


def script(plan: Plan, deployment: OvnDeployment, host: str, address: str) -> str:
    db = deployment.databases
    return render_template(
        "configure-ovn-central.sh.j2",
        header=header(plan),
        deployment=deployment.name,
        host=host,
        address=address,
        ssl=db.ssl_in_use,
        nb_target=listen_target(deployment, db.nb_port),
        sb_target=listen_target(deployment, db.sb_port),
        nb_port=db.nb_port,
        sb_port=db.sb_port,
        probe=db.inactivity_probe,
        provider_networks=_provider_networks(deployment),
        owner_key=OWNER_KEY,
        owner=owner_marker("central", deployment),
    )


def firewall_table(plan: Plan, deployment: OvnDeployment, host: str) -> str:
    """`fabricgen_ovn_central`, or on a controller that serves more than one deployment (by host
    name or address) `fabricgen_ovn_central_<deployment>`: loading one deployment's table must not
    delete another's."""
    member = next(m for m in deployment.databases.members if m.host == host)
    shared = any(m.host == host or m.address == member.address for other in plan.fabric.ovn_deployments
                 if other.name != deployment.name for m in other.databases.members)
    return f"{FIREWALL_TABLE}_{deployment.name}" if shared else FIREWALL_TABLE


def firewall(plan: Plan, deployment: OvnDeployment, host: str) -> str:
    db = deployment.databases
    table = firewall_table(plan, deployment, host)
    members = [str(m.address) for m in db.members]
    uncovered = [str(m.address) for m in db.members if not any(m.address in n for n in db.client_networks)]
    return render_template(
        "ovn-central.nft.j2",
        header=header(plan),
        deployment=deployment.name,
        host=host,
        table=table,
        legacy=FIREWALL_TABLE if table != FIREWALL_TABLE else None,
        client_ports=[db.nb_port, db.sb_port],
        clients=[str(n) for n in db.client_networks] + uncovered,
        raft_ports=list(RAFT_PORTS.values()) if len(members) > 1 else [],
        members=members,
    )


def render(plan: Plan) -> list[Artifact]:
    out: list[Artifact] = []
    for deployment in plan.fabric.ovn_deployments:
        for member in deployment.databases.members:
            where = controller_dir(deployment.name, member.host)
            out.append(TextFile(where / SCRIPT, script(plan, deployment, member.host, str(member.address)),
                                executable=True))
            out.append(TextFile(where / FIREWALL, firewall(plan, deployment, member.host)))
    return out
