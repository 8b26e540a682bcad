"""The benchmark script runs and reports every row of its table (on tiny sizes; no timing is checked)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from support.fabrics import REPO

pytestmark = pytest.mark.lab  # starts real programs: python


def test_benchmark_reports_every_row_with_its_goal() -> None:
    proc = subprocess.run(
        [sys.executable, "benchmarks/bench.py", "--runs", "1", "--render-zones", "3", "--validate-zones", "8",
         "--json"],
        cwd=REPO, capture_output=True, text=True, check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    rows = {row["name"]: row for row in doc["rows"]}
    kubectl = shutil.which("kubectl") is not None
    memory = os.access("/dev/shm", os.W_OK)
    assert set(rows) == ({"plugin", "lab", "mesh", "validate", "lab-cur", "mesh-cur", "mesh-edit", "files",
                          "plugin-c", "check-rec"} | ({"deps", "plugin-mz"} if kubectl else set())
                         | ({"mesh-mem"} if memory else set()))
    for name in ("lab", "mesh", "validate", *(("plugin",) if kubectl else ()), *(("mesh-mem",) if memory else ())):
        row = rows[name]
        assert row["ratio"] > 0 and row["cpu_ratio"] > 0 and row["peak_rss_mib"] > 0
        assert isinstance(row["passed"], bool) and row["goal"]
    assert rows["mesh"]["what"] == "render of 3 zones (6 routes)"
    # after a render (check-rec) and a first plugin run (plugin-c) the fast-path rows take it
    assert rows["check-rec"]["note"] == "fast path taken"
    if kubectl:
        assert rows["plugin-c"]["note"] == "fast path taken"
    # the exit status is the verdict of every row with a goal
    assert (proc.returncode == 0) == all(r["passed"] is not False for r in rows.values())


def test_verify_benchmark_runs_the_lab_and_a_synthetic_fabric() -> None:
    """`benchmarks/verify_lab.py` on the lab and a 3-zone mesh, both modes, once each, and the kernel
    underlay stage of the CloudStack sample (no timing is checked), with Debian 13's OVN 25.03 of
    `scripts/setup.sh --test`."""
    from fabricgen.lab.ovn.programs import Programs

    prefix = REPO / ".ovn" / "25.03"
    if Programs(prefix).missing(data_plane=True):
        pytest.skip("OVN 25.03 is not installed in .ovn/25.03 (scripts/setup.sh --test)")
    proc = subprocess.run([sys.executable, "benchmarks/verify_lab.py", "--runs", "1", "--logical", "3",
                           "--packets", "3", "--underlay", "sites/cloudstack", "--ovn-prefix", str(prefix), "--json"],
                          cwd=REPO, capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["ovn"] == "25.03.0"
    rows = doc["runs"]
    assert [(r["mode"], r["fabric"], r["zones"]) for r in rows] == [
        ("logical", "sites/lab", 4), ("logical", "synthetic 3", 3), ("data-plane", "sites/lab", 4),
        ("data-plane", "synthetic 3", 3), ("underlay", "sites/cloudstack", 4)]
    from fabricgen.lab.underlay.needs import needs_of
    from fabricgen.pipeline import build

    flows = len(needs_of(build(REPO / "sites" / "cloudstack" / "fabric.yaml")))
    assert [r["result"] for r in rows] == ["12/12 pairs delivered", "6/6 pairs delivered"] * 2 + [
        f"0/0 pairs delivered; {flows}/{flows} flows between hosts through the kernel underlay"]
    assert all(r["peak_mib"] > 0 for r in rows)
    assert rows[-1]["per_host_mib"] == 0  # cloudstack's hosts have no BGP: the stage starts no FRR


def test_status_benchmark_runs_live_from_a_capture_and_as_metrics() -> None:
    """`benchmarks/status.py` on a 3-zone mesh, one run of each row (no timing is checked)."""
    from fabricgen.lab.ovn.programs import Programs

    if Programs.from_environment().missing():
        pytest.skip("the OVN programs are not installed (scripts/setup.sh --test)")
    proc = subprocess.run([sys.executable, "benchmarks/status.py", "--zones", "3", "--runs", "1", "--json",
                           "--ovn-prefix", str(REPO / ".ovn" / "25.03")],
                          cwd=REPO, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc["rows"]) == {"live", "capture", "metrics"}
    assert all(row["peak_rss_mib"] > 0 for row in doc["rows"].values())
    assert all(row["median_s"] > 0 and row["exit"] in (0, 7) for row in doc["rows"].values())
