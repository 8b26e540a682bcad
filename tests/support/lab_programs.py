"""The OVN programs the lab tests run: the system's (Debian 12's OVN 23.03) and Debian 13's OVN 25.03
that `scripts/setup.sh --test` extracts into .ovn/25.03; `BOTH` parametrizes a test over the two,
each skipped (and so failed by scripts/test.sh) where its programs are missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fabricgen.lab.ovn.programs import Programs
from support.fabrics import REPO

SYSTEM = Programs()
DEBIAN13 = Programs((REPO / ".ovn" / "25.03").resolve())


def _skip(programs: Programs) -> pytest.MarkDecorator:
    missing = programs.missing(data_plane=True)
    return pytest.mark.skipif(bool(missing), reason=f"OVN programs of {programs.name} missing: {', '.join(missing)} "
                                                    "(scripts/setup.sh --test installs them)")


needs_25_03 = _skip(DEBIAN13)
BOTH = [pytest.param(SYSTEM, id="ovn-23.03", marks=_skip(SYSTEM)),
        pytest.param(DEBIAN13, id="ovn-25.03", marks=needs_25_03)]


def fabricgen(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabricgen", *args], capture_output=True, text=True, cwd=cwd,
                          check=False)


def prefix_args(programs: Programs) -> list[str]:
    return ["--ovn-prefix", str(programs.prefix)] if programs.prefix is not None else []
