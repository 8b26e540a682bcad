"""How generated files name their source fabric: the header and `fabricgen.io/source`.

The name must not depend on where fabricgen runs from, or `render --check` from
another directory would call committed output stale. It is the fabric's path
relative to its repository: the nearest directory at or above the fabric that
holds `.git` (a directory, or a file in a worktree or submodule), found without
running git. Outside a repository it is relative to the parent of the output
root when the fabric lies below it, else the bare file name.

The name reaches comments (YAML, shell, INI, nft, systemd, FRR, properties),
string values (YAML, JSON) and a shell command line. `printable` makes it one
line of printable text first, so no reader can see a line break, a control
character or a bidirectional override in it; the serialisers and `shquote`
then quote it for their syntax.
"""

from __future__ import annotations

from pathlib import Path

from fabricgen.escapes import escaped

_NAMED_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """`text` with every character that is not printable (line breaks of any Unicode kind,
    controls, format characters such as bidirectional overrides, undecodable bytes) and
    the backslash written as a backslash escape, so the result is one unambiguous line."""
    if text.isprintable() and "\\" not in text:
        return text
    out = []
    for char in text:
        if char in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[char])
        else:
            out.append(char if char.isprintable() else escaped(char))
    return "".join(out)


def repository_root(path: Path) -> Path | None:
    """The nearest directory at or above `path` (absolute) that holds `.git`."""
    for directory in (path, *path.parents):
        if (directory / ".git").exists():
            return directory
    return None


def source_name(fabric: Path, output_root: Path | None = None) -> str:
    """The fabric's name in generated files, the same from any working directory."""
    resolved = fabric.resolve()
    root = repository_root(resolved.parent)
    if root is None and output_root is not None:
        base = output_root.resolve().parent
        if resolved.is_relative_to(base):
            root = base
    if root is None:
        return resolved.name
    return resolved.relative_to(root).as_posix()
