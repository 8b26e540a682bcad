"""The documentation is held to the code: README.md and docs/*.md.

- The two generated pages are what their generators write now (as `schema -o` works for the
  committed JSON schema).
- Every `fabricgen COMMAND --flag` the pages name exists in the argument parser, and the
  documented examples that can run here run (sample fabrics only, nothing written, no OVN lab).
- `docs/commands.md` names every command and every option the parser has.
- Every page of docs/ is linked from the README, and every relative link and anchor resolves.
"""

from __future__ import annotations

import argparse
import glob
import io
import re
import shlex
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from fabricgen.cli import _parser, main

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGES = sorted([REPO / "README.md", *DOCS.glob("*.md")])

# A generated page: its generator and the command that refreshes the committed copy.
GENERATED = {
    "fabric-yaml.md": "fabricgen schema --format markdown -o docs/fabric-yaml.md",
    "diagnostics.md": "fabricgen rules --markdown -o docs/diagnostics.md",
    "watching.md": "fabricgen watching -o docs/watching.md",
}


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _name(page: Path) -> str:
    return page.relative_to(REPO).as_posix()


# ---------------------------------------------------------------------------------------------
# The generated pages


def _generated(name: str) -> str:
    if name == "fabric-yaml.md":
        from fabricgen.model.reference import markdown

        return markdown()
    if name == "watching.md":
        from fabricgen.commands import watching

        return watching.page()
    from fabricgen.commands import rules

    return rules.page()


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_page_is_current(name: str) -> None:
    page = DOCS / name
    assert page.is_file(), f"docs/{name} is missing: run `{GENERATED[name]}` and commit it"
    assert _text(page) == _generated(name), f"docs/{name} is stale: run `{GENERATED[name]}` and commit it"


def test_generated_pages_say_how_they_are_refreshed() -> None:
    for name, command in GENERATED.items():
        assert command in _text(DOCS / name).split("\n\n", 2)[1], name


@pytest.mark.parametrize(("argv", "name"), [(["schema", "--format", "markdown"], "fabric-yaml.md"),
                                            (["rules", "--markdown"], "diagnostics.md"),
                                            (["watching"], "watching.md")])
def test_refresh_command_writes_the_page_and_exits_3_when_it_changed_it(
        tmp_path: Path, argv: list[str], name: str) -> None:
    """The refresh command of each page writes exactly what the test compares with."""
    target = tmp_path / "docs" / name
    assert main([*argv, "-o", str(target)]) == 3
    assert target.read_text(encoding="utf-8") == _generated(name)
    assert main([*argv, "-o", str(target)]) == 0


def test_every_field_of_the_schema_is_in_the_reference() -> None:
    """Each object of fabric.yaml has a section, and each of its fields a row."""
    import json

    from fabricgen.model.schema import schema_text

    reference = _text(DOCS / "fabric-yaml.md")
    schema = json.loads(schema_text())
    for definition in schema["$defs"].values():
        for field in definition.get("properties", {}):
            assert f"| `{field}` |" in reference, field
    assert "## `zones[].vpcs[].natGateway.dnat[]`" in reference
    assert "## `ovnDeployments[].consumers[]` (platform: openstack)" in reference


# ---------------------------------------------------------------------------------------------
# Commands and flags named in the pages


def _without_code_blocks(text: str) -> str:
    return re.sub(r"^( *)```.*?^\1```", "", text, flags=re.MULTILINE | re.DOTALL)


def _code_block_lines(text: str) -> Iterator[str]:
    for block in re.findall(r"^( *)```[a-z]*\n(.*?)^\1```", text, flags=re.MULTILINE | re.DOTALL):
        lines = block[1].splitlines()
        joined: list[str] = []
        for line in lines:
            if joined and (joined[-1].endswith("\\") or (line.startswith("   ") and line.strip().startswith("["))):
                joined[-1] = joined[-1].rstrip("\\") + " " + line.strip()  # a continued command
            else:
                joined.append(line)
        yield from joined


def _inline_spans(text: str) -> Iterator[str]:
    for span in re.findall(r"`([^`]+)`", _without_code_blocks(text)):
        yield " ".join(span.split())


def _segments(line: str) -> Iterator[str]:
    """The `fabricgen ...` commands of one line, split at pipes, `&&` and `;`, with comments and
    redirections left off."""
    line = re.sub(r"(^|\s)#\s.*$", "", line.replace("\\|", "|"))
    yield from re.findall(r'"(fabricgen [^"]*)"', line)  # `--exec "fabricgen krm"`
    for segment in re.split(r"\|(?!\w)|&&|;|\$\(", line):
        segment = segment.strip().strip('"')
        if re.match(r"fabricgen( |$)", segment):
            yield re.split(r"\s[<>]\s?", segment)[0].strip()


def _invocations(text: str) -> Iterator[str]:
    """Every `fabricgen ...` command of a page: in code block lines and inline code spans."""
    for line in [*_code_block_lines(text), *_inline_spans(text)]:
        yield from _segments(line)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return set(parser._option_string_actions)


def _documented() -> list[tuple[str, str]]:
    return [(_name(page), command) for page in PAGES for command in _invocations(_text(page))]


def test_the_pages_name_fabricgen_commands() -> None:
    found = _documented()
    assert len(found) > 50
    assert {command.split()[1] for _page, command in found if len(command.split()) > 1} \
        >= set(_subcommands(_parser()))


@pytest.mark.parametrize(("page", "command"), _documented())
def test_every_documented_command_and_flag_exists(page: str, command: str) -> None:
    parser = _parser()
    subcommands = _subcommands(parser)
    words = command.split()
    name = words[1] if len(words) > 1 else ""
    if name in {"COMMAND", ""} or name.startswith("-"):  # `fabricgen --help`, `fabricgen COMMAND --help`
        known = _flags(parser) | {"--help"}
        flags = [w for w in words[1:] if w.startswith("-")]
        assert set(flags) <= known, f"{page}: {command}"
        return
    assert name in subcommands, f"{page}: `{command}` names no fabricgen command {name!r}"
    known = _flags(subcommands[name])
    flags = re.findall(r"(?<![\w./-])(--?[A-Za-z][\w-]*)", " ".join(words[2:]))
    unknown = [f for f in flags if f not in known]
    assert not unknown, f"{page}: `{command}`: fabricgen {name} has no {', '.join(unknown)}"


# The examples that run here: sample fabrics, nothing written, no OVN lab, no cluster.
RUNNABLE = {"validate", "render", "graph", "schema", "rules", "diff"}


def _runnable() -> list[tuple[str, str]]:
    found: dict[str, str] = {}
    for page in PAGES:
        for line in _code_block_lines(_text(page)):
            for command in _segments(line):
                words = command.split()
                if len(words) < 2 or words[1] not in RUNNABLE or re.search(r"\b[A-Z]{3,}\b|\.\.\.|…", command):
                    continue  # a synopsis or a placeholder, not an example
                if words[1] == "render" and "--check" not in words:
                    continue  # would write rendered/
                found.setdefault(command, _name(page))
    return sorted((page, command) for command, page in found.items())


def test_runnable_examples_cover_each_kind() -> None:
    kinds = {command.split()[1] for _page, command in _runnable()}
    assert kinds == RUNNABLE, kinds


def _argv(command: str, scratch: Path) -> list[str]:
    argv: list[str] = []
    for word in shlex.split(command)[1:]:
        matches = sorted(glob.glob(word, root_dir=REPO)) if "*" in word else [word]
        argv += matches or [word]
    for option in ("-o", "--output"):
        if option in argv and argv[0] in {"schema", "rules"}:
            # Into a new file, not over the committed one (the generated-page tests hold that).
            argv[argv.index(option) + 1] = str(scratch / Path(argv[argv.index(option) + 1]).name)
    if argv[0] == "diff":
        # The committed fabrics against HEAD (origin/main need not exist here); the pull-request
        # comment without the OVN lab's matrix.
        if "--base" in argv:
            argv[argv.index("--base") + 1] = "HEAD"
        argv.append("--no-verify")
    return argv


def _spawning(command: str) -> bool:
    """diff reads git history (git runs), graph --format svg runs Graphviz dot."""
    return command.split()[1] == "diff" or "svg" in command.split()


@pytest.mark.parametrize(("page", "command"), [
    pytest.param(page, command, marks=[pytest.mark.lab] if _spawning(command) else [])
    for page, command in _runnable()])
def test_documented_example_runs(page: str, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    argv = _argv(command, tmp_path)
    if argv[0] == "graph" and "svg" in argv:
        import shutil

        if shutil.which("dot") is None:
            pytest.skip("Graphviz dot is not installed")
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("FABRICGEN_FAST_PATH", "0")
    code = main(argv)
    out, err = capsys.readouterr()
    writes = "-o" in argv and argv[0] in {"schema", "rules"}
    # diff: 3 when the working tree changed a fabric; schema and rules -o: 3, the file was new.
    allowed = {0, 3} if argv[0] == "diff" else {3} if writes else {0}
    assert code in allowed, f"{page}: `{command}` exited {code}\n{err}"
    if writes:
        assert (tmp_path / Path(argv[argv.index("-o") + 1]).name).stat().st_size > 0
    elif argv[0] in {"graph", "schema", "rules"} or "markdown" in argv:
        assert out, f"{page}: `{command}` printed nothing"


@pytest.mark.parametrize("name", sorted(_subcommands(_parser())))
def test_help_of_every_command(name: str) -> None:
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit) as exited:
        _parser().parse_args([name, "--help"])
    assert exited.value.code == 0
    assert f"usage: fabricgen {name}" in out.getvalue()
    assert "exit codes:" in out.getvalue()


def test_the_command_line_page_names_every_option() -> None:
    """docs/commands.md's synopsis has every command with every option of the parser."""
    text = _text(DOCS / "commands.md")
    synopsis = re.search(r"^```\n(fabricgen .*?)^```", text, re.MULTILINE | re.DOTALL)
    assert synopsis, "docs/commands.md lost its synopsis"
    lines: dict[str, str] = {}
    current = ""
    for line in synopsis.group(1).splitlines():
        if line.startswith("fabricgen "):
            current = line.split()[1]
        lines[current] = lines.get(current, "") + " " + line.split("  #", 1)[0]
    for name, sub in _subcommands(_parser()).items():
        assert name in lines, f"docs/commands.md: fabricgen {name} is missing from the synopsis"
        for action in sub._actions:
            if not action.option_strings or "--help" in action.option_strings:
                continue
            assert any(re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", lines[name]) for o in action.option_strings), \
                f"docs/commands.md: fabricgen {name} {'/'.join(action.option_strings)} is missing from the synopsis"
        assert f"| `{name}` |" in text, f"docs/commands.md: fabricgen {name} has no row in the table"


# ---------------------------------------------------------------------------------------------
# Links


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} (.+)$", _without_code_blocks(_text(page)), re.MULTILINE):
        base = _anchor(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def _links(page: Path) -> list[str]:
    text = re.sub(r"`[^`]*`", "", _without_code_blocks(_text(page)))
    return re.findall(r"\[[^\]]*\]\(([^)\s]+)\)", text)


def test_anchor_slugs_match_github() -> None:
    assert _anchor("Live status: `fabricgen status`") == "live-status-fabricgen-status"
    assert _anchor("What `transit --write` changes") == "what-transit---write-changes"
    assert _anchor("`ovnDeployments[].consumers[]` (platform: openstack)") \
        == "ovndeploymentsconsumers-platform-openstack"
    assert _anchor("A zone's output") == "a-zones-output"


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_relative_link_resolves(page: Path) -> None:
    for link in _links(page):
        if re.match(r"[a-z]+:", link):
            continue
        path, _hash, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        assert target.exists(), f"{_name(page)}: link {link} points at nothing"
        if anchor:
            assert target.suffix == ".md", f"{_name(page)}: link {link}"
            assert anchor in _anchors(target), f"{_name(page)}: link {link}: {_name(target)} has no such heading"


def test_every_page_is_linked_from_the_readme() -> None:
    linked = {(REPO / link.partition("#")[0]).resolve() for link in _links(REPO / "README.md")}
    for page in DOCS.glob("*.md"):
        assert page.resolve() in linked, f"README.md does not link to {_name(page)}"


def test_docs_are_markdown_with_readable_lines() -> None:
    """Prose wraps near 100 columns; code, tables and headings may be longer."""
    for page in PAGES:
        text = _without_code_blocks(_text(page))
        for line in text.splitlines():
            if line.startswith(("|", "#")) or re.fullmatch(r"\s*- \[.*\]\(.*\)", line):
                continue
            assert len(line) <= 110, f"{_name(page)}: a line of {len(line)} characters: {line[:60]}..."
