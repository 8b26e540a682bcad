"""`schemas/fabric.schema.json` is current, and every sample fabric validates against it."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ruamel.yaml import YAML

from fabricgen.cli import main
from fabricgen.model.schema import schema_text
from support.fabrics import REPO, SITES

SCHEMA_FILE = REPO / "schemas" / "fabric.schema.json"
FABRICS = [*SITES, *sorted((REPO / "tests" / "golden").glob("*/fabric.yaml"))]


def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded


def load(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(io.StringIO(path.read_text(encoding="utf-8")))


def test_committed_schema_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), \
        "run `fabricgen schema -o schemas/fabric.schema.json` and commit it"
    assert main(["schema"]) == 0
    assert capsys.readouterr().out == SCHEMA_FILE.read_text(encoding="utf-8")


def test_schema_is_valid_draft_2020_12() -> None:
    assert schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema())


@pytest.mark.parametrize("fabric", FABRICS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_fabric_validates_against_schema(fabric: Path) -> None:
    validator = jsonschema.Draft202012Validator(schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(load(fabric))]
    assert errors == []


def test_sample_fabrics_point_editors_at_the_schema() -> None:
    for fabric in SITES:
        first = fabric.read_text(encoding="utf-8").splitlines()[0]
        assert first == "# yaml-language-server: $schema=../../schemas/fabric.schema.json", fabric


@pytest.mark.parametrize(("change", "where"), [
    (lambda d: d["zones"][0].update(gatewaynodes=[]), ["zones", 0]),
    (lambda d: d["zones"][0].update(name="Not_A_Label"), ["zones", 0, "name"]),
    (lambda d: d["interconnection"]["database"].update(nbPort=0), ["interconnection", "database", "nbPort"]),
    (lambda d: d.update(kind="Fabrik"), ["kind"]),
])
def test_schema_rejects_what_the_model_rejects(change: Any, where: list[object]) -> None:
    data = load(REPO / "tests" / "golden" / "minimal" / "fabric.yaml")
    change(data)
    errors = list(jsonschema.Draft202012Validator(schema()).iter_errors(data))
    assert errors
    paths = [list(e.absolute_path) for e in flatten(errors)]
    assert where in paths, paths


def flatten(errors: list[jsonschema.ValidationError]) -> list[jsonschema.ValidationError]:
    """Errors with the alternatives of anyOf/oneOf (optional sections) expanded."""
    out = []
    for error in errors:
        out.append(error)
        out += flatten(list(error.context or []))
    return out


def test_schema_command_writes_file(tmp_path: Path) -> None:
    target = tmp_path / "fabric.schema.json"
    assert main(["schema", "-o", str(target)]) == 3
    assert target.read_text(encoding="utf-8") == schema_text()
    assert main(["schema", "-o", str(target)]) == 0


def test_schema_command_creates_the_directory(tmp_path: Path) -> None:
    # A new fabric repository has no schemas/ yet; the documented modeline points there (docs/repository.md).
    target = tmp_path / "schemas" / "fabric.schema.json"
    assert main(["schema", "-o", str(target)]) == 3
    assert target.read_text(encoding="utf-8") == schema_text()


def test_schema_command_unwritable_is_an_error_not_a_crash(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "schemas").write_text("a file in the way\n", encoding="utf-8")
    assert main(["schema", "-o", str(tmp_path / "schemas" / "fabric.schema.json")]) == 1
    err = capsys.readouterr().err
    assert "cannot write" in err and "internal error" not in err


@pytest.mark.lab
def test_importing_the_model_builds_no_validator() -> None:
    """Section defaults are made with `model_construct` (docs/development.md, "Start-up"): calling a model at
    import would build its validator there, and with the first validator pydantic loads its
    plugin machinery (importlib.metadata), which `fabricgen rules` and `schema` do not need.
    The only validator is `Fabric`'s, built when the first fabric is validated."""
    import subprocess
    import sys

    probe = ("import sys\n"
             "from fabricgen.model import Fabric\n"
             "from fabricgen.model.docstrings import _models\n"
             "print(sorted(m.__name__ for m in _models(Fabric) if m.__pydantic_complete__), "
             "'pydantic.plugin._loader' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout == "[] False\n"


def test_model_modules_do_not_postpone_annotations() -> None:
    """See `fabricgen.model`: pydantic would evaluate each postponed annotation as a string."""
    modules = sorted((REPO / "generator" / "fabricgen" / "model").glob("*.py"))
    postponed = [p.name for p in modules
                 if "from __future__ import annotations" in p.read_text(encoding="utf-8").splitlines()]
    assert postponed == ["docstrings.py", "reference.py", "schema.py"]  # no models there
