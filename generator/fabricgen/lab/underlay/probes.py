"""Flows sent through the kernel between the underlay's namespaces: a UDP datagram (small, then
at the tunnel's full size with Don't Fragment, as an encapsulated packet leaves a chassis) read
by a socket on the target address, or a TCP connection accepted by a listener on it."""

from __future__ import annotations

import errno
import select
import socket
import time
from collections.abc import Callable, Sequence

from fabricgen.lab.underlay.namespaces import tcp_socket, udp_socket
from fabricgen.lab.underlay.needs import SMALL, Need

IP_MTU_DISCOVER = 10  # linux/in.h
IP_PMTUDISC_DO = 2
HEADERS = 28  # IPv4 and UDP
WAIT = 1.0  # seconds a datagram or a handshake is waited for
TOO_LARGE = "larger than the sender's route MTU"  # what the sending kernel says (EMSGSIZE)
NO_ROUTE = "no route"  # ENETUNREACH, EHOSTUNREACH

Where = Callable[[str], str]  # host name -> its namespace


def _token(index: int, size: int) -> bytes:
    mark = f"fabricgen-underlay {index} {size}".encode()
    return mark + b"." * max(0, size - HEADERS - len(mark))


def send_udp(where: Where, need: Need, index: int, size: int) -> str | None:
    """Send one datagram of `need` at `size`; an error the sending kernel gave, or None."""
    sock = udp_socket(where(need.source))
    try:
        sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
        if need.source_address is not None:
            sock.bind((str(need.source_address), 0))
        sock.sendto(_token(index, size), (str(need.address), need.port))
    except OSError as exc:
        return _why(exc)
    finally:
        sock.close()
    return None


def _why(exc: OSError) -> str:
    if exc.errno == errno.EMSGSIZE:
        return TOO_LARGE
    if exc.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
        return NO_ROUTE
    if exc.errno == errno.EADDRNOTAVAIL:
        return "the source address is not on the host"
    return exc.strerror or str(exc)


def udp(where: Where, needs: Sequence[tuple[int, Need]], wait: float = WAIT,
        ) -> dict[int, tuple[bool, bool, str | None]]:
    """Per need: (the small datagram arrived, the full-size one arrived, what the sender's kernel said)."""
    listeners: dict[tuple[str, str, int], socket.socket] = {}
    try:
        for _, need in needs:
            key = (where(need.target), str(need.address), need.port)
            if key not in listeners:
                sock = udp_socket(key[0])
                sock.bind((key[1], key[2]))
                sock.setblocking(False)
                listeners[key] = sock
        said: dict[int, str | None] = {}
        for index, need in needs:
            said[index] = send_udp(where, need, index, SMALL) or send_udp(where, need, index, need.size)
        got: set[tuple[int, int]] = set()
        deadline = time.monotonic() + wait
        expected = 2 * len(needs)
        while len(got) < expected and time.monotonic() < deadline:
            ready, _, _ = select.select(list(listeners.values()), [], [], 0.05)
            for sock in ready:
                data = sock.recv(65535)
                parts = data.split(b" ", 3)
                if len(parts) >= 3 and parts[0] == b"fabricgen-underlay":
                    got.add((int(parts[1]), 0 if int(parts[2].split(b".")[0]) == SMALL else 1))
        return {index: ((index, 0) in got, (index, 1) in got, said[index]) for index, _ in needs}
    finally:
        for sock in listeners.values():
            sock.close()


def tcp(where: Where, needs: Sequence[tuple[int, Need]], wait: float = WAIT) -> dict[int, str | None]:
    """Per need: None when the connection was accepted, else why not."""
    listeners: dict[tuple[str, str, int], socket.socket] = {}
    clients: dict[int, socket.socket] = {}
    out: dict[int, str | None] = {}
    try:
        for _, need in needs:
            key = (where(need.target), str(need.address), need.port)
            if key not in listeners:
                sock = tcp_socket(key[0])
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((key[1], key[2]))
                sock.listen(256)
                listeners[key] = sock
        for index, need in needs:
            sock = tcp_socket(where(need.source))
            sock.setblocking(False)
            code = sock.connect_ex((str(need.address), need.port))
            if code not in (0, errno.EINPROGRESS):
                out[index] = _why(OSError(code, errno.errorcode.get(code, str(code))))
                sock.close()
            else:
                clients[index] = sock
        deadline = time.monotonic() + wait
        while clients and time.monotonic() < deadline:
            _, ready, _ = select.select([], list(clients.values()), [], 0.05)
            for index, sock in list(clients.items()):
                if sock in ready:
                    code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    out[index] = None if code == 0 else _why(OSError(code, errno.errorcode.get(code, str(code))))
                    sock.close()
                    del clients[index]
        for index, sock in clients.items():
            out[index] = "no answer (dropped on the way or at the target)"
            sock.close()
        return out
    finally:
        for sock in listeners.values():
            sock.close()
