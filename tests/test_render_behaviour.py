"""`fabricgen render`: deterministic bytes, atomic replacement, pruning, exit codes, --check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, tree
from fabricgen import emit
from fabricgen.cli import main

LAB = "sites/lab/fabric.yaml"
TENANTS = "tests/golden/tenant-peering/fabric.yaml"
# Every sample and golden fabric except the golden copy of the lab (same site name as sites/lab).
ALL = [LAB, *sorted(p.relative_to(REPO).as_posix() for p in (REPO / "tests" / "golden").glob("*/fabric.yaml")
                    if p.parent.name != "lab")]


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


def render(out: Path, *fabrics: str, check: bool = False) -> int:
    return main(["render", "-q", "-o", str(out), *(["--check"] if check else []), *fabrics])


def test_bytes_do_not_depend_on_hash_seed(tmp_path: Path) -> None:
    trees = []
    for seed in ("0", "1", "4242", "random"):
        out = tmp_path / f"seed-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run([sys.executable, "-m", "fabricgen", "render", "-q", "-o", str(out), *ALL],
                                cwd=REPO, env=env, capture_output=True, text=True, check=False)
        assert result.returncode == 3, result.stderr
        assert "Traceback" not in result.stderr
        trees.append(tree(out))
    assert trees[0]
    assert all(t == trees[0] for t in trees[1:])


def test_exit_3_on_change_then_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rendered"
    assert main(["render", "-o", str(out), LAB]) == 3
    err = capsys.readouterr().err
    assert "added    lab/hq/kustomization.yaml" in err
    assert err.endswith(f"fabricgen: {out} changed; review it and stage it: git add {out}\n")
    assert main(["render", "-o", str(out), LAB]) == 0
    assert "up to date" in capsys.readouterr().err
    (out / "lab" / "hq" / "stage-0" / "backbone.yaml").write_text("edited by hand\n", encoding="utf-8")
    assert main(["render", "-o", str(out), LAB]) == 3
    assert "changed  lab/hq/stage-0/backbone.yaml" in capsys.readouterr().err
    (out / "lab" / "hq" / "ic-db" / "configure-ic-db.sh").chmod(0o644)
    assert render(out, LAB) == 3
    assert (out / "lab" / "hq" / "ic-db" / "configure-ic-db.sh").stat().st_mode & 0o777 == 0o755


def test_check_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rendered"
    assert render(out, LAB, check=True) == 3
    assert not out.exists() or tree(out) == {}
    assert "out of date" in capsys.readouterr().err
    assert render(out, LAB) == 3
    stale = out / "lab" / "ai" / "stage-0" / "backbone.yaml"
    stale.write_text("stale\n", encoding="utf-8")
    extra = out / "lab" / "old-zone" / "backbone.yaml"
    extra.parent.mkdir()
    extra.write_text("gone zone\n", encoding="utf-8")
    before = tree(out)
    assert render(out, LAB, check=True) == 3
    assert tree(out) == before
    assert render(out, LAB) == 3
    assert render(out, LAB, check=True) == 0


def test_removed_zone_is_pruned_and_other_sites_untouched(tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    neighbour = out / "other-site" / "keep.yaml"
    neighbour.parent.mkdir(parents=True)
    neighbour.write_text("not ours\n", encoding="utf-8")
    assert render(out, TENANTS) == 3
    assert (out / "tenants" / "dc2" / "kustomization.yaml").is_file()

    text = (REPO / TENANTS).read_text(encoding="utf-8")
    fabric = tmp_path / "tenants.yaml"
    fabric.write_text(text[: text.index("  - name: dc2\n")], encoding="utf-8")
    assert render(out, str(fabric)) == 3
    assert sorted(p.name for p in (out / "tenants").iterdir()) == ["dc1"]
    # dc1 no longer routes to dc2's backbone.
    routes = out / "tenants" / "dc1" / "stage-2" / "default-vpc-routes.yaml"
    assert "172.28.2.0/24" not in routes.read_text(encoding="utf-8")
    assert neighbour.read_text(encoding="utf-8") == "not ours\n"
    assert not list(out.glob(f"{emit.STAGING_PREFIX}*"))


def test_failure_while_staging_leaves_previous_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rendered"
    assert render(out, TENANTS) == 3
    (out / "tenants" / "dc1" / "stage-0" / "backbone.yaml").write_text("previous\n", encoding="utf-8")
    before = tree(out)

    real_write = Path.write_bytes
    calls = {"n": 0}

    def failing_write(self: Path, data: bytes) -> int:  # the disk fills up after three files
        calls["n"] += 1
        if calls["n"] > 3:
            raise OSError(28, "No space left on device")
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", failing_write)
    assert render(out, TENANTS) == 1
    err = capsys.readouterr().err
    assert "fabricgen: error: cannot write" in err and "No space left on device" in err
    assert "Traceback" not in err
    monkeypatch.undo()
    monkeypatch.chdir(REPO)
    assert calls["n"] > 3
    assert tree(out) == before
    assert not list(out.glob(f"{emit.STAGING_PREFIX}*"))


def test_interrupt_while_staging_leaves_previous_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "rendered"
    assert render(out, TENANTS) == 3
    (out / "tenants" / "dc1" / "stage-0" / "backbone.yaml").write_text("previous\n", encoding="utf-8")
    before = tree(out)
    real_write = Path.write_bytes

    def interrupted(self: Path, data: bytes) -> int:
        if "dc2" in self.parts:
            raise KeyboardInterrupt
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", interrupted)
    assert render(out, TENANTS) == 130
    monkeypatch.undo()
    monkeypatch.chdir(REPO)
    assert tree(out) == before
    assert not list(out.glob(f"{emit.STAGING_PREFIX}*"))
    # A staging directory left by a killed run is cleared by the next run.
    (out / f"{emit.STAGING_PREFIX}tenants-killed" / "dc1").mkdir(parents=True)
    assert render(out, TENANTS) == 3
    assert not list(out.glob(f"{emit.STAGING_PREFIX}*"))
    assert (out / "tenants" / "dc1" / "stage-0" / "backbone.yaml").read_text(encoding="utf-8").startswith("# Generated")


def test_output_root_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "rendered"
    blocker.write_text("a file in the way\n", encoding="utf-8")
    assert render(blocker, LAB) == 1
    err = capsys.readouterr().err
    assert err.startswith("fabricgen: error: cannot write")
    assert blocker.read_text(encoding="utf-8") == "a file in the way\n"


def test_site_path_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rendered"
    out.mkdir()
    (out / "lab").write_text("a file where the site directory goes\n", encoding="utf-8")
    code = render(out, LAB)
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.startswith("fabricgen: error: cannot write")
    assert (out / "lab").read_text(encoding="utf-8") == "a file where the site directory goes\n"
    assert not list(out.glob(f"{emit.STAGING_PREFIX}*"))
