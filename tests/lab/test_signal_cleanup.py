"""SIGTERM (a cancelled CI job) and SIGHUP (a closed terminal) leave no temporary file or directory,
as SIGINT never did: `import`'s `.fabric.yaml.XXXX.tmp`, `transit --write`'s `.fabric.yaml.XXXX`,
`status --capture`'s `.capture.XXXX/`.

The moment is made real with strace's fault injection: the system call that runs while the
temporary exists (`fsync` of the new file, `rename` of the capture directory) is held for
seconds (`-e inject=SYSCALL:delay_enter=...`), the signal is sent to fabricgen's own process in
that window, and the exit status is the signal's (128 + its number), the one a shell reports.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from support.fabrics import REPO

DATA = REPO / "tests" / "data" / "import" / "lab"
LAB = REPO / "sites" / "lab" / "fabric.yaml"
HOLD_US = 5_000_000  # how long the system call is held: far more than sending a signal takes

pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(shutil.which("strace") is None, reason="strace not installed (scripts/setup.sh --test)"),
]


def _default_signals() -> None:
    """The child starts with SIGTERM and SIGHUP at their defaults, as a CI runner's job and a
    terminal's shell start it, whatever this test process inherited (`nohup pytest` ignores SIGHUP,
    which fabricgen rightly keeps ignored)."""
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)


def tracee(strace: subprocess.Popen[bytes]) -> int | None:
    """The process strace started: fabricgen."""
    try:
        children = Path(f"/proc/{strace.pid}/task/{strace.pid}/children").read_text().split()
    except OSError:
        return None
    return int(children[0]) if children else None


def signalled_while(args: list[str], syscall: str, cwd: Path, temporary: Callable[[], list[Path]],
                    sig: signal.Signals, *, when: str = "enter") -> tuple[int, str]:
    """Run fabricgen with `syscall` held (on entering it, or on leaving it: `when="exit"`, the
    moment right after it made the temporary); once `temporary()` lists something, send `sig`."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "generator"), "PYTHONDONTWRITEBYTECODE": "1"}
    strace = subprocess.Popen(["strace", "-qq", "-o", os.devnull, "-e", f"trace={syscall}",
                               "-e", f"inject={syscall}:delay_{when}={HOLD_US}",
                               sys.executable, "-m", "fabricgen", *args],
                              cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, preexec_fn=_default_signals)
    try:
        deadline = time.monotonic() + 120
        while not temporary():
            if strace.poll() is not None or time.monotonic() > deadline:
                _out, err = strace.communicate()
                raise AssertionError(f"no temporary appeared (exit {strace.returncode}): {err.decode()}")
            time.sleep(0.02)
        pid = tracee(strace)
        assert pid is not None
        os.kill(pid, sig)
        _out, err = strace.communicate(timeout=120)
    finally:
        if strace.poll() is None:
            strace.kill()
            strace.communicate()
    return strace.returncode, err.decode()


SIGNALS = [signal.SIGTERM, signal.SIGHUP]


def whole_or_none(capture: Path) -> None:
    """No temporary directory is left, and the capture is not there, or there whole: a signal
    that lands while the held `rename` runs is taken once the capture has its name."""
    from fabricgen.observe import capture as captures

    assert not list(capture.parent.glob(f".{capture.name}.*"))
    if capture.exists():
        observations, header = captures.read(capture, site="lab")
        assert observations and header["site"] == "lab"


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_import(tmp_path: Path, sig: signal.Signals) -> None:
    site = tmp_path / "sites" / "lab"
    args = ["import", str(site / "fabric.yaml"), "--show", str(DATA / "icsb-show.txt")]
    for name, file in (("hq", "hq.yaml"), ("ai", "ai.json"), ("edge", "edge.yaml"), ("dr", "dr.json")):
        args += ["--cluster", f"{name}={DATA / file}"]
    code, err = signalled_while(args, "fsync", tmp_path, lambda: list(site.glob(".fabric.yaml.*.tmp")), sig)
    assert code == 128 + sig, err
    assert "fabricgen: interrupted" in err
    assert not site.exists() or sorted(p.name for p in site.iterdir()) == []


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_transit_write(tmp_path: Path, sig: signal.Signals) -> None:
    fabric = tmp_path / "sites" / "lab" / "fabric.yaml"
    fabric.parent.mkdir(parents=True)
    shutil.copy(LAB, fabric)
    original = fabric.read_bytes()
    show = tmp_path / "show.txt"
    text = (DATA / "icsb-show.txt").read_text()
    show.write_text(text.replace("169.254.100.23/24", "169.254.100.99/24"))
    args = ["transit", str(fabric), str(show), "--write"]
    code, err = signalled_while(args, "fsync", tmp_path, lambda: list(fabric.parent.glob(".fabric.yaml.*")), sig)
    assert code == 128 + sig, err
    assert sorted(p.name for p in fabric.parent.iterdir()) == ["fabric.yaml"]
    assert fabric.read_bytes() == original


def status_capture(tmp_path: Path, sig: signal.Signals, syscall: str, when: str) -> None:
    """`status --capture` of the lab with every database gone (a quick reading), `syscall` held
    on `when`, the signal sent once the capture's temporary directory exists."""
    gone = tmp_path / "no-such.sock"
    endpoints = tmp_path / "endpoints.json"
    endpoints.write_text(json.dumps({"icDatabase": {"northbound": f"unix:{gone}", "southbound": f"unix:{gone}"},
                                     "availabilityZones": {z: {"northbound": f"unix:{gone}",
                                                               "southbound": f"unix:{gone}"}
                                                           for z in ("hq", "ai", "edge", "dr")}}))
    capture = tmp_path / "capture"
    args = ["status", str(LAB), "--endpoints", str(endpoints), "--capture", str(capture)]
    code, err = signalled_while(args, syscall, tmp_path, lambda: list(tmp_path.glob(".capture.*")), sig, when=when)
    assert code == 128 + sig, err
    whole_or_none(capture)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_status_capture(tmp_path: Path, sig: signal.Signals) -> None:
    status_capture(tmp_path, sig, "rename", "enter")


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_status_capture_right_after_its_directory_is_made(tmp_path: Path, sig: signal.Signals) -> None:
    """The signal lands as `mkdir` returns, inside `tempfile.mkdtemp`, before the code that would
    remove the directory has started: held until it has (`fabricgen.files.held_signals`)."""
    status_capture(tmp_path, sig, "mkdir", "exit")
