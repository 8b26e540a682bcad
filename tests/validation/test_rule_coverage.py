"""Every rule code is exercised by a test that expects its message: the codes no other test reached
are here, each by one edit of a sample fabric, and a last test fails when a code of the registry
appears in no test at all."""

from __future__ import annotations

import pytest

from fabricgen.validation.rules import catalogue
from support.fabrics import REPO, diagnostic_lines, edit

SITES = REPO / "sites"
TESTS = REPO / "tests"


def lines_of(site: str, *edits: tuple[str, str]) -> list[str]:
    text = (SITES / site / "fabric.yaml").read_text()
    for old, new in edits:
        text = edit(text, old, new)
    return diagnostic_lines(text, f"sites/{site}/fabric.yaml")


def only(lines: list[str], code: str) -> list[str]:
    return [line for line in lines if line.endswith(f"[{code}]")]


CLOUDSTACK_MEMBER = "        - host: mgmt2\n          address: 10.0.0.10       # cloudbr0 on mgmt2\n"


@pytest.mark.parametrize(("code", "site", "edits", "message"), [
    ("FG510", "cloudstack", [("          - name: eth0             # management, untagged, port of cloudbr0\n",
                              "          - name: eth0             # management, untagged, port of cloudbr0\n"
                              "            addresses: [10.0.0.99/24]\n")],
     "ovnDeployments[0].hosts[0].ethernets[0].addresses"),
    ("FG512", "cloudstack", [(CLOUDSTACK_MEMBER, CLOUDSTACK_MEMBER + "        - host: kvm01\n"
                              "          address: 10.0.0.21\n")],
     "2 raft members survive no more failures than"),
    ("FG513", "cloudstack", [("      protocol: tcp ", "      protocol: ssl ")], "ovnDeployments[0].databases.protocol"),
    ("FG514", "cloudstack", [("        physicalNetwork: physnet1\n    hosts:",
                              "        physicalNetwork: physnet9\n    hosts:")],
     "ovnDeployments[0].providerNetworks[0].physicalNetwork"),
    ("FG802", "lab", [("  zone: hq\n  interval: 60", "  zone: nowhere\n  interval: 60")],
     "no zone 'nowhere' in the fabric"),
    ("FG905", "openstack-k8s", [("podSelector: {app: web}, cidr: 10.128.0.0/14}", "podSelector: {app: web}}")],
     "policy.groups[0].members[0].namespace"),
    ("FG909", "lab", [("          - {name: prod-db, cidr: 10.100.1.0/24}\n",
                       "          - {name: prod-db, cidr: 10.100.1.0/24, allowSubnets: [10.100.2.0/24]}\n")],
     "allowSubnets"),
])
def test_each_code_no_other_test_reaches(code: str, site: str, edits: list[tuple[str, str]], message: str) -> None:
    found = only(lines_of(site, *edits), code)
    assert found, code
    assert any(message in line for line in found), found


def test_two_deployments_of_one_name_are_fg501() -> None:
    text = (SITES / "cloudstack" / "fabric.yaml").read_text()
    block = text[text.index("  - name: cloudstack\n"):]
    lines = diagnostic_lines(text.replace("ovnDeployments:\n", "ovnDeployments:\n" + block, 1),
                             "sites/cloudstack/fabric.yaml")
    found = only(lines, "FG501")
    assert found and "ovnDeployments[1].name" in found[0] and "cloudstack" in found[0], lines


def test_every_code_is_expected_by_some_test() -> None:
    """A code no test names is a rule nothing holds to its message."""
    text = "".join(p.read_text() for p in TESTS.rglob("test_*.py"))
    missing = [code for code, _name, _summary in catalogue() if code not in text]
    assert not missing, missing

