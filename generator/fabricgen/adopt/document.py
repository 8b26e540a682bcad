"""The imported fabric as text: the schema modeline, a header saying where it came from and what
could not be seen, and the commented document (`serialise.commented_yaml`).

The text is read back before it is returned: it must parse, as the fabric reader parses it, to
exactly the data the mapping built, so nothing a live value holds can change its structure.
"""

from __future__ import annotations

import textwrap

from fabricgen.adopt.mapping import Imported
from fabricgen.serialise import commented_yaml as cy
from fabricgen.source.provenance import printable
from fabricgen.source.reader import parse

WIDTH = 96


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False)


def header(imported: Imported, schema: str, sources: list[str]) -> list[str]:
    lines = [f"yaml-language-server: $schema={printable(schema)}", ""]
    lines += _wrap("Written by `fabricgen import` from the running fabric: " + "; ".join(sources) + ".", WIDTH)
    lines += _wrap("Routes fabricgen derives itself (between the zones' backbones, between peered VPCs, "
                   "to a NAT gateway) are left out; `fabricgen render` writes them. Review it: "
                   "`fabricgen import` printed how every live object compares with what this file "
                   "renders, and `fabricgen validate` checks it.", WIDTH)
    if imported.notes:
        lines.append("")
        lines.append("Not seen in the captures, or left as it runs:")
        for note in imported.notes:
            wrapped = _wrap(note, WIDTH - 2) or [""]
            lines += [f"- {wrapped[0]}", *(f"  {w}" for w in wrapped[1:])]
    return lines


def text(imported: Imported, schema: str, sources: list[str], name: str) -> str:
    """The fabric file's text; `schema` is the modeline's path, `sources` what it was read from."""
    body = cy.dump(imported.document, header(imported, schema, sources))
    source, found = parse(body, name)
    if source is None or found or _plain(source.data) != cy.plain(imported.document):
        raise ValueError("the imported fabric does not read back as written")  # a bug, never user input
    return body


def _plain(value: object) -> object:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
