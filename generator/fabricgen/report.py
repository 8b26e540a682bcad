"""Formatting diagnostics: text, JSON and GitHub Actions annotations."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from fabricgen.diagnostics import Diagnostic
from fabricgen.source.provenance import printable

FORMATS = ("auto", "text", "json", "github")


def resolve(fmt: str) -> str:
    if fmt == "auto":
        return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    return fmt


def text_line(d: Diagnostic) -> str:
    prefix = "" if d.is_error else "warning: "
    return f"{printable(d.file)}:{d.line}:{d.col}: {d.path}: {prefix}{d.message} [{d.code}]"


def _github_escape(value: str, *, property_value: bool = False) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def github_line(d: Diagnostic) -> str:
    level = "error" if d.is_error else "warning"
    props = ",".join(
        f"{k}={_github_escape(v, property_value=True)}"
        for k, v in (("file", d.file), ("line", str(d.line)), ("col", str(d.col)),
                     ("title", f"fabricgen {d.code}"))
    )
    return f"::{level} {props}::{_github_escape(f'{d.path}: {d.message}')}"


def as_dict(d: Diagnostic) -> dict[str, object]:
    return {"file": d.file, "line": d.line, "column": d.col, "path": d.path,
            "code": d.code, "severity": d.severity.value, "message": d.message}


def format_diagnostics(diagnostics: Sequence[Diagnostic], fmt: str) -> str:
    fmt = resolve(fmt)
    if fmt == "json":
        errors = sum(d.is_error for d in diagnostics)
        return json.dumps({"errors": errors, "warnings": len(diagnostics) - errors,
                           "diagnostics": [as_dict(d) for d in diagnostics]}, indent=2) + "\n"
    line = github_line if fmt == "github" else text_line
    return "".join(line(d) + "\n" for d in diagnostics)


def summary(diagnostics: Sequence[Diagnostic]) -> str:
    errors = sum(d.is_error for d in diagnostics)
    warnings = len(diagnostics) - errors
    return f"{errors} error(s), {warnings} warning(s)"
