"""`fabricgen diff`: a fabric change reviewed against a real git revision."""

from __future__ import annotations

import shutil
from pathlib import Path

import git
import pytest

from fabricgen.cli import main

LAB = Path(__file__).resolve().parents[1] / "sites" / "lab" / "fabric.yaml"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fabric = tmp_path / "sites" / "lab" / "fabric.yaml"
    fabric.parent.mkdir(parents=True)
    shutil.copy(LAB, fabric)
    r = git.Repo.init(tmp_path)
    r.index.add([str(fabric.relative_to(tmp_path))])
    r.index.commit("lab", author=git.Actor("t", "t@example.invalid"), committer=git.Actor("t", "t@example.invalid"))
    monkeypatch.chdir(tmp_path)
    return fabric


def test_unchanged_fabric_has_no_diff(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(repo), "--format", "markdown"]) == 0
    assert "Summary: no changes" in capsys.readouterr().out


def test_moved_transit_address_shows_in_every_other_zone(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = repo.read_text().replace("transitAddress: 169.254.100.23", "transitAddress: 169.254.100.25")
    repo.write_text(text)
    assert main(["diff", str(repo), "--format", "markdown"]) == 3
    out = capsys.readouterr().out
    assert "Summary: 6 modified" in out
    assert "<summary>ai</summary>" not in out  # ai's own routes do not change
    for zone in ("hq", "edge", "dr"):
        assert f"<summary>{zone}</summary>" in out
        assert f"#### File: {zone}/ic-routes-{zone}.json (modified)" in out
    assert '-    nextHopIP: "169.254.100.23"\n+    nextHopIP: "169.254.100.25"' in out


def test_removed_zone_is_reported_deleted(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = repo.read_text()
    repo.write_text(text[: text.index("  - name: dr")])
    assert main(["diff", str(repo)]) == 3
    out = capsys.readouterr().out
    assert "=== dr: ConfigMap: kube-system/ovn-ic-config (deleted)" in out
    assert "=== hq: Vpc: ovn-cluster (modified)" in out


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


def test_a_changed_ic_config_is_flagged_as_disruptive(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = repo.read_text().replace("gatewayNodes: [ai-node-1, ai-node-2]", "gatewayNodes: [ai-node-2, ai-node-1]")
    repo.write_text(text)
    assert main(["diff", str(repo), "--format", "markdown"]) == 3
    out = capsys.readouterr().out
    assert out.count("> **Caution**") == 1
    assert "> **Caution** ai: ovn-ic-config modified: Kube-OVN 1.16.2 tears the zone's interconnection" in out
    # the command to run next names this fabric (cwd is the repository root)
    assert "`kubectl ko icsbctl show | fabricgen transit sites/lab/fabric.yaml --write`" in out


def test_toggling_vxlan_mode_is_flagged(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = repo.read_text().replace("  encapsulation: vxlan\n", "  encapsulation: geneve\n")
    repo.write_text(text)
    assert main(["diff", str(repo)]) == 3
    out = capsys.readouterr().out
    assert "caution: hq: the IC database's vxlan_mode changes: this re-keys every existing transit switch" in out


def test_route_only_changes_carry_no_caution(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write_text(repo.read_text().replace("transitAddress: 169.254.100.23", "transitAddress: 169.254.100.25"))
    assert main(["diff", str(repo), "--format", "markdown"]) == 3
    assert "Caution" not in capsys.readouterr().out
