"""What a fabric may not hold, found on ruamel.yaml's events as they are read: nesting past
MAX_DEPTH, aliases past MAX_ALIAS_NODES, tags, a reused anchor, a duplicate key; the shape the
model cannot take (a mapping where a list is wanted, a tagged value); and a model path found back
from a line and column. `reader` reads a fabric through these, so a refusal stops the reading
before the rest is read or anything is constructed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fabricgen.diagnostics import Diagnostic, format_path
from fabricgen.diagnostics import Path as ModelPath
from fabricgen.serialise.roundtrip_yaml import round_trip


class Refused(Exception):
    """The event stream holds what a fabric may not (`EventCheck`): the load stops there."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def checked(yaml: Any, check: EventCheck) -> Any:
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
                    raise Refused(problem)
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
TOO_DEEP = (f"YAML nesting is deeper than {MAX_DEPTH} levels; a fabric needs far fewer; "
             "close the open lists and mappings")


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset, counting line breaks as ruamel's YAML 1.2
    reader does (LF, CR and CRLF)."""
    before = text[:offset].replace("\r\n", "\n").replace("\r", "\n")
    return before.count("\n") + 1, len(before) - before.rfind("\n")


def too_deep(text: str) -> tuple[int, int]:
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


def shape_problem(data: Any) -> tuple[ModelPath, tuple[int, int], str] | None:
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
                return child_path, where, TOO_DEEP
            continue
        if len(stack) + 1 > MAX_DEPTH:
            return child_path, where, TOO_DEEP
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


def node_events(text: str) -> Iterator[tuple[Any, ModelPath, int]]:
    """Every node of the event stream (scalars, aliases, starts of mappings and sequences) with
    its model path and nesting depth (1 for the top level), read without building anything.
    A mapping key is yielded with the path of its mapping plus `?`. Raises YAMLError where the
    text stops being YAML."""
    paths = _EventPaths()
    for event in round_trip(comments=False).parse(text):
        found = paths.step(event)
        if found is not None:
            yield event, *found


def key_path(text: str, line: int, col: int) -> ModelPath | None:
    """The path of the mapping key that starts at 1-based `line`:`col`, read from the event
    stream: the loader stops at a duplicate key, so there is no document to walk."""
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.events import ScalarEvent

    try:
        for event, path, _depth in node_events(text):
            mark = event.start_mark
            if path[-1:] == ("?",) and isinstance(event, ScalarEvent) \
                    and (mark.line + 1, mark.column + 1) == (line, col):
                return (*path[:-1], event.value)
    except (YAMLError, RecursionError):  # past the key: the position alone still locates it
        return None
    return None


def syntax_error(exc: Any) -> Diagnostic:
    """A parser's or loader's marked error as a located FG001 (the file name left to the caller)."""
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
    return Diagnostic("", line, col, "(document)", f"YAML syntax error: {problem}; fix the syntax at this position",
                      "FG001")


class EventCheck:
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
            return Diagnostic("", *where, shown, TOO_DEEP, "FG001")
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


def duplicate_key(exc: Exception) -> str:
    problem = getattr(exc, "problem", "") or ""
    # ruamel: 'found duplicate key "name" with value ...'
    if '"' in problem:
        return problem.split('"')[1]
    return problem
