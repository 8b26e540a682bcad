"""The only jinja2 environment: text formats (scripts, INI, properties).

`StrictUndefined` turns a missing variable into an error instead of an empty
string. Values from fabric.yaml reach templates only through the escaping filters,
one per reader: `shquote` (POSIX shell word), `ovsdb` (a string column value as
ovn-nbctl parses it; shell-quote the result too), `gcfg` (a value of a git-config-syntax
file such as ovn_k8s.conf), `oslo` (a value of an oslo.config INI file such as
ml2_conf.ini) and `line` (a comment or a value of a reader without escapes: no line
breaks). Kubernetes objects are never templated; they are data.
"""

from __future__ import annotations

import json
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
    if text and _SAFE_SHELL.fullmatch(text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def single_line(value: object) -> str:
    """A value for INI, properties and comment lines: no line breaks allowed."""
    text = str(value)
    if _LINE_BREAK.search(text):
        raise ValueError(f"refusing a line break in a one-line value: {text!r}")
    return text


def ovsdb_string(value: object) -> str:
    """A string as ovn-nbctl/ovn-sbctl read a column value (`key=VALUE` in `set`, `create`,
    `find`): a JSON string, which their OVSDB atom parser takes literally."""
    return json.dumps(single_line(value))


# gcfg (gopkg.in/gcfg.v1, scanner/scanner.go and read.go) and git config read `;` and `#` as the
# start of a comment outside double quotes, `"` as a quote and `\` as an escape; they drop
# unquoted leading and trailing blanks. Inside quotes both accept `\\`, `\"`, `\t` and `\n`.
_GCFG_SPECIAL = re.compile(r'[;#"\\\t]|^[ ]|[ ]$')


def gcfg_value(value: object) -> str:
    """A value that gcfg (and `git config`) read back as `value`: double-quoted, with `\\` and `"`
    escaped, when it holds anything the unquoted syntax would change."""
    text = single_line(value)
    if not _GCFG_SPECIAL.search(text):
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
    return f'"{escaped}"'


def oslo_value(value: object) -> str:
    """A value that oslo.config reads back as `value`.

    oslo.config (oslo_config/iniparser.py) strips blanks around a value and one pair of
    matching quotes around it, and has no inline comments; then (cfg.py, `_substitute`) it
    turns `\\$` into `$$` and expands `$name` / `${name}` with string.Template, `$$` giving
    `$`. Each `$` is written `\\$`, and a value that would lose blanks or quotes is quoted.
    `%` means nothing to oslo.config (it does not use configparser's interpolation).
    """
    text = single_line(value).replace("$", "\\$")
    if text != text.strip() or (text[:1] in ('"', "'") and text[:1] == text[-1:]):
        return f'"{text}"'
    return text


def strict_environment(package: str) -> jinja2.Environment:
    """Templates of `package`'s `templates/` folder with fabricgen's settings: an undefined
    name fails, nothing is auto-escaped (each value goes through the filter of its reader's
    syntax), and the `line` filter every template has."""
    import jinja2  # only when a text file is rendered: it costs a validate or a fabric without scripts ~30 ms

    env = jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["line"] = single_line
    return env


@cache
def environment() -> jinja2.Environment:
    env = strict_environment("fabricgen.render")
    env.filters["shquote"] = shquote
    env.filters["gcfg"] = gcfg_value
    env.filters["ovsdb"] = ovsdb_string
    env.filters["oslo"] = oslo_value
    return env


def render_template(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)
