"""`fabricgen status` finds the rendered Neutron security groups in a deployment's northbound DB, as
Neutron wrote them (openstack/neutron 28.0.1 `neutron/common/ovn/acl.py`, `utils.py`; see
`fabricgen.platform_rows.neutron`), and names what is missing, added, detached or gone.

The database is the lab's of sites/openstack-k8s (`fabricgen.lab.platforms.platform_policy` writes Neutron's
rows from the rendered playbook there), changed the way a playbook not applied, a rule added by
hand, a port detached or neutron_pg_drop lost would change it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_status import lab_endpoints

from fabricgen import exit_codes
from fabricgen.cli import main
from fabricgen.lab import assembly
from fabricgen.lab.ovn.programs import Programs
from support.fabrics import REPO, build_file

pytestmark = pytest.mark.lab  # starts real programs: ovn-ic, ovn-ic-nbctl, ovn-ic-sbctl, ovn-nbctl, ovn-northd...

FABRIC = REPO / "sites" / "openstack-k8s" / "fabric.yaml"
SYSTEM = Programs()
SUBJECT = "deployment openstack"


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[assembly.Lab, Path]]:
    if SYSTEM.missing():
        pytest.skip("the system's OVN programs are missing (scripts/setup.sh --test installs them)")
    monkeypatch.setenv("PATH", SYSTEM.search_path())
    with assembly.running(build_file(FABRIC), programs=SYSTEM) as running:
        yield running, lab_endpoints(running, tmp_path / "endpoints.yaml")


def groups(lab: assembly.Lab, endpoints: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]]]:
    code = main(["status", str(FABRIC), "--endpoints", str(endpoints), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    return code, [c for c in doc["checks"] if c["check"].startswith("policy.security-group")]


def nb(lab: assembly.Lab, *args: str) -> str:
    return lab.sandbox.nb("openstack", *args)


def port_group(lab: assembly.Lab) -> str:
    return nb(lab, "--bare", "--columns=name", "find", "Port_Group",
              'external_ids:"neutron:security_group_id"!=""').strip()


def test_the_group_as_rendered_is_ok(lab: tuple[assembly.Lab, Path], capsys: pytest.CaptureFixture[str]) -> None:
    running, endpoints = lab
    code, found = groups(running, endpoints, capsys)
    assert code == 0
    assert found == [{"subject": SUBJECT, "check": "policy.security-group", "verdict": "ok", "fix": "",
                      "why": f"security group fabricgen-shop-db of cloud region-one (port group {port_group(running)}) "
                             "holds its 4 rule(s) as rendered, on 1 port(s)"}]


def test_a_rule_missing_and_a_rule_added_are_named(lab: tuple[assembly.Lab, Path],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    running, endpoints = lab
    pg = port_group(running)
    rule = f"outport == @{pg} && ip4 && ip4.src == 10.128.0.0/14 && tcp && tcp.dst == 5432"
    nb(running, "--type=port-group", "acl-del", pg, "to-lport", "1002", rule)
    nb(running, "--type=port-group", "acl-add", pg, "to-lport", "1002", f"outport == @{pg} && ip4 && ip4.src == "
       "0.0.0.0/0", "allow-related")
    code, found = groups(running, endpoints, capsys)
    assert code == exit_codes.CHANGED
    [check] = found
    assert check["verdict"] == "drift"
    assert check["why"] == (f"security group fabricgen-shop-db of cloud region-one (port group {pg}): 1 rule(s) "
                            f"missing: to-lport 1002 allow-related `{rule}`; and 1 rule(s) the rendered group does not "
                            f"have: to-lport 1002 allow-related `outport == @{pg} && ip4 && ip4.src == 0.0.0.0/0`")
    assert check["fix"] == ("ansible-playbook rendered/openstack-k8s/_host/openstack/openstack/region-one/"
                            "security-groups.yml")


def test_a_group_without_ports_protects_nothing(lab: tuple[assembly.Lab, Path],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    running, endpoints = lab
    pg = port_group(running)
    nb(running, "clear", "Port_Group", pg, "ports")
    _code, [check] = groups(running, endpoints, capsys)
    assert (check["verdict"], check["why"]) == ("drift", f"security group fabricgen-shop-db of cloud region-one (port "
                                                         f"group {pg}) holds its 4 rule(s) as rendered but no port: it "
                                                         "protects nothing")
    assert check["fix"].startswith("attach fabricgen-shop-db to the VMs' ports")


def test_a_missing_group_and_a_missing_drop_group_are_named(lab: tuple[assembly.Lab, Path],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    running, endpoints = lab
    nb(running, "pg-del", "neutron_pg_drop")
    _code, found = groups(running, endpoints, capsys)
    assert [(c["check"], c["verdict"]) for c in found] == [("policy.security-group", "ok"),
                                                          ("policy.security-group.drop", "drift")]
    assert found[1]["why"] == ("there is no port group neutron_pg_drop: a port in a security group lets in what no "
                               "rule names")
    nb(running, "pg-del", port_group(running))
    _code, found = groups(running, endpoints, capsys)
    assert [(c["verdict"], c["why"]) for c in found] == [
        ("drift", "security group fabricgen-shop-db of cloud region-one is missing: no port group Neutron wrote holds "
                  "any of its 4 rule(s)")]


@pytest.mark.parametrize(("priority", "action", "match"), [
    ("2000", "allow-related", "outport == @neutron_pg_drop && ip"),
    ("1002", "allow", "outport == @neutron_pg_drop && ip"),
    ("1001", "allow-stateless", "outport == @neutron_pg_drop && ip4")])
def test_an_acl_on_the_drop_group_that_defeats_it_is_named(lab: tuple[assembly.Lab, Path], priority: str,
                                                            action: str, match: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Neutron writes two drops on neutron_pg_drop and nothing else: an allow above them, or one
    beside them at their priority (OVN's order between the two undefined), opens every port of
    every security group, and is named."""
    running, endpoints = lab
    nb(running, "--type=port-group", "acl-add", "neutron_pg_drop", "to-lport", priority, match, action)
    code, found = groups(running, endpoints, capsys)
    assert code == exit_codes.CHANGED
    assert [(c["check"], c["verdict"]) for c in found] == [("policy.security-group", "ok"),
                                                          ("policy.security-group.drop", "drift")]
    assert found[1]["why"] == (f"neutron_pg_drop holds 1 ACL(s) Neutron does not write: to-lport {priority} {action} "
                               f"`{match}`: what they let through no security group's rules decide, on every port of "
                               "every group")


def test_a_port_also_in_another_security_group_is_named(lab: tuple[assembly.Lab, Path],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Neutron gives a port the project's `default` group unless told otherwise, and
    `openstack port set --security-group` adds to what the port has: the protected port left in
    `default` admits every member of `default` on every port. status names it."""
    running, endpoints = lab
    pg = port_group(running)
    port = nb(running, "--bare", "--columns=ports", "list", "Port_Group", pg).split()[0]
    nb(running, "create", "Port_Group", "name=pg_default_group", f"ports={port}",
       'external_ids:"neutron:security_group_id"=default-group-id')
    name = nb(running, "get", "Logical_Switch_Port", port, "name").strip().strip('"')  # the port group holds rows
    code, [check] = groups(running, endpoints, capsys)
    assert code == exit_codes.CHANGED
    assert check["verdict"] == "drift"
    assert check["why"] == (f"security group fabricgen-shop-db of cloud region-one (port group {pg}) holds its 4 "
                            f"rule(s) as rendered, but port {name} is also in pg_default_group: what those groups' "
                            "rules admit reaches the port too (the project's `default` group admits every member "
                            "of it, on every port)")
    assert check["fix"].startswith("openstack port set --no-security-group --security-group fabricgen-shop-db PORT")
