"""`fabricgen diff`: a fabric change reviewed against a real git revision.

Each test commits the lab fabric, commits a change on top (a zone removed, a tenant VPC
removed, a transit address changed, ...) and runs `fabricgen diff --base HEAD~1`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import git
import pytest

from conftest import edit
from fabricgen.cli import main
from fabricgen.live_state.lab.sandbox import INSTALL_COMMAND, missing_prerequisites
from fabricgen.review.semantic_diff import COMMENT_LIMIT

LAB = Path(__file__).resolve().parents[1] / "sites" / "lab" / "fabric.yaml"
ACTOR = git.Actor("t", "t@example.invalid")
NAME = "sites/lab/fabric.yaml"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fabric = tmp_path / "sites" / "lab" / "fabric.yaml"
    fabric.parent.mkdir(parents=True)
    shutil.copy(LAB, fabric)
    r = git.Repo.init(tmp_path)
    r.index.add([NAME])
    r.index.commit("lab", author=ACTOR, committer=ACTOR)
    monkeypatch.chdir(tmp_path)
    return fabric


def commit(fabric: Path, text: str) -> None:
    """The second commit: the change under review."""
    fabric.write_text(text)
    r = git.Repo(fabric.parent.parent.parent)
    r.index.add([NAME])
    r.index.commit("change", author=ACTOR, committer=ACTOR)


def diff(capsys: pytest.CaptureFixture[str], fmt: str, *extra: str) -> tuple[int, str]:
    """`fabricgen diff` of the last commit; the OVN lab matrix only where a test asks for it."""
    lab = [] if fmt != "markdown" or "--lab" in extra else ["--no-verify"]
    code = main(["diff", NAME, "--base", "HEAD~1", "--format", fmt, *lab, *(e for e in extra if e != "--lab")])
    return code, capsys.readouterr().out


def cautions(out: str) -> list[str]:
    return [line[len("> **Caution** "):] for line in out.splitlines() if line.startswith("> **Caution** ")]


def test_no_change(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commit(repo, repo.read_text().replace("# The four-site lab", "# The four-site lab (comment only)"))
    code, out = diff(capsys, "markdown")
    assert code == 0
    assert "Summary: no changes" in out
    code, out = diff(capsys, "json")
    assert code == 0
    doc = json.loads(out)
    assert (doc["changed"], doc["changes"], doc["cautions"]) == (False, [], [])


def test_removed_zone_is_kept_not_deleted_and_its_caution_explains_leaving(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(repo, many_zones(0, removed="dr"))
    code, out = diff(capsys, "text")
    assert code == 3
    assert "=== dr: Configuration: kube-system/kubeovn (kept)\n" in out
    assert "=== dr: Vpc: ovn-cluster (kept)\n" in out
    assert "=== dr: ConfigMap: kube-system/ovn-ic-config (deleted)\n" in out
    assert "=== dr: Vpc: ovn-cluster (deleted)" not in out
    assert "=== hq: Vpc: ovn-cluster (modified)" in out

    code, out = diff(capsys, "markdown")
    (caution,) = cautions(out)
    assert caution.startswith("dr, hq, ai, edge: zone dr is removed and leaves the interconnection: its "
                              "ovn-ic-config is deleted, so Kube-OVN takes dr off transit switch ts, and the "
                              "other zones (hq, ai, edge) drop their routes to dr's backbone 172.30.40.0/24.")
    assert "kept in dr's cluster (Prune=false, Delete=false)" in caution
    assert "transit" in caution and "--write" not in caution  # no request to re-read its address
    assert "| `dr` | 3 deleted, 2 kept |" in out
    assert "dr/ic-routes-dr.json, the same routes as a merge patch, is deleted too; shown once" in out
    assert "#### Vpc: ovn-cluster (kept)" in out

    doc = json.loads(diff(capsys, "json")[1])
    assert doc["summary"]["kept"] == 2
    assert {(c["title"], c["status"]) for c in doc["changes"] if c["zone"] == "dr"} >= {
        ("Configuration: kube-system/kubeovn", "kept"), ("Vpc: ovn-cluster", "kept")}
    assert doc["cautions"][0]["zones"] == ["dr", "hq", "ai", "edge"]


def test_removed_tenant_vpc_and_subnet_warn_about_attached_vms(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vpc_dev = ("      - name: vpc-dev              # reuses prod's ranges: tenant VPCs are isolated\n"
               "        subnets:\n          - {name: dev-app, cidr: 10.100.2.0/24}\n")
    text = edit(repo.read_text(), vpc_dev, "")
    text = edit(text, "          - {name: prod-web, cidr: 10.100.3.0/24}\n", "")
    commit(repo, text)
    code, out = diff(capsys, "markdown")
    assert code == 3
    assert cautions(out) == [
        "hq: subnet prod-web (10.100.3.0/24) of tenant VPC vpc-prod is removed from hq: VMs attached to it lose "
        "their network; move or stop them before this syncs",
        "hq: tenant VPC vpc-dev is removed from hq (dev-app 10.100.2.0/24): VMs attached to its subnets lose "
        "their network; move or stop them before this syncs",
    ]
    assert "#### Vpc: vpc-dev (deleted)" in out


def test_transit_address_change_is_shown_once_per_zone_with_a_caution(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(repo, repo.read_text().replace("transitAddress: 169.254.100.23", "transitAddress: 169.254.100.25"))
    code, out = diff(capsys, "markdown")
    assert code == 3
    assert "Summary: 3 modified" in out  # the Vpc of hq, edge and dr; not their merge-patch files
    assert "| `ai` |" not in out  # ai's own routes do not change
    for zone in ("hq", "edge", "dr"):
        assert f"<summary>{zone}</summary>" in out
        assert f"ic-routes-{zone}.json (modified)" not in out
        assert f"_{zone}/ic-routes-{zone}.json, the same routes as a merge patch, is modified too; shown once_" in out
    assert '-    nextHopIP: "169.254.100.23"\n+    nextHopIP: "169.254.100.25"' in out
    assert cautions(out) == [
        "ai, hq, edge, dr: the transit address of ai changes 169.254.100.23 -> 169.254.100.25: it must be ai's "
        "port address on the live transit switch ts, or every route to ai points at a stale next hop; check with "
        "`kubectl ko icsbctl show | fabricgen transit sites/lab/fabric.yaml` or "
        "`fabricgen verify sites/lab/fabric.yaml --actual SHOW`"]


def test_backbone_change_names_every_zone(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = edit(repo.read_text(), "      cidr: 172.30.30.0/24\n      gateway: 172.30.30.1\n",
                "      cidr: 172.30.130.0/24\n      gateway: 172.30.130.1\n")
    commit(repo, text)
    code, out = diff(capsys, "text")
    assert code == 3
    assert ("caution: edge, hq, ai, dr: the backbone of edge changes 172.30.30.0/24 -> 172.30.130.0/24: VMs and "
            "hosts on it must be re-addressed") in out


def test_gateway_nodes_change_replaces_the_generic_ic_config_caution(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(repo, edit(repo.read_text(), "gatewayNodes: [ai-node-1, ai-node-2]", "gatewayNodes: [ai-node-2, ai-node-1]"))
    code, out = diff(capsys, "markdown")
    assert code == 3
    (caution,) = cautions(out)
    assert caution.startswith("ai: the gateway nodes of ai change ai-node-1, ai-node-2 -> ai-node-2, ai-node-1: "
                              "ovn-ic-config changes, and Kube-OVN 1.16.2 tears ai's interconnection down")
    assert "`kubectl ko icsbctl show | fabricgen transit sites/lab/fabric.yaml --write`" in caution


def test_ic_database_members_change_names_every_zone(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commit(repo, repo.read_text().replace("address: 10.10.10.13", "address: 10.10.10.14"))
    code, out = diff(capsys, "markdown")
    assert code == 3
    (caution,) = cautions(out)
    assert caution.startswith("hq, ai, edge, dr: the IC database members change (hq-node-1 10.10.10.11, hq-node-2 "
                              "10.10.10.12, hq-node-3 10.10.10.13 -> hq-node-1 10.10.10.11, hq-node-2 10.10.10.12, "
                              "hq-node-3 10.10.10.14): every zone's ovn-ic-config changes (ic-db-host)")


def test_encapsulation_change_is_flagged_with_vxlan_mode(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commit(repo, repo.read_text().replace("  encapsulation: vxlan\n", "  encapsulation: geneve\n"))
    code, out = diff(capsys, "text")
    assert code == 3
    assert ("caution: hq, ai, edge, dr: the interconnection's encapsulation changes vxlan -> geneve: the IC "
            "gateways of every AZ must switch tunnel type together") in out
    assert "caution: hq: the IC database's vxlan_mode changes: this re-keys every existing transit switch" in out


def test_unknown_revision_is_a_user_error(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(repo), "--base", "no-such-rev"]) == 2  # a usage error
    assert "unknown revision 'no-such-rev'" in capsys.readouterr().err


def test_new_fabric_counts_everything_added(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = repo.parent / "new.yaml"
    shutil.copy(repo, other)
    assert main(["diff", str(other), "--format", "markdown"]) == 3
    out = capsys.readouterr().out
    assert "modified" not in out.split("\n")[2]
    assert "added" in out.split("\n")[2]


def many_zones(count: int, removed: str = "") -> str:
    """The lab with `count` further zones, each with tenant VPCs: a change too large for one comment."""
    text = LAB.read_text()
    if removed:
        start = text.index(f"  - name: {removed}\n")
        end = min(i for i in (text.find("\n  - name: ", start + 1), text.find("\n\n", start)) if i != -1)
        text = text[:start] + text[end + 1:]
    tail_at = text.rindex("\n\n", 0, text.index("\ndelivery:")) + 1  # the zones list ends here
    text, tail = text[:tail_at], text[tail_at:]
    for i in range(count):
        text += (f"  - name: site{i}\n    platform: kube-ovn\n    gatewayNodes: [site{i}-gw]\n"
                 f"    transitAddress: 169.254.100.{100 + i}\n    backbone:\n      cidr: 172.31.{i}.0/24\n"
                 "    vpcs:\n")
        text += "".join(f"      - name: vpc{v}\n        subnets:\n          - {{name: s{v}, cidr: 10.{v}.0.0/24}}\n"
                        for v in range(6))
    return text + tail


def test_huge_change_keeps_summary_cautions_and_table_and_cuts_only_diffs(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(repo, many_zones(20, removed="edge"))
    code, out = diff(capsys, "markdown")
    assert code == 3
    assert len(out) <= COMMENT_LIMIT
    assert out.startswith("## fabricgen: sites/lab/fabric.yaml against HEAD~1\n\nSummary: ")
    assert any(c.startswith("edge, hq, ai, dr: zone edge is removed") for c in cautions(out))
    for zone in ("hq", "ai", "edge", "dr", *(f"site{i}" for i in range(20))):
        assert f"| `{zone}` |" in out
    assert "Some object diffs are left out: the comment would exceed GitHub's limit of 65,536 characters" in out
    assert "```diff" in out  # the diffs that fit are there
    full = main(["diff", NAME, "--base", "HEAD~1"])
    text = capsys.readouterr().out
    assert full == 3 and len(text) > COMMENT_LIMIT  # the text form has everything


def test_markdown_shows_the_head_topology_with_changes_marked(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = repo.read_text()
    text = edit(text, "transitAddress: 169.254.100.23", "transitAddress: 169.254.100.25")
    commit(repo, text[: text.index("  - name: dr")])
    code, out = diff(capsys, "markdown")
    assert code == 3
    assert "<summary>Topology of the head (marked: 1 changed, 2 removed)</summary>" in out
    mermaid = out[out.index("```mermaid\n") + 11:]
    mermaid = mermaid[: mermaid.index("```")]
    assert mermaid.startswith("flowchart LR\n")
    assert 'zone__ai__router["ovn-cluster<br/>gateways: ai-node-1, ai-node-2<br/>(changed)"]:::changed' in mermaid
    assert 'zone__ai__router ---|"169.254.100.25"| ts__ts' in mermaid
    assert 'subgraph zone__dr["zone dr (harvester) (removed)"]' in mermaid
    assert ":::removed" in mermaid and "classDef removed" in mermaid
    assert "OVN-IC lab" not in out  # --no-verify


@pytest.mark.skipif(bool(missing_prerequisites()), reason=f"real OVN needed ({INSTALL_COMMAND})")
def test_markdown_includes_the_verify_matrix_of_the_head(repo: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    debian13 = Path(__file__).resolve().parents[1] / ".ovn" / "25.03"
    if not (debian13 / "bin" / "ovs-vswitchd").exists():
        pytest.skip("OVN 25.03 is not installed in .ovn/25.03 (scripts/setup.sh --test)")
    monkeypatch.setenv("FABRICGEN_OVN_PREFIX", str(debian13))  # the lab's VXLAN needs OVN 25.03
    commit(repo, edit(repo.read_text(), "transitAddress: 169.254.100.23", "transitAddress: 169.254.100.25"))
    code, out = diff(capsys, "markdown", "--lab")
    assert code == 3
    assert "### OVN-IC lab: 12/12 pairs delivered" in out
    assert ("proven with OVN 25.03.0 and Open vSwitch 3.5.0: ICMP echo and reply per pair, injected at a VM port "
            "(netdev-dummy) and read back at the other.") in out
    assert "| from \\ to | hq | ai | edge | dr |" in out
    assert out.index("Summary:") < out.index("### OVN-IC lab") < out.index("```diff")


def test_markdown_without_the_ovn_programs_leaves_the_lab_out(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    commit(repo, edit(repo.read_text(), "transitAddress: 169.254.100.23", "transitAddress: 169.254.100.25"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    monkeypatch.setenv("PATH", str(bin_dir))  # git, and no OVN program
    code, out = diff(capsys, "markdown", "--lab")
    assert code == 3
    assert "OVN-IC lab" not in out
    assert "Topology of the head" in out
