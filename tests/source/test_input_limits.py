"""What fabricgen reads as a fabric: a regular file of bounded size, never a device or a pipe."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from fabricgen.cli import main
from fabricgen.delivery import resource_list
from fabricgen.source import reader as source
from support.fabrics import REPO

pytestmark = pytest.mark.lab  # starts real programs: git, python

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


# --- the KRM function's stdin and `diff`'s base revision: the same limit -------------------

LAB = REPO / "sites" / "lab" / "fabric.yaml"


def padded_resource_list(size: int) -> str:
    """A ResourceList generating the lab's hq zone, padded with one comment line to `size` bytes."""
    head = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n"
            "  apiVersion: fabricgen.io/v1alpha1\n  kind: FabricGenerator\n  metadata: {name: t}\n"
            f"  spec: {{path: {LAB}, zone: hq}}\n#")
    return head + "x" * (size - len(head) - 1) + "\n"


@pytest.mark.parametrize("extra", [0, 1], ids=["at-the-limit", "one-byte-over"])
def test_the_krm_function_caps_its_stdin(tmp_path: Path, extra: int) -> None:
    text = padded_resource_list(resource_list.MAX_BYTES + extra)
    assert len(text.encode()) == resource_list.MAX_BYTES + extra
    result = fabricgen("krm", cwd=tmp_path, stdin=text)
    assert "Traceback" not in result.stderr
    if extra == 0:
        assert result.returncode == 0, result.stderr
        assert "kind: ResourceList" in result.stdout
    else:
        assert result.returncode == 1
        assert result.stderr == ("fabricgen: error: <stdin>: the ResourceList is larger than 1 MiB (1048576 bytes), "
                                 "far more than a package fabricgen generates into; give the fabric by path, or "
                                 "split the package\n")
        assert result.stdout == ""


def committed(repo: Path, *versions: bytes) -> None:
    """A git repository whose fabric.yaml went through `versions`, one commit each."""
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                       check=True, capture_output=True)

    git("init", "-q")
    for i, data in enumerate(versions):
        (repo / "fabric.yaml").write_bytes(data)
        git("add", "fabric.yaml")
        git("commit", "-q", "-m", f"version {i}")


@pytest.mark.parametrize(("base", "message"), [
    (b"# padding\n" * (source.MAX_BYTES // 10 + 1),
     "fabricgen: error: fabric.yaml at HEAD~1 is larger than 4 MiB (4194310 bytes; the limit is 4194304), "
     "far more than a fabric needs; compare against a revision where it is a fabric\n"),
    (b"# caf\xe9\n", "fabricgen: error: fabric.yaml at HEAD~1: byte 0xe9 is not UTF-8; compare against a revision "
     "where it is a fabric\n"),
], ids=["oversized", "not-utf-8"])
def test_diff_caps_the_base_revision(tmp_path: Path, base: bytes, message: str) -> None:
    committed(tmp_path, base, LAB.read_bytes())
    result = fabricgen("diff", "fabric.yaml", "--base", "HEAD~1", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stderr == message


@pytest.mark.parametrize("depth", [101, 800, 5000])
def test_the_krm_function_refuses_deep_nesting(tmp_path: Path, depth: int) -> None:
    """Past 100 levels (Kubernetes objects nest a few dozen), and however deep: no RecursionError."""
    item = "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: deep}\n  data: " + "[" * depth + "]" * depth
    text = padded_resource_list(2000).replace("items: []\n", f"items:\n{item}\n")
    result = fabricgen("krm", cwd=tmp_path, stdin=text)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr == ("fabricgen: error: <stdin>: the ResourceList nests deeper than 100 levels, far more "
                             "than Kubernetes objects do; remove the deeply nested item from the package\n")


def test_the_krm_function_passes_a_hundred_levels(tmp_path: Path) -> None:
    item = "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: deep}\n  data: {x: " + "[" * 96 + "]" * 96 + "}"
    text = padded_resource_list(2000).replace("items: []\n", f"items:\n{item}\n")
    result = fabricgen("krm", cwd=tmp_path, stdin=text)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("base", ["HEAD:../../etc/passwd", "HEAD:fabric.yaml", "@{-1}", "HEAD@{5}", "HEAD^{tree}",
                                  "HEAD~1..HEAD", "--output=/tmp/fabricgen-injected", "", "no-such-branch"])
def test_diff_refuses_every_base_that_is_no_commit(tmp_path: Path, base: str) -> None:
    committed(tmp_path, LAB.read_bytes(), LAB.read_bytes() + b"# a comment\n")
    result = fabricgen("diff", "fabric.yaml", f"--base={base}", "--no-verify", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"fabricgen: error: unknown revision {base!r}: git resolves it to no commit")
    assert not Path("/tmp/fabricgen-injected").exists()


def test_diff_takes_what_git_takes(tmp_path: Path) -> None:
    committed(tmp_path, LAB.read_bytes(), LAB.read_bytes().replace(b"172.30.10.", b"172.30.11."))
    for base in ("HEAD~1", "HEAD^", "HEAD@{1}", "HEAD@{1.year.ago}", ":/version 0"):
        result = fabricgen("diff", "fabric.yaml", f"--base={base}", "--no-verify", cwd=tmp_path)
        assert result.returncode in (0, 3) and "internal error" not in result.stderr, (base, result.stderr)


def test_the_krm_function_reports_a_fabric_that_is_not_utf8_as_validate_does(tmp_path: Path) -> None:
    fabric = tmp_path / "fabric.yaml"
    fabric.write_bytes(LAB.read_bytes().replace(b"# ", b"# caf\xe9 ", 1))
    resource_list_text = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n"
                          "  apiVersion: fabricgen.io/v1alpha1\n  kind: FabricGenerator\n  metadata: {name: t}\n"
                          "  spec: {path: fabric.yaml, zone: hq}\n")
    result = fabricgen("krm", cwd=tmp_path, stdin=resource_list_text)
    validate = fabricgen("validate", "fabric.yaml", cwd=tmp_path)
    assert (result.returncode, validate.returncode) == (1, 1)
    assert "is not UTF-8; save the file as UTF-8 [FG000]" in result.stdout
    assert validate.stderr.splitlines()[0] in result.stderr


@pytest.mark.parametrize("kind", ["submodule", "directory", "symlink"])
def test_diff_refuses_what_is_no_fabric_file_where_the_fabric_was(tmp_path: Path, kind: str) -> None:
    """A gitlink, a directory or a symbolic link at the fabric's path in the base revision is a
    usage error that names it, never an internal error."""
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                        "-c", "protocol.file.allow=always", *args], check=True, capture_output=True)

    git("init", "-q")
    if kind == "submodule":
        inner = tmp_path / "inner"
        inner.mkdir()
        committed(inner, LAB.read_bytes())
        git("submodule", "add", "-q", str(inner), "fabric.yaml")
    elif kind == "directory":
        (repo / "fabric.yaml").mkdir()
        (repo / "fabric.yaml" / "x").write_text("x\n")
    else:
        (repo / "elsewhere.yaml").write_bytes(LAB.read_bytes())
        (repo / "fabric.yaml").symlink_to("elsewhere.yaml")
    git("add", "-A")
    git("commit", "-qm", f"a {kind} where the fabric will be")
    git("rm", "-rq", "fabric.yaml")
    (repo / "fabric.yaml").write_bytes(LAB.read_bytes())
    git("add", "fabric.yaml")
    git("commit", "-qm", "the fabric")
    result = fabricgen("diff", "fabric.yaml", "--base", "HEAD~1", "--no-verify", cwd=repo)
    assert result.returncode == 2, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    what = {"submodule": "a submodule (gitlink)", "directory": "a directory", "symlink": "a symbolic link"}[kind]
    assert result.stderr.startswith(f"fabricgen: error: fabric.yaml at HEAD~1 is {what}"), result.stderr
    if kind == "submodule":
        assert result.stderr == ("fabricgen: error: fabric.yaml at HEAD~1 is a submodule (gitlink), not a fabric "
                                 "file; compare against a revision where it is one\n")
