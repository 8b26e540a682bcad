"""`fabricgen render`: deterministic bytes, atomic replacement, pruning, exit codes, --check."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fabricgen.cli import main
from fabricgen.output import emit
from support.fabrics import REPO, tree

pytestmark = pytest.mark.lab  # starts real programs: git, ldconfig, python, sh

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
    assert err.endswith(f"fabricgen: {out} changed; review it and stage it with the fabrics it comes from: "
                        f"git add {out}\n")
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
    # dc2 pruned; _host holds the script of the IC database, which runs in no zone (FG113), and
    # _monitoring the site's alert rules
    assert sorted(p.name for p in (out / "tenants").iterdir()) == ["_host", "_monitoring", "dc1"]
    # dc1 no longer routes to dc2's backbone.
    routes = out / "tenants" / "dc1" / "stage-2" / "default-vpc-routes.yaml"
    assert "172.28.2.0/24" not in routes.read_text(encoding="utf-8")
    assert neighbour.read_text(encoding="utf-8") == "not ours\n"
    assert not list(out.glob(f"{emit.STAGING_PREFIX}*"))


def _no_space(*_args: object, **_kwargs: object) -> None:
    raise OSError(28, "No space left on device")


@pytest.mark.parametrize("failing", ["write", "link and write"])
def test_failure_while_staging_leaves_previous_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str], failing: str) -> None:
    """The disk fills up while the new tree is staged: the two ways a file enters it (linked
    from the current tree when unchanged, written afresh otherwise) both fail."""
    out = tmp_path / "rendered"
    assert render(out, TENANTS) == 3
    (out / "tenants" / "dc1" / "stage-0" / "backbone.yaml").write_text("previous\n", encoding="utf-8")
    before = tree(out)
    calls = {"write": 0}
    real_write = emit._write_new

    def failing_write(path: Path, data: bytes, mode: int) -> None:
        calls["write"] += 1
        real_write(path, data, mode)  # the file is made, then the disk is full
        _no_space()

    monkeypatch.setattr(emit, "_write_new", failing_write)
    if failing == "link and write":
        monkeypatch.setattr(os, "link", _no_space)
    assert render(out, TENANTS) == 1
    err = capsys.readouterr().err
    assert "fabricgen: error: cannot write" in err and "No space left on device" in err
    assert "Traceback" not in err
    monkeypatch.undo()
    monkeypatch.chdir(REPO)
    assert calls["write"] == 1
    assert tree(out) == before
    assert not list(out.glob(f"{emit.STAGING_PREFIX}*"))


def test_interrupt_while_staging_leaves_previous_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "rendered"
    assert render(out, TENANTS) == 3
    (out / "tenants" / "dc1" / "stage-0" / "backbone.yaml").write_text("previous\n", encoding="utf-8")
    before = tree(out)
    real_link = os.link

    def interrupted(src: str, dst: str, **kwargs: bool) -> None:
        if "dc2" in Path(dst).parts:
            raise KeyboardInterrupt
        real_link(src, dst, **kwargs)

    monkeypatch.setattr(os, "link", interrupted)
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


def _inodes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.lstat().st_ino for p in root.rglob("*") if p.is_file()}


def test_a_rerender_links_unchanged_files_and_writes_the_rest(tmp_path: Path) -> None:
    """Unchanged files move into the new tree as hard links (creating files is what a render of
    many zones spends its time on); a changed file, a file whose mode is not fabricgen's, and a
    file touched after it was read are written afresh."""
    out = tmp_path / "rendered"
    assert render(out, LAB) == 3
    site = out / "lab"
    expected = tree(out)
    edited, widened = site / "hq" / "stage-0" / "backbone.yaml", site / "edge" / "stage-0" / "backbone.yaml"
    edited.write_text("hand edit\n", encoding="utf-8")
    widened.chmod(0o664)  # as a checkout under umask 002 leaves it: current, but not fabricgen's mode
    before = _inodes(site)
    assert render(out, LAB) == 3
    after = _inodes(site)
    assert tree(out) == expected
    assert {m & 0o7777 for m in _modes(site).values()} == {0o644, 0o755}
    fresh = {name for name in after if after[name] != before[name]}
    assert fresh == {"hq/stage-0/backbone.yaml", "edge/stage-0/backbone.yaml"}


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_of_another_user_is_not_linked(tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert render(out, LAB) == 3
    site = out / "lab"
    (site / "hq" / "stage-0" / "backbone.yaml").write_text("hand edit\n", encoding="utf-8")
    theirs = site / "ai" / "stage-0" / "configuration.yaml"
    os.chown(theirs, 4242, 4242)
    before = _inodes(site)
    assert render(out, LAB) == 3
    after = _inodes(site)
    assert after["ai/stage-0/configuration.yaml"] != before["ai/stage-0/configuration.yaml"]
    assert theirs.stat().st_uid == 0
    assert after["ai/stage-0/kustomization.yaml"] == before["ai/stage-0/kustomization.yaml"]


def test_a_filesystem_without_hard_links_gets_every_file_written(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "rendered"
    assert render(out, LAB) == 3
    expected = tree(out)
    (out / "lab" / "hq" / "stage-0" / "backbone.yaml").write_text("hand edit\n", encoding="utf-8")
    before = _inodes(out / "lab")

    def unsupported(*_args: object, **_kwargs: object) -> None:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", unsupported)
    assert render(out, LAB) == 3
    after = _inodes(out / "lab")
    assert tree(out) == expected
    assert all(after[name] != before[name] for name in after)


def test_a_file_touched_after_it_was_read_is_not_linked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "rendered"
    assert render(out, LAB) == 3
    site = out / "lab"
    (site / "hq" / "stage-0" / "backbone.yaml").write_text("hand edit\n", encoding="utf-8")
    touched = site / "ai" / "stage-0" / "configuration.yaml"
    real_read = emit._read

    def read_then_touch(root: Path, name: str) -> object:
        found = real_read(root, name)
        os.utime(touched, ns=(1, 1))  # as an editor saving the same bytes would
        return found

    monkeypatch.setattr(emit, "_read", read_then_touch)
    before = _inodes(site)
    assert render(out, LAB) == 3
    after = _inodes(site)
    assert after["ai/stage-0/configuration.yaml"] != before["ai/stage-0/configuration.yaml"]
    assert after["ai/stage-0/kustomization.yaml"] == before["ai/stage-0/kustomization.yaml"]


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


def _fabricgen(*args: str, cwd: Path, umask: str = "022") -> subprocess.CompletedProcess[str]:
    """fabricgen in a process of its own, under `umask`."""
    command = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "fabricgen", *args))
    return subprocess.run(["/bin/sh", "-c", f"umask {umask} && exec {command}"], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)


def _git(repo: Path, *args: str, umask: str = "022") -> None:
    command = " ".join(shlex.quote(a) for a in ("git", "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                                                 *args))
    subprocess.run(["/bin/sh", "-c", f"umask {umask} && exec {command}"], cwd=repo, check=True,
                   capture_output=True)


def _modes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.lstat().st_mode for p in sorted(root.rglob("*"))}


def test_render_writes_the_same_modes_under_any_umask(tmp_path: Path) -> None:
    seen = []
    for umask in ("000", "002", "022", "077"):
        out = tmp_path / umask
        result = _fabricgen("render", "-q", "-o", str(out), LAB, "sites/openstack-k8s/fabric.yaml", cwd=REPO,
                            umask=umask)
        assert result.returncode == 3, result.stderr
        seen.append(_modes(out))
    assert seen[0] and all(modes == seen[0] for modes in seen[1:])
    assert {m & 0o7777 for m in seen[0].values()} == {0o644, 0o755}


@pytest.mark.parametrize("umask", ["002", "000"])
def test_check_is_current_in_a_checkout_made_under_a_permissive_umask(tmp_path: Path, umask: str) -> None:
    origin = tmp_path / "origin"
    for site in ("lab", "openstack-k8s"):
        (origin / "sites" / site).mkdir(parents=True)
        shutil.copy(REPO / "sites" / site / "fabric.yaml", origin / "sites" / site / "fabric.yaml")
    _git(origin, "init", "-q")
    assert _fabricgen("render", "-q", "sites/lab/fabric.yaml", "sites/openstack-k8s/fabric.yaml",
                      cwd=origin).returncode == 3
    _git(origin, "add", "-A")
    _git(origin, "commit", "-qm", "fabric and its output")
    _git(tmp_path, "clone", "-q", str(origin), "clone", umask=umask)
    clone = tmp_path / "clone"
    modes = {m & 0o777 for m in _modes(clone / "rendered").values()}
    assert modes - {0o644, 0o755}, "git checked out with the default modes; the umask was not applied"
    for args in (["render", "--check"], ["render"]):
        result = _fabricgen(*args, "sites/lab/fabric.yaml", "sites/openstack-k8s/fabric.yaml", cwd=clone,
                            umask=umask)
        assert result.returncode == 0, result.stderr
    # The execute bit is what git records, and it still counts.
    script = next((clone / "rendered" / "openstack-k8s").rglob("*.sh"))
    script.chmod(0o664)
    result = _fabricgen("render", "--check", "sites/openstack-k8s/fabric.yaml", cwd=clone, umask=umask)
    assert result.returncode == 3 and f"changed  {script.relative_to(clone / 'rendered')}" in result.stderr


def test_symlinks_and_special_files_in_the_output_are_reported_removed_and_never_followed(tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    assert render(out, LAB) == 3
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("keep me\n", encoding="utf-8")
    hq = out / "lab" / "hq"
    (hq / "link-to-file").symlink_to(outside / "secret")
    (hq / "link-to-dir").symlink_to(outside)
    (hq / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(hq / "pipe")
    backbone = (hq / "stage-0" / "backbone.yaml").read_bytes()
    (outside / "backbone.yaml").write_bytes(backbone)
    (hq / "stage-0" / "backbone.yaml").unlink()
    (hq / "stage-0" / "backbone.yaml").symlink_to(outside / "backbone.yaml")  # same bytes, but not a file of ours
    result = _fabricgen("render", "--check", "-o", str(out), LAB, cwd=REPO)
    assert result.returncode == 3, result.stderr
    for line in ("removed  lab/hq/link-to-file (symlink)", "removed  lab/hq/link-to-dir (symlink)",
                 "removed  lab/hq/dangling (symlink)", "removed  lab/hq/pipe (FIFO)",
                 "removed  lab/hq/stage-0/backbone.yaml (symlink)", "added    lab/hq/stage-0/backbone.yaml"):
        assert line in result.stderr.splitlines(), result.stderr
    assert "lab/hq/link-to-dir/secret" not in result.stderr
    result = _fabricgen("render", "-o", str(out), LAB, cwd=REPO)
    assert result.returncode == 3, result.stderr
    assert [p.name for p in hq.iterdir() if p.is_symlink() or not (p.is_file() or p.is_dir())] == []
    assert (hq / "stage-0" / "backbone.yaml").read_bytes() == backbone
    assert (outside / "secret").read_text(encoding="utf-8") == "keep me\n"
    assert (outside / "backbone.yaml").read_bytes() == backbone
    assert _fabricgen("render", "--check", "-o", str(out), LAB, cwd=REPO).returncode == 0
