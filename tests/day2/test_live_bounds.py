"""Live data that once crashed a reader (exit 4) or leaked a raw control: each case below is one a
hostile run found, fed to the reader the way the live side would, and refused with a location or
read safely.

- `import` of a YAML capture with a 5,000-digit integer (`generation`, `resourceVersion`,
  `az-name`) or a quoted one where a port belongs (`ic-nb-port`);
- `status --from` with a 5,000-digit number in a member's `cluster/status` text;
- OVSDB rows whose cells are not what their column holds (a priority `"abc"`, an `external_ids`
  written as a string), nested thousands deep, or a number past an int64;
- a static route whose `ip_prefix` is no network (`""`, `garbage`, `10.0.0.0/33`);
- an ACL match nesting 250 parentheses or a thousand `!` (a RecursionError once);
- a member's status with a terminal control, which `--format openmetrics` wrote so that promtool
  refused the whole scrape;
- an error of a database that could not be read, once cut to `exited 1: ovsdb-clie`.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from fabricgen.cli import main
from fabricgen.judge import expected
from fabricgen.model import acl_match
from fabricgen.observe import ovsdb_rows
from fabricgen.observe.raft_status import RaftParseError, parse_cluster_status
from support.fabrics import REPO

DATA = REPO / "tests" / "data" / "import" / "lab"
RAFT = REPO / "tests" / "data" / "raft" / "ovs-3.5"
BIG = "7" * 5000


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def import_with(tmp_path: Path, hq: str) -> tuple[int, str, Path]:
    (tmp_path / "hq.yaml").write_text(hq)
    fabric = tmp_path / "out" / "lab" / "fabric.yaml"
    code, _out, err = run("import", str(fabric), "--cluster", f"hq={tmp_path / 'hq.yaml'}",
                          "--cluster", f"ai={DATA / 'ai.json'}", "--cluster", f"edge={DATA / 'edge.yaml'}",
                          "--cluster", f"dr={DATA / 'dr.json'}", "--show", str(DATA / "icsb-show.txt"))
    return code, err, fabric


@pytest.mark.parametrize(("old", "new"), [
    ("  generation: 1\n", f"  generation: {BIG}\n"),
    ('    resourceVersion: "4914"\n', f"    resourceVersion: {BIG}\n"),
    ("    az-name: hq\n", f"    az-name: {BIG}\n"),
])
def test_an_integer_no_object_holds_is_refused_with_its_line(tmp_path: Path, old: str, new: str) -> None:
    text = (DATA / "hq.yaml").read_text()
    assert old in text, old
    changed = text.replace(old, new, 1)
    code, err, fabric = import_with(tmp_path, changed)
    line = changed[:changed.index(new)].count("\n") + 1
    assert code == 1, err
    assert f"hq.yaml:{line}: an integer of 5000 digits, which no Kubernetes object holds" in err
    assert "internal error" not in err and not fabric.exists()


def test_a_port_of_5000_digits_is_no_crash(tmp_path: Path) -> None:
    text = (DATA / "hq.yaml").read_text()
    assert 'ic-nb-port: "6645"' in text
    code, err, _fabric = import_with(tmp_path, text.replace('ic-nb-port: "6645"', f'ic-nb-port: "{BIG}"'))
    assert code in (0, 1, 3) and "internal error" not in err, err


def test_a_raft_status_with_a_5000_digit_number_is_refused_at_its_line() -> None:
    text = (RAFT / "healthy-s1.txt").read_text()
    for field in ("Term: 1", "Log: [2, 5]", "Disconnections: 0", "match_index=4"):
        assert field in text, field
        changed = text.replace(field, field.replace("4", BIG) if "=" in field else field[:-1] + BIG, 1)
        line = next(n for n, row in enumerate(changed.splitlines(), start=1) if BIG in row)
        with pytest.raises(RaftParseError) as caught:
            parse_cluster_status(changed, "s1")
        assert caught.value.line == line and "a number of 50" in caught.value.message, (field, caught.value)


def _table(headings: list[str], *rows: list[object]) -> str:
    return json.dumps({"headings": headings, "data": [list(r) for r in rows]})


@pytest.mark.parametrize(("text", "message"), [
    (_table(["_uuid", "priority", "match", "action"], [["uuid", "u1"], "abc", "ip4", "drop"]),
     "row 1: column priority holds \"abc\", not an integer"),
    (_table(["name", "external_ids"], ["pg_1", "neutron:security_group_id=x"]),
     "row 1: column external_ids holds \"neutron:security_group_id=x\", not a map"),
    ('{"headings": ["priority"], "data": [[' + BIG + "]]}", "an integer of 5000 digits"),
    ('{"headings": ["match"], "data": [' + "[" * 100_000 + "]" * 100_000 + "]}", "nests too deeply"),
    (_table(["name"], [["set", [["set", [["set", [["set", ["x"]]]]]]]]]), "nests deeper than an OVSDB cell"),
])
def test_ovsdb_cells_that_are_not_their_columns_are_refused(text: str, message: str) -> None:
    with pytest.raises(ovsdb_rows.RowsError) as caught:
        ovsdb_rows.rows(text, "zones/hq/nb/ACL")
    assert message in str(caught.value), caught.value
    assert str(caught.value).startswith("zones/hq/nb/ACL")


@pytest.mark.parametrize("text", ["", "garbage", "10.0.0.0/33", "300.1.1.1/24"])
def test_a_route_prefix_that_is_no_network_stays_as_it_is(text: str) -> None:
    assert expected.prefix(text) == text  # matches nothing fabricgen renders: the route is listed, not a crash


@pytest.mark.parametrize("text", ["(" * 250 + "ip4" + ")" * 250, "!" * 1000 + "ip4"])
def test_deep_matches_end_in_a_message_never_a_recursion_error(text: str) -> None:
    """250 parentheses (OVN nests 100 at most) and a thousand `!` (OVN takes one before a primary)."""
    with pytest.raises(acl_match.MatchError) as caught:
        acl_match.parse(text)
    assert "parentheses nested too deeply" in str(caught.value) or "syntax error at `!'" in str(caught.value)


@pytest.mark.lab
def test_a_hostile_member_status_keeps_the_metrics_parseable(tmp_path: Path) -> None:
    """A raft status line with ESC, a bidi override and a quote: escaped in the label value, so the
    text is one for stdout and --serve, and Prometheus' own parser (promtool) reads it."""
    from fabricgen.judge.openmetrics import openmetrics
    from fabricgen.judge.raft_readings import MemberReading
    from fabricgen.judge.verdicts import Report

    member = MemberReading("IC database nb raft", "hq-node-1", True, "leader", 3, 3, 0, 3,
                           'disconnected \x1b[31m\u202e"x"\\')
    text = openmetrics(Report("sites/lab/fabric.yaml", "lab", (), members=(member,)))
    assert "\x1b" not in text and "\u202e" not in text
    assert 'status="disconnected \\\\x1b[31m\\\\u202e\\"x\\"\\\\"' in text, text
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool missing (scripts/setup.sh --test installs it)")
    done = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_database_error_is_shown_whole_enough_to_act_on() -> None:
    from fabricgen.judge.raft_members import _first_line
    from fabricgen.observe.capture import Observation

    argv = ("ovsdb-client", "--timeout=20", "query", "tcp:127.0.0.1:3",
            '["_Server",{"op":"select","table":"Database","where":[],"columns":["name","model","connected",'
            '"leader","cid","sid","index"]}]')
    failure = Observation("ic/raft/nb/hq-node-1", argv, 1, "",
                          'ovsdb-client: failed to connect to "tcp:127.0.0.1:3" (Connection refused)\n').failure()
    assert _first_line(failure).endswith('exited 1: ovsdb-client: failed to connect to "tcp:127.0.0.1:3" '
                                         "(Connection refused)"), _first_line(failure)
