"""Writing fabric.yaml back: each edit replaces one scalar's characters, nothing else.

`fabricgen.source.reader` reads fabrics; this module is the one place that changes
them (`fabricgen.output.emit` writes only rendered output). The document is never
serialised again: an edit replaces the characters of one scalar at the span the
parser's marks give it (plain, single- or double-quoted, keeping its style, its
anchor and whatever follows it on the line), or inserts one `key: value` line into a
mapping. Everything else, a byte-order mark, `%YAML` directives, `---` and `...`,
CRLF line breaks, trailing whitespace, comments and the layout of flow lists, stays
as it was, byte for byte.

A scalar used through aliases (or merge keys, `<<`) is one node in several places:
changing it changes every place, as YAML means. `set_scalars` changes it only if
every other place is one the caller says follows the edited value, and otherwise
refuses, located at the alias. The result is checked: read again, it must equal the
original document with just those values changed.

`replace_file` writes the result: atomically (a temporary file in the directory of
the file a symlink points to, renamed over it), keeping mode, owner and group, and
refusing with a `WriteError` where it cannot.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabricgen.diagnostics import format_path
from fabricgen.errors import FabricgenError
from fabricgen.files.held_signals import held_signals
from fabricgen.files.regular import read_regular
from fabricgen.serialise.roundtrip_yaml import round_trip

EditPath = tuple[str | int, ...]
# A value written without quotes must read back as the same string: addresses, names.
_PLAIN_VALUE = re.compile(r"[0-9A-Za-z][0-9A-Za-z._/-]*")
_BREAKS = ("\r\n", "\n", "\r")


@dataclass(frozen=True)
class EditProblem:
    """Why an edit cannot be made, at a 1-based line and column of the document."""

    line: int
    column: int
    path: str
    message: str


class EditError(FabricgenError):
    """An edit cannot be applied to the document as written."""

    def __init__(self, problems: Sequence[EditProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(f"{p.line}:{p.column}: {p.path}: {p.message}" for p in problems))


class WriteError(FabricgenError):
    """The file cannot be replaced as it is (permissions, owner, links); it is left unchanged."""


# ---------------------------------------------------------------- the document as nodes with marks
@dataclass(eq=False)
class _Node:
    event: Any  # the scalar or collection start event: start_mark (at its anchor or tag), style
    end: int = 0  # character index just after the node
    pairs: list[tuple[_Ref, _Ref]] = field(default_factory=list)  # a mapping's keys and values
    items: list[_Ref] = field(default_factory=list)  # a sequence's items

    @property
    def kind(self) -> str:
        name = type(self.event).__name__
        return "scalar" if name == "ScalarEvent" else "mapping" if name == "MappingStartEvent" else "sequence"

    @property
    def start(self) -> int:
        return int(self.event.start_mark.index)


@dataclass(frozen=True, eq=False)
class _Ref:
    """A node where it is used: in place, or through the alias event `alias`."""

    node: _Node
    alias: Any = None


def _compose(text: str) -> _Ref:
    """The one document of `text` as nodes that keep the parser's events; aliases share nodes."""
    from ruamel.yaml.events import (
        AliasEvent,
        CollectionEndEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceStartEvent,
    )

    anchors: dict[str, _Node] = {}
    stack: list[tuple[_Node, list[_Ref]]] = []  # open collections, with a mapping's pending key
    root: list[_Ref] = []

    def add(ref: _Ref) -> None:
        if not stack:
            root.append(ref)
            return
        parent, pending = stack[-1]
        if parent.kind == "sequence":
            parent.items.append(ref)
        elif pending:
            parent.pairs.append((pending.pop(), ref))
        else:
            pending.append(ref)

    for event in round_trip(preserve_quotes=False, comments=False).parse(text):
        if isinstance(event, AliasEvent):
            node = anchors[event.anchor]
            if any(node is open_node for open_node, _pending in stack):
                raise EditError([EditProblem(event.start_mark.line + 1, event.start_mark.column + 1, "(document)",
                                             f"alias *{event.anchor} refers to a mapping or list that contains "
                                             "it; write the value out")])
            add(_Ref(node, event))
        elif isinstance(event, (ScalarEvent, MappingStartEvent, SequenceStartEvent)):
            node = _Node(event, end=int(event.end_mark.index))
            if event.anchor is not None:
                anchors[event.anchor] = node
            add(_Ref(node))
            if not isinstance(event, ScalarEvent):
                stack.append((node, []))
        elif isinstance(event, CollectionEndEvent):
            node, _pending = stack.pop()
            node.end = int(event.end_mark.index)
    if len(root) != 1:  # pragma: no cover - the reader accepts exactly one document
        raise EditError([EditProblem(1, 1, "(document)", "expected exactly one YAML document")])
    return root[0]


def _key(ref: _Ref) -> str | None:
    event = ref.node.event
    return str(event.value) if ref.node.kind == "scalar" else None


def _is_merge(ref: _Ref) -> bool:
    event = ref.node.event
    return ref.node.kind == "scalar" and event.value == "<<" and event.style is None and event.tag is None


def _entries(mapping: _Node) -> list[tuple[str, _Ref, _Ref]]:
    """(key, key node, value) of a mapping as YAML reads it: its own keys first, then those
    merge keys (`<<`) bring in that it does not have, earlier merged mappings first."""
    own = [(_key(k), k, v) for k, v in mapping.pairs if not _is_merge(k)]
    out = [(key, k, v) for key, k, v in own if key is not None]
    seen = {key for key, _k, _v in out}
    for k, v in mapping.pairs:
        if not _is_merge(k):
            continue
        merged = [v] if v.node.kind == "mapping" else [i for i in v.node.items if i.node.kind == "mapping"]
        for m in merged:
            for key, mk, mv in _entries(m.node):
                if key not in seen:
                    seen.add(key)
                    out.append((key, mk, _Ref(mv.node, mv.alias or m.alias or v.alias)))
    return out


def _entry(ref: _Ref, key: str) -> tuple[_Ref, _Ref] | None:
    """The key node and the value of a mapping's key, as YAML reads the mapping."""
    if ref.node.kind != "mapping":
        return None
    return next(((k, v) for name, k, v in _entries(ref.node) if name == key), None)


def _child(ref: _Ref, part: str | int) -> _Ref | None:
    node = ref.node
    if node.kind == "mapping" and isinstance(part, str):
        found = _entry(ref, part)
        return None if found is None else found[1]
    if node.kind == "sequence" and isinstance(part, int) and 0 <= part < len(node.items):
        return node.items[part]
    return None


def _walk(root: _Ref) -> Iterator[tuple[_Ref, EditPath, Any, bool]]:
    """Every node of the document where YAML places it (aliases and merges expanded), with its
    path, the mark that places it there (the innermost alias on the way, else its own), and
    whether it is a mapping key there (its path is then that of its value)."""
    stack: list[tuple[_Ref, EditPath, Any, bool]] = [(root, (), None, False)]
    while stack:
        ref, path, via, is_key = stack.pop()
        yield ref, path, ref.node.event.start_mark if via is None else via, is_key
        if is_key:
            continue
        children: list[tuple[str | int, _Ref, bool]] = []
        if ref.node.kind == "mapping":
            for key, k, v in _entries(ref.node):
                children += [(key, k, True), (key, v, False)]
        elif ref.node.kind == "sequence":
            children = [(i, item, False) for i, item in enumerate(ref.node.items)]
        for part, child, child_is_key in reversed(children):
            mark = via if child.alias is None else child.alias.start_mark
            stack.append((child, (*path, part), mark, child_is_key))


def _where(node: _Node) -> tuple[int, int]:
    """1-based line and column of a node, as the reader's diagnostics give them."""
    mark = node.event.start_mark
    return int(mark.line) + 1, int(mark.column) + 1


# ---------------------------------------------------------------- edits
@dataclass
class _Replace:
    node: _Node
    key: _Node  # the key of its first path, where an empty value goes after
    value: str
    paths: list[EditPath]


@dataclass
class _Insert:
    mapping: _Node
    key: str
    value: str
    path: EditPath


class _ScalarStarts:
    """Where each scalar's own characters begin, by where it ends: after its anchor and tag.
    The text is scanned once, and only if a scalar with an anchor or a tag is edited."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts: dict[int, int] | None = None

    def __call__(self, node: _Node) -> int:
        if node.event.anchor is None and node.event.tag is None:
            return node.start
        if self.starts is None:
            from ruamel.yaml.tokens import ScalarToken

            self.starts = {int(t.end_mark.index): int(t.start_mark.index)
                           for t in round_trip(comments=False).scan(self.text) if isinstance(t, ScalarToken)}
        return self.starts.get(node.end, node.end)  # no token: an empty value after its anchor


def _quoted(value: str, style: str | None) -> str | None:
    """`value` written in a scalar style, or None if that style cannot hold it as it is."""
    if style == "'":
        return "'" + value.replace("'", "''") + "'"
    if style == '"':
        return json.dumps(value)
    return value if _PLAIN_VALUE.fullmatch(value) else None


def _line_break_after(text: str, index: int) -> tuple[int, str] | None:
    """The first line break at or after `index`: where it ends and what it is."""
    match = re.compile(r"\r\n|\n|\r").search(text, index)
    return None if match is None else (match.end(), match.group())


def _value_end(ref: _Ref) -> int:
    """Where the text of a value ends: the alias, the scalar, the flow collection, or the
    last value of a block collection."""
    if ref.alias is not None:
        return int(ref.alias.end_mark.index)
    node = ref.node
    if node.kind == "scalar" or node.event.flow_style:
        return node.end
    last = node.items[-1] if node.kind == "sequence" else node.pairs[-1][1]
    return _value_end(last)


def _indent(text: str, mapping: _Node, key: _Ref) -> str:
    """The indentation of a new key of a block mapping: that of a key starting its own line."""
    def prefix(ref: _Ref) -> str:
        start = ref.node.start
        line_start = max(text.rfind(c, 0, start) for c in "\r\n") + 1
        return text[line_start:start].lstrip("\ufeff")

    own_line = [p for p in (prefix(k) for k, _v in mapping.pairs) if not p.strip(" ")]
    return own_line[0] if own_line else " " * len(prefix(key))


def _insertion(text: str, edit: _Insert, after: Sequence[str]) -> tuple[int, str]:
    """Where and what to insert for a key the mapping does not have: after the value of the
    first key of `after` it has, else after its last value."""
    mapping = edit.mapping
    pairs = [(key, k, v) for k, v in mapping.pairs if (key := _key(k)) is not None]
    anchor = next((p for name in after for p in pairs if p[0] == name), pairs[-1] if pairs else None)
    if anchor is None:  # pragma: no cover - a zone always has keys
        raise EditError([EditProblem(*_where(mapping), format_path(edit.path[:-1]),
                                     "an empty mapping; add the key by hand")])
    _name, key_ref, value_ref = anchor
    end = _value_end(value_ref)
    entry = f"{edit.key}: {edit.value}"
    if mapping.event.flow_style:
        return end, f", {entry}"
    content_end = end  # a block scalar's marks take in its line breaks
    while content_end > 0 and text[content_end - 1] in " \t\r\n":
        content_end -= 1
    found = _line_break_after(text, content_end)
    indent = _indent(text, mapping, key_ref)
    if found is None:  # the value ends the file, without a final line break
        first = _line_break_after(text, 0)
        return len(text), (first[1] if first else "\n") + indent + entry
    at, line_break = found
    return at, indent + entry + line_break


def _replacement(text: str, edit: _Replace, scalar_start: _ScalarStarts) -> tuple[int, int, str]:
    """The span of the scalar's characters and what replaces them."""
    node, value = edit.node, edit.value
    style = node.event.style
    where = _where(node)
    if node.event.tag is not None:
        raise EditError([EditProblem(*where, format_path(edit.paths[0]),
                                     "has an explicit YAML tag; remove it and run again")])
    start = scalar_start(node)
    if style in ("|", ">"):  # the value is the content line after the header: replace just that
        content = str(node.event.value).strip("\n")
        header = _line_break_after(text, start)
        at = -1 if header is None or "\n" in content or not content else text.find(content, header[0], node.end)
        if at < 0 or not _PLAIN_VALUE.fullmatch(value):
            raise EditError([EditProblem(*where, format_path(edit.paths[0]),
                                         f"a block scalar ({style}) over several lines; write it on one "
                                         "line and run again, or edit it by hand")])
        return at, at + len(content), value
    written = _quoted(value, style)
    if written is None:  # pragma: no cover - callers write addresses
        raise EditError([EditProblem(*where, format_path(edit.paths[0]), f"{value!r} needs quotes")])
    if node.end == start and style is None:  # `key:` with no value: the value goes after the colon
        colon = re.compile(r"[ \t]*:").match(text, edit.key.end)
        if colon is None:
            raise EditError([EditProblem(*_where(edit.key), format_path(edit.paths[0]),
                                         "has no value, and no `:` right after the key; edit it by hand")])
        return colon.end(), colon.end(), " " + written
    return start, node.end, written


def _plain(node: Any) -> Any:
    """The document as plain dicts, lists and strings (merge keys applied), for comparing content."""
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node if isinstance(node, (bool, int, float)) or node is None else str(node)


def _load(text: str) -> Any:
    return _plain(round_trip(preserve_quotes=False, comments=False).load(text))


def _set(data: Any, path: EditPath, value: str) -> None:
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value


def set_scalars(text: str, edits: Mapping[EditPath, str], *, after: Sequence[str] = (),
                follows: Callable[[EditPath], bool] = lambda _path: False) -> str:
    """Set each path (ending in a mapping key) to a scalar; return the new text.

    An existing scalar keeps its style (plain, '...' or "..."), anchor and surroundings.
    A missing key is inserted after the value of the first key of `after` present in its
    mapping, else after the mapping's last value, indented like its other keys. Where the
    scalar, or the mapping a key is inserted into, is used in other places too (aliases,
    merge keys), each other place must be one the edit changes to the same value, or one
    `follows` accepts (it takes the new value with the rest); anything else is an
    EditError located at that place.
    """
    root = _compose(text)
    replaces: dict[int, _Replace] = {}
    inserts: dict[int, list[_Insert]] = {}
    problems: list[EditProblem] = []
    for path, value in edits.items():
        key = path[-1]
        parent: _Ref | None = root
        for part in path[:-1]:
            parent = None if parent is None else _child(parent, part)
        if not isinstance(key, str) or parent is None or parent.node.kind != "mapping":
            raise EditError([EditProblem(1, 1, format_path(path), "no such place in the document (a mapping key)")])
        found = _entry(parent, key)
        if found is None:
            inserts.setdefault(id(parent.node), []).append(_Insert(parent.node, key, value, path))
            continue
        key_ref, target = found
        if target.node.kind != "scalar":
            problems.append(EditProblem(*_where(target.node), format_path(path),
                                        f"is a {target.node.kind}, not a scalar; nothing to replace"))
        elif id(target.node) in replaces and replaces[id(target.node)].value != value:
            problems.append(EditProblem(*_where(target.node), format_path(path),
                                        "shares its value with " + format_path(replaces[id(target.node)].paths[0])
                                        + " (an alias), which is to get another one; write the values out"))
        else:
            replaces.setdefault(id(target.node), _Replace(target.node, key_ref.node, value, [])).paths.append(path)
    followers: list[tuple[EditPath, str]] = []
    for ref, path, mark, is_key in _walk(root):
        replace = replaces.get(id(ref.node))
        if replace is not None and is_key:
            problems.append(EditProblem(
                mark.line + 1, mark.column + 1, format_path(path),
                f"its key is the same node as {format_path(replace.paths[0])} (an alias), so the key "
                f"would change to {replace.value}; write the key out"))
        elif replace is not None and path not in replace.paths:
            if follows(path):
                followers.append((path, replace.value))
                continue
            anchored = format_path(replace.paths[0])
            line, column = _where(replace.node)
            problems.append(EditProblem(
                mark.line + 1, mark.column + 1, format_path(path),
                f"is the same node as {anchored} (through the anchor at {line}:{column}), so it would "
                f"change to {replace.value} too, and this place is not one that follows it; write the "
                "value out here instead of the alias"))
        for insert in [] if is_key else inserts.get(id(ref.node), []):
            if path != insert.path[:-1]:
                problems.append(EditProblem(
                    mark.line + 1, mark.column + 1, format_path(path),
                    f"is the same mapping as {format_path(insert.path[:-1])} (an alias or merge), so "
                    f"{insert.key} would be added here too; write the mapping out"))
    if problems:
        raise EditError(sorted(problems, key=lambda p: (p.line, p.column)))
    scalar_start = _ScalarStarts(text)
    spans = [_replacement(text, r, scalar_start) for r in replaces.values()]
    spans += [(at, at, piece) for group in inserts.values() for i in group
              for at, piece in [_insertion(text, i, after)]]
    spans.sort(key=lambda s: (s[0], s[1]))
    pieces, last = [], 0
    for start, end, piece in spans:
        pieces += [text[last:start], piece]
        last = end
    new_text = "".join([*pieces, text[last:]])
    expected = _load(text)
    for r in replaces.values():
        for path in r.paths:
            _set(expected, path, r.value)
    for path, value in followers:
        _set(expected, path, value)
    for group in inserts.values():
        for i in group:
            _set(expected, i.path, i.value)
    try:
        same = _load(new_text) == expected
    except Exception:  # pragma: no cover - an edit that breaks the syntax
        same = False
    if not same:  # pragma: no cover - a layout the edits above do not cover
        first = next(iter(edits))
        raise EditError([EditProblem(1, 1, format_path(first), "the edited text does not read back as "
                                     "intended; edit the file by hand")])
    return new_text


# ---------------------------------------------------------------- writing the file
def read_target(path: Path) -> tuple[Path, bytes, os.stat_result]:
    """The file a path names, through any symlinks, with its bytes and status."""
    real = Path(os.path.realpath(path))
    data, status = read_regular(real, follow_symlinks=False)
    return real, data, status


def replace_file(path: Path, data: bytes, *, expected: bytes, name: str | None = None) -> None:
    """Replace the file `path` names (through symlinks) with `data`, atomically, keeping its
    mode, owner and group. Refuses (WriteError, the file untouched) if the file no longer
    holds `expected`, has other hard links, or cannot be replaced as it is. `name`: the
    file as messages give it."""
    name = path.as_posix() if name is None else name
    try:
        real, current, status = read_target(path)
    except OSError as exc:
        raise WriteError(f"cannot read {name} again: {exc.strerror or exc}; left unchanged") from None
    if current != expected:
        raise WriteError(f"{name} changed while fabricgen read it; left unchanged; run the command again")
    if status.st_nlink > 1:
        raise WriteError(f"{name} has {status.st_nlink} hard links; replacing it would leave the other "
                         "names with the old text; left unchanged; break the links or edit it by hand")
    directory = real.parent
    with held_signals() as release:
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", dir=directory)
        except OSError as exc:
            raise WriteError(f"cannot write {name}: no file can be created in {directory.as_posix()} "
                             f"({exc.strerror or exc}); the file is replaced atomically, by a new file "
                             "in its directory; left unchanged") from None
        _write_replacing(real, data, name, fd, tmp, status, release)
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _write_replacing(real: Path, data: bytes, name: str, fd: int, tmp: str, status: os.stat_result,
                     release: Callable[[], None]) -> None:
    """`replace_file`'s new file `tmp` (open as `fd`) written and renamed over `real`; removed on
    any failure or signal (`release` lets a held signal in once the cleanup is in place)."""
    try:
        release()
        try:
            mine = os.fstat(fd)
            if (mine.st_uid, mine.st_gid) != (status.st_uid, status.st_gid):
                os.fchown(fd, status.st_uid, status.st_gid)
        except OSError as exc:
            raise WriteError(f"cannot write {name}: it belongs to user {status.st_uid}, group {status.st_gid}, "
                             f"and a file written now could not keep them ({exc.strerror or exc}); "
                             "left unchanged; run as its owner") from None
        try:
            os.fchmod(fd, stat.S_IMODE(status.st_mode))
            with os.fdopen(fd, "wb") as handle:
                fd = -1
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, real)
        except OSError as exc:
            raise WriteError(f"cannot write {name}: {exc.strerror or exc}; left unchanged") from None
    except BaseException:
        if fd >= 0:  # a signal between fdopen and `fd = -1` leaves it closed by the handle already
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


__all__ = ["EditError", "EditPath", "EditProblem", "WriteError", "read_target", "replace_file", "set_scalars"]
