"""Reading fabric.yaml: the only place that parses YAML input.

The document is loaded with ruamel.yaml's round-trip loader so that every mapping
and sequence keeps the line and column of its keys and items. `Source.locate`
walks a model path (as pydantic reports it) back to a 1-based position. What a fabric may not
hold is refused on the events as they are read (`yaml_checks`).

A plain document (no anchor, alias, tag or `%YAML` directive, one document, a mapping, nothing
the reader refuses, nesting within MAX_DEPTH) is first read by ruamel.yaml's C parser
(`ruamel.yaml.clib`), several times faster on a large fabric: the same YAML 1.2 values, without
positions. The round-trip reading then happens only when a position is wanted (`locate`), and
`pipeline.check` validates a document that has anything to report once more from that reading,
so every message is the one the round-trip reading gives. Anything else, or without the C
parser, goes the round-trip way at once.
"""

from __future__ import annotations

import errno
import functools
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fabricgen.diagnostics import Diagnostic, format_path
from fabricgen.diagnostics import Path as ModelPath
from fabricgen.files.regular import MAX_FABRIC_BYTES, NotRegularError, TooLargeError, read_regular
from fabricgen.serialise.roundtrip_yaml import round_trip
from fabricgen.source.yaml_checks import (
    MAX_DEPTH,
    TOO_DEEP,
    EventCheck,
    Refused,
    checked,
    duplicate_key,
    key_path,
    position,
    shape_problem,
    syntax_error,
    too_deep,
)


@dataclass(frozen=True)
class Source:
    """A parsed fabric document and where it came from."""

    name: str  # as shown in messages: the path the user gave, POSIX style
    data: Any  # ruamel CommentedMap (a dict) or whatever the top level was; a plain dict when `fast`
    text: str
    path: Path | None = None  # the file it was read from; None for text given inline
    fast: bool = False  # read by the C parser: no positions until `located` reads them

    def located(self) -> Source:
        """This source with positions: itself, or the round-trip reading of its text (read once)."""
        return self._located if self.fast else self

    @functools.cached_property
    def _located(self) -> Source:
        found, _problems = parse(self.text, self.name, fast=False)
        return replace(found, path=self.path) if found is not None else replace(self, fast=False)

    def locate(self, path: ModelPath, *, value: bool = False) -> tuple[int, int]:
        """1-based line and column of the deepest node on `path` that exists.

        Mapping keys point at the key itself unless `value` is true; sequence items
        at the item. Path segments that do not exist in the YAML (pydantic adds
        some for unions and validators) are skipped, keeping the last known node.
        """
        node = self.located().data
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


def parse(text: str, name: str, *, fast: bool = True) -> tuple[Source | None, list[Diagnostic]]:
    """Parse YAML text; syntax errors, duplicate keys, tags and alias bombs come back as diagnostics.
    `fast`: a plain document is read by the C parser, without positions (see the module's text)."""
    if fast:
        quick = _fast(text, name)
        if quick is not None:
            return quick, []
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.reader import ReaderError

    try:
        docs = _load_without_comments(text)
        if docs is None:
            docs = list(checked(round_trip(preserve_quotes=False), EventCheck()).load_all(text))
    except Refused as exc:
        return None, [replace(exc.diagnostic, file=name)]
    except DuplicateKeyError as exc:
        mark = exc.problem_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        key = duplicate_key(exc)
        where = key_path(text, line, col)
        return None, [
            Diagnostic(name, line, col, "(document)" if where is None else format_path(where),
                       f"duplicate key {key!r}: each key may appear once in a mapping; "
                       "remove or merge the repeated entry", "FG002")
        ]
    except MarkedYAMLError as exc:
        return None, [replace(syntax_error(exc), file=name)]
    except ReaderError as exc:
        line, col = position(text, exc.position)
        escape = f"\\x{exc.character:02x}" if exc.character < 0x100 else f"\\u{exc.character:04x}"
        return None, [
            Diagnostic(name, line, col, "(document)",
                       f"character U+{exc.character:04X} is not allowed in YAML; remove it, or write it "
                       f"as the escape {escape} inside a double-quoted string", "FG001")
        ]
    except RecursionError:
        # The composer and constructor recurse once per level; find the level from the
        # (iterative) event stream instead.
        line, col = too_deep(text)
        return None, [Diagnostic(name, line, col, "(document)", TOO_DEEP, "FG001")]
    except YAMLError as exc:  # pragma: no cover - ruamel raises marked errors for text input
        problem = " ".join(str(exc).split())
        return None, [Diagnostic(name, 1, 1, "(document)", f"YAML error: {problem}", "FG001")]
    except Exception as exc:  # the reader failed on input its parser passed: never an internal error
        early = _event_problem(text)  # what the event stream says further on, if anything
        if early is not None:
            return None, [replace(early, file=name)]
        problem = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        return None, [Diagnostic(name, 1, 1, "(document)", f"the YAML reader cannot read this document "
                                 f"({problem}); write plain YAML 1.2", "FG001")]
    if len(docs) != 1:
        return None, [
            Diagnostic(name, 1, 1, "(document)",
                       f"expected exactly one YAML document, found {len(docs)}; "
                       "keep one Fabric per file", "FG001")
        ]
    shape = shape_problem(docs[0])
    if shape is not None:
        path, (line, col), message = shape
        return None, [Diagnostic(name, line, col, format_path(path), message, "FG001")]
    return Source(name=name, data=docs[0], text=text), []


def _event_problem(text: str) -> Diagnostic | None:
    """The first problem of the whole event stream read alone, without loading: for a document
    the loader failed on in a way of its own (ruamel's resolver meets a `%YAML` version of a
    later document before the parser refuses it)."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    check = EventCheck()
    try:
        for event in round_trip(comments=False).parse(text):
            problem = check.see(event)
            if problem is not None:
                return problem
    except MarkedYAMLError as exc:
        return syntax_error(exc)
    except YAMLError:
        return None
    return None


def _load_without_comments(text: str) -> list[Any] | None:
    """The documents, read without their comments (only positions are needed here) and
    checked event by event as they are read (`EventCheck`: raises `Refused`); None if the
    loader fails otherwise: the round-trip loader then reads the text again and its error,
    worded as the diagnostics quote it, is reported."""
    try:
        return list(checked(round_trip(preserve_quotes=False, comments=False), EventCheck()).load_all(text))
    except Refused:
        raise
    except Exception:
        return None


def _fast(text: str, name: str) -> Source | None:
    """The document read by ruamel.yaml's C parser when it is plainly fine (see the module's
    text), else None: the round-trip reading then decides, and words whatever is wrong."""
    try:
        from _ruamel_yaml import CParser  # ruamel.yaml.clib
        from ruamel.yaml import YAML
        from ruamel.yaml.reader import Reader
    except ImportError:  # pragma: no cover - ruamel.yaml.clib is a dependency
        return None
    if Reader.NON_PRINTABLE.search(text) or "\ufeff" in text:
        return None
    try:
        parser = CParser(text)
        documents = depth = 0
        while True:
            event = parser.get_event()
            kind = type(event).__name__
            if kind == "StreamEndEvent":
                break
            if kind == "AliasEvent" or getattr(event, "anchor", None) is not None \
                    or getattr(event, "tag", None) is not None:
                return None
            if kind == "DocumentStartEvent":
                documents += 1
                if getattr(event, "version", None) is not None or getattr(event, "tags", None):
                    return None
            elif kind in ("MappingStartEvent", "SequenceStartEvent"):
                depth += 1
                if depth > MAX_DEPTH:
                    return None
            elif kind in ("MappingEndEvent", "SequenceEndEvent"):
                depth -= 1
        if documents != 1:
            return None
        data = YAML(typ="safe", pure=False).load(text)
    except Exception:  # the round-trip reading words it
        return None
    if not isinstance(data, dict):
        return None
    return Source(name=name, data=data, text=text, fast=True)


MAX_BYTES = MAX_FABRIC_BYTES
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_text(path: Path) -> str:
    """The text of a fabric file: a regular file of at most MAX_BYTES, UTF-8.

    Opened without blocking, so a FIFO cannot hang the reader, and refused unless it
    is a regular file, so a device such as /dev/zero is never read. Raises OSError
    (strerror says what is wrong) or UnicodeDecodeError.
    """
    try:
        data, _status = read_regular(path, follow_symlinks=True, limit=MAX_BYTES)
    except NotRegularError as exc:
        kind = next((name for test, name in _KINDS if test(exc.mode)), "not a regular file")
        raise OSError(errno.EINVAL, f"it is {kind}, not a regular file; give the path of a fabric file") from None
    except TooLargeError:
        raise OSError(errno.EFBIG, f"it is larger than {MAX_BYTES // (1024 * 1024)} MiB ({MAX_BYTES} bytes), "
                                   "far more than a fabric needs; split it into one fabric per site") from None
    return data.decode("utf-8")


def read(path: Path, name: str | None = None) -> tuple[Source | None, list[Diagnostic]]:
    """Read and parse a fabric file, named `name` in diagnostics (default: `display_name`)."""
    name = display_name(path) if name is None else name
    try:
        text = read_text(path)
    except FileNotFoundError:
        return None, [Diagnostic(name, 1, 1, "(document)", "file not found", "FG000")]
    except UnicodeDecodeError as exc:
        before = exc.object[: exc.start].decode("utf-8", "replace")
        line, col = position(before, len(before))
        return None, [Diagnostic(name, line, col, "(document)",
                                 f"byte 0x{exc.object[exc.start]:02x} is not UTF-8; save the file as UTF-8",
                                 "FG000")]
    except OSError as exc:
        return None, [Diagnostic(name, 1, 1, "(document)", f"cannot read file: {exc.strerror or exc}", "FG000")]
    source, found = parse(text, name)
    return (None if source is None else replace(source, path=path)), found


__all__ = ["MAX_BYTES", "ModelPath", "Source", "display_name", "parse", "read", "read_text"]
