"""Text from the live side, made safe to show and to keep: the one rule for every byte a cluster,
kubectl, a credential plugin or an OVN tool prints that reaches a terminal, a log, a capture or
an error message.

- `redact`: credentials are taken out before anything is shown or written: an `Authorization`
  header's value, a bearer token, a JSON Web Token, a PEM private key, and the values of the
  keys a kubeconfig and its credential plugins carry (`token`, `client-key-data`, `password`,
  ...). An API server or a proxy that echoes the request's headers in an error body, and an exec
  plugin that logs its token on stderr, are what it is for.
- `escape`: every character that is not printable is written as a backslash escape (`\\x1b`,
  `\\u202e`), line and paragraph separators, NEL and bidirectional controls included; only the
  newline and the tab stay, so a hostile name can neither move the cursor, retitle the window,
  clear the screen nor reorder what is shown.
- `SafeStream`: a text stream that does both to everything written to it. The commands that read
  the live side (`import`, `status`, `transit`, `verify`) write through it (`fabricgen.cli`), so
  no output path of theirs can forget.
"""

from __future__ import annotations

import re
from typing import TextIO

from fabricgen.escapes import escaped

REDACTED = "<redacted>"

_AUTHORIZATION = re.compile(r"(?i)(\bauthorization\b[\"']?\s*[:=]\s*\[?[\"']?\s*)((?:bearer|basic|negotiate)\s+)?"
                            r"[^\s\"',\]]+")
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL),
     "<redacted private key>"),
    (re.compile(r"(?i)(bearer)\s+(?!<redacted)[A-Za-z0-9._~+/=-]{6,}"), r"\1 " + REDACTED),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*"), REDACTED),
    (re.compile(r"(?i)([\"']?\b(?:token|id-token|refresh-token|access-token|access_token|id_token|refresh_token|"
                r"client-key-data|client-certificate-data|password|client-secret|client_secret)\b[\"']?\s*[:=]\s*[\"']?)"
                r"(?!<redacted)[^\s\"',}]{6,}"),
     r"\1" + REDACTED),
)


def _authorization(match: re.Match[str]) -> str:
    return match[1] + (match[2] or "") + REDACTED


def redact(text: str) -> str:
    """`text` with every credential it holds replaced by `<redacted>`."""
    if not text:
        return text
    text = _AUTHORIZATION.sub(_authorization, text)
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


_KEPT = "\n\t"


def escape(text: str, kept: str = _KEPT) -> str:
    """`text` with every character but printable ones and those `kept` (the newline and the tab)
    escaped; with `kept=""` the result is one printable line."""
    if text.isprintable() or all(c.isprintable() or c in kept for c in text):
        return text
    return "".join(char if char.isprintable() or char in kept else escaped(char) for char in text)


def safe(text: str) -> str:
    """`redact` then `escape`: what may be shown of a live text."""
    return escape(redact(text))


class SafeStream:
    """A text stream that writes `safe(text)` of everything to the stream it wraps."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(safe(text))
        return len(text)

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()

    @property
    def encoding(self) -> str:
        return getattr(self.stream, "encoding", "utf-8")

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)
