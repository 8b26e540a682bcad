"""Other controllers' behaviours on rows they do not own, played in the lab's northbound DB, against
validation's refusals (FG910): what a refusal is about happens to the rows when it is ignored,
and not when it does not apply.

Modelled on ovn-org/ovn-kubernetes v1.0.0 `go-controller/pkg/ovn/external_ids_syncer/acl/
acl_sync.go` (`SyncACLs`, gone from v1.1.0: commit 7c75baeaf) and kubeovn/kube-ovn v1.16.2
`pkg/ovs/ovn-nb-acl.go` (`MigrateACLTier`); see `fabricgen.lab.platforms.coexistence`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fabricgen.lab import assembly
from fabricgen.lab.ovn.databases import NB
from fabricgen.lab.platforms import coexistence
from fabricgen.lab.provers import member_flows
from support.fabrics import REPO, build_file, diagnostic_lines
from support.lab_programs import DEBIAN13, needs_25_03

pytestmark = pytest.mark.lab  # starts real programs: ovn-controller, ovn-ic, ovn-ic-nbctl, ovn-nbctl, ovn-northd...

OPENSTACK_K8S = REPO / "sites" / "openstack-k8s" / "fabric.yaml"


@pytest.fixture
def lab() -> Iterator[assembly.Lab]:
    if DEBIAN13.missing(data_plane=True):
        pytest.skip("OVN 25.03 is not extracted (scripts/setup.sh --test)")
    with assembly.running(build_file(OPENSTACK_K8S), data_plane=True, programs=DEBIAN13) as running:
        yield running


def _changed(lab: assembly.Lab, az: str) -> None:
    """The chassis caught up with the NB, and ovn-trace reads the new SB."""
    lab.sandbox.nb(az, "--wait=hv", "sync")
    lab.sandbox.stop_tracers()


def _tiers(lab: assembly.Lab, az: str) -> dict[int, int]:
    rows = lab.sandbox.rows(lab.sandbox.nb_db(az), NB, "ACL", ["_uuid", "tier"])  # rows alike come back once
    out: dict[int, int] = {}
    for row in rows:
        out[int(row["tier"])] = out.get(int(row["tier"]), 0) + 1
    return out


@needs_25_03
def test_kube_ovns_tier_migration_moves_every_tier_0_acl_and_the_verdicts_hold(lab: assembly.Lab) -> None:
    """Neutron writes its ACLs in tier 0; Kube-OVN's start-up migration moves every one of them to
    tier 2. With nothing else in the NB the order of evaluation is the same, and so is every
    verdict: why fabricgen warns of it rather than refuses it (docs/policy.md)."""
    before = _tiers(lab, "openstack")
    assert before == {0: 6}  # neutron_pg_drop's two and the security group's four
    assert coexistence.kube_ovn_migrate_acl_tier(lab.sandbox, "openstack") == 6
    _changed(lab, "openstack")
    assert _tiers(lab, "openstack") == {2: 6}
    flows = member_flows.prove_member_flows(lab)
    assert flows and all(f.ok for f in flows), flows


@needs_25_03
def test_ovn_kubernetes_before_1_1_deletes_neutrons_rows_as_fg910_says(lab: assembly.Lab) -> None:
    """One northbound DB for Neutron and OVN-Kubernetes v1.0.0 is refused (FG910). Ignored, the
    start-up ACL sync of OVN-Kubernetes removes every row Neutron wrote: the database VMs are open,
    and every flow the policy denies into them is delivered, decided by no ACL at all."""
    from support.deployment_fabrics import SHARED

    shared = SHARED.replace("    providerNetworks:\n",
                            "    sharedDatabaseAcknowledged: \"lab\"\n    providerNetworks:\n")
    policy = ("policy:\n  groups:\n    - name: db\n      members: [{openstack: {cloud: region-one, cidr: "
              "10.9.0.0/24}}]\n      defaultDeny: true\n")
    for version, refused in (("v1.0.0", True), ("v1.1.0", False)):
        text = shared.replace("        apiServer: https://10.0.0.5:6443\n", "        apiServer: https://10.0.0.5:6443\n"
                              f"        version: {version}\n")
        lines = diagnostic_lines(text + policy, "sites/t/fabric.yaml")
        assert any("[FG910]" in line for line in lines) == refused, (version, lines)
    # what v1.0.0 does at its start to a northbound DB holding Neutron's rows
    assert coexistence.ovn_kubernetes_sync_acls(lab.sandbox, "openstack") == 6
    _changed(lab, "openstack")
    assert lab.sandbox.rows(lab.sandbox.nb_db("openstack"), NB, "ACL", ["_uuid"]) == []
    flows = member_flows.prove_member_flows(lab)
    into_vm = [f for f in flows if f.destination == "openstack/shop-db" and f.expected == "deny"]
    assert into_vm and all((f.observed, f.decided_by) == ("delivered", "no ACL matched") for f in into_vm), flows
