"""The `fabricgen` command (console script, `python -m fabricgen`): interruptible from the start.

Python turns SIGINT into KeyboardInterrupt wherever it lands. Before `cli.main` has its
handlers (while the command line and its libraries are imported) that printed a traceback,
and a SIGINT inside pydantic_core's start-up surfaced as a pyo3 PanicException. So the
first thing this module does, before it imports anything, is take SIGINT itself: until
`fabricgen.cli` is loaded an interrupt ends the process at once with the exit code of an
interrupt (nothing has started that would need stopping); from then on `cli.run` handles it.
A SIGINT that was ignored when the process started (a background job) stays ignored, as
Python leaves it.

Only the interpreter's built-in modules `_signal` and `posix` are used for that, so no import
machinery runs between the first line of this module and the handler. What no module can
cover is the interpreter's own start-up before it (its `site` imports, about 20 ms): a Ctrl-C
there ends Python with its own error and status 1, before fabricgen has read or written
anything (docs/diagnostics.md "Exit codes").
"""

import _signal  # type: ignore[import-not-found]  # the C module `signal` wraps: built in, no file to import
import posix

INTERRUPTED = 130


def _before_cli(signum: int, frame: object) -> None:
    posix.write(2, b"fabricgen: interrupted\n")
    posix._exit(INTERRUPTED)


if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, _before_cli)


def run() -> None:
    from fabricgen import cli

    cli.run()
