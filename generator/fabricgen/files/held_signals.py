"""Creating a temporary file or directory without a window a signal can slip through.

`fabricgen.cli` turns SIGINT, SIGTERM and SIGHUP into KeyboardInterrupt, so that a command removes
what it created before it ends. Between `tempfile.mkstemp` (or `mkdtemp`) making the file and the
`try` whose handler removes it, there are bytecodes where that exception would leave it behind;
a signal that lands there is held until the cleanup is in place:

    with held_signals() as release:
        staging = tempfile.mkdtemp(...)
        try:
            release()          # a held signal is taken here, inside the try
            ...
        except BaseException:
            remove(staging)
            raise

The signals are blocked for this thread (`pthread_sigmask`) and unblocked by `release()` or when
the block ends, whichever comes first.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

HELD = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


@contextmanager
def held_signals() -> Iterator[Callable[[], None]]:
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    released = False

    def release() -> None:
        nonlocal released
        if not released:
            released = True
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    try:
        yield release
    finally:
        release()
