"""`fabricgen rules`: every diagnostic code with its one-line documentation.

`rules --markdown -o docs/diagnostics.md` writes the whole diagnostics page: how a problem is
reported, the table of codes from the rules registry, and the exit codes. The text around the
table lives here, so the page is written by one command and the tests can hold it current.
"""

from __future__ import annotations

from pathlib import Path

from fabricgen import exit_codes
from fabricgen.commands import generated_file
from fabricgen.validation.rules import catalogue

DIAGNOSTICS_INTRO = """\
# Diagnostics and exit codes

Generated from fabricgen's rules by `fabricgen rules --markdown -o docs/diagnostics.md`; do not
edit by hand (the text around the table is in `generator/fabricgen/commands/rules.py`).

- [How a problem is reported](#how-a-problem-is-reported)
- [Codes](#codes)
- [Exit codes](#exit-codes)

## How a problem is reported

Bad input is refused with every problem at once, and nothing is written. Every problem is
reported as `FILE:LINE:COL: path.to.field: message [CODE]`; warnings say `warning:` and do not
fail. A key that is not a plain name is quoted in the path (`zones[0]['gateway nodes']`) and
values are quoted with escapes, so a diagnostic is always one line.

```sh
fabricgen validate sites/lab/fabric.yaml                  # text
fabricgen validate sites/lab/fabric.yaml --format json    # a machine-readable report on stdout
```

`validate` checks and writes nothing. `--format json` prints a machine-readable report on stdout;
`github` prints workflow annotations (`::error file=…,line=…,col=…::…`); `auto` (default) is
`github` under GitHub Actions, else `text`. `render` takes the same `--format`.

The checks run in three passes, each reporting all it finds: YAML (FG001, FG002), then the schema
(FG003: unknown or missing fields, types, CIDRs, names), then the rules (FG1xx to FG7xx), which need
a schema-valid fabric. After fixing schema errors, validate again: more problems may show up.

A fabric is a regular UTF-8 file of at most 4 MiB (ten thousand zones take about 3 MB): a FIFO, a
device such as `/dev/zero` or a directory is refused without being read (FG000), and so is a
larger file, before it is parsed.

fabric.yaml is plain YAML 1.2: anchors, aliases and `<<` merge keys mean what YAML says. Refused
with FG001, before anything else looks at the document: explicit tags (`!!python/object`,
`!!binary`, `!!str`, `!custom`; quote a value to make it a string), nesting deeper than 64
levels, and aliases that expand the document by more than 100 000 nodes (a "billion laughs").

## Codes

The codes are stable; `fabricgen rules` lists them:

"""

def _exit_codes() -> str:
    rows = "".join(f"| {m.codes} | {m.long} |\n" for m in exit_codes.MEANINGS)
    return ("\n## Exit codes\n\n`fabricgen --help` and each command's `--help` end with the same list, "
            "shorter.\n\n| code | meaning |\n| --- | --- |\n" + rows)


def table(*, markdown: bool) -> str:
    """Every code with its name and summary: a Markdown table, or aligned plain text."""
    rows = catalogue()
    if markdown:
        lines = ["| code | name | what it means |", "| --- | --- | --- |"]
        lines += [f"| {code} | `{name}` | {summary} |" for code, name, summary in rows]
    else:
        lines = [f"{code}  {name:28} {summary}" for code, name, summary in rows]
    return "\n".join(lines) + "\n"


def page() -> str:
    """The whole diagnostics page, `docs/diagnostics.md`."""
    return DIAGNOSTICS_INTRO + table(markdown=True) + _exit_codes()


def run(*, markdown: bool, output: Path | None = None) -> int:
    text = page() if output is not None and markdown else table(markdown=markdown)
    return generated_file.write(text, output)
