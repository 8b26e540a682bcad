"""Writing a new, commented YAML document (the fabric `fabricgen import` writes).

The document is a tree of `Map` and `Seq` nodes whose entries may carry comments: a line
comment after the value, and comment lines above the entry. Scalars are written by
`manifest_yaml.scalar`, plain only when no YAML 1.1 or 1.2 reader can take them for anything
else and double-quoted (JSON escapes) otherwise; keys likewise. So no value can start a key,
an item, a comment or a document. A comment is one line of printable text: a line break, a
control or a bidirectional character in one (a name a live cluster gave) is written as a
backslash escape (`fabricgen.live_text.escape`). Layout follows `sites/lab/fabric.yaml`: two
spaces per level, list items indented under their key, short lists of scalars and short
mappings in flow style, and the line comments of a block aligned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from fabricgen.live_text import escape
from fabricgen.serialise.manifest_yaml import scalar

Node = Union["Map", "Seq", str, int, bool, None]
COMMENT_COLUMN = 36  # line comments start here, or two spaces after a longer line
FLOW_WIDTH = 100  # a flow list or mapping longer than this is written as a block


@dataclass
class Entry:
    key: str
    value: Node
    comment: str = ""  # after the value (for a mapping or list value: after the key)
    above: tuple[str, ...] = ()  # comment lines before the entry; "" is an empty line


@dataclass
class Item:
    value: Node
    comment: str = ""
    above: tuple[str, ...] = ()


@dataclass
class Map:
    entries: list[Entry] = field(default_factory=list)
    flow: bool = False  # `{a: 1, b: 2}` when it fits on its line

    def add(self, key: str, value: Node, comment: str = "", above: Sequence[str] = ()) -> Map:
        self.entries.append(Entry(key, value, comment, tuple(above)))
        return self

    def plain(self) -> dict[str, Any]:
        return {e.key: _plain(e.value) for e in self.entries}


@dataclass
class Seq:
    items: list[Item] = field(default_factory=list)
    flow: bool = False  # `[a, b]` when it fits on its line and holds scalars only

    def add(self, value: Node, comment: str = "", above: Sequence[str] = ()) -> Seq:
        self.items.append(Item(value, comment, tuple(above)))
        return self

    def plain(self) -> list[Any]:
        return [_plain(i.value) for i in self.items]


def _plain(node: Node) -> Any:
    return node.plain() if isinstance(node, Map | Seq) else node


def plain(node: Node) -> Any:
    """The data the document holds, as a YAML reader loads it."""
    return _plain(node)


def _check_comment(text: str) -> str:
    """A comment as one printable line: what is not printable (a line break, a control, a
    bidirectional override, from a name a live cluster gave) is written escaped."""
    return escape(text, kept="")


def _flow(node: Node) -> str | None:
    """The node in flow style, or None when it must be a block."""
    if isinstance(node, Seq):
        if not node.flow or any(i.comment or i.above or isinstance(i.value, Map | Seq) for i in node.items):
            return None
        return "[" + ", ".join(scalar(i.value) for i in node.items) + "]"
    if isinstance(node, Map):
        if not node.flow or any(e.comment or e.above or isinstance(e.value, Map | Seq) for e in node.entries):
            return None
        return "{" + ", ".join(f"{scalar(e.key)}: {scalar(e.value)}" for e in node.entries) + "}"
    return scalar(node)


@dataclass
class _Line:
    text: str
    comment: str = ""


def _above(lines: list[_Line], above: Sequence[str], pad: str) -> None:
    for text in above:
        lines.append(_Line(f"{pad}# {_check_comment(text)}".rstrip() if text else ""))


def _emit_map(node: Map, indent: int, lines: list[_Line]) -> None:
    pad = "  " * indent
    for entry in node.entries:
        _above(lines, entry.above, pad)
        head = f"{pad}{scalar(entry.key)}:"
        _emit_value(head, entry.value, entry.comment, indent, lines)


def _emit_value(head: str, value: Node, comment: str, indent: int, lines: list[_Line]) -> None:
    comment = _check_comment(comment)
    flow = _flow(value)
    if flow is not None and (not isinstance(value, Map | Seq) or len(head) + 1 + len(flow) <= FLOW_WIDTH):
        lines.append(_Line(f"{head} {flow}", comment))
        return
    if isinstance(value, Map):
        if not value.entries:
            lines.append(_Line(f"{head} {{}}", comment))
            return
        lines.append(_Line(head, comment))
        _emit_map(value, indent + 1, lines)
        return
    assert isinstance(value, Seq)
    if not value.items:
        lines.append(_Line(f"{head} []", comment))
        return
    lines.append(_Line(head, comment))
    _emit_seq(value, indent + 1, lines)


def _emit_seq(node: Seq, indent: int, lines: list[_Line]) -> None:
    pad = "  " * indent
    for item in node.items:
        _above(lines, item.above, pad)
        value = item.value
        flow = _flow(value)
        if isinstance(value, Map) and value.entries and (flow is None or len(pad) + 2 + len(flow) > FLOW_WIDTH):
            first, *rest = value.entries
            _above(lines, first.above, pad + "  ")
            start = len(lines)
            _emit_value(f"{pad}- {scalar(first.key)}:", first.value, first.comment, indent + 1, lines)
            if item.comment and not lines[start].comment:
                lines[start].comment = _check_comment(item.comment)
            _emit_map(Map(rest), indent + 1, lines)
        elif isinstance(value, Seq) and value.items and flow is None:
            lines.append(_Line(f"{pad}-", item.comment))
            _emit_seq(value, indent + 1, lines)
        else:
            lines.append(_Line(f"{pad}- {flow if flow is not None else scalar(value)}", _check_comment(item.comment)))


def dump(document: Map, header: Sequence[str] = ()) -> str:
    """The document as YAML text; `header` lines become comment lines at the top."""
    lines: list[_Line] = [_Line(f"# {_check_comment(h)}".rstrip()) if h else _Line("#") for h in header]
    _emit_map(document, 0, lines)
    out = []
    for line in lines:
        if not line.comment:
            out.append(line.text)
            continue
        width = max(len(line.text) + 2, COMMENT_COLUMN - 1)
        out.append(f"{line.text.ljust(width)}# {line.comment}")
    return "\n".join(out) + "\n"


__all__ = ["Entry", "Item", "Map", "Node", "Seq", "dump", "plain"]
