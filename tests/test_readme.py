"""The README documents what the code does: the diagnostic table and the commands."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path

from fabricgen.cli import _parser, main

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_diagnostic_table_is_current() -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["rules", "--markdown"]) == 0
    table = out.getvalue().strip()
    assert table in README, "README's diagnostics table is stale: paste `fabricgen rules --markdown` into it"


def test_every_command_is_in_the_command_line_reference() -> None:
    parser = _parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert commands
    for name in commands:
        assert f"fabricgen {name}" in README, f"command {name} is missing from README's command line section"
