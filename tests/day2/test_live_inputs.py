"""What a live cluster or a capture feeds in is refused where it stands, never a crash, a vanished
zone or a success: empty captures, numbers no Kubernetes object holds, nesting, a capture that
names one big file many times, and an import target inside the rendered output."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from fabricgen import exit_codes
from fabricgen.cli import main
from fabricgen.observe import capture as captures
from fabricgen.observe.capture import Observation
from support.fabrics import REPO

DATA = REPO / "tests" / "data" / "import" / "lab"
CLUSTERS = {"hq": DATA / "hq.yaml", "ai": DATA / "ai.json", "edge": DATA / "edge.yaml", "dr": DATA / "dr.json"}
SHOW = DATA / "icsb-show.txt"
LAB = REPO / "sites" / "lab" / "fabric.yaml"


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def imported(target: Path, clusters: dict[str, Path]) -> tuple[int, str, str]:
    args = ["import", str(target), "--show", str(SHOW)]
    for name, path in clusters.items():
        args += ["--cluster", f"{name}={path}"]
    return run(*args)


@pytest.mark.parametrize("content", ["null\n", '{"apiVersion": "v1", "kind": "List", "items": []}\n', "---\n"])
def test_a_cluster_whose_capture_holds_nothing_is_an_error_not_a_missing_zone(tmp_path: Path, content: str) -> None:
    empty = tmp_path / "hq.json"
    empty.write_text(content)
    target = tmp_path / "sites" / "lab" / "fabric.yaml"
    code, out, err = imported(target, {**CLUSTERS, "hq": empty})
    assert code == exit_codes.INVALID, out + err
    assert "cluster hq: its captures" in err and "hold no object" in err and "nothing written" in err
    assert not target.exists()


@pytest.mark.parametrize(("value", "said"), [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity"),
                                             ("9" * 5000, "an integer of 5000 digits")])
def test_numbers_no_kubernetes_object_holds_are_refused(tmp_path: Path, value: str, said: str) -> None:
    capture = tmp_path / "dr.json"
    original = (DATA / "dr.json").read_text()
    capture.write_text(original.replace('"generation": 1', f'"generation": {value}', 1))
    assert capture.read_text() != original
    target = tmp_path / "sites" / "lab" / "fabric.yaml"
    code, out, err = imported(target, {**CLUSTERS, "dr": capture})
    assert code == exit_codes.INVALID, out + err
    assert said in err and "no Kubernetes object holds" in err and "Traceback" not in err
    assert not target.exists()


def test_an_import_into_the_rendered_output_is_refused(tmp_path: Path) -> None:
    """The next render would remove a fabric written among its output as stale."""
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "rendered" / "lab", repo / "rendered" / "lab")
    for target in (repo / "rendered" / "lab" / "fabric.yaml", repo / "rendered" / "other" / "fabric.yaml"):
        code, _out, err = imported(target, dict(CLUSTERS))
        assert code == exit_codes.INVALID, (code, err)
        assert "which holds fabricgen's rendered output" in err and "nothing written" in err, err
        assert not target.exists()
    code, _out, err = imported(repo / "sites" / "lab" / "fabric.yaml", dict(CLUSTERS))
    assert code == 0, err


def _capture(tmp_path: Path, observations: dict[str, Observation]) -> Path:
    target = tmp_path / "capture"
    captures.write(target, observations, site="lab", fabric=str(LAB))
    return target


def test_a_capture_naming_one_file_many_times_is_refused(tmp_path: Path) -> None:
    """One output named by two observations: refused, as the memory of 40 references to one 60 MiB
    file added up to 2.5 GiB."""
    target = _capture(tmp_path, {"a": Observation("a", ("x",), 0, "big", ""),
                                 "b": Observation("b", ("x",), 0, "", "")})
    index = json.loads((target / "capture.json").read_text())
    index["observations"][1]["stdout"] = index["observations"][0]["stdout"]
    (target / "capture.json").write_text(json.dumps(index))
    code, _out, err = run("status", str(LAB), "--from", str(target))
    assert code != exit_codes.INTERNAL and "which observation 1 names too" in err, err


@pytest.mark.parametrize("index", ["[" * 100_000 + "]" * 100_000, '{"format": ' + "9" * 5000 + "}",
                                   '{"format": NaN}', "[[[[[[[[[[[[1]]]]]]]]]]]]"])
def test_a_capture_index_that_is_no_capture_is_refused_not_a_crash(tmp_path: Path, index: str) -> None:
    target = tmp_path / "capture"
    target.mkdir()
    (target / "capture.json").write_text(index)
    code, _out, err = run("status", str(LAB), "--from", str(target))
    assert code != exit_codes.INTERNAL and "internal error" not in err, err
    assert "capture.json" in err


@pytest.mark.parametrize("hostile", ["h\x1b[31mq", "h\u202eq", "h\u2028q", "h\x85q"])
def test_hostile_cluster_and_provider_names_are_escaped_never_an_internal_error(tmp_path: Path, hostile: str) -> None:
    """A `--cluster` name and a Subnet provider's NAD name (the mapper's comments quote both) with
    a control, a bidirectional override, a line or a next-line separator."""
    text = (DATA / "dr.json").read_text()
    provider = tmp_path / "dr.json"
    provider.write_text(text.replace('"provider": "vsw-backbone.default.ovn"',
                                     '"provider": ' + json.dumps(f"vsw{hostile}.default.ovn"), 1))
    assert provider.read_text() != text
    target = tmp_path / "sites" / "lab" / "fabric.yaml"
    code, out, err = imported(target, {hostile: CLUSTERS["hq"], "ai": CLUSTERS["ai"], "edge": CLUSTERS["edge"],
                                       "dr": provider})
    assert code in (0, 1, 3), err
    for shown in (out, err, target.read_text() if target.exists() else ""):
        assert not any(c in shown for c in ("\x1b", "\u202e", "\u2028", "\x85")), shown


def test_a_file_given_by_mistake_is_not_quoted(tmp_path: Path) -> None:
    """A key or a token file passed as a capture: refused without a character of it shown."""
    secret = tmp_path / "id_token"
    secret.write_text("Zk3Lq8Rt5Wv2Xy7Bn4Mc9Pd6Hf1Jg0SaQwErTy\n")
    code, out, err = imported(tmp_path / "sites" / "lab" / "fabric.yaml", {**CLUSTERS, "dr": secret})
    assert code == exit_codes.INVALID
    assert "Zk3Lq8" not in out + err and "text, not objects (a first line of 38 characters, not quoted here)" in err
