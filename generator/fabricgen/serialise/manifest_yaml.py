"""Serialising Kubernetes objects: the only place that writes YAML.

Objects are plain data (dict, list, str, int, bool, None) built by the renderers.
They are written in block style, keys in the order the renderer built them, with
every string either plain (when it is unambiguous under YAML 1.1 and 1.2) or
double-quoted with JSON escapes. A value from fabric.yaml can therefore never
start a new key, list item or document. This writer is small and fast; the tests
prove with ruamel.yaml that every output parses back to the same data.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

KubeObject = dict[str, Any]
"""One Kubernetes object as data, as renderers build it and `dump` writes it."""

_PLAIN = re.compile(r"^[A-Za-z_/][A-Za-z0-9_./-]*$|^[0-9][0-9.]*/[0-9]+$")
_AMBIGUOUS = frozenset(
    ["y", "n", "yes", "no", "true", "false", "on", "off", "null", "~"]
)
_BLOCK_LINE = re.compile(r"^[^\t\r\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]*$")
# Characters json.dumps leaves raw that YAML may not carry raw inside a double-quoted
# scalar: C1 controls and DEL (not printable), NEL and the Unicode line and paragraph
# separators (line breaks in YAML 1.1), the BOM and the non-characters U+FFFE/U+FFFF.
# Inside double quotes, written escaped: C1 controls, line and paragraph separators, and the
# invisible format characters (bidirectional controls among them) that reorder what an editor
# or a terminal shows of a value.
_QUOTED_UNSAFE = re.compile("[\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064"
                            "\u2066-\u206f\ufeff\ufffe\uffff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def scalar(value: Any) -> str:
    if type(value) is str:  # most scalars, and the same few thousand strings over and over
        return _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        if _PLAIN.fullmatch(value) and value.lower() not in _AMBIGUOUS:
            return value
        return _QUOTED_UNSAFE.sub(_escape, json.dumps(value, ensure_ascii=False))
    raise TypeError(f"cannot serialise {type(value).__name__} into a manifest")


@functools.lru_cache(maxsize=1 << 16)
def _string(value: str) -> str:
    if _PLAIN.fullmatch(value) and value.lower() not in _AMBIGUOUS:
        return value
    return _QUOTED_UNSAFE.sub(_escape, json.dumps(value, ensure_ascii=False))


def _block_literal(value: str, indent: str) -> list[str] | None:
    """A `|` block for multi-line text (scripts), or None when it must be quoted."""
    if "\n" not in value or not value.endswith("\n") or value.endswith("\n\n"):
        return None
    lines = value[:-1].split("\n")
    if lines[0].startswith(" ") or lines[0] == "":
        return None
    for line in lines:
        if line != line.rstrip(" ") or not _BLOCK_LINE.fullmatch(line):
            return None
    return ["|"] + [f"{indent}{line}" if line else "" for line in lines]


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _is_sequence(value: Any) -> bool:
    """A YAML sequence: list, tuple or another Sequence, but not a string."""
    kind = type(value)
    if kind is list or kind is tuple:
        return True
    return kind is not str and isinstance(value, Sequence)


def _emit(value: Any, indent: int, out: list[str], prefix: str) -> None:
    """Append the lines of `value`; `prefix` is what stands before it on its first line."""
    pad = "  " * indent
    if _is_mapping(value):
        if not value:
            out.append(f"{prefix}{{}}")
            return
        first = True
        for key, item in value.items():
            lead = prefix if first else pad
            first = False
            kind = type(item)
            if (kind is str and "\n" not in item) or kind is int:  # most entries: one line, no recursion
                out.append(f"{lead}{scalar(key)}: {scalar(item)}")
            else:
                _emit_entry(f"{lead}{scalar(key)}:", item, indent, out)
        return
    if _is_sequence(value):
        if not value:
            out.append(f"{prefix}[]")
            return
        first = True
        for item in value:
            lead = prefix if first else pad
            first = False
            if _is_nonempty_collection(item):
                _emit(item, indent + 1, out, f"{lead}- ")
            else:
                _emit_entry(f"{lead}-", item, indent, out)
        return
    out.append(f"{prefix}{scalar(value)}")


def _emit_entry(head: str, item: Any, indent: int, out: list[str]) -> None:
    pad = "  " * (indent + 1)
    if type(item) is str:  # the common case first: most entries are strings
        block = _block_literal(item, pad) if "\n" in item else None
        if block is None:
            out.append(f"{head} {scalar(item)}")
        else:
            out.append(f"{head} {block[0]}")
            out.extend(block[1:])
    elif _is_mapping(item) and item:
        out.append(head)
        _emit(item, indent + 1, out, pad)
    elif _is_sequence(item) and item:
        out.append(head)
        _emit(item, indent, out, "  " * indent)
    elif isinstance(item, str) and (block := _block_literal(item, pad)) is not None:
        out.append(f"{head} {block[0]}")
        out.extend(block[1:])
    elif _is_mapping(item):
        out.append(f"{head} {{}}")
    elif _is_sequence(item):
        out.append(f"{head} []")
    else:
        out.append(f"{head} {scalar(item)}")


def _is_nonempty_collection(item: Any) -> bool:
    return bool(item) and (_is_mapping(item) or _is_sequence(item))


def dump(value: Any) -> str:
    """One YAML document (no `---`), ending in a newline."""
    out: list[str] = []
    _emit(value, 0, out, "")
    return "\n".join(out) + "\n"


def dump_all(documents: Iterable[Any]) -> str:
    """A YAML stream: documents separated by `---` lines."""
    return "---\n".join(dump(doc) for doc in documents)
