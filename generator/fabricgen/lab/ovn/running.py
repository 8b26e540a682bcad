"""Running the lab's commands and waiting on its daemons: each command a real process whose
failure says what it printed, polls that give up after a bound, and work done several at once
that never leaves a daemon starting when the caller cleans up."""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from fabricgen.lab.ovn.processes import POLL_INTERVAL

POLL_TRIES = 1000  # bounded; a healthy sandbox needs a handful
WORKERS = 8  # AZs set up at once; each step waits on daemons, not on this process
T = TypeVar("T")


class SandboxError(RuntimeError):
    pass


# Set when the main thread is interrupted while workers set up the lab: they start nothing more.
INTERRUPTED = threading.Event()


def run(args: Sequence[str], *, env: dict[str, str] | None = None, check: bool = True, stderr: bool = False) -> str:
    """What the command printed on stdout (`stderr`: then on stderr too); SandboxError if it
    failed and `check`."""
    if INTERRUPTED.is_set():
        raise SandboxError("interrupted")
    proc = subprocess.run(list(args), capture_output=True, text=True, env=env, check=False,
                          stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise SandboxError(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stderr}{proc.stdout}")
    return proc.stdout + proc.stderr if stderr else proc.stdout


def poll(what: str, probe: object, tries: int = POLL_TRIES) -> None:
    """Call `probe()` until it returns true, at most `tries` times."""
    assert callable(probe)
    for _ in range(tries):
        with contextlib.suppress(SandboxError):
            if probe():
                return
        time.sleep(POLL_INTERVAL)
    raise SandboxError(f"gave up waiting for {what} after {tries} tries")


def parallel(function: Callable[[T], object], items: Iterable[T]) -> None:
    """`function(item)` for every item, several at once; the first failure is raised only after
    every call has returned, so nothing is still starting a daemon when the caller cleans up."""
    work = list(items)
    if len(work) <= 1:
        for item in work:
            function(item)
        return
    pool = ThreadPoolExecutor(max_workers=min(WORKERS, len(work)))
    try:
        futures = [pool.submit(function, item) for item in work]
        for future in futures:
            future.result()
    except KeyboardInterrupt:
        INTERRUPTED.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
