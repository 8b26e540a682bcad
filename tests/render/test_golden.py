"""Golden tests: each tests/golden/<case>/fabric.yaml renders to exactly expected/.

`pytest --update-golden` rewrites expected/ from the current output; review the
git diff. A case may add `warnings.txt`: the exact warnings (text format) it yields.
"""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from fabricgen import report
from fabricgen.cli import main
from fabricgen.pipeline import load_text
from support.fabrics import REPO, SITES, build_file, rel, replace_tree, tree, write_tree

GOLDEN = REPO / "tests" / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "fabric.yaml").is_file())


def tree_diff(expected: Path, actual: Path) -> str:
    """Missing, extra and changed files, with a unified diff for each change."""
    want, got = tree(expected), tree(actual)
    out: list[str] = []
    for name in sorted(want.keys() - got.keys()):
        out.append(f"MISSING in output: {name}")
    for name in sorted(got.keys() - want.keys()):
        out.append(f"EXTRA in output: {name}")
    for name in sorted(want.keys() & got.keys()):
        (wb, wm), (gb, gm) = want[name], got[name]
        # The expected tree is a git checkout: git records only the execute bit, and the
        # other bits follow the umask of whoever cloned. fabricgen writes 0644 or 0755.
        if gm not in (0o644, 0o755) or bool(wm & 0o100) != bool(gm & 0o100):
            out.append(f"MODE of {name}: expected {0o755 if wm & 0o100 else 0o644:o}, got {gm:o}")
        if wb != gb:
            out.extend(difflib.unified_diff(
                wb.decode().splitlines(), gb.decode().splitlines(),
                f"expected/{name}", f"output/{name}", lineterm="",
            ))
    return "\n".join(out)


def test_cases_exist() -> None:
    assert {"lab", "minimal", "geneve-autoroute", "missing-transit", "tenant-peering", "nat-gateway"} <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str, tmp_path: Path, update_golden: bool) -> None:
    case_dir = GOLDEN / case
    out = write_tree(build_file(case_dir / "fabric.yaml"), tmp_path / "out")
    if update_golden:
        replace_tree(out, case_dir / "expected")
    problems = tree_diff(case_dir / "expected", out)
    assert not problems, f"rendered tree differs from {rel(case_dir)}/expected " \
                         f"(refresh with `pytest --update-golden`):\n{problems}"


@pytest.mark.parametrize("case", CASES)
def test_golden_warnings(case: str, update_golden: bool) -> None:
    case_dir = GOLDEN / case
    fabric_file = case_dir / "fabric.yaml"
    _fabric, _source, warnings = load_text(fabric_file.read_text(encoding="utf-8"), rel(fabric_file))
    text = report.format_diagnostics(warnings, "text")
    expected_file = case_dir / "warnings.txt"
    if update_golden:
        if text:
            expected_file.write_text(text, encoding="utf-8")
        elif expected_file.exists():
            expected_file.unlink()
    expected = expected_file.read_text(encoding="utf-8") if expected_file.exists() else ""
    assert text == expected


def test_missing_transit_gets_no_route() -> None:
    """The zone without transitAddress is routed to by nobody, but routes to the others."""
    build = build_file(GOLDEN / "missing-transit" / "fabric.yaml")
    routes = {z.name: {r.via_zone for r in z.routes} for z in build.plan.zones}
    assert routes == {"main": {"branch"}, "branch": {"main"}, "new": {"main", "branch"}}
    for zone in ("main", "branch"):
        text = build.files[PurePosixPath(f"partial/{zone}/stage-2/default-vpc-routes.yaml")].text
        assert "172.30.70.0/24" not in text


def test_autoroute_writes_no_explicit_routes() -> None:
    build = build_file(GOLDEN / "geneve-autoroute" / "fabric.yaml")
    assert all(not z.routes for z in build.plan.zones)
    for directory in ("east", "west", "north"):
        for obj in build.objects(directory):
            if obj["kind"] == "ConfigMap" and obj["metadata"]["name"] == "ovn-ic-config":
                assert obj["data"]["auto-route"] == "true"
                assert obj["data"]["ic-nb-port"] == "16645"


def test_update_golden_round_trip_is_stable(tmp_path: Path) -> None:
    """Rendering twice into the same root changes nothing the second time."""
    build = build_file(GOLDEN / "tenant-peering" / "fabric.yaml")
    write_tree(build, tmp_path)
    before = tree(tmp_path)
    write_tree(build, tmp_path)
    assert tree(tmp_path) == before


def test_committed_rendered_is_current(in_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`rendered/` in the repository is exactly what `fabricgen render sites/*/fabric.yaml` writes."""
    assert SITES, "no sites/*/fabric.yaml"
    code = main(["render", "--check", *(rel(p) for p in SITES)])
    err = capsys.readouterr().err
    assert code == 0, f"rendered/ is stale; run `fabricgen render sites/*/fabric.yaml`:\n{err}"


@pytest.mark.lab
def test_console_script_check_on_committed_rendered() -> None:
    """The installed `fabricgen` entry point, as CI and pre-commit run it, agrees."""
    script = Path(sys.executable).with_name("fabricgen")
    if not script.exists():
        pytest.skip(f"console script not installed beside {sys.executable}")
    result = subprocess.run([str(script), "render", "--check", *(rel(p) for p in SITES)],
                            cwd=REPO, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
