"""Reading fabric.yaml: the only place that parses YAML input.

The document is loaded with ruamel.yaml's round-trip loader so that every mapping
and sequence keeps the line and column of its keys and items. `Source.locate`
walks a model path (as pydantic reports it) back to a 1-based position.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabricgen.diagnostics import Diagnostic, format_path
from fabricgen.diagnostics import Path as ModelPath


@dataclass(frozen=True)
class Source:
    """A parsed fabric document and where it came from."""

    name: str  # as shown in messages: the path the user gave, POSIX style
    data: Any  # ruamel CommentedMap (a dict) or whatever the top level was
    text: str

    def locate(self, path: ModelPath, *, value: bool = False) -> tuple[int, int]:
        """1-based line and column of the deepest node on `path` that exists.

        Mapping keys point at the key itself unless `value` is true; sequence items
        at the item. Path segments that do not exist in the YAML (pydantic adds
        some for unions and validators) are skipped, keeping the last known node.
        """
        node = self.data
        line, col = 0, 0
        for index, part in enumerate(path):
            lc = getattr(node, "lc", None)
            if lc is None:
                break
            last = index == len(path) - 1
            try:
                if isinstance(node, dict) and part in node:
                    pos = lc.value(part) if (value and last) else lc.key(part)
                    node = node[part]
                elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                    pos = lc.item(part)
                    node = node[part]
                else:
                    continue
            except (KeyError, IndexError, TypeError):
                break
            if pos is not None and pos[0] is not None:
                line, col = pos[0], pos[1]
        return line + 1, col + 1

    def diagnostic(
        self, path: ModelPath, message: str, code: str, *, severity: Any = None, value: bool = False
    ) -> Diagnostic:
        line, col = self.locate(path, value=value)
        kwargs = {} if severity is None else {"severity": severity}
        return Diagnostic(self.name, line, col, format_path(path), message, code, **kwargs)


def display_name(path: Path) -> str:
    """The file name as messages show it: relative to the working directory if inside it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def parse(text: str, name: str) -> tuple[Source | None, list[Diagnostic]]:
    """Parse YAML text; syntax errors and duplicate keys come back as diagnostics."""
    from ruamel.yaml import YAML
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        docs = list(yaml.load_all(text))
    except DuplicateKeyError as exc:
        mark = exc.problem_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        key = _duplicate_key(exc)
        return None, [
            Diagnostic(name, line, col, "(document)",
                       f"duplicate key {key!r}: each key may appear once in a mapping; "
                       "remove or merge the repeated entry", "FG002")
        ]
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        return None, [
            Diagnostic(name, line, col, "(document)",
                       f"YAML syntax error: {problem}; fix the syntax at this position", "FG001")
        ]
    except YAMLError as exc:  # pragma: no cover - ruamel raises marked errors for text input
        return None, [Diagnostic(name, 1, 1, "(document)", f"YAML error: {exc}", "FG001")]
    if len(docs) != 1:
        return None, [
            Diagnostic(name, 1, 1, "(document)",
                       f"expected exactly one YAML document, found {len(docs)}; "
                       "keep one Fabric per file", "FG001")
        ]
    return Source(name=name, data=docs[0], text=text), []


def _duplicate_key(exc: Exception) -> str:
    problem = getattr(exc, "problem", "") or ""
    # ruamel: 'found duplicate key "name" with value ...'
    if '"' in problem:
        return problem.split('"')[1]
    return problem


def read(path: Path) -> tuple[Source | None, list[Diagnostic]]:
    name = display_name(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, [Diagnostic(name, 1, 1, "(document)", "file not found", "FG000")]
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Diagnostic(name, 1, 1, "(document)", f"cannot read file: {exc}", "FG000")]
    return parse(text, name)


__all__ = ["ModelPath", "Source", "display_name", "parse", "read"]
