"""The `fabricgen` command (console script, `python -m fabricgen`): interruptible from the start.

Python turns SIGINT into KeyboardInterrupt wherever it lands. Before `cli.main` has its
handlers (while the command line and its libraries are imported) that printed a traceback,
and a SIGINT inside pydantic_core's start-up surfaced as a pyo3 PanicException. So the
first thing `run` does is take SIGINT itself: until `fabricgen.cli` is loaded an interrupt
ends the process at once with the exit code of an interrupt (nothing has started that would
need stopping); from then on `cli.run` handles it. A SIGINT that was ignored when the
process started (a background job) stays ignored, as Python leaves it.

Standard library only, and nothing else is imported before the handler is in place.
"""

from __future__ import annotations

import os
import signal
from types import FrameType
from typing import NoReturn

INTERRUPTED = 130


def _before_cli(signum: int, frame: FrameType | None) -> None:
    os.write(2, b"fabricgen: interrupted\n")
    os._exit(INTERRUPTED)


def run() -> NoReturn:
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _before_cli)
    from fabricgen import cli

    cli.run()
