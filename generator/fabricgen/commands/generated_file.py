"""Writing a file a command generates (`schema -o`, `rules -o`): exit 3 when it changed it.

A hook or CI step runs the command with `-o` over the committed file, and the exit status
says whether the committed copy was current, the way `render` does for rendered/.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fabricgen import exit_codes
from fabricgen.errors import OutputError


def write(text: str, output: Path | None) -> int:
    """`text` on stdout (no `output`), or into `output`: 0 when it already held it, 3 when written."""
    if output is None:
        sys.stdout.write(text)
        return 0
    try:
        if output.is_file() and output.read_text(encoding="utf-8") == text:
            return 0
        # A fabric repository starts without schemas/ or docs/: create it, as the modeline expects it.
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"cannot write {output}: {exc.strerror or exc}") from None
    sys.stderr.write(f"fabricgen: wrote {output}\n")
    return exit_codes.CHANGED
