"""The command line in-process: one test per exit code, --version, rules."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fabricgen import __version__, exit_codes
from fabricgen.cli import main
from fabricgen.render import RENDERERS
from fabricgen.validation.rules import catalogue
from support.fabrics import REPO

LAB = "sites/lab/fabric.yaml"


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("FABRICGEN_DEBUG", raising=False)


def test_exit_0_valid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", LAB]) == 0
    assert capsys.readouterr().err == "fabricgen: 1 fabric(s) valid (0 error(s), 0 warning(s))\n"


def test_exit_0_json_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", LAB, "--format", "json"]) == 0
    assert capsys.readouterr().out == '{\n  "errors": 0,\n  "warnings": 0,\n  "diagnostics": []\n}\n'


def test_exit_1_invalid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "fabric.yaml"
    bad.write_text("apiVersion: fabricgen.io/v1alpha1\nkind: Fabric\n", encoding="utf-8")
    assert main(["validate", str(bad), "--format", "text"]) == 1
    err = capsys.readouterr().err
    assert f"{bad.as_posix()}:1:1: metadata: required field 'metadata' is missing; add it [FG003]" in err
    assert err.endswith("; nothing written\n")
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [[], ["render"], ["frobnicate"], ["validate", LAB, "--format", "xml"],
                                  ["render", LAB, "--bogus"], ["render", "--all", LAB], ["render", "-q"]])
def test_exit_2_usage(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "usage: fabricgen" in capsys.readouterr().err


def test_exit_3_changed_then_0(tmp_path: Path) -> None:
    assert main(["render", "-q", "-o", str(tmp_path), LAB]) == 3
    assert main(["render", "-q", "-o", str(tmp_path), LAB]) == 0


def test_exit_4_internal_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    """A bug in a renderer: one line naming it, no traceback, nothing written."""

    def broken(plan: object) -> list[object]:
        raise RuntimeError("renderer bug")

    monkeypatch.setitem(RENDERERS, "broken", broken)  # type: ignore[arg-type]
    assert main(["render", "-o", str(tmp_path / "out"), LAB]) == 4
    err = capsys.readouterr().err
    assert err == ("fabricgen: internal error: RuntimeError: renderer bug\n"
                   "This is a bug in fabricgen; set FABRICGEN_DEBUG=1 for the traceback and report it.\n")
    assert not (tmp_path / "out").exists()
    monkeypatch.setenv("FABRICGEN_DEBUG", "1")
    assert main(["render", "-o", str(tmp_path / "out"), LAB]) == 4
    assert "Traceback" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"fabricgen {__version__}\n"


def test_help_lists_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for code in ("0", "1", "2", "3", "4", "130"):
        assert f"\n  {code} " in out


def test_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [code for code, _n, _s in catalogue()]


def test_rules_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["| code | name | what it means |", "| --- | --- | --- |"]
    rows = catalogue()
    assert len(lines) == len(rows) + 2
    assert "| FG103 | `raft-members` | The IC database has an even number of raft members; " in lines[2 + [
        r[0] for r in rows].index("FG103")]
    assert all(line.startswith("| FG") and line.endswith(" |") and line.count(" | ") == 2 for line in lines[2:])


def test_render_json_report_on_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Like `validate`: the machine-readable report goes to stdout, the file list to stderr."""
    assert main(["render", LAB, "-o", str(tmp_path), "--format", "json"]) == 3
    out, err = capsys.readouterr()
    assert out == '{\n  "errors": 0,\n  "warnings": 0,\n  "diagnostics": []\n}\n'
    assert "added    lab/hq/stage-0/backbone.yaml" in err
    bad = tmp_path / "fabric.yaml"
    bad.write_text("apiVersion: fabricgen.io/v1alpha1\nkind: Fabric\n", encoding="utf-8")
    assert main(["render", str(bad), "-o", str(tmp_path / "out"), "--format", "json"]) == 1
    out, err = capsys.readouterr()
    assert '"errors": 1' in out and '"code": "FG003"' in out
    assert err.endswith("; nothing written\n")


def test_schema_output_exits_3_when_it_writes_like_render(tmp_path: Path) -> None:
    target = tmp_path / "schemas" / "fabric.schema.json"
    assert main(["schema", "-o", str(target)]) == 3
    assert main(["schema", "-o", str(target)]) == 0


@pytest.fixture
def fabric_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import subprocess

    fabric = tmp_path / LAB
    fabric.parent.mkdir(parents=True)
    fabric.write_bytes((REPO / LAB).read_bytes())
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "lab"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                       cwd=tmp_path, check=True, capture_output=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.lab
@pytest.mark.parametrize("broken", ["head", "base"])
def test_diff_of_an_invalid_fabric_comments_the_located_errors(
        fabric_repo: Path, broken: str, capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    fabric = fabric_repo / LAB
    good = fabric.read_text()
    fabric.write_text(good.replace("nbPort: 6645", "nbPort: notaport"))
    line = 1 + good.splitlines().index(next(x for x in good.splitlines() if "nbPort: 6645" in x))
    name = LAB
    if broken == "base":
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qam", "bad"],
                       cwd=fabric_repo, check=True)
        fabric.write_text(good)
        name = f"{LAB}@HEAD"
    assert main(["diff", LAB, "--format", "markdown"]) == 1
    out, err = capsys.readouterr()
    located = f"{name}:{line}:13: interconnection.database.nbPort: "
    assert out.startswith(f"## fabricgen: {LAB} against HEAD\n\n**Invalid fabric: nothing to compare**")
    assert f"```text\n{located}" in out
    assert located in err


@pytest.mark.lab
def test_render_all_needs_the_top_of_a_git_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["render", "--all"]) == 2
    assert "--all needs a git repository" in capsys.readouterr().err
    monkeypatch.chdir(REPO / "sites")
    assert main(["render", "--all", "--check"]) == 2
    assert f"from the top of the repository: cd {REPO}" in capsys.readouterr().err


@pytest.mark.lab
def test_render_all_never_takes_the_repository_top_or_a_fabric_for_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A tracked directory under the output root that no fabric renders is removed, unless it holds
    a fabric; and the output root is never the repository itself."""
    import subprocess

    (tmp_path / "out" / "old").mkdir(parents=True)
    (tmp_path / "out" / "old" / "x.yaml").write_text(
        "# Generated by fabricgen from sites/old/fabric.yaml; do not edit by hand.\nx: 1\n")
    (tmp_path / "out" / "keep").mkdir()
    (tmp_path / "out" / "keep" / "fabric.yaml").write_bytes((REPO / LAB).read_bytes())
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    monkeypatch.chdir(tmp_path)
    assert main(["render", "--all", "-o", "."]) == 2
    assert "--all needs an output directory below the top" in capsys.readouterr().err
    assert not (tmp_path / "lab").exists()
    assert main(["render", "--all", "-o", "out", "--check"]) == 3
    err = capsys.readouterr().err
    assert "removed  old/x.yaml" in err and "added    lab/hq/stage-0/backbone.yaml" in err and "keep/" not in err
    assert (tmp_path / "out" / "old" / "x.yaml").exists()
    assert main(["render", "--all", "-o", "out", "-q"]) == 3
    assert not (tmp_path / "out" / "old").exists()
    assert (tmp_path / "out" / "keep" / "fabric.yaml").exists()
    assert (tmp_path / "out" / "lab" / "hq" / "stage-0" / "backbone.yaml").exists()
    # A retired directory whose tracked files fabricgen did not write is refused, not removed.
    (tmp_path / "out" / "notes").mkdir()
    (tmp_path / "out" / "notes" / "x.yaml").write_text("x: 1\n")
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    assert main(["render", "--all", "-o", "out", "-q"]) == 1
    assert "out/notes/x.yaml: git tracks this file, fabricgen did not write it" in capsys.readouterr().err
    assert (tmp_path / "out" / "notes" / "x.yaml").exists()


@pytest.mark.lab
def test_command_process_exits_with_mains_code_and_all_its_output(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`fabricgen` (the console script) and `python -m fabricgen` run `cli.run`, which skips the
    last garbage collection at exit; the exit code and every byte written still come through."""
    import os
    import subprocess
    import sys
    import tomllib

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"fabricgen": "fabricgen.console:run"}
    monkeypatch.setenv("ARGOCD_ENV_ZONE", "hq")
    monkeypatch.setenv("ARGOCD_ENV_FABRIC", LAB)
    proc = subprocess.run([sys.executable, "-m", "fabricgen", "argocd-generate"], cwd=REPO, env=dict(os.environ),
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert main(["argocd-generate"]) == 0
    assert proc.stdout == capsys.readouterr().out
    assert proc.stdout.count("\nkind: ") > 5
    bad = subprocess.run([sys.executable, "-m", "fabricgen", "validate", "no-such/fabric.yaml"], cwd=REPO,
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and "file not found [FG000]" in bad.stderr


@pytest.mark.lab
def test_command_process_runs_without_cyclic_collections_and_main_leaves_them_on() -> None:
    """`cli.run` turns the cyclic garbage collector off for the process (see its docstring);
    `main`, which tests and other callers run in their own process, leaves it as it was."""
    import gc
    import subprocess
    import sys

    probe = ("import atexit, gc, sys\n"
             "atexit.register(lambda: sys.stderr.write('\\nCOLLECTOR %s\\n' % gc.isenabled()))\n"
             "sys.argv = ['fabricgen', 'validate', 'sites/lab/fabric.yaml']\n"
             "from fabricgen.cli import run\n"
             "run()\n")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.endswith("\nCOLLECTOR False\n")
    assert gc.isenabled()
    assert main(["validate", LAB]) == 0
    assert gc.isenabled()


SLOW_ARGPARSE = """\
import importlib.util, os, sys, sysconfig, time
sys.stderr.write("LOADING\\n")
sys.stderr.flush()
time.sleep(30)
spec = importlib.util.spec_from_file_location("argparse", os.path.join(sysconfig.get_paths()["stdlib"], "argparse.py"))
module = importlib.util.module_from_spec(spec)
sys.modules["argparse"] = module
spec.loader.exec_module(module)
"""


@pytest.mark.lab
def test_ctrl_c_while_the_command_line_loads_is_an_interrupt_not_a_traceback(tmp_path: Path) -> None:
    """SIGINT while fabricgen.cli and its libraries were imported (before `main` has its handlers)
    printed a KeyboardInterrupt traceback. fabricgen.console takes SIGINT first: here the import
    of argparse, the first thing cli loads, is held open (a module of the same name on
    PYTHONPATH) and the signal lands in it.

    The child starts with SIGINT at its default whatever this test process was started with: a
    test run launched as a background job of a non-interactive shell (`pytest &`, as a busy CI
    runner or a loop script does) has SIGINT ignored, which a child inherits and fabricgen
    rightly keeps ignored, and the command then ran to its end (exit 0)."""
    import os
    import signal
    import subprocess

    (tmp_path / "argparse.py").write_text(SLOW_ARGPARSE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-m", "fabricgen", "validate", LAB], cwd=REPO, env=env,
                                stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        assert proc.stderr is not None
        assert proc.stderr.readline() == "LOADING\n"
        proc.send_signal(signal.SIGINT)
        err = proc.stderr.read()
        assert proc.wait(timeout=60) == exit_codes.INTERRUPTED
        assert err == "fabricgen: interrupted\n"


def test_an_exception_a_library_makes_of_ctrl_c_is_an_interrupt(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A SIGINT inside pydantic_core's start-up comes out as pyo3's PanicException, a BaseException
    that is no KeyboardInterrupt: it printed a traceback and exited 1. After a SIGINT, it is an
    interrupt; without one, it is not hidden."""
    from fabricgen import cli

    class PanicException(BaseException):
        pass

    def dispatch(args: object) -> int:
        try:
            cli._on_interrupt(2, None)
        except KeyboardInterrupt:
            raise PanicException("KeyboardInterrupt") from None
        return 0

    monkeypatch.setattr(cli, "_dispatch", dispatch)
    monkeypatch.setattr(cli, "_interrupted", False)
    assert main(["validate", LAB]) == exit_codes.INTERRUPTED
    assert capsys.readouterr().err == "fabricgen: interrupted\n"
    monkeypatch.setattr(cli, "_interrupted", False)
    monkeypatch.setattr(cli, "_dispatch", lambda args: (_ for _ in ()).throw(PanicException("a real panic")))
    with pytest.raises(PanicException):
        main(["validate", LAB])
