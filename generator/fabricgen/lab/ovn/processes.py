"""The lab's own processes: found by the directory their command line names, and stopped (a
grace period, then SIGTERM, then SIGKILL), whatever their pidfiles say."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path

POLL_INTERVAL = 0.02  # seconds between two looks at a process or a daemon's state


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def terminate(pids: Sequence[int], grace: int = 10) -> None:
    """Wait for `pids` to exit; SIGTERM the ones left after `grace` polls, SIGKILL the ones left
    50 polls after that."""
    for attempt in range(grace + 90):
        left = [pid for pid in pids if alive(pid)]
        if not left:
            return
        if attempt in (grace, grace + 50):
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGTERM if attempt == grace else signal.SIGKILL)
        time.sleep(POLL_INTERVAL)


def names_directory(pid: int, directory: Path) -> bool:
    """The process is alive and its command line names a path inside `directory`."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return os.fsencode(f"{directory}/") in cmdline and alive(pid)


def lab_processes(directory: Path) -> list[int]:
    """The live processes (not this one) whose command line names a path inside `directory`."""
    return [int(entry.name) for entry in Path("/proc").iterdir()
            if entry.name.isdigit() and int(entry.name) != os.getpid() and names_directory(int(entry.name), directory)]
