"""`fabricgen schema`: the JSON schema of fabric.yaml, or its Markdown reference, from the models."""

from __future__ import annotations

from pathlib import Path

from fabricgen.commands import generated_file


def run(*, output: Path | None, fmt: str = "json") -> int:
    if fmt == "markdown":
        from fabricgen.model.reference import markdown

        return generated_file.write(markdown(), output)
    from fabricgen.model.schema import schema_text

    return generated_file.write(schema_text(), output)
