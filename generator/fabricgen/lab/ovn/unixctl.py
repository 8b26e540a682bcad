"""A client of the JSON-RPC control socket of OVS and OVN daemons (what `ovs-appctl` speaks).

One request per call over one connection: `{"id": N, "method": M, "params": [...]}` in,
`{"id": N, "result": TEXT, "error": null}` out, with no framing beyond the JSON value
itself (`lib/unixctl.c`, `lib/jsonrpc.c` of Open vSwitch). Calling the daemon directly
saves starting an `ovs-appctl` process per trace. An ovsdb-server speaks the same JSON-RPC
on its database socket (RFC 7047: `transact`), with JSON values for parameters and results
(`Client.request`).
"""

from __future__ import annotations

import codecs
import json
import socket
from pathlib import Path
from typing import Any


class UnixctlError(RuntimeError):
    pass


class Client:
    def __init__(self, path: Path, timeout: float = 30.0) -> None:
        self._path = path
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        self._sock.connect(str(path))
        self._decoder = json.JSONDecoder()
        self._buffer = ""
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._id = 0

    def call(self, method: str, *params: str) -> str:
        result = self.request(method, list(params))
        return result if isinstance(result, str) else ""

    def request(self, method: str, params: list[Any]) -> Any:
        """One JSON-RPC request and its result (any JSON value): also what an ovsdb-server answers."""
        self._id += 1
        request = {"id": self._id, "method": method, "params": params}
        self._sock.sendall(json.dumps(request).encode())
        reply = self._read()
        if reply.get("id") != self._id:
            raise UnixctlError(f"{self._path}: reply to another request: {reply!r}")
        if reply.get("error") is not None:
            raise UnixctlError(f"{self._path}: {method}: {reply['error']}")
        return reply.get("result")

    def call_many(self, requests: list[tuple[str, ...]], batch: int = 64) -> list[str]:
        """Several calls (method, *params), `batch` of them sent before their replies are read:
        the daemon answers them in order, and the round trips overlap."""
        out: list[str] = []
        for start in range(0, len(requests), batch):
            ids = []
            data = b""
            for method, *params in requests[start:start + batch]:
                self._id += 1
                ids.append((self._id, method))
                data += json.dumps({"id": self._id, "method": method, "params": list(params)}).encode()
            self._sock.sendall(data)
            for ident, method in ids:
                reply = self._read()
                if reply.get("id") != ident:
                    raise UnixctlError(f"{self._path}: reply to another request: {reply!r}")
                if reply.get("error") is not None:
                    raise UnixctlError(f"{self._path}: {method}: {reply['error']}")
                result = reply.get("result")
                out.append(result if isinstance(result, str) else "")
        return out

    def _read(self) -> dict[str, Any]:
        while True:
            text = self._buffer.lstrip()
            if text:
                try:
                    value, end = self._decoder.raw_decode(text)
                except json.JSONDecodeError:
                    pass
                else:
                    self._buffer = text[end:]
                    if not isinstance(value, dict):
                        raise UnixctlError(f"{self._path}: not a JSON-RPC reply: {value!r}")
                    return value
            chunk = self._sock.recv(1 << 16)
            if not chunk:
                raise UnixctlError(f"{self._path}: connection closed")
            self._buffer += self._utf8.decode(chunk)

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
