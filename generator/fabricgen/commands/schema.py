"""`fabricgen schema`: the JSON schema of fabric.yaml, generated from the models."""

from __future__ import annotations

import sys
from pathlib import Path

from fabricgen import exit_codes
from fabricgen.errors import OutputError
from fabricgen.model.schema import schema_text


def run(*, output: Path | None) -> int:
    text = schema_text()
    if output is None:
        sys.stdout.write(text)
        return 0
    try:
        if output.is_file() and output.read_text(encoding="utf-8") == text:
            return 0
        # A fabric repository starts without schemas/: create it, as the modeline expects it.
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"cannot write {output}: {exc.strerror or exc}") from None
    sys.stderr.write(f"fabricgen: wrote {output}\n")
    return exit_codes.CHANGED
