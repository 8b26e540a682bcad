"""The only jinja2 environment: text formats (scripts, INI, properties).

`StrictUndefined` turns a missing variable into an error instead of an empty
string. Values from fabric.yaml reach templates only through the escaping filters:
`shquote` (POSIX shell word), `ini` (one INI value line), `prop` (Java properties
value). Kubernetes objects are never templated; they are data.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

_SAFE_SHELL = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+$")
_LINE_BREAK = re.compile(r"[\r\n\x00]")


def shquote(value: object) -> str:
    """Quote one shell word; the result is always a single literal argument."""
    text = str(value)
    if _LINE_BREAK.search(text):
        raise ValueError(f"refusing a line break or NUL in a shell word: {text!r}")
    if text and _SAFE_SHELL.match(text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def single_line(value: object) -> str:
    """A value for INI, properties and comment lines: no line breaks allowed."""
    text = str(value)
    if _LINE_BREAK.search(text):
        raise ValueError(f"refusing a line break in a one-line value: {text!r}")
    return text


@cache
def environment() -> jinja2.Environment:
    import jinja2  # only when a text file is rendered: it costs a validate or a fabric without scripts ~30 ms

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("fabricgen", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["shquote"] = shquote
    env.filters["line"] = single_line
    return env


def render_template(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)
