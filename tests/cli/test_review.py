"""`fabricgen diff`: a fabric change reviewed against a real git revision.

Each test commits the lab fabric, commits a change on top (a zone removed, a tenant VPC
removed, a transit address changed, ...) and runs `fabricgen diff --base HEAD~1`.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import git
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricgen.cli import main
from fabricgen.lab.ovn.sandbox import INSTALL_COMMAND, missing_prerequisites
from fabricgen.review import semantic_diff
from fabricgen.review.semantic_diff import COMMENT_LIMIT
from support.fabrics import edit

pytestmark = pytest.mark.lab  # starts real programs: git, ovn-controller, ovn-ic, ovn-ic-nbctl, ovn-ic-sbctl...

LAB = Path(__file__).resolve().parents[2] / "sites" / "lab" / "fabric.yaml"
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


def test_removed_zone_is_orphaned_not_deleted_and_its_caution_says_what_to_do_by_hand(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The delivery prunes a removed zone's Application and Kustomizations without their objects
    (no resources finalizer: render/delivery.py; deletionPolicy: Orphan), so nothing of the zone
    is deleted in its cluster: its objects are orphaned, and ovn-ic-config keeps it interconnected."""
    commit(repo, many_zones(0, removed="dr"))
    code, out = diff(capsys, "text")
    assert code == 3
    for title in ("Configuration: kube-system/kubeovn", "Vpc: ovn-cluster", "ConfigMap: kube-system/ovn-ic-config"):
        assert f"=== dr: {title} (orphaned)\n" in out
    assert "(deleted)" not in out.split("=== dr:", 1)[1].split("=== hq:")[0].replace("File: ", "")
    assert "=== hq: Vpc: ovn-cluster (modified)" in out

    code, out = diff(capsys, "markdown")
    (caution,) = cautions(out)
    assert caution.startswith("dr: zone dr is removed from the fabric, but nothing is deleted in its cluster: "
                              "fabricgen's Argo CD Application and Flux Kustomizations of a removed zone are pruned "
                              "without deleting what they applied")
    assert "its ovn-ic-config stays and it stays on transit switch ts" in caution
    assert "drop their routes to its backbone (dr 172.30.40.0/24)" in caution
    assert "delete ovn-ic-config (or set enable-ic to \"false\")" in caution
    assert "--write" not in caution  # no request to re-read its address
    assert "| `dr` | 10 orphaned |" in out  # its 5 objects and the watch's ServiceAccount and RBAC
    assert "dr/ic-routes-dr.json, the same routes as a merge patch, is deleted too; shown once" in out
    assert "#### Vpc: ovn-cluster (orphaned)" in out

    doc = json.loads(diff(capsys, "json")[1])
    assert doc["summary"]["orphaned"] == 10
    assert {(c["title"], c["status"]) for c in doc["changes"] if c["zone"] == "dr"} >= {
        ("Configuration: kube-system/kubeovn", "orphaned"), ("Vpc: ovn-cluster", "orphaned")}
    assert doc["cautions"][0]["zones"] == ["dr"]


def test_removed_tenant_vpc_and_subnet_warn_about_attached_vms(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vpc_dev = ("      - name: vpc-dev              # reuses prod's ranges: tenant VPCs are isolated\n"
               "        subnets:\n          - {name: dev-app, cidr: 10.100.2.0/24}\n")
    text = edit(repo.read_text(), vpc_dev, "")
    text = edit(text, "          - {name: prod-web, cidr: 10.100.3.0/24}\n", "")
    # the policy's web tier is the same addresses, no longer a subnet of the fabric
    text = edit(text, "{tenantSubnet: {zone: hq, name: prod-web}}", "{cidr: 10.100.3.0/24}")
    commit(repo, text)
    code, out = diff(capsys, "markdown")
    assert code == 3
    assert cautions(out) == [
        "tenant subnets are removed: hq prod-web 10.100.3.0/24 of vpc-prod: VMs attached to them lose their "
        "network; move or stop them before this syncs",
        "tenant VPCs are removed: hq vpc-dev (dev-app 10.100.2.0/24): VMs attached to their subnets lose their "
        "network; move or stop them before this syncs",
    ]
    assert "#### Vpc: vpc-dev (deleted)" in out


def test_transit_address_change_is_shown_once_per_zone_with_a_caution(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(repo, repo.read_text().replace("transitAddress: 169.254.100.23", "transitAddress: 169.254.100.25"))
    code, out = diff(capsys, "markdown")
    assert code == 3
    # the Vpc of hq, edge and dr (not their merge-patch files), and the fabric the exporter reads
    assert "Summary: 4 modified" in out
    assert "File: _monitoring/watch.yaml (modified)" in out
    assert "| `ai` |" not in out  # ai's own routes do not change
    for zone in ("hq", "edge", "dr"):
        assert f"<summary>{zone}</summary>" in out
        assert f"ic-routes-{zone}.json (modified)" not in out
        assert f"_{zone}/ic-routes-{zone}.json, the same routes as a merge patch, is modified too; shown once_" in out
    assert '-    nextHopIP: "169.254.100.23"\n+    nextHopIP: "169.254.100.25"' in out
    assert cautions(out) == [
        "the transit address changes: ai 169.254.100.23 -> 169.254.100.25: each must be its zone's port address on "
        "the live transit switch ts, or every route to that zone points at a stale next hop; check with "
        "`kubectl ko icsbctl show | fabricgen transit sites/lab/fabric.yaml` or "
        "`fabricgen verify sites/lab/fabric.yaml --actual SHOW`"]


def test_backbone_change_names_every_zone(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = edit(repo.read_text(), "      cidr: 172.30.30.0/24\n      gateway: 172.30.30.1\n",
                "      cidr: 172.30.130.0/24\n      gateway: 172.30.130.1\n")
    commit(repo, text)
    code, out = diff(capsys, "text")
    assert code == 3
    assert ("caution: the backbone changes: edge 172.30.30.0/24 -> 172.30.130.0/24: VMs and hosts on it must be "
            "re-addressed, and every other zone routes to the new CIDR only once its routes are synced") in out


def test_gateway_nodes_change_replaces_the_generic_ic_config_caution(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(repo, edit(repo.read_text(), "gatewayNodes: [ai-node-1, ai-node-2]", "gatewayNodes: [ai-node-2, ai-node-1]"))
    code, out = diff(capsys, "markdown")
    assert code == 3
    (caution,) = cautions(out)
    assert caution.startswith("the gateway nodes change: ai ai-node-1, ai-node-2 -> ai-node-2, ai-node-1: "
                              "ovn-ic-config changes, and Kube-OVN 1.16.2 tears each such zone's interconnection down")
    assert "`kubectl ko icsbctl show | fabricgen transit sites/lab/fabric.yaml --write`" in caution


@pytest.mark.parametrize(("version", "in_place"), [("v1.16.2", False), ("v1.16.3", True), ("v1.15.23", False),
                                                   ("v1.15.24", True), ("v1.17.0", True)])
def test_gateway_nodes_caution_follows_the_kube_ovn_version(
    repo: Path, capsys: pytest.CaptureFixture[str], version: str, in_place: bool
) -> None:
    """kubeovn/kube-ovn pkg/ovn_ic_controller: getICState (to v1.16.2) rebuilds on any change;
    classifyICConfig (37d4da488 on release-1.16, fb3d77631 on release-1.15) moves gw-nodes in place."""
    pinned = f"  encapsulation: vxlan\n  kubeOvnVersion: {version}\n"
    text = repo.read_text().replace("  encapsulation: vxlan\n", pinned, 1)
    commit(repo, text)
    commit(repo, edit(text, "gatewayNodes: [ai-node-1, ai-node-2]", "gatewayNodes: [ai-node-2, ai-node-1]"))
    _code, out = diff(capsys, "markdown")
    (caution,) = cautions(out)
    shown = version[1:]
    if in_place:
        assert f"Kube-OVN {shown} moves each such zone's transit switch gateways in place (its transit address " \
               "stays)" in caution
        assert "fabricgen transit" not in caution
    else:
        assert f"Kube-OVN {shown} tears each such zone's interconnection down and re-establishes it" in caution
        assert "the other zones are not rebuilt" in caution


def test_gateway_nodes_with_other_ic_config_changes_rebuild_even_on_new_releases(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pinned = "  encapsulation: vxlan\n  kubeOvnVersion: v1.16.3\n"
    text = repo.read_text().replace("  encapsulation: vxlan\n", pinned, 1)
    commit(repo, text)
    changed = edit(text, "gatewayNodes: [ai-node-1, ai-node-2]", "gatewayNodes: [ai-node-2, ai-node-1]")
    commit(repo, changed.replace("address: 10.10.10.13", "address: 10.10.10.14"))
    _code, out = diff(capsys, "markdown")
    gateway = next(c for c in cautions(out) if c.startswith("the gateway nodes change: ai "))
    assert "tears each such zone's interconnection down" in gateway


def test_ic_database_members_change_names_every_zone(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commit(repo, repo.read_text().replace("address: 10.10.10.13", "address: 10.10.10.14"))
    code, out = diff(capsys, "markdown")
    assert code == 3
    members, hosts = cautions(out)
    assert members.startswith("hq: the IC database members change (hq-node-1 10.10.10.11, hq-node-2 10.10.10.12, "
                              "hq-node-3 10.10.10.13 -> hq-node-1 10.10.10.11, hq-node-2 10.10.10.12, hq-node-3 "
                              "10.10.10.14): the raft cluster must change with them, one member at a time")
    assert hosts.startswith("hq, ai, edge, dr: ic-db-host changes (10.10.10.11, 10.10.10.12, 10.10.10.13 -> "
                            "10.10.10.11, 10.10.10.12, 10.10.10.14): every zone's ovn-ic-config changes")


def test_members_changing_behind_fixed_hosts_rebuild_no_zone(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With `hosts` (ic-db-host) fixed, a member change is the IC server's alone: no zone's
    ovn-ic-config changes, so no caution speaks of rebuilding the interconnection."""
    text = repo.read_text().replace("    nbPort: 6645 ", "    hosts: [ic-db.lab.example]\n    nbPort: 6645 ")
    commit(repo, text)
    commit(repo, text.replace("address: 10.10.10.13", "address: 10.10.10.14"))
    code, out = diff(capsys, "markdown")
    assert code == 3
    (caution,) = cautions(out)
    assert caution.startswith("hq: the IC database members change") and "ic-db-host" not in caution


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
    after_zones = re.compile(r"\n\n(?:#[^\n]*\n)*[a-z]").search(text, text.index("\nzones:\n"))
    assert after_zones is not None
    tail_at = after_zones.start() + 1  # the zones list ends here, before the next top-level key
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
    assert any(c.startswith("edge: zone edge is removed") for c in cautions(out))
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
    debian13 = Path(__file__).resolve().parents[2] / ".ovn" / "25.03"
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


def test_the_comment_proves_with_packets_up_to_eight_azs_and_with_ovn_trace_above() -> None:
    from fabricgen.lab.verify import COMMENT_DATA_PLANE_MAX_AZS, comment_proof

    assert COMMENT_DATA_PLANE_MAX_AZS == 8
    assert comment_proof(4, NAME) == comment_proof(8, NAME) == (True, None)
    assert comment_proof(9, NAME) == (False, (
        "Traced with `ovn-trace` only: 9 AZs are more than the 8 this comment proves with packets (the data-plane "
        "lab takes about 170 MiB and a second per AZ); `fabricgen verify sites/lab/fabric.yaml` proves them with "
        "packets."))
    assert comment_proof(4, NAME, data_plane_programs=False) == (False, None)  # the matrix says --logical


@pytest.mark.skipif(bool(missing_prerequisites(data_plane=True)), reason=f"real OVN needed ({INSTALL_COMMAND})")
def test_a_comment_on_nine_azs_traces_them_and_says_why() -> None:
    from fabricgen.lab.verify import lab_section
    from support.fabrics import build_text

    section = lab_section(build_text(renumbered(9)[0], "mesh.yaml"), "mesh.yaml")
    assert section is not None and section.startswith("### OVN-IC lab: 72/72 pairs delivered\n")
    assert ": ovn-trace of each pair, no chassis and no packets (--logical).\n\nTraced with `ovn-trace` only: 9 AZs " \
           "are more than the 8 this comment proves with packets" in section


def renumbered(zones: int) -> tuple[str, str]:
    """A full mesh of `zones` zones, and the same with every transit address moved by one."""
    lines = ["apiVersion: fabricgen.io/v1alpha1", "kind: Fabric", "metadata: {name: mesh}", "interconnection:",
             "  database:", "    zone: z000", "    members:", "      - {node: z000-gw, address: 10.0.0.1}", "zones:"]
    base, head = list(lines), list(lines)
    for i in range(zones):
        for out, address in ((base, i), (head, (i + 1) % zones)):
            out += [f"  - name: z{i:03d}", f"    gatewayNodes: [z{i:03d}-gw]",
                    f"    transitAddress: 169.254.100.{address}", "    backbone:",
                    f"      cidr: 172.{16 + i // 256}.{i % 256}.0/24"]
    return "\n".join(base) + "\n", "\n".join(head) + "\n"


@pytest.mark.parametrize("zones", [128])
def test_a_renumbering_of_every_zone_fits_one_comment_with_every_zone_listed(tmp_path: Path, zones: int) -> None:
    """One caution per kind of change (each zone once), not one per zone listing every zone."""
    from support.fabrics import build_text

    base_text, head_text = renumbered(zones)
    result = semantic_diff.review(build_text(base_text, "mesh.yaml"), build_text(head_text, "mesh.yaml"), "mesh.yaml")
    out = semantic_diff.markdown(result, "fabricgen: mesh.yaml against main")
    assert len(out) <= COMMENT_LIMIT
    (caution,) = cautions(out)
    assert caution.startswith("the transit address changes: z000 169.254.100.0 -> 169.254.100.1; z001 ")
    for i in range(zones):
        assert f"| `z{i:03d}` |" in out
        assert caution.count(f"z{i:03d} ") == 1


def test_the_limit_holds_whatever_the_change() -> None:
    """Many zones with long names: the table shares rows, cautions are cut, the limit holds."""
    items = tuple(semantic_diff.Change(f"zone-{'x' * 50}-{i:04d}", "Vpc: ovn-cluster", "modified", "-a\n+b\n")
                  for i in range(3000))
    long = tuple(semantic_diff.Caution((c.zone,), "y" * 5000) for c in items[:30])
    out = semantic_diff.markdown(semantic_diff.Review(items, long), "t")
    assert len(out) <= COMMENT_LIMIT
    named = [c.zone for c in items if f"`{c.zone}`" in out]
    assert named == [c.zone for c in items[:len(named)]] and len(named) > 800  # as many as a comment holds
    assert f"| ... | {3000 - len(named)} more zone(s): run `fabricgen diff` locally for all of it" in out
    assert out.count("> **Caution** ") == 30 and "(cut: run `fabricgen diff` locally for all of it)" in out


def test_every_zone_keeps_its_row_before_cautions_are_cut() -> None:
    """500 zones, each with other counts (no row to share), 40-character names, and thirty long
    cautions: the table names every zone; the cautions give way."""
    def changes(i: int) -> list[semantic_diff.Change]:  # i % 23 + 1 modified, i // 23 + 1 added: unique counts
        zone = f"zone-{'x' * 30}-{i:04d}"
        return [semantic_diff.Change(zone, f"Vpc: m{j}", "modified", "-a\n+b\n") for j in range(i % 23 + 1)] + \
            [semantic_diff.Change(zone, f"Vpc: a{j}", "added", "+b\n") for j in range(i // 23 + 1)]

    items = tuple(c for i in range(500) for c in changes(i))
    long = tuple(semantic_diff.Caution((items[0].zone,), "y" * 5000) for _ in range(30))
    out = semantic_diff.markdown(semantic_diff.Review(items, long), "t")
    assert len(out) <= COMMENT_LIMIT
    assert all(f"| `zone-{'x' * 30}-{i:04d}` |" in out for i in range(500))
    assert "| ... |" not in out
    assert out.count("> **Caution** ") == 30


@settings(max_examples=30, deadline=None)
@given(zones=st.integers(1, 3000), name=st.integers(1, 80), diff=st.integers(1, 5000), cautions_=st.integers(0, 40),
       caution=st.integers(1, 20000), extra=st.integers(0, 70000), title=st.integers(1, 300))
def test_no_change_makes_a_comment_over_the_limit(zones: int, name: int, diff: int, cautions_: int, caution: int,
                                                 extra: int, title: int) -> None:
    items = tuple(semantic_diff.Change(f"z{'x' * name}{i}", "Vpc: ovn-cluster", semantic_diff.STATUSES[i % 5],
                                       "d" * diff) for i in range(zones))
    notes = tuple(semantic_diff.Caution((items[0].zone,), "y" * caution, names_zones=bool(n % 2))
                  for n in range(cautions_))
    out = semantic_diff.markdown(semantic_diff.Review(items, notes), "t" * title, ["e" * extra] if extra else [])
    assert len(out) <= COMMENT_LIMIT
    assert out.count("> **Caution** ") == cautions_


def test_an_ic_config_change_no_fabric_caution_explains_rebuilds_that_zone_alone() -> None:
    """The output-level caution: any ovn-ic-config change that no fabric caution covers tears
    down and re-establishes only that zone (kubeovn/kube-ovn pkg/ovn_ic_controller getICState),
    in the words of the zones' Kube-OVN release; zones a fabric caution covers are left out."""
    changes = [semantic_diff.Change("ai/stage-1", semantic_diff.IC_CONFIG, "modified", "-a\n+b\n"),
               semantic_diff.Change("dr/stage-1", semantic_diff.IC_CONFIG, "modified", "-a\n+b\n"),
               semantic_diff.Change("hq/stage-1", semantic_diff.IC_CONFIG, "modified", "-a\n+b\n")]
    (caution,) = semantic_diff.cautions(changes, "sites/lab/fabric.yaml", frozenset({"hq"}), "Kube-OVN 1.16.2")
    assert caution.zones == ("ai", "dr")
    assert caution.text == (
        "ovn-ic-config modified: Kube-OVN 1.16.2 tears each such zone's interconnection down and re-establishes it, "
        "with a new random transit address (the other zones are not rebuilt); once it is synced, run `kubectl ko "
        "icsbctl show | fabricgen transit sites/lab/fabric.yaml --write` (in the cluster hosting the IC database), "
        "render and commit, or the other zones' routes point at a stale next hop")
    assert semantic_diff.cautions(changes, covered=frozenset({"ai", "dr", "hq"})) == []


def test_fewer_transit_switches_is_a_caution_naming_what_the_ic_server_deletes(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = repo.read_text()
    commit(repo, edit(original, "    subnet: 169.254.100.0/24\n", "    subnet: 169.254.100.0/24\n    count: 3\n"))
    commit(repo, original)
    code, out = diff(capsys, "markdown")
    assert code == 3
    [caution] = [c for c in cautions(out) if "transit switches" in c]
    assert caution.startswith("hq, ai, edge, dr: the transit switches go ts, ts1, ts2 -> ts: the IC server deletes "
                              "ts1, ts2 with every zone's port")
    assert "ovn-ic-nbctl ts-del beyond TS_NUM" in caution
    assert "new random transit addresses" in caution and "fabricgen transit" in caution


def test_more_transit_switches_is_a_caution_too(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Up as well as down: every zone's Kube-OVN sees the IC northbound's transit switch list change
    (getICState: icConfigChange) and rebuilds its interconnection with new transit addresses, so the
    rendered routes' next hops go stale; the caution says what to run after the sync."""
    original = repo.read_text()
    commit(repo, edit(original, "    subnet: 169.254.100.0/24\n", "    subnet: 169.254.100.0/24\n    count: 2\n"))
    code, out = diff(capsys, "markdown")
    assert code == 3
    [caution] = [c for c in cautions(out) if "transit switches" in c]
    assert caution.startswith("hq, ai, edge, dr: the transit switches go ts -> ts, ts1: the IC server creates ts1;")
    assert "tears its interconnection down and re-establishes it with new random transit addresses" in caution
    assert "fabricgen transit sites/lab/fabric.yaml --write" in caution


def test_an_underlay_mtu_change_is_a_caution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    site = Path(__file__).resolve().parents[2] / "sites" / "cloudstack" / "fabric.yaml"
    fabric = tmp_path / NAME
    fabric.parent.mkdir(parents=True)
    shutil.copy(site, fabric)
    r = git.Repo.init(tmp_path)
    r.index.add([NAME])
    r.index.commit("cloudstack", author=ACTOR, committer=ACTOR)
    monkeypatch.chdir(tmp_path)
    commit(fabric, edit(fabric.read_text(), "    underlayMTU: 1500 ", "    underlayMTU: 9000 "))
    code, out = diff(capsys, "markdown")
    assert code == 3
    [caution] = [c for c in cautions(out) if "underlay MTU" in c]
    assert "the underlay MTU of OVN deployments changes: " in caution and "1500 -> 9000" in caution
    assert "raise it on the switches between the hosts first" in caution
