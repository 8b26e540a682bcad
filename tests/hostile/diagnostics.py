"""What a refusal must look like (docs/diagnostics.md): every problem one printable line
`FILE:LINE:COL: path: message [FGnnn]` inside the file, then the summary line."""

from __future__ import annotations

import re

DIAGNOSTIC = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<path>\S.*?): (?P<message>.+) "
                        r"\[(?P<code>FG\d{3})\]$")
SUMMARY = re.compile(r"^fabricgen: \d+ error\(s\), \d+ warning\(s\); nothing written$")
# YAML 1.2 breaks lines only at CR, LF and CRLF; YAML 1.1 also at NEL, LS and PS. A position is
# right when it is inside the file counted either way.
_LINE_BREAKS = (re.compile("\r\n|[\r\n]"), re.compile("\r\n|[\r\n\x85\u2028\u2029]"))


def problems(stderr: str, name: str, text: str | None, *, summary: bool = True,
             warnings_only: bool = False) -> list[str]:
    """Why `stderr` is not a located report about fabric `name` (empty when it is one).

    `text` is the fabric as read (None when it is not UTF-8: only line 1 column 1 or the
    file's own lines make sense then, and they are not checked)."""
    found: list[str] = []
    lines = stderr.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    else:
        found.append("stderr does not end with a line break")
    if summary:
        if not lines or not SUMMARY.match(lines[-1]):
            found.append(f"the last line is not the summary: {(lines[-1] if lines else '')[:200]!r}")
        else:
            lines = lines[:-1]
        if not lines:
            found.append("refused without a single diagnostic")
    sources = [breaks.split(text) for breaks in _LINE_BREAKS] if text is not None else []
    for line in lines:
        if warnings_only and "[FG" not in line:
            continue
        m = DIAGNOSTIC.match(line)
        if not m:
            found.append(f"not a located diagnostic: {line[:300]!r}")
            continue
        if not line.isprintable():
            found.append(f"a raw control or format character in a diagnostic: {line[:300]!r}")
        if m["file"] != name:
            found.append(f"names {m['file']!r}, not the fabric {name!r}: {line[:200]!r}")
        number, column = int(m["line"]), int(m["col"])
        if number < 1 or column < 1:
            found.append(f"position {number}:{column} is not 1-based: {line[:200]!r}")
        elif sources:
            # A file of n line breaks has n + 1 lines; the last may be empty (end of stream).
            inside = [number <= len(source) + 1 and (number > len(source) or column <= len(source[number - 1]) + 2)
                      for source in sources]
            if not any(inside):
                lines_of = len(sources[0])
                found.append(f"position {number}:{column} is outside the file ({lines_of} lines, line {number} "
                             f"has {len(sources[0][number - 1]) if number <= lines_of else 0} characters): "
                             f"{line[:200]!r}")
        if warnings_only and ": warning: " not in line:
            found.append(f"an accepted fabric reports an error: {line[:200]!r}")
    return found
