"""What fabricgen reads as a fabric: a regular file of bounded size, never a device or a pipe."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from fabricgen.cli import main
from fabricgen.source import reader as source

MEMORY_LIMIT = 1 << 30  # a reader that slurps /dev/zero dies here instead of taking the machine


def fabricgen(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    return subprocess.run([sys.executable, "-m", "fabricgen", *args], cwd=cwd, input=stdin, capture_output=True,
                          text=True, timeout=60, preexec_fn=limit, check=False)


def test_dev_zero_is_refused_not_read() -> None:
    result = fabricgen("validate", "/dev/zero", cwd=REPO)
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("/dev/zero:1:1: (document): cannot read file: it is a character device, "
                                    "not a regular file; give the path of a fabric file [FG000]\n")
    assert "Traceback" not in result.stderr


def test_a_symlink_to_a_device_is_refused(tmp_path: Path) -> None:
    (tmp_path / "fabric.yaml").symlink_to("/dev/zero")
    result = fabricgen("render", "fabric.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert "fabric.yaml:1:1: (document): cannot read file: it is a character device" in result.stderr
    assert not (tmp_path / "rendered").exists()


def test_a_fifo_does_not_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fabric.yaml")
    result = fabricgen("validate", "fabric.yaml", ".", cwd=tmp_path)  # hangs (timeout) if the FIFO is opened blocking
    assert result.returncode == 1
    assert result.stderr.splitlines()[:2] == [
        "fabric.yaml:1:1: (document): cannot read file: it is a FIFO (pipe), not a regular file; "
        "give the path of a fabric file [FG000]",
        ".:1:1: (document): cannot read file: it is a directory, not a regular file; "
        "give the path of a fabric file [FG000]",
    ]


def test_an_oversized_file_is_refused_before_parsing(tmp_path: Path) -> None:
    big = tmp_path / "fabric.yaml"
    with big.open("w", encoding="utf-8") as handle:
        handle.write("# padding\n" * (source.MAX_BYTES // 10 + 1))
    result = fabricgen("validate", "fabric.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("fabric.yaml:1:1: (document): cannot read file: it is larger than 4 MiB "
                                    "(4194304 bytes), far more than a fabric needs")


def test_the_limit_is_inclusive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    text = (REPO / "sites" / "lab" / "fabric.yaml").read_text(encoding="utf-8")
    fabric = tmp_path / "fabric.yaml"
    fabric.write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(source, "MAX_BYTES", len(text.encode()))
    assert main(["validate", "fabric.yaml"]) == 0
    monkeypatch.setattr(source, "MAX_BYTES", len(text.encode()) - 1)
    assert main(["validate", "fabric.yaml"]) == 1
    assert "it is larger than" in capsys.readouterr().err


def test_the_krm_function_refuses_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fabric.yaml")
    resource_list = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n"
                     "  apiVersion: fabricgen.io/v1alpha1\n  kind: FabricGenerator\n  metadata: {name: t}\n"
                     "  spec: {path: fabric.yaml}\n")
    result = fabricgen("krm", cwd=tmp_path, stdin=resource_list)
    assert result.returncode != 0
    assert "it is a FIFO (pipe), not a regular file" in result.stderr + result.stdout
