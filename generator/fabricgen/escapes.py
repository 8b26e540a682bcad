"""One character as the backslash escape every reader of fabricgen's text understands: `\\xNN`
below U+0100, `\\uNNNN` in the basic plane, `\\UNNNNNNNN` above it. `source.provenance.printable`
(names that reach generated files) and `live_text.escape` (what the live side prints) both
write unprintable characters so.
"""

from __future__ import annotations


def escaped(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
