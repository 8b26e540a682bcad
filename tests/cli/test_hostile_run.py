"""tests/hostile_run.py itself: its quick run reports every family, its exit status is its
verdict, every failure is kept with its reproduction, and a fabricgen that breaks its promises
fails the families whose checks cover them.

The quick run takes about half a minute (it starts some hundred fabricgen processes); like the
OVN tests it runs in CI, and the cases that need the OVN programs or root skip, saying so.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support.fabrics import REPO

SCRIPT = REPO / "tests" / "hostile_run.py"
FAMILIES = ("fuzz", "targeted", "interruption", "ovn-scripts", "live-data")
COUNTS = re.compile(r"^(?P<family>[a-z-]+): held (?P<held>\d+), failed (?P<failed>\d+), skipped (?P<skipped>\d+)",
                    re.MULTILINE)
FAILURE = re.compile(r"^- (?P<case>\S+) \(reproduction: (?P<kept>.+)\)$", re.MULTILINE)
FABRICGEN = Path(sys.executable).parent / "fabricgen"

pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(not FABRICGEN.exists(), reason=f"no fabricgen installed beside {sys.executable}"),
]


def hostile(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, dict[str, int]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRICGEN_")}
    done = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--keep", str(tmp_path / "kept"), *args],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=600, check=False)
    counts = {m["family"]: {k: int(m[k]) for k in ("held", "failed", "skipped")} for m in COUNTS.finditer(done.stdout)}
    return done, counts


def kept_failures(stdout: str) -> dict[str, Path]:
    return {m["case"]: Path(m["kept"]) for m in FAILURE.finditer(stdout)}


def test_the_quick_run_reports_every_family_and_keeps_every_failure(tmp_path: Path) -> None:
    done, counts = hostile(tmp_path)
    assert set(counts) == set(FAMILIES), done.stdout + done.stderr
    assert all(sum(c.values()) > 0 for c in counts.values()), counts
    assert counts["fuzz"]["held"] + counts["fuzz"]["failed"] == 40
    failed = sum(c["failed"] for c in counts.values())
    assert done.returncode == (1 if failed else 0), done.stdout + done.stderr
    # CI's verdict on the hostile run itself: every case holds (the counts are in its output)
    assert failed == 0, done.stdout
    assert "the case itself raised" not in done.stdout, done.stdout  # the harness has no bug of its own
    kept = kept_failures(done.stdout)
    assert len(kept) == failed
    for case, path in kept.items():
        assert path.is_relative_to(tmp_path / "kept"), case
        assert (path / "FAILURE.txt").read_text().startswith(f"case {case}\n")
        assert (path / "commands.log").exists(), case
        if case.startswith("fuzz/"):
            assert (path / "site" / "fabric.yaml").exists() and (path / "MUTATION.txt").exists()


BROKEN = """\
#!{python}
# A fabricgen that breaks two promises: a refused render leaves a file in the output directory,
# and the Argo CD plugin dies with a traceback (exit 4). Everything else is the real one.
import os, subprocess, sys

args = sys.argv[1:]
if args[:1] == ["argocd-generate"]:
    sys.stderr.write("Traceback (most recent call last):\\n  File \\"x\\", line 1\\nValueError: broken\\n")
    sys.exit(4)
done = subprocess.run([{real!r}, *args])
if args[:1] == ["render"] and done.returncode == 1 and "-o" in args:
    out = args[args.index("-o") + 1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "stray"), "w") as stray:
        stray.write("written although the fabric was refused\\n")
sys.exit(done.returncode)
"""


def test_a_fabricgen_that_breaks_its_promises_fails_the_run(tmp_path: Path) -> None:
    broken = tmp_path / "bin" / "fabricgen"
    broken.parent.mkdir()
    broken.write_text(BROKEN.format(python=sys.executable, real=str(FABRICGEN)))
    broken.chmod(0o755)
    done, counts = hostile(tmp_path, "--families", "fuzz,targeted", "--fabricgen", str(broken))
    assert done.returncode == 1, done.stdout + done.stderr
    assert counts["fuzz"]["failed"] > 0 and counts["targeted"]["failed"] > 0, counts
    assert "render refused the fabric but changed the output directory: added stray" in done.stdout
    assert "fabricgen argocd-generate: exit 4 (internal error)" in done.stdout
    assert "fabricgen argocd-generate: a Python traceback on stderr" in done.stdout
    kept = kept_failures(done.stdout)
    stray = [path for case, path in kept.items() if case.startswith("fuzz/") and (path / "out" / "stray").exists()]
    assert stray, "no kept fuzz failure holds the stray file it reproduces"
