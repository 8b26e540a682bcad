"""`fabricgen status --serve`: the exporter, run as a process the way a workload runs it.

A capture of a fabric whose zones cannot be read (no kubectl on PATH: every zone `unreachable`)
is served with `--from`, read again every 0.2 s; the test scrapes it as Prometheus does, many at
once, lints what it serves with promtool, stops it with SIGTERM and starts it again.
"""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.fabrics import REPO

pytestmark = pytest.mark.lab  # starts real programs: promtool, python

LAB = "sites/lab/fabric.yaml"
TRIES = 300  # polls 0.05 s apart for the first reading: a bound, not a deadline of the test


def default_signals() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    where = tmp_path / "capture"
    env = {**os.environ, "PATH": str(tmp_path / "nothing")}
    done = subprocess.run([sys.executable, "-m", "fabricgen", "status", LAB, "--capture", str(where)], cwd=REPO,
                          env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 8 and (where / "capture.json").is_file(), done.stderr
    return where


@pytest.fixture
def exporter(capture: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = subprocess.Popen([sys.executable, "-m", "fabricgen", "status", LAB, "--from", str(capture),
                                "--serve", "127.0.0.1:0", "--interval", "0.2"], cwd=REPO, stderr=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, preexec_fn=default_signals)
    assert process.stderr is not None
    line = process.stderr.readline()
    assert "serving http://127.0.0.1:" in line, line
    url = line.split("serving ", 1)[1].split(",", 1)[0]
    try:
        yield process, url
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def scrape(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def first_reading(url: str) -> str:
    for _ in range(TRIES):
        code, body = scrape(url)
        if code == 200:
            return body
        assert code == 503  # no reading yet
        time.sleep(0.05)
    raise AssertionError(f"{url}: no reading after {TRIES} polls")


def test_the_exporter_serves_the_latest_reading_to_concurrent_scrapes(
        exporter: tuple[subprocess.Popen[str], str]) -> None:
    process, url = exporter
    body = first_reading(url)
    assert 'fabricgen_status_check{site="lab",scope="zone",name="hq",database="",part="cluster",' \
           'check="cluster.read",state="unreachable"} 1' in body  # a zone that does not answer says so
    assert 'fabricgen_status_verdict{site="lab",state="unreachable"} 1' in body
    assert "fabricgen_exporter_readings " in body and body.endswith("# EOF\n")
    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(scrape, [url] * 64))
    assert {code for code, _ in answers} == {200}
    assert all(b.endswith("# EOF\n") and "fabricgen_status_check{" in b for _, b in answers)
    assert scrape(url.replace("/metrics", "/other"))[0] == 404
    promtool = shutil.which("promtool")
    if promtool is not None or os.environ.get("FABRICGEN_TEST_STRICT"):
        assert promtool is not None, "promtool missing (scripts/setup.sh --test installs it)"
        done = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    readings = [int(line.split()[-1]) for line in scrape(url)[1].splitlines()
                if line.startswith("fabricgen_exporter_readings ")]
    assert readings and readings[0] >= 1
    process.send_signal(signal.SIGTERM)
    _out, err = process.communicate()
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err


def test_a_restarted_exporter_serves_again(capture: Path, exporter: tuple[subprocess.Popen[str], str]) -> None:
    process, url = exporter
    first_reading(url)
    process.kill()
    process.wait()
    again = subprocess.Popen([sys.executable, "-m", "fabricgen", "status", LAB, "--from", str(capture),
                              "--serve", "127.0.0.1:0", "--interval", "0.2"], cwd=REPO, stderr=subprocess.PIPE,
                             text=True, preexec_fn=default_signals)
    try:
        assert again.stderr is not None
        line = again.stderr.readline()
        assert "fabricgen_status_check{" in first_reading(line.split("serving ", 1)[1].split(",", 1)[0])
    finally:
        again.send_signal(signal.SIGINT)
        again.communicate()
    assert again.returncode == 130


def test_serve_refuses_what_it_cannot_do() -> None:
    for extra, why in ((["--serve", "nowhere"], "give HOST:PORT"), (["--serve", ":9977", "--wait", "1m"],
                                                                    "not with --wait")):
        done = subprocess.run([sys.executable, "-m", "fabricgen", "status", LAB, *extra], cwd=REPO,
                              capture_output=True, text=True, check=False)
        assert done.returncode == 2 and why in done.stderr, done.stderr
