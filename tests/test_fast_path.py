"""The stamp (`rendered/<site>/.fabricgen.json`) and the fast path that trusts it only when verified.

Every run here is a real `fabricgen` process, so that which libraries it imported is a fact
about the run: the fast path must not import pydantic, ruamel.yaml or jinja2; every fallback
runs the full pipeline, which then behaves exactly as it does without a stamp.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from fabricgen import fast_path
from fabricgen.serialise import stamp
from fabricgen.source import reader as source

HEAVY = ("pydantic", "ruamel", "jinja2")
SAMPLES = sorted(p.parent.name for p in (REPO / "sites").glob("*/fabric.yaml"))
# Runs the CLI and reports on stderr's last line which heavy libraries the process imported.
RUNNER = (
    "import sys\n"
    "from fabricgen.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))\n"
    "sys.stderr.write('\\nIMPORTED ' + ','.join(heavy) + '\\n')\n"
    "sys.exit(code)\n"
)


class Run:
    def __init__(self, done: subprocess.CompletedProcess[bytes]) -> None:
        self.code = done.returncode
        self.stdout = done.stdout
        raw = done.stderr.decode()
        at = raw.rfind("\nIMPORTED ")
        assert at >= 0, raw
        self.stderr, last = raw[:at], raw[at + 1:].rstrip("\n")
        self.imported = [m for m in last.removeprefix("IMPORTED ").split(",") if m]

    @property
    def fast(self) -> bool:
        return not self.imported


def fabricgen(cwd: Path, *args: str, **env: str) -> Run:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "PARAM_", "FABRICGEN_"))}
    done = subprocess.run([sys.executable, "-c", RUNNER, *args], cwd=cwd, env={**base, **env},
                          capture_output=True, check=False)
    return Run(done)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fabric repository: the samples and their committed output (`.git` marks the root)."""
    root = tmp_path / "repo"
    for part in ("sites", "rendered"):
        shutil.copytree(REPO / part, root / part)
    (root / ".git").mkdir()
    return root


LAB = "sites/lab/fabric.yaml"
HQ_FILE = "rendered/lab/hq/stage-0/configuration.yaml"


def check(root: Path, *args: str, **env: str) -> Run:
    return fabricgen(root, "render", "--check", LAB, *args, **env)


def full_check(root: Path) -> Run:
    return check(root, FABRICGEN_FAST_PATH="0")


# --- the fast path is taken, and says what the full path says ---------------------------

def test_check_of_current_output_takes_the_fast_path(repo: Path) -> None:
    fast, full = check(repo), full_check(repo)
    assert fast.fast and not full.fast
    assert set(full.imported) == set(HEAVY)
    assert (fast.code, fast.stdout, fast.stderr) == (full.code, full.stdout, full.stderr) == (
        0, b"", "fabricgen: rendered is up to date\n")


@pytest.mark.parametrize("args", [("-q",), ("--format", "json"), ("--format", "github")])
def test_check_options_print_what_the_full_path_prints(repo: Path, args: tuple[str, ...]) -> None:
    fast, full = check(repo, *args), check(repo, *args, FABRICGEN_FAST_PATH="0")
    assert fast.fast
    assert (fast.code, fast.stdout, fast.stderr) == (full.code, full.stdout, full.stderr)


def test_render_of_current_output_writes_nothing(repo: Path) -> None:
    before = {p: p.stat().st_mtime_ns for p in (repo / "rendered").rglob("*")}
    result = fabricgen(repo, "render", LAB)
    assert result.fast and result.code == 0
    assert {p: p.stat().st_mtime_ns for p in (repo / "rendered").rglob("*")} == before


def test_render_all_in_a_git_repository(repo: Path) -> None:
    shutil.rmtree(repo / ".git")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    for site in ("openstack-k8s", "cloudstack", "nat"):  # keep the lab: no warnings
        shutil.rmtree(repo / "sites" / site)
        shutil.rmtree(repo / "rendered" / site)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    assert fabricgen(repo, "render", "--all", "--check").fast
    # A retired site's tracked output is for the full path to remove.
    (repo / "rendered" / "old").mkdir()
    (repo / "rendered" / "old" / "x.yaml").write_text("a: 1\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    retired = fabricgen(repo, "render", "--all", "--check")
    assert not retired.fast and retired.code == 3 and "removed  old/x.yaml" in retired.stderr


# --- every doubt falls back to the full pipeline -----------------------------------------

def stamp_doc(root: Path, site: str = "lab") -> dict[str, object]:
    return dict(json.loads((root / "rendered" / site / stamp.NAME).read_text()))


def write_stamp(root: Path, doc: dict[str, object], site: str = "lab") -> None:
    (root / "rendered" / site / stamp.NAME).write_text(stamp.dump(doc))


def assert_falls_back(root: Path, code: int, *lines: str) -> None:
    fast, full = check(root), full_check(root)
    assert not fast.fast, "took the fast path"
    assert (fast.code, fast.stdout, fast.stderr) == (full.code, full.stdout, full.stderr)
    assert fast.code == code, fast.stderr
    for line in lines:
        assert line in fast.stderr.splitlines()


def test_a_file_edited_by_hand_is_still_reported(repo: Path) -> None:
    path = repo / HQ_FILE
    path.write_text(path.read_text() + "# tuned by hand\n")
    assert_falls_back(repo, 3, "changed  lab/hq/stage-0/configuration.yaml")


def test_no_stamp(repo: Path) -> None:
    (repo / "rendered" / "lab" / stamp.NAME).unlink()
    assert_falls_back(repo, 3, "added    lab/.fabricgen.json")


@pytest.mark.parametrize("damage", ["not json", "reformatted", "another format"])
def test_unreadable_or_foreign_stamp(repo: Path, damage: str) -> None:
    path = repo / "rendered" / "lab" / stamp.NAME
    if damage == "not json":
        path.write_text("{")
    elif damage == "reformatted":
        path.write_text(json.dumps(json.loads(path.read_text())))
    else:
        write_stamp(repo, {**stamp_doc(repo), "format": stamp.FORMAT + 1})
    assert_falls_back(repo, 3, "changed  lab/.fabricgen.json")


def test_other_code(repo: Path) -> None:
    write_stamp(repo, {**stamp_doc(repo), "code": "0" * 64})
    assert_falls_back(repo, 3, "changed  lab/.fabricgen.json")


def test_changed_fabric(repo: Path) -> None:
    fabric = repo / LAB
    fabric.write_text(fabric.read_text() + "# a comment changes no output but the fabric's digest\n")
    assert_falls_back(repo, 3, "changed  lab/.fabricgen.json")


def test_edited_file_with_an_edited_stamp_entry_is_caught_by_the_stamps_own_check(repo: Path) -> None:
    path = repo / HQ_FILE
    path.write_text(path.read_text() + "# tuned by hand\n")
    doc = stamp_doc(repo)
    files = dict(doc["files"])  # type: ignore[call-overload]
    files["hq/stage-0/configuration.yaml"] = {"sha256": stamp.sha256(path.read_bytes()), "executable": False}
    write_stamp(repo, {**doc, "files": files})
    # The fast path trusts a consistent stamp; running the full path shows both files changed.
    assert check(repo).fast
    full = full_check(repo)
    assert full.code == 3
    assert {"changed  lab/.fabricgen.json", "changed  lab/hq/stage-0/configuration.yaml"} <= set(
        full.stderr.splitlines())


def test_extra_file(repo: Path) -> None:
    (repo / "rendered" / "lab" / "hq" / "notes.txt").write_text("x\n")
    assert_falls_back(repo, 3, "removed  lab/hq/notes.txt")


def test_missing_file(repo: Path) -> None:
    (repo / HQ_FILE).unlink()
    assert_falls_back(repo, 3, "added    lab/hq/stage-0/configuration.yaml")


def test_symlink_with_the_same_content(repo: Path) -> None:
    path = repo / HQ_FILE
    copy = repo / "configuration.yaml"
    shutil.copy(path, copy)
    path.unlink()
    path.symlink_to(copy)
    assert_falls_back(repo, 3, "removed  lab/hq/stage-0/configuration.yaml (symlink)")


def test_lost_executable_bit(repo: Path) -> None:
    script = repo / "rendered" / "lab" / "hq" / "ic-db" / "configure-ic-db.sh"
    assert script.stat().st_mode & stat.S_IXUSR
    script.chmod(0o644)
    assert_falls_back(repo, 3, "changed  lab/hq/ic-db/configure-ic-db.sh")


def test_leftover_staging_directory(repo: Path) -> None:
    (repo / "rendered" / ".fabricgen-staging-lab-x").mkdir()
    result = fabricgen(repo, "render", LAB)
    assert not result.fast and result.code == 0
    assert not (repo / "rendered" / ".fabricgen-staging-lab-x").exists()


def test_fabric_with_warnings_never_takes_the_fast_path(repo: Path) -> None:
    """Choice: a fabric with warnings always runs the full path, which prints them."""
    assert stamp_doc(repo, "openstack-k8s")["warnings"] == 1
    fast = fabricgen(repo, "render", "--check", "sites/openstack-k8s/fabric.yaml")
    assert not fast.fast and fast.code == 0 and "[FG710]" in fast.stderr


def test_one_fabric_not_current_runs_all_through_the_full_path(repo: Path) -> None:
    path = repo / HQ_FILE
    path.write_text(path.read_text() + "#\n")
    result = fabricgen(repo, "render", "--check", "sites/nat/fabric.yaml", LAB)
    assert not result.fast and result.code == 3


def test_same_fabric_twice_is_reported(repo: Path) -> None:
    result = fabricgen(repo, "render", "--check", LAB, LAB)
    assert not result.fast and result.code == 1 and "[FG004]" in result.stderr


def test_a_source_name_written_escaped(repo: Path) -> None:
    """Headers write the fabric's name escaped (a tab as `\\t`); the stamp holds it as they do."""
    fabric = repo / "we\tird" / "fabric.yaml"
    fabric.parent.mkdir()
    shutil.copy(REPO / "tests" / "golden" / "minimal" / "fabric.yaml", fabric)
    assert fabricgen(repo, "render", "-q", str(fabric.relative_to(repo))).code == 3
    assert stamp_doc(repo, "solo")["fabric"]["source"] == "we\\tird/fabric.yaml"  # type: ignore[index]
    fast = fabricgen(repo, "render", "--check", str(fabric.relative_to(repo)))
    assert fast.fast and fast.code == 0


def test_switched_off(repo: Path) -> None:
    assert not check(repo, FABRICGEN_FAST_PATH="0").fast


# --- the Argo CD plugin ------------------------------------------------------------------

def plugin(root: Path, zone: str | None, site: str, **env: str) -> Run:
    settings = {"ARGOCD_ENV_ZONE": zone} if zone else {}
    return fabricgen(root / "sites" / site, "argocd-generate", ARGOCD_APP_SOURCE_PATH=f"sites/{site}",
                     **settings, **env)


def kubernetes_dirs() -> list[tuple[str, str]]:
    out = []
    for site in SAMPLES:
        doc = json.loads((REPO / "rendered" / site / stamp.NAME).read_text())
        out += [(site, directory) for directory in doc["kubernetes"]]
    return out


@pytest.fixture
def checkout(repo: Path) -> Path:
    """As argocd-cmp-server unpacks it: no `.git`, every file 0644 (preserveFileMode: false)."""
    shutil.rmtree(repo / ".git")
    for path in repo.rglob("*"):
        if path.is_file():
            path.chmod(0o644)
    return repo


@pytest.mark.parametrize(("site", "zone"), kubernetes_dirs())
def test_plugin_prints_the_same_bytes_on_both_paths(checkout: Path, site: str, zone: str) -> None:
    fast, full = plugin(checkout, zone, site), plugin(checkout, zone, site, FABRICGEN_FAST_PATH="0")
    assert full.code == 0 and not full.fast
    assert (fast.code, fast.stdout, fast.stderr) == (full.code, full.stdout, full.stderr)
    assert fast.fast == (json.loads((REPO / "rendered" / site / stamp.NAME).read_text())["warnings"] == 0)


def test_plugin_with_a_file_edited_by_hand_renders_from_the_fabric(checkout: Path) -> None:
    edited = checkout / HQ_FILE
    original = edited.read_text()
    edited.write_text(original.replace("enableIC: true", "enableIC: false"))
    result = plugin(checkout, "hq", "lab")
    assert not result.fast and result.code == 0
    edited.write_text(original)
    assert result.stdout == plugin(checkout, "hq", "lab").stdout
    assert b"enableIC: true" in result.stdout


def test_plugin_reads_only_the_files_it_prints(checkout: Path) -> None:
    """Another zone's file edited, or the site's stamp-listed files incomplete elsewhere, does not
    reach zone hq's output: the fast path still answers, with the full path's bytes."""
    full = plugin(checkout, "hq", "lab", FABRICGEN_FAST_PATH="0")
    (checkout / "rendered/lab/edge/stage-0/configuration.yaml").write_text("edited\n")
    (checkout / "rendered/lab/ai/stage-1/ovn-ic-config.yaml").unlink()
    result = plugin(checkout, "hq", "lab")
    assert result.fast and (result.code, result.stdout, result.stderr) == (full.code, full.stdout, full.stderr)
    assert not plugin(checkout, "edge", "lab").fast


def test_plugin_never_prints_a_symlink_with_the_stamped_content(checkout: Path, tmp_path: Path) -> None:
    printed = checkout / HQ_FILE
    elsewhere = tmp_path / "configuration.yaml"
    elsewhere.write_bytes(printed.read_bytes())
    printed.unlink()
    printed.symlink_to(elsewhere)
    result = plugin(checkout, "hq", "lab")
    assert not result.fast and result.code == 0


@pytest.mark.parametrize(("zone", "message"), [(None, "no zone chosen"), ("hqq", "did you mean 'hq'?")])
def test_plugin_zone_errors_come_from_the_full_path(checkout: Path, zone: str | None, message: str) -> None:
    result = plugin(checkout, zone, "lab")
    assert not result.fast and result.code == 2 and result.stdout == b"" and message in result.stderr


def test_plugin_with_another_source_name_falls_back(checkout: Path) -> None:
    """The stamp's source name is the one in every header; a fabric found under another name is not it."""
    shutil.copytree(checkout / "sites" / "lab", checkout / "sites" / "lab2")
    result = plugin(checkout, "hq", "lab2")
    assert not result.fast and result.code == 0 and b"sites/lab2/fabric.yaml" in result.stdout


# --- the stamp itself --------------------------------------------------------------------

@pytest.mark.parametrize("site", SAMPLES)
def test_stamp_lists_exactly_the_committed_site(site: str) -> None:
    site_dir = REPO / "rendered" / site
    doc = json.loads((site_dir / stamp.NAME).read_text())
    on_disk = {p.relative_to(site_dir).as_posix(): p for p in site_dir.rglob("*") if p.is_file()}
    assert set(doc["files"]) | {stamp.NAME} == set(on_disk)
    for rel, entry in doc["files"].items():
        assert entry == {"sha256": stamp.sha256(on_disk[rel].read_bytes()),
                         "executable": bool(on_disk[rel].stat().st_mode & stat.S_IXUSR)}
    assert doc["code"] == stamp.code_digest()
    for directory, entry in doc["kubernetes"].items():
        listed = [line[2:] for line in (site_dir / directory / "kustomization.yaml").read_text().splitlines()
                  if line.startswith("- ")]
        expected = [f"{stage}/{line[2:]}" for stage in listed
                    for line in (site_dir / directory / stage / "kustomization.yaml").read_text().splitlines()
                    if line.startswith("- ")]
        assert entry["manifests"] == expected  # apply order, as kustomize reads it


def test_code_digest_follows_every_code_file(tmp_path: Path) -> None:
    package = tmp_path / "fabricgen"
    shutil.copytree(Path(stamp.__file__).parent.parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    before = stamp.code_digest(package)
    assert before == stamp.code_digest()
    template = next(package.glob("render/templates/*.j2"))
    template.write_text(template.read_text() + " ")
    assert stamp.code_digest(package) != before
    template.write_text(template.read_text()[:-1])
    assert stamp.code_digest(package) == before
    (package / "render" / "extra.py").write_text("")
    assert stamp.code_digest(package) != before


def test_fast_path_reads_fabrics_as_the_loader_does() -> None:
    assert fast_path.MAX_FABRIC_BYTES == source.MAX_BYTES
