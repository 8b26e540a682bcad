"""Writing fabric.yaml back: round-trip edits that keep comments and formatting.

`fabricgen.source.reader` reads fabrics; this module is the one place that changes
them (`fabricgen.output.emit` writes only rendered output). ruamel.yaml's round-trip
mode keeps comments, key order, flow style and quoting; the indentation is not
recorded in the document, so the writer picks the indentation settings under
which the unchanged document dumps back to exactly the original text. The result
is checked: parsed again, it must equal the original with just the edits applied.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fabricgen.errors import FabricgenError
from fabricgen.serialise.roundtrip_yaml import round_trip

EditPath = tuple[str | int, ...]
# (mapping indent, sequence indent, dash offset): block styles seen in the wild.
_STYLES = ((2, 4, 2), (2, 2, 0), (4, 4, 2), (4, 6, 4), (4, 4, 0), (2, 3, 1), (3, 3, 0), (4, 2, 0))


class EditError(FabricgenError):
    """An edit cannot be applied to the document as written."""


def _dump(yaml: Any, data: Any) -> str:
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def _plain(node: Any) -> Any:
    """The document as plain dicts, lists and strings, for comparing content."""
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node if isinstance(node, (bool, int, float)) or node is None else str(node)


def _style_of(text: str, data: Any) -> tuple[int, int, int]:
    """The indentation style that reproduces `text`, else the one that comes closest."""
    best, best_score = _STYLES[0], -1
    original = text.splitlines()
    for style in _STYLES:
        dumped = _dump(round_trip(style), data)
        if dumped == text:
            return style
        score = sum(a == b for a, b in zip(original, dumped.splitlines(), strict=False))
        if score > best_score:
            best, best_score = style, score
    return best


def _parent(data: Any, path: EditPath) -> Any:
    node = data
    for part in path[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            raise EditError(f"{'.'.join(map(str, path))}: no such place in the document") from None
    if not isinstance(node, dict):
        raise EditError(f"{'.'.join(map(str, path))}: parent is not a mapping")
    return node


def _set(node: Any, key: str, value: str, after: Sequence[str]) -> None:
    if key in node:
        node[key] = value
        return
    keys = list(node.keys())
    anchor = next((a for a in after if a in node), None)
    position = keys.index(anchor) + 1 if anchor is not None else len(keys)
    node.insert(position, key, value)


def set_scalars(text: str, edits: Mapping[EditPath, str], *, after: Sequence[str] = ()) -> str:
    """Set each path (ending in a mapping key) to a plain scalar; return the new text.

    A missing key is inserted after the first key of `after` present in its mapping,
    else at the end of the mapping.
    """
    yaml = round_trip(_STYLES[0])
    data = yaml.load(text)
    style = _style_of(text, data)
    expected = _plain(data)
    for path, value in edits.items():
        key = path[-1]
        if not isinstance(key, str):
            raise EditError(f"{'.'.join(map(str, path))}: must end in a mapping key")
        _set(_parent(data, path), key, value, after)
        target = expected
        for part in path[:-1]:
            target = target[part]
        target[key] = value
    new_text = _dump(round_trip(style), data)
    if _plain(round_trip(style).load(new_text)) != expected:  # pragma: no cover - a ruamel bug if ever
        raise EditError("the edited document does not read back as intended; edit it by hand")
    return new_text


def write_text(path: Path, text: str) -> None:
    """Replace `path` atomically, keeping its permissions."""
    mode = path.stat().st_mode & 0o777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
