"""The policy's Neutron half, run by Neutron itself: neutron 28.0.1's API with the ML2/OVN driver
(`support.neutron_cloud`) writes into a lab AZ's OVN NB and SB (`Sandbox.start_az`, with one simulated
chassis whose ovn-controller runs the VMs' ports, `Underlay.add_chassis`), the rendered
security-group playbook is run against it twice with the real `ansible-playbook` (openstack.cloud
2.5.0), the member VM's port is made through Neutron's API as a user makes it, and packets are
sent through the rows Neutron's driver wrote. `fabricgen status` then judges those rows.

What the lab and `status` believe Neutron writes (`fabricgen.platform_rows.neutron`) is compared
here with what it did write.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from fabricgen.cli import main
from fabricgen.lab.ovn.chassis import Chassis, ChassisSpec, Underlay
from fabricgen.lab.ovn.databases import NB, SB
from fabricgen.lab.ovn.packets import TCP, Segment, read_pcap
from fabricgen.lab.ovn.sandbox import Sandbox, atoms, workdir
from fabricgen.platform_rows import neutron as neutron_rows
from support import neutron_cloud as neutron
from support.deployment_fabrics import shop_api_into_shop_db
from support.fabrics import REPO, build_text

pytestmark = [pytest.mark.lab, neutron.needs_neutron]  # starts Neutron, ansible-playbook, OVN and OVS daemons

FABRIC = REPO / "sites" / "openstack-k8s" / "fabric.yaml"
NAME = "sites/openstack-k8s/fabric.yaml"
PLAYBOOK = PurePosixPath("openstack-k8s/_host/openstack/openstack/region-one/security-groups.yml")
CLOUD = "region-one"
AZ = "openstack"
GROUP = "fabricgen-shop-db"
ARRIVAL_POLLS = 500  # 20 ms apart: a packet the datapath forwards is out in a few milliseconds


@dataclass
class Cloud:
    sandbox: Sandbox
    host: Chassis
    api: neutron.Neutron

    def nb_rows(self, table: str, columns: list[str]) -> list[dict[str, Any]]:
        return self.sandbox.rows(self.sandbox.nb_db(AZ), NB, table, columns)


@pytest.fixture(scope="module")
def cloud() -> Iterator[Cloud]:
    with workdir() as path:
        sandbox = Sandbox(path)
        try:
            sandbox.start_ic_databases()
            sandbox.start_az(AZ, az_name=AZ)
            underlay = Underlay(sandbox, IPv4Network("192.168.0.0/24"))
            underlay.start()
            host = underlay.add_chassis(ChassisSpec("cmp1", AZ, "geneve", IPv4Address("192.168.0.11")), 0,
                                        sandbox.sb_db(AZ))
            with neutron.running(path / "neutron", sandbox.nb_db(AZ), sandbox.sb_db(AZ)) as api:
                yield Cloud(sandbox, host, api)
        finally:
            sandbox.stop()


def _playbook(text: str, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    out = build_text(text, NAME).files[PLAYBOOK].text
    path = tmp_path / "security-groups.yml"
    path.write_text(out)
    (task,) = yaml.safe_load(out)[0]["tasks"]
    return path, task[neutron_rows.TASK]


def _acls(cloud: Cloud, port_group: str) -> set[tuple[str, int, str, str]]:
    acls = {row["_uuid"][1]: row for row in cloud.nb_rows("ACL", ["_uuid", "direction", "priority", "match",
                                                                    "action"])}
    (group,) = [g for g in cloud.nb_rows("Port_Group", ["name", "acls"]) if g["name"] == port_group]
    return {(acls[u]["direction"], acls[u]["priority"], acls[u]["match"], acls[u]["action"])
            for u in atoms(group["acls"])}


def test_the_rendered_playbook_runs_twice_and_neutron_writes_the_rows_fabricgen_expects(
        cloud: Cloud, tmp_path: Path) -> None:
    playbook, group = _playbook(FABRIC.read_text(), tmp_path)
    first, out = cloud.api.play(playbook, CLOUD)
    assert first["failed"] == 0 and first["changed"] == 1, out
    second, out = cloud.api.play(playbook, CLOUD)
    assert second == {"ok": 1, "changed": 0, "unreachable": 0, "failed": 0}, out
    ids = cloud.api.security_groups()
    port_group = neutron_rows.port_group_name(ids[GROUP])
    wanted = {(a.direction, a.priority, a.match, a.action) for a in neutron_rows.group_acls(group, ids)}
    assert _acls(cloud, port_group) == wanted
    assert _acls(cloud, neutron_rows.DROP_GROUP) == {(a.direction, a.priority, a.match, a.action)
                                                     for a in neutron_rows.drop_acls()}


def test_rules_that_share_a_key_the_whole_port_range_and_any_beside_tcp_run_twice(
        cloud: Cloud, tmp_path: Path) -> None:
    """Two pod groups both given as the cluster's pod range into shop-db tcp/5432 (one Neutron rule:
    `securitygroups_db._rule_to_key` leaves the description out), tcp and sctp on every port (Neutron
    stores 1-65535 as no range), and `any` beside tcp between the same groups (openstack.cloud
    leaves `protocol: any` out of what it matches on): Neutron takes the playbook, and a second run
    changes nothing. The same rules written one per source, as fabricgen wrote them before, are
    refused by Neutron after the module has deleted the group's egress rule."""
    text = shop_api_into_shop_db(FABRIC.read_text(),
                                 '{from: shop-api, to: shop-db, protocol: tcp, ports: ["5432", "1-65535"]}',
                                 '{from: shop-api, to: shop-db, protocol: sctp, ports: ["1-65535"]}',
                                 "{from: shop-api, to: shop-db, protocol: any}")
    playbook, group = _playbook(text, tmp_path)
    cloud.api.delete_groups(GROUP)
    try:
        first, out = cloud.api.play(playbook, CLOUD)
        assert first["failed"] == 0, out
        second, out = cloud.api.play(playbook, CLOUD)
        assert second["changed"] == 0 and second["failed"] == 0, out
        ids = cloud.api.security_groups()
        wanted = {(a.direction, a.priority, a.match, a.action) for a in neutron_rows.group_acls(group, ids)}
        assert _acls(cloud, neutron_rows.port_group_name(ids[GROUP])) == wanted

        # one rule per source, as before: two rules Neutron takes for the same one
        split = dict(group)
        shared = [r for r in group["security_group_rules"] if "; " in r.get("description", "")]
        assert len(shared) == 1, group["security_group_rules"]
        split["security_group_rules"] = [r for r in group["security_group_rules"] if r not in shared] + [
            {**shared[0], "description": d} for d in shared[0]["description"].split("; ")]
        naive = tmp_path / "one-rule-per-source.yml"
        naive.write_text(yaml.safe_dump([{"name": "as before", "hosts": "localhost", "gather_facts": False,
                                          "tasks": [{neutron_rows.TASK: {**split, "cloud": CLOUD}}]}]))
        cloud.api.delete_groups(GROUP)
        refused, out = cloud.api.play(naive, CLOUD)
        assert refused["failed"] == 1 and "Duplicate" in out, out
    finally:
        cloud.api.delete_groups(GROUP)


def _frame(src: dict[str, Any], dst: dict[str, Any], ip_src: str, port: int, ident: int) -> Segment:
    return Segment(src["mac_address"], dst["mac_address"], IPv4Address(ip_src),
                   IPv4Address(dst["fixed_ips"][0]["ip_address"]), TCP, 40000 + ident, port, ident)


def _arrived(cloud: Cloud, vif: str, segments: list[Segment]) -> set[int]:
    pcap = cloud.host.vms[vif]
    keys = {s.ident: (str(s.ip_src), str(s.ip_dst), TCP, s.source_port, s.destination_port, s.ident)
            for s in segments}
    seen = {f.key for f in read_pcap(pcap)}
    return {ident for ident, key in keys.items() if key in seen}


def _send(cloud: Cloud, sender: str, receiver: str, segments: list[Segment], marker: tuple[str, Segment]) -> set[int]:
    """Send `segments` from VIF `sender` to VIF `receiver`, then `marker` (to the VIF it names, through
    a port that admits it) from the same VIF: the datapath handles one port's packets in order, so once
    the marker is out every segment before it has been delivered or dropped. Returns the idents of the
    segments that arrived."""
    for segment in [*segments, marker[1]]:
        cloud.host.receive(sender, segment.frame().hex())
    for _ in range(ARRIVAL_POLLS):
        if _arrived(cloud, marker[0], [marker[1]]):
            return _arrived(cloud, receiver, segments)
        time.sleep(0.02)
    raise AssertionError(f"the marker packet never arrived at {marker[0]}")


def _status(cloud: Cloud, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    endpoints = tmp_path / "endpoints.json"
    endpoints.write_text(json.dumps({"availabilityZones": {AZ: {"northbound": cloud.sandbox.nb_db(AZ),
                                                                "southbound": cloud.sandbox.sb_db(AZ)}},
                                     "kubernetesClusters": {"k8s-prod": {"read": False}}}))
    main(["status", str(FABRIC), "--endpoints", str(endpoints), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    return [c for c in doc["checks"] if c["check"].startswith("policy.security-group")]


def test_packets_through_the_rows_neutron_wrote_and_the_default_group_on_the_port(
        cloud: Cloud, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The member VM's port made as a user makes it (Neutron gives it the project's `default` group),
    then attached: first with `openstack port set --security-group`, which adds the group beside
    `default`, then as docs/policy.md says (`--no-security-group` first). With `default` on the port
    every port of that group reaches the protected VM on any port, and status names it."""
    playbook, _group = _playbook(FABRIC.read_text(), tmp_path)
    assert cloud.api.play(playbook, CLOUD)[0]["failed"] == 0
    api = cloud.api
    network = api.call("POST", "networks", {"network": {"name": "lab"}})["network"]
    subnet = api.call("POST", "subnets", {"subnet": {"network_id": network["id"], "ip_version": 4,
                                                     "cidr": "10.100.0.0/16", "gateway_ip": None,
                                                     "enable_dhcp": False}})["subnet"]

    def port(name: str, address: str, **more: Any) -> dict[str, Any]:
        body = {"network_id": network["id"], "name": name,
                "fixed_ips": [{"subnet_id": subnet["id"], "ip_address": address}], **more}
        return dict(api.call("POST", "ports", {"port": body})["port"])

    db = port("db-vm", "10.100.20.10")                     # the member: 10.100.20.0/24 is shop-db's range
    peer = port("peer-vm", "10.100.30.5")                  # another VM of the project, in `default`
    pods = port("pod-router", "10.100.30.6", port_security_enabled=False)  # sends as the pod range does
    ids = api.security_groups()
    assert db["security_groups"] == [ids["default"]]
    attached = {"port": {"security_groups": [ids["default"], ids[GROUP]]}}  # `port set --security-group`
    api.call("PUT", f"ports/{db['id']}", attached)
    for i, p in enumerate((db, peer, pods)):
        cloud.host.add_vm(f"vif{i}", p["id"], i + 1)

    def bound() -> bool:
        rows = cloud.sandbox.rows(cloud.sandbox.sb_db(AZ), SB, "Port_Binding", ["logical_port", "chassis"])
        return {r["logical_port"] for r in rows if atoms(r["chassis"])} >= {db["id"], peer["id"], pods["id"]}

    for _ in range(ARRIVAL_POLLS):
        if bound():
            break
        time.sleep(0.02)
    cloud.sandbox.nb(AZ, "--wait=hv", "sync")

    from_pods = [_frame(pods, db, "10.128.0.5", 5432, 1),   # shop-web's pods: the rule's tcp/5432
                 _frame(pods, db, "10.128.0.5", 5433, 2),   # a port no rule opens
                 _frame(pods, db, "10.200.0.5", 5432, 3)]   # a source no rule names
    marker = ("vif2", _frame(peer, pods, "10.100.30.5", 7, 100))
    from_peer = [_frame(peer, db, "10.100.30.5", 9999, 4)]
    assert _send(cloud, "vif2", "vif0", from_pods, ("vif0", _frame(pods, db, "10.128.0.5", 5432, 50))) == {1}
    assert _send(cloud, "vif1", "vif0", from_peer, marker) == {4}  # `default` beside: the peer is in
    [check] = [c for c in _status(cloud, tmp_path, capsys) if c["check"] == "policy.security-group"]
    assert check["verdict"] == "drift", check
    assert f"port {db['id']} is also in {neutron_rows.port_group_name(ids['default'])}" in check["why"], check
    assert check["fix"].startswith(f"openstack port set --no-security-group --security-group {GROUP} "), check

    api.call("PUT", f"ports/{db['id']}", {"port": {"security_groups": [ids[GROUP]]}})  # --no-security-group first
    cloud.sandbox.nb(AZ, "--wait=hv", "sync")
    again = [_frame(peer, db, "10.100.30.5", 9999, 5)]
    marker = ("vif2", _frame(peer, pods, "10.100.30.5", 7, 101))
    assert _send(cloud, "vif1", "vif0", again, marker) == set()
    fresh = [_frame(pods, db, "10.128.0.5", 5432, 6), _frame(pods, db, "10.128.0.5", 5433, 7)]
    assert _send(cloud, "vif2", "vif0", fresh, ("vif0", _frame(pods, db, "10.128.0.5", 5432, 51))) == {6}
    checks = {c["check"]: c for c in _status(cloud, tmp_path, capsys)}
    assert checks["policy.security-group"]["verdict"] == "ok", checks
    assert "policy.security-group.drop" not in checks, checks

    # an allow beside the drop on neutron_pg_drop, which Neutron never writes, opens every port
    extra = "outport == @neutron_pg_drop && ip"
    cloud.sandbox.nb(AZ, "--wait=hv", "--type=port-group", "acl-add", neutron_rows.DROP_GROUP, "to-lport", "2000",
                     extra, "allow-related")
    opened = [_frame(pods, db, "10.128.0.5", 5433, 8)]
    assert _send(cloud, "vif2", "vif0", opened, ("vif0", _frame(pods, db, "10.128.0.5", 5432, 52))) == {8}
    checks = {c["check"]: c for c in _status(cloud, tmp_path, capsys)}
    assert checks["policy.security-group.drop"]["verdict"] == "drift", checks
    assert f"to-lport 2000 allow-related `{extra}`" in checks["policy.security-group.drop"]["why"], checks
    cloud.sandbox.nb(AZ, "--type=port-group", "acl-del", neutron_rows.DROP_GROUP, "to-lport", "2000", extra)
