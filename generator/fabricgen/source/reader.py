"""Reading fabric.yaml: the only place that parses YAML input.

The document is loaded with ruamel.yaml's round-trip loader so that every mapping
and sequence keeps the line and column of its keys and items. `Source.locate`
walks a model path (as pydantic reports it) back to a 1-based position.

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
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fabricgen.diagnostics import Diagnostic, format_path
from fabricgen.diagnostics import Path as ModelPath
from fabricgen.files.regular import MAX_FABRIC_BYTES, NotRegularError, TooLargeError, read_regular
from fabricgen.serialise.roundtrip_yaml import round_trip


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
            docs = list(_checked(round_trip(preserve_quotes=False), _EventCheck()).load_all(text))
    except _Refused as exc:
        return None, [replace(exc.diagnostic, file=name)]
    except DuplicateKeyError as exc:
        mark = exc.problem_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        key = _duplicate_key(exc)
        where = _key_path(text, line, col)
        return None, [
            Diagnostic(name, line, col, "(document)" if where is None else format_path(where),
                       f"duplicate key {key!r}: each key may appear once in a mapping; "
                       "remove or merge the repeated entry", "FG002")
        ]
    except MarkedYAMLError as exc:
        return None, [replace(_syntax_error(exc), file=name)]
    except ReaderError as exc:
        line, col = _position(text, exc.position)
        escape = f"\\x{exc.character:02x}" if exc.character < 0x100 else f"\\u{exc.character:04x}"
        return None, [
            Diagnostic(name, line, col, "(document)",
                       f"character U+{exc.character:04X} is not allowed in YAML; remove it, or write it "
                       f"as the escape {escape} inside a double-quoted string", "FG001")
        ]
    except RecursionError:
        # The composer and constructor recurse once per level; find the level from the
        # (iterative) event stream instead.
        line, col = _too_deep(text)
        return None, [Diagnostic(name, line, col, "(document)", _TOO_DEEP, "FG001")]
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
    shape = _shape_problem(docs[0])
    if shape is not None:
        path, (line, col), message = shape
        return None, [Diagnostic(name, line, col, format_path(path), message, "FG001")]
    return Source(name=name, data=docs[0], text=text), []


def _event_problem(text: str) -> Diagnostic | None:
    """The first problem of the whole event stream read alone, without loading: for a document
    the loader failed on in a way of its own (ruamel's resolver meets a `%YAML` version of a
    later document before the parser refuses it)."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    check = _EventCheck()
    try:
        for event in round_trip(comments=False).parse(text):
            problem = check.see(event)
            if problem is not None:
                return problem
    except MarkedYAMLError as exc:
        return _syntax_error(exc)
    except YAMLError:
        return None
    return None


def _load_without_comments(text: str) -> list[Any] | None:
    """The documents, read without their comments (only positions are needed here) and
    checked event by event as they are read (`_EventCheck`: raises `_Refused`); None if the
    loader fails otherwise: the round-trip loader then reads the text again and its error,
    worded as the diagnostics quote it, is reported."""
    try:
        return list(_checked(round_trip(preserve_quotes=False, comments=False), _EventCheck()).load_all(text))
    except _Refused:
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


class _Refused(Exception):
    """The event stream holds what a fabric may not (`_EventCheck`): the load stops there."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _checked(yaml: Any, check: _EventCheck) -> Any:
    """`yaml` whose parser hands every event to `check` as the composer first sees it, so one
    reading of the text both checks and loads it, and a refusal stops it before the rest is
    read or anything is constructed (the composer builds a document's nodes before the
    constructor sees any of them)."""
    base = yaml.Parser

    class CheckedParser(base):  # type: ignore[misc, valid-type]
        # The composer peeks at an event before it takes it (and warns of a reused anchor
        # then), so each event is checked once, the first time anyone looks at it.
        _checked: Any = None

        def _check(self, event: Any) -> Any:
            if event is not None and event is not self._checked:
                self._checked = event
                problem = check.see(event)
                if problem is not None:
                    raise _Refused(problem)
            return event

        def check_event(self, *choices: Any) -> bool:
            found = bool(super().check_event(*choices))
            self._check(self.current_event)
            return found

        def peek_event(self) -> Any:
            return self._check(super().peek_event())

        def get_event(self) -> Any:
            return self._check(super().get_event())

    yaml.Parser = CheckedParser
    return yaml


# A fabric nests a few levels deep and shares values with aliases at most a few times;
# past these limits the document is refused before anything walks or validates it.
MAX_DEPTH = 64
MAX_ALIAS_NODES = 100_000
_TOO_DEEP = (f"YAML nesting is deeper than {MAX_DEPTH} levels; a fabric needs far fewer; "
             "close the open lists and mappings")


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset, counting line breaks as ruamel's YAML 1.2
    reader does (LF, CR and CRLF)."""
    before = text[:offset].replace("\r\n", "\n").replace("\r", "\n")
    return before.count("\n") + 1, len(before) - before.rfind("\n")


def _too_deep(text: str) -> tuple[int, int]:
    """Where the nesting first exceeds MAX_DEPTH, read from the parser's event stream."""
    from ruamel.yaml.events import CollectionEndEvent, CollectionStartEvent

    depth = 0
    for event in round_trip().parse(text):
        if isinstance(event, CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                return event.start_mark.line + 1, event.start_mark.column + 1
        elif isinstance(event, CollectionEndEvent):
            depth -= 1
    return 1, 1  # pragma: no cover - only called when the loader ran out of stack


_CORE_TAG = "tag:yaml.org,2002:"
_TAGGED_TYPES = {"CommentedSet": "!!set", "CommentedOrderedMap": "!!omap", "bytes": "!!binary"}


def _tag(node: Any) -> str | None:
    """The explicit tag of a loaded node, if it has one (plain YAML has none)."""
    name = _TAGGED_TYPES.get(type(node).__name__)
    if name is not None:
        return name
    tag = getattr(node, "tag", None)
    value = getattr(tag, "value", tag)
    if not isinstance(value, str) or not value:
        return None
    return "!!" + value[len(_CORE_TAG):] if value.startswith(_CORE_TAG) else value


def _edges(node: Any) -> list[tuple[str | int, tuple[int, int] | None, Any]]:
    """(key, 1-based position of the value, value) for every child of a mapping or sequence."""
    lc = getattr(node, "lc", None)
    items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
    out: list[tuple[str | int, tuple[int, int] | None, Any]] = []
    for key, value in items:
        pos = None
        try:
            raw = None if lc is None else lc.value(key) if isinstance(node, dict) else lc.item(key)
            if raw is not None and raw[0] is not None:
                pos = (raw[0] + 1, raw[1] + 1)
        except (KeyError, IndexError, TypeError):
            pass  # a key brought in by a merge key (<<) has no position of its own
        out.append((key if isinstance(key, (str, int)) else str(key), pos, value))
    return out


def _shape_problem(data: Any) -> tuple[ModelPath, tuple[int, int], str] | None:
    """Explicit tags, nesting deeper than MAX_DEPTH, recursive aliases, and aliases that
    expand the document by more than MAX_ALIAS_NODES nodes (a "billion laughs").

    One iterative walk; a node shared through an alias is walked once, its expanded
    size and height remembered, so a bomb is measured without being expanded.
    """
    lc = getattr(data, "lc", None)
    root_pos = (lc.line + 1, lc.col + 1) if lc is not None and lc.line is not None else (1, 1)
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    open_: set[int] = set()
    extra = 0
    # frame: node, its path, its position, remaining edges, expanded size so far, height so far
    stack: list[tuple[Any, ModelPath, tuple[int, int], list[Any], list[int]]] = []

    def enter(node: Any, path: ModelPath, pos: tuple[int, int]) -> None:
        open_.add(id(node))
        stack.append((node, path, pos, _edges(node)[::-1], [1, 0]))

    if _tag(data) is not None:
        return (), root_pos, f"explicit YAML tag {_tag(data)} is not supported in a fabric; remove it"
    if isinstance(data, (dict, list)):
        enter(data, (), root_pos)
    while stack:
        node, path, pos, edges, acc = stack[-1]
        if not edges:
            stack.pop()
            open_.discard(id(node))
            size[id(node)], height[id(node)] = acc
            if stack:
                parent = stack[-1][4]
                parent[0] += acc[0]
                parent[1] = max(parent[1], acc[1] + 1)
            continue
        key, child_pos, child = edges.pop()
        child_path = (*path, key)
        where = child_pos or pos
        tag = _tag(child)
        if tag is not None:
            return child_path, where, (f"explicit YAML tag {tag} is not supported in a fabric; remove it "
                                       "(quote the value if it must be a string)")
        if not isinstance(child, (dict, list)):
            acc[0] += 1
            continue
        if id(child) in open_:  # pragma: no cover - ruamel loads a recursive alias as null today
            return child_path, where, ("this alias refers to a mapping or list that contains it, which "
                                       "would make the fabric infinite; write the value out instead")
        if id(child) in size:  # an alias of a node walked before
            extra += size[id(child)]
            acc[0] += size[id(child)]
            acc[1] = max(acc[1], height[id(child)] + 1)
            if extra > MAX_ALIAS_NODES:
                return child_path, where, (f"aliases expand the document by more than {MAX_ALIAS_NODES} "
                                           "nodes; a fabric shares values a few times at most; write "
                                           "the values out instead of nesting aliases")
            if len(stack) + 1 + height[id(child)] > MAX_DEPTH:
                return child_path, where, _TOO_DEEP
            continue
        if len(stack) + 1 > MAX_DEPTH:
            return child_path, where, _TOO_DEEP
        enter(child, child_path, where)
    return None


@dataclass
class _Frame:
    """An open mapping or sequence while walking the event stream."""

    path: ModelPath
    mapping: bool
    at_key: bool = False  # a mapping whose next node is a key
    key: str | int = 0  # the mapping's current key, or the sequence's next index


class _EventPaths:
    """The model path and nesting depth of each node of an event stream, event by event."""

    def __init__(self) -> None:
        from ruamel.yaml.events import (
            AliasEvent,
            CollectionEndEvent,
            MappingStartEvent,
            NodeEvent,
            ScalarEvent,
            SequenceStartEvent,
        )

        self._end, self._node, self._scalar = CollectionEndEvent, (NodeEvent, AliasEvent), ScalarEvent
        self._mapping, self._start = MappingStartEvent, (MappingStartEvent, SequenceStartEvent)
        self.stack: list[_Frame] = []

    def step(self, event: Any) -> tuple[ModelPath, int] | None:
        """The node's path and depth (1 for the top level); None for an event that is no node. A
        mapping key gets the path of its mapping plus `?`."""
        stack = self.stack
        if isinstance(event, self._end):
            stack.pop()
            return None
        if not isinstance(event, self._node):
            return None
        path: ModelPath = ()
        if stack and stack[-1].at_key:
            top = stack[-1]
            top.at_key = False
            top.key = event.value if isinstance(event, self._scalar) else "?"  # "?": a complex key
            path = (*top.path, "?")
        elif stack and stack[-1].mapping:
            stack[-1].at_key = True
            path = (*stack[-1].path, stack[-1].key)
        elif stack:
            path = (*stack[-1].path, stack[-1].key)
            stack[-1].key = int(stack[-1].key) + 1
        depth = len(stack) + 1
        if isinstance(event, self._start):
            mapping = isinstance(event, self._mapping)
            stack.append(_Frame(path, mapping, at_key=mapping))
        return path, depth


def _node_events(text: str) -> Iterator[tuple[Any, ModelPath, int]]:
    """Every node of the event stream (scalars, aliases, starts of mappings and sequences) with
    its model path and nesting depth (1 for the top level), read without building anything.
    A mapping key is yielded with the path of its mapping plus `?`. Raises YAMLError where the
    text stops being YAML."""
    paths = _EventPaths()
    for event in round_trip(comments=False).parse(text):
        found = paths.step(event)
        if found is not None:
            yield event, *found


def _key_path(text: str, line: int, col: int) -> ModelPath | None:
    """The path of the mapping key that starts at 1-based `line`:`col`, read from the event
    stream: the loader stops at a duplicate key, so there is no document to walk."""
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.events import ScalarEvent

    try:
        for event, path, _depth in _node_events(text):
            mark = event.start_mark
            if path[-1:] == ("?",) and isinstance(event, ScalarEvent) \
                    and (mark.line + 1, mark.column + 1) == (line, col):
                return (*path[:-1], event.value)
    except (YAMLError, RecursionError):  # past the key: the position alone still locates it
        return None
    return None


def _syntax_error(exc: Any) -> Diagnostic:
    """A parser's or loader's marked error as a located FG001 (the file name left to the caller)."""
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
    return Diagnostic("", line, col, "(document)", f"YAML syntax error: {problem}; fix the syntax at this position",
                      "FG001")


class _EventCheck:
    """What the parser's event stream alone refuses, checked on each event as it is read,
    before anything is built from it: an explicit tag (`!!float`, `!!omap`, `!`, `!<...>`: a
    constructor would run on the value, and some fail in ways no message explains), an anchor
    defined twice (each alias would mean whichever came last; ruamel only warns), a `%YAML`
    version other than 1.1 or 1.2 (the parser's own error), and nesting deeper than MAX_DEPTH
    (refused at the first level too deep, however deep the document goes). The loader reports
    the rest (syntax, duplicate keys, control characters)."""

    def __init__(self) -> None:
        from ruamel.yaml.events import AliasEvent, CollectionStartEvent

        self._collection, self._alias = CollectionStartEvent, AliasEvent
        self.paths = _EventPaths()
        self.anchors: set[str] = set()

    def see(self, event: Any) -> Diagnostic | None:
        found = self.paths.step(event)
        if found is None:
            return None
        path, depth = found
        mark = event.start_mark
        where = (mark.line + 1, mark.column + 1)
        shown = format_path(path[:-1] if path[-1:] == ("?",) else path) or "(document)"
        if depth > MAX_DEPTH and isinstance(event, self._collection):
            return Diagnostic("", *where, shown, _TOO_DEEP, "FG001")
        tag = getattr(event, "tag", None)
        if tag is not None:
            written = "!!" + tag[len(_CORE_TAG):] if tag.startswith(_CORE_TAG) else tag
            return Diagnostic("", *where, shown, f"explicit YAML tag {written} is not supported in a fabric; "
                                                 "remove it (quote the value if it must be a string)", "FG001")
        anchor = getattr(event, "anchor", None) if not isinstance(event, self._alias) else None
        if anchor is not None:
            if anchor in self.anchors:
                return Diagnostic("", *where, shown, f"anchor &{anchor} is defined twice, so an alias *{anchor} "
                                                     "would mean the later one; give each anchor its own name",
                                  "FG001")
            self.anchors.add(anchor)
        return None


def _duplicate_key(exc: Exception) -> str:
    problem = getattr(exc, "problem", "") or ""
    # ruamel: 'found duplicate key "name" with value ...'
    if '"' in problem:
        return problem.split('"')[1]
    return problem


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
        line, col = _position(before, len(before))
        return None, [Diagnostic(name, line, col, "(document)",
                                 f"byte 0x{exc.object[exc.start]:02x} is not UTF-8; save the file as UTF-8",
                                 "FG000")]
    except OSError as exc:
        return None, [Diagnostic(name, 1, 1, "(document)", f"cannot read file: {exc.strerror or exc}", "FG000")]
    source, found = parse(text, name)
    return (None if source is None else replace(source, path=path)), found


__all__ = ["MAX_BYTES", "ModelPath", "Source", "display_name", "parse", "read", "read_text"]
