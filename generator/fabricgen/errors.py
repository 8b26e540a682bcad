"""The one exception root. Everything a user can fix is a `FabricgenError`."""

from __future__ import annotations

from collections.abc import Sequence

from fabricgen import exit_codes
from fabricgen.diagnostics import Diagnostic


class FabricgenError(Exception):
    """A problem the user can fix; the CLI prints it without a traceback."""

    exit_code = exit_codes.INVALID


class InvalidFabricError(FabricgenError):
    """The fabric failed to load or validate; carries every diagnostic found."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        super().__init__(f"{sum(d.is_error for d in diagnostics)} error(s) in the fabric")


class OutputError(FabricgenError):
    """The output tree could not be written (permissions, a file in the way, ...)."""
