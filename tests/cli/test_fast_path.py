"""The fast path: answers from fabricgen's private cache, never from a file of the repository.

Every run here is a real `fabricgen` process, so that which libraries it imported is a fact
about the run: the fast path must not import pydantic, ruamel.yaml or jinja2; every fallback
runs the full pipeline, which then behaves exactly as it does without a cache. Each test has
a cache directory of its own (conftest's `cache_dir`).
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

from fabricgen import fast_path
from fabricgen.delivery import argocd_plugin
from fabricgen.output import private_cache
from fabricgen.serialise import render_record
from fabricgen.source import reader as source
from support.fabrics import REPO

pytestmark = pytest.mark.lab  # starts real programs: git, python

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
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("ARGOCD_", "PARAM_")) and k not in ("FABRICGEN_FAST_PATH", "FABRICGEN_DEBUG")}
    done = subprocess.run([sys.executable, "-c", RUNNER, *args], cwd=cwd, env={**base, **env},
                          capture_output=True, check=False)
    return Run(done)


LAB = "sites/lab/fabric.yaml"
HQ_FILE = "rendered/lab/hq/stage-0/configuration.yaml"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fabric repository: the samples and their committed output (`.git` marks the root),
    rendered once here so that the cache holds this directory's render records."""
    root = tmp_path / "repo"
    for part in ("sites", "rendered"):
        shutil.copytree(REPO / part, root / part)
    (root / ".git").mkdir()
    first = fabricgen(root, "render", *(f"sites/{s}/fabric.yaml" for s in SAMPLES))
    assert first.code == 0 and not first.fast, first.stderr
    return root


def check(root: Path, *args: str, **env: str) -> Run:
    return fabricgen(root, "render", "--check", LAB, *args, **env)


def full_check(root: Path) -> Run:
    return check(root, FABRICGEN_FAST_PATH="0")


def record_path(cache: Path, site_dir: Path) -> Path:
    return cache / private_cache.RENDER / private_cache.key(os.path.realpath(site_dir))


def record_doc(cache: Path, site_dir: Path) -> dict[str, object]:
    return dict(json.loads(record_path(cache, site_dir).read_text()))


# --- the fast path is taken, and says what the full path says ---------------------------

def test_check_of_current_output_takes_the_fast_path(repo: Path) -> None:
    fast, full = check(repo), full_check(repo)
    assert fast.fast and not full.fast
    assert set(full.imported) == set(HEAVY)
    assert (fast.code, fast.stdout, fast.stderr) == (full.code, full.stdout, full.stderr) == (
        0, b"", "fabricgen: rendered is up to date\n")


def test_a_fresh_clone_has_no_record_and_runs_the_full_pipeline(tmp_path: Path) -> None:
    """What CI runs: no render of this directory before, so nothing can answer but a full render."""
    root = tmp_path / "clone"
    for part in ("sites", "rendered"):
        shutil.copytree(REPO / part, root / part)
    result = check(root)
    assert not result.fast and result.code == 0


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
    (repo / "rendered" / "old" / "x.yaml").write_text("# Generated by fabricgen from sites/old/fabric.yaml\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    retired = fabricgen(repo, "render", "--all", "--check")
    assert not retired.fast and retired.code == 3 and "removed  old/x.yaml" in retired.stderr


# --- a committed file is never evidence: what the old stamp let through -----------------

def forge_stamp(root: Path, site: str = "lab") -> None:
    """What a pull request could commit: `rendered/<site>/.fabricgen.json` listing every file of
    the site, edited ones included, with their true digests (the format older versions read)."""
    site_dir = root / "rendered" / site
    files = {p.relative_to(site_dir).as_posix(): {"sha256": render_record.sha256(p.read_bytes()),
                                                  "executable": bool(p.stat().st_mode & stat.S_IXUSR)}
             for p in sorted(site_dir.rglob("*")) if p.is_file()}
    doc = {"format": 1, "site": site, "files": files, "code": render_record.code_digest(), "warnings": 0,
           "kubernetes": {"hq": {"manifests": ["../../../../x/secret.yaml"], "objects": 1}}}
    (site_dir / ".fabricgen.json").write_text(json.dumps(doc, indent=1) + "\n")


def test_an_edited_route_with_a_recomputed_stamp_is_out_of_date(tmp_path: Path) -> None:
    root = tmp_path / "clone"
    for part in ("sites", "rendered"):
        shutil.copytree(REPO / part, root / part)
    routes = root / "rendered/lab/hq/stage-2/default-vpc-routes.yaml"
    original = routes.read_bytes()
    routes.write_bytes(original.replace(b'nextHopIP: "169.254.100.23"', b'nextHopIP: "169.254.100.99"'))
    assert routes.read_bytes() != original
    forge_stamp(root)
    result = check(root)
    assert not result.fast and result.code == 3
    assert {"changed  lab/hq/stage-2/default-vpc-routes.yaml", "removed  lab/.fabricgen.json"} <= set(
        result.stderr.splitlines())
    written = fabricgen(root, "render", LAB)
    assert written.code == 3 and routes.read_bytes() == original
    assert not (root / "rendered/lab/.fabricgen.json").exists()


def test_an_edited_file_after_render_is_caught_even_by_the_fast_path(repo: Path) -> None:
    path = repo / HQ_FILE
    path.write_text(path.read_text() + "# tuned by hand\n")
    assert_falls_back(repo, 3, "changed  lab/hq/stage-0/configuration.yaml")


# --- every doubt falls back to the full pipeline -----------------------------------------

def assert_falls_back(root: Path, code: int, *lines: str) -> None:
    fast, full = check(root), full_check(root)
    assert not fast.fast, "took the fast path"
    assert (fast.code, fast.stdout, fast.stderr) == (full.code, full.stdout, full.stderr)
    assert fast.code == code, fast.stderr
    for line in lines:
        assert line in fast.stderr.splitlines()


def test_no_record(repo: Path, cache_dir: Path) -> None:
    record_path(cache_dir, repo / "rendered" / "lab").unlink()
    assert_falls_back(repo, 0)


@pytest.mark.parametrize("damage", ["not json", "reformatted", "another format", "other code", "other path"])
def test_unreadable_or_foreign_record(repo: Path, cache_dir: Path, damage: str) -> None:
    path = record_path(cache_dir, repo / "rendered" / "lab")
    doc = record_doc(cache_dir, repo / "rendered" / "lab")
    if damage == "not json":
        path.write_text("{")
    elif damage == "reformatted":
        path.write_text(json.dumps(doc))
    elif damage == "another format":
        path.write_text(render_record.dump({**doc, "format": render_record.FORMAT + 1}))
    elif damage == "other code":
        path.write_text(render_record.dump({**doc, "code": "0" * 64}))
    else:  # another directory's record copied under this one's name
        path.write_text(render_record.dump({**doc, "path": "/elsewhere/rendered/lab"}))
    assert_falls_back(repo, 0)


@pytest.mark.parametrize("exposure", ["group-writable cache", "world-writable entry", "symlinked entry"])
def test_a_cache_others_can_write_is_not_trusted(repo: Path, cache_dir: Path, exposure: str) -> None:
    path = record_path(cache_dir, repo / "rendered" / "lab")
    if exposure == "group-writable cache":
        cache_dir.chmod(0o770)
    elif exposure == "world-writable entry":
        path.chmod(0o666)
    else:
        moved = cache_dir / "elsewhere.json"
        path.rename(moved)
        path.symlink_to(moved)
    assert_falls_back(repo, 0)


def test_render_records_only_into_a_private_cache(tmp_path: Path) -> None:
    cache = tmp_path / "shared-cache"
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)
    root = tmp_path / "clone"
    shutil.copytree(REPO / "sites", root / "sites")
    assert fabricgen(root, "render", "-q", LAB, FABRICGEN_CACHE_DIR=str(cache)).code == 3
    assert not (cache / private_cache.RENDER).exists()
    assert not check(root, FABRICGEN_CACHE_DIR=str(cache)).fast


def test_changed_fabric(repo: Path) -> None:
    fabric = repo / LAB
    fabric.write_text(fabric.read_text() + "# a comment changes no output but the fabric's digest\n")
    assert_falls_back(repo, 0)


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


def test_fabric_with_warnings_never_takes_the_fast_path(repo: Path, cache_dir: Path) -> None:
    """Choice: a fabric with warnings always runs the full path, which prints them."""
    assert record_doc(cache_dir, repo / "rendered" / "openstack-k8s")["warnings"] == 1
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


def test_a_source_name_written_escaped(repo: Path, cache_dir: Path) -> None:
    """Headers write the fabric's name escaped (a tab as `\\t`); the record holds it as they do."""
    fabric = repo / "we\tird" / "fabric.yaml"
    fabric.parent.mkdir()
    shutil.copy(REPO / "tests" / "golden" / "minimal" / "fabric.yaml", fabric)
    assert fabricgen(repo, "render", "-q", str(fabric.relative_to(repo))).code == 3
    doc = record_doc(cache_dir, repo / "rendered" / "solo")
    assert doc["fabric"]["source"] == "we\\tird/fabric.yaml"  # type: ignore[index]
    fast = fabricgen(repo, "render", "--check", str(fabric.relative_to(repo)))
    assert fast.fast and fast.code == 0


def test_switched_off(repo: Path) -> None:
    assert not check(repo, FABRICGEN_FAST_PATH="0").fast


def test_record_lists_exactly_what_render_wrote(repo: Path, cache_dir: Path) -> None:
    for site in SAMPLES:
        site_dir = repo / "rendered" / site
        doc = record_doc(cache_dir, site_dir)
        on_disk = {p.relative_to(site_dir).as_posix(): p for p in site_dir.rglob("*") if p.is_file()}
        assert set(doc["files"]) == set(on_disk)  # type: ignore[arg-type]
        for rel, entry in doc["files"].items():  # type: ignore[attr-defined]
            assert entry == {"sha256": render_record.sha256(on_disk[rel].read_bytes()),
                             "executable": bool(on_disk[rel].stat().st_mode & stat.S_IXUSR)}
        assert doc["code"] == render_record.code_digest() and doc["path"] == os.path.realpath(site_dir)
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in (cache_dir / "render").iterdir())


# --- the Argo CD plugin ------------------------------------------------------------------

def plugin(root: Path, zone: str | None, site: str, **env: str) -> Run:
    settings = {"ARGOCD_ENV_ZONE": zone} if zone else {}
    return fabricgen(root / "sites" / site, "argocd-generate", ARGOCD_APP_SOURCE_PATH=f"sites/{site}",
                     **settings, **env)


def kubernetes_dirs() -> list[tuple[str, str]]:
    out = []
    for site in SAMPLES:
        names = sorted(p.parent.name for p in (REPO / "rendered" / site).glob("*/kustomization.yaml"))
        out += [(site, directory) for directory in names]
    return out


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """As argocd-cmp-server unpacks it: no `.git`, every file 0644 (preserveFileMode: false)."""
    root = tmp_path / "checkout"
    for part in ("sites", "rendered"):
        shutil.copytree(REPO / part, root / part)
    for path in root.rglob("*"):
        if path.is_file():
            path.chmod(0o644)
    return root


@pytest.mark.parametrize(("site", "zone"), kubernetes_dirs())
def test_plugin_answers_a_second_time_from_its_own_cache(checkout: Path, site: str, zone: str) -> None:
    first, second = plugin(checkout, zone, site), plugin(checkout, zone, site)
    full = plugin(checkout, zone, site, FABRICGEN_FAST_PATH="0")
    assert full.code == 0 and not full.fast and not first.fast
    assert (first.code, first.stdout, first.stderr) == (second.code, second.stdout, second.stderr) == (
        full.code, full.stdout, full.stderr)
    assert second.fast == ("warning:" not in full.stderr)


def test_plugin_never_prints_a_committed_file(checkout: Path) -> None:
    """A committed file edited, with a stamp that lists it (or lists nothing, or a file outside
    the repository): the plugin prints what the fabric renders to, every time."""
    expected = plugin(checkout, "hq", "lab", FABRICGEN_FAST_PATH="0").stdout
    edited = checkout / HQ_FILE
    edited.write_text(edited.read_text().replace("enableIC: true", "enableIC: false"))
    forge_stamp(checkout)
    for _ in range(2):  # rendered, then from the plugin's own cache
        result = plugin(checkout, "hq", "lab")
        assert result.code == 0 and result.stdout == expected and b"enableIC: true" in result.stdout


def test_plugin_cache_follows_the_fabric(checkout: Path) -> None:
    assert plugin(checkout, "hq", "lab").code == 0
    fabric = checkout / LAB
    fabric.write_text(fabric.read_text().replace("172.30.10.", "172.30.11."))
    result = plugin(checkout, "hq", "lab")
    assert not result.fast and result.code == 0 and b"172.30.11.0/24" in result.stdout


def test_plugin_ignores_a_cache_entry_others_could_write(checkout: Path, cache_dir: Path) -> None:
    assert plugin(checkout, "hq", "lab").code == 0
    (entry,) = (cache_dir / private_cache.ARGOCD).iterdir()
    entry.write_bytes(argocd_plugin.cache_entry("kind: Secret\n", "forged\n"))
    entry.chmod(0o666)
    result = plugin(checkout, "hq", "lab")
    assert not result.fast and b"kind: Secret" not in result.stdout


@pytest.mark.parametrize(("zone", "message"), [(None, "no zone chosen"), ("hqq", "did you mean 'hq'?")])
def test_plugin_zone_errors_come_from_the_full_path(checkout: Path, zone: str | None, message: str) -> None:
    for _ in range(2):
        result = plugin(checkout, zone, "lab")
        assert not result.fast and result.code == 2 and result.stdout == b"" and message in result.stderr


def test_plugin_with_another_source_name_is_another_entry(checkout: Path) -> None:
    assert plugin(checkout, "hq", "lab").code == 0
    shutil.copytree(checkout / "sites" / "lab", checkout / "sites" / "lab2")
    result = plugin(checkout, "hq", "lab2")
    assert not result.fast and result.code == 0 and b"sites/lab2/fabric.yaml" in result.stdout


# --- the record itself -------------------------------------------------------------------

def test_code_digest_follows_every_code_file(tmp_path: Path) -> None:
    package = tmp_path / "fabricgen"
    shutil.copytree(Path(render_record.__file__).parent.parent, package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = render_record.code_digest(package)
    assert before == render_record.code_digest()
    template = next(package.glob("render/templates/*.j2"))
    template.write_text(template.read_text() + " ")
    assert render_record.code_digest(package) != before
    template.write_text(template.read_text()[:-1])
    assert render_record.code_digest(package) == before
    (package / "render" / "extra.py").write_text("")
    assert render_record.code_digest(package) != before


def test_fast_path_reads_fabrics_as_the_loader_does() -> None:
    assert fast_path.MAX_FABRIC_BYTES == source.MAX_BYTES


def test_a_cache_below_a_world_writable_directory_is_made_private(checkout: Path, tmp_path: Path) -> None:
    """As the repo-server patch sets it up: FABRICGEN_CACHE_DIR below an emptyDir, which Kubernetes
    creates 0777; the plugin makes its own directory 0700 there and answers from it."""
    volume = tmp_path / "emptydir"
    volume.mkdir()
    volume.chmod(0o777)
    env = {"FABRICGEN_CACHE_DIR": str(volume / "plugin")}
    first, second = plugin(checkout, "hq", "lab", **env), plugin(checkout, "hq", "lab", **env)
    assert first.code == second.code == 0 and not first.fast and second.fast
    assert first.stdout == second.stdout
    assert stat.S_IMODE((volume / "plugin").stat().st_mode) == 0o700
