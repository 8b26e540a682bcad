"""The fixes `fabricgen status` gives say what they do, and nothing destructive without evidence.

- a gateway drift: an unchanged ovn-ic-config changes nothing (Kube-OVN's `getICState` acts on a
  change only), and a change rebuilds the zone with a new transit address up to v1.16.2 while
  v1.16.3 and v1.15.24 move the gateways in place (`classifyICConfig`);
- an availability zone the fabric does not know: `ovn-ic-sbctl destroy Availability_Zone` only
  where it has no gateway registered (nothing of it runs), never for one that runs;
- a two-member raft cluster: a third member comes as whoever runs the cluster adds one (Kube-OVN's
  master label for ovn-central, the fabric's members for the IC database), not "declare" it.
"""

from __future__ import annotations

import pytest

from fabricgen.judge import interconnection
from fabricgen.judge.raft import Member, judge, parse_cluster_status
from fabricgen.observe.icsb_show import parse
from support import live_cluster
from support.fabrics import REPO, build_text

LAB = REPO / "sites" / "lab" / "fabric.yaml"
RAFT = REPO / "tests" / "data" / "raft" / "ovs-3.5"


@pytest.mark.parametrize(("version", "in_place"), [("v1.16.2", False), ("v1.16.3", True), ("v1.15.24", True),
                                                    ("v1.15.23", False)])
def test_the_gateway_fix_says_what_a_change_of_ovn_ic_config_does(version: str, in_place: bool) -> None:
    text = LAB.read_text()
    if "kubeOvnVersion:" in text:
        text = text.replace("kubeOvnVersion: v1.16.2", f"kubeOvnVersion: {version}")
    else:
        text = text.replace("  autoRoute: false", f"  autoRoute: false\n  kubeOvnVersion: {version}", 1)
    fabric = build_text(text, "sites/lab/fabric.yaml").plan.fabric
    assert fabric.interconnection is not None and fabric.interconnection.gateway_change_in_place is in_place
    fix = interconnection._gateway_fix(fabric)
    assert "applying an unchanged ovn-ic-config does nothing" in fix
    if in_place:
        assert "moves the gateways in place, keeping the transit address" in fix
    else:
        assert "new random transit address" in fix and "fabricgen transit --write" in fix


def test_an_unknown_az_that_runs_is_never_destroyed() -> None:
    show = parse(live_cluster.show({"hq": ("hq-node-1", "169.254.100.71"), "old": ("old-node-1", "169.254.100.9")}),
                 "show.txt")
    fix = interconnection._unknown_az_fix(show, "old")
    assert "destroy" not in fix.replace("never destroy", "") and "old-node-1" in fix
    bare = parse("availability-zone hq\n    gateway hq-node-1\n        hostname: hq-node-1\n        type: vxlan\n"
                 "            ip: 10.10.10.11\navailability-zone old\n", "show.txt")
    fix = interconnection._unknown_az_fix(bare, "old")
    assert "it is a leftover: ovn-ic-sbctl destroy Availability_Zone old" in fix


def test_a_third_member_comes_as_the_cluster_is_run() -> None:
    two = {n: parse_cluster_status((RAFT / f"healthy-{n}.txt").read_text(), n) for n in ("s1", "s2")}
    # the third member's entry removed from both lists: a two-member cluster
    third = parse_cluster_status((RAFT / "healthy-s3.txt").read_text(), "s3")
    texts = {n: "\n".join(line for line in (RAFT / f"healthy-{n}.txt").read_text().splitlines()
                          if third.short_id not in line and "s3" not in line.split("(")[0].split()[:1])
             for n in two}
    members = {n: parse_cluster_status(t, n) for n, t in texts.items()}
    assert all(len(m.servers) == 2 for m in members.values())
    zone = {c.name: c for c in judge("OVN_Northbound", "zone hq nb raft", None, members)}
    assert "kube-ovn/role=master" in zone["raft.count"].fix
    declared = [Member(n, m.address) for n, m in members.items()]
    ic = {c.name: c for c in judge("OVN_IC_Northbound", "IC database nb raft", declared, members)}
    assert "declare a third member in interconnection.database.members" in ic["raft.count"].fix
    deployment = {c.name: c for c in judge("OVN_Northbound", "deployment openstack nb raft", declared, members)}
    assert "databases.members" in deployment["raft.count"].fix
