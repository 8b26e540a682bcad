"""Diagnostics are values: every problem found in a fabric is one `Diagnostic`.

Loaders and rules collect them; `report` formats them; nothing here prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

Path = tuple[str | int, ...]


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One problem, located in the source file by line and column (1-based)."""

    file: str
    line: int
    col: int
    path: str
    message: str
    code: str
    severity: Severity = Severity.ERROR

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


@dataclass(frozen=True)
class Finding:
    """What a rule reports before it is located: a model path and a message."""

    code: str
    path: Path
    message: str
    severity: Severity = Severity.ERROR


_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def format_path(path: Path) -> str:
    """`('zones', 0, 'backbone', 'cidr')` -> `zones[0].backbone.cidr`.

    A key that is not a plain name (a typo with a space, a colon or a line break in it)
    is shown quoted, `zones[0]['a: b']`, so the path stays one unambiguous line.
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _PLAIN_KEY.fullmatch(part):
            out += f"[{part!r}]"
        else:
            out += f".{part}" if out else part
    return out or "(document)"
