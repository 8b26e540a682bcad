"""`fabricgen rules`: every diagnostic code with its one-line documentation.

`rules --markdown -o docs/diagnostics.md` writes the whole diagnostics page: how a problem is
reported, the table of codes from the rules registry, and the exit codes. The text around the
table lives here, so the page is written by one command and the tests can hold it current.
"""

from __future__ import annotations

from pathlib import Path

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

# (code, meaning) of every exit status, for the page's last table.
EXIT_CODES = (
    ("0", "success; output up to date; `import` wrote a valid fabric whose round trip is exact; "
          "`status`: every check is ok"),
    ("1", "invalid fabric (every problem reported, nothing written), or the output cannot be written: "
          "`render -o` refused a directory holding a fabric or a tracked file fabricgen did not write, "
          "`init` found a file it would replace, `graph --format svg` found no Graphviz `dot`; `transit` "
          "refused the capture, or `--write` refused to write the fabric (see `transit`); `import`: the "
          "input was refused or the file exists (nothing written), or the imported fabric has errors "
          "(written, each located in it)"),
    ("2", "usage error: arguments, an unknown `diff --base` revision, `render --all` outside the top of a "
          "git repository, `init --site` not a DNS-1123 label, the Argo CD plugin's settings (a conflict, "
          "an unknown variable, a missing or unknown zone, `FABRIC` outside the repository), the KRM "
          "function's `FabricGenerator`"),
    ("3", "`render` changed files, or `--check` found the output out of date (pre-commit fails the commit "
          "until the new output is staged); `schema -o` or `rules -o` changed the file; `diff` found "
          "changes; `transit` found stale transit addresses; `import` wrote a valid fabric whose round "
          "trip is not exact; `status` found drift"),
    ("4", "internal error: a bug; `FABRICGEN_DEBUG=1` shows the traceback"),
    ("5", "`verify`: a pair of AZs is not delivered in the OVN lab (where the policy does not deny it), a policy "
          "flow is not as the policy says, or nothing was proven where something "
          "exists to prove (no pair of AZs, yet a shared OVN deployment or several zones)"),
    ("6", "`verify`: the OVN programs are missing (the message names the install command), or the lab "
          "cannot run, or its data plane could not settle (packets still on their way when the lab gave up "
          "waiting: never called lost)"),
    ("7", "`status`: the control plane is unhealthy (raft, transit switch keys, `vxlan_mode`)"),
    ("8", "`status`: part of the live fabric could not be read, or what was read does not settle a verdict "
          "whose fix could do harm (`unknown`); `status` exits with the worst it found: unreachable (8) over "
          "unhealthy (7) over unknown (8) over drift (3)"),
    ("130", "interrupted (Ctrl-C or SIGINT from fabricgen's first line on; one that lands in the Python "
            "interpreter's own start-up, its first 20 ms or so, ends it with Python's error and status 1, "
            "before fabricgen has read or written anything)"),
    ("129, 143", "ended by SIGHUP (a closed terminal) or SIGTERM (a cancelled CI job): cleaned up as for "
                 "Ctrl-C, no temporary file or directory left"),
    ("141", "the reader of stdout went away (a broken pipe, e.g. `fabricgen argocd-generate \\| head`)"),
)


def _exit_codes() -> str:
    rows = "".join(f"| {code} | {meaning} |\n" for code, meaning in EXIT_CODES)
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
