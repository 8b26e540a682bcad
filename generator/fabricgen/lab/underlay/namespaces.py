"""Network namespaces the lab makes itself, the veth links between them, and sockets inside them.

Every namespace is named `fgu<pid>-<n>`: the prefix says whose it is, so a run that was killed
leaves nothing a later run cannot recognise and remove (`sweep`), and nothing else is touched.
A socket is made inside a namespace by a short-lived thread that enters it (setns(2) moves only
the calling thread); the socket stays in that namespace for its life.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from fabricgen.lab.ovn.processes import alive

NETNS_DIR = Path("/run/netns")
PREFIX = "fgu"
_OURS = re.compile(rf"^{PREFIX}(\d+)-\d+$")
CLONE_NEWNET = 0x40000000
T = TypeVar("T")


class UnderlayError(Exception):
    """The kernel underlay cannot be built here (not root, no netns, a program missing)."""


def ip(*args: str, namespace: str | None = None) -> None:
    argv = ["ip", *(("-n", namespace) if namespace else ()), *args]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise UnderlayError(f"{' '.join(argv)}: {done.stderr.strip()}")


def run_in(namespace: str, argv: Sequence[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", namespace, *argv], input=stdin, capture_output=True, text=True,
                          check=False)


def inside(namespace: str, make: Callable[[], T]) -> T:
    """`make()` run in a thread that has entered `namespace`."""
    result: list[T] = []
    failure: list[BaseException] = []
    libc = ctypes.CDLL(None, use_errno=True)

    def enter() -> None:
        fd = os.open(NETNS_DIR / namespace, os.O_RDONLY)
        try:
            if libc.setns(fd, CLONE_NEWNET) != 0:
                failure.append(OSError(ctypes.get_errno(), f"setns {namespace}"))
                return
            result.append(make())
        except BaseException as exc:
            failure.append(exc)
        finally:
            os.close(fd)

    thread = threading.Thread(target=enter)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]


def udp_socket(namespace: str) -> socket.socket:
    return inside(namespace, lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))


def tcp_socket(namespace: str) -> socket.socket:
    return inside(namespace, lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))


def sweep(run_dir: Path) -> None:
    """Remove what lab runs whose process is gone left: their daemons (a command line that names
    one of their namespaces), their namespaces, and their directories in `run_dir`."""
    dead = {m.group(0) for m in (_OURS.match(e.name) for e in (NETNS_DIR.iterdir() if NETNS_DIR.is_dir() else ()))
            if m and not alive(int(m.group(1)))}
    dead |= {m.group(0) for m in (_OURS.match(e.name) for e in (run_dir.iterdir() if run_dir.is_dir() else ()))
             if m and not alive(int(m.group(1)))}
    if not dead:
        return
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            words = (entry / "cmdline").read_bytes().split(b"\0")
            if any(os.fsdecode(w) in dead for w in words):
                os.kill(int(entry.name), signal.SIGKILL)
    for name in sorted(dead):
        if (NETNS_DIR / name).exists():
            with contextlib.suppress(UnderlayError):
                ip("netns", "del", name)
        shutil.rmtree(run_dir / name, ignore_errors=True)


class Namespaces:
    """The namespaces of one lab, removed with everything in them by `close`."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def add(self) -> str:
        name = f"{PREFIX}{os.getpid()}-{len(self.names)}"
        ip("netns", "add", name)
        self.names.append(name)
        ip("link", "set", "lo", "up", namespace=name)
        return name

    def link(self, a: str, a_name: str, b: str, b_name: str, mtu: int) -> None:
        """A veth pair between two namespaces, both ends up at `mtu`."""
        temp_a, temp_b = f"{PREFIX}t{len(self.names)}a{os.getpid() % 10000}", f"{PREFIX}t{len(self.names)}b"
        ip("link", "add", temp_a, "netns", a, "type", "veth", "peer", "name", temp_b, "netns", b)
        ip("link", "set", temp_a, "name", a_name, "mtu", str(mtu), "up", namespace=a)
        ip("link", "set", temp_b, "name", b_name, "mtu", str(mtu), "up", namespace=b)

    def close(self) -> None:
        for name in reversed(self.names):
            with contextlib.suppress(UnderlayError):
                ip("netns", "del", name)
        self.names.clear()
