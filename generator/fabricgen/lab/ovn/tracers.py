"""The lab's tracing daemons: one `ovn-trace --detach` per AZ, asked over its control socket
(`unixctl`), so that thousands of traces cost no process each. A part of `Sandbox`."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from fabricgen.lab.ovn.running import SandboxError, parallel
from fabricgen.lab.ovn.unixctl import Client, UnixctlError


class Tracers:
    """The tracing daemons of a `Sandbox`, which provides what is declared here."""

    workdir: Path
    _tracers: dict[str, Client]
    _lock: threading.Lock

    def sb_db(self, zone: str) -> str:
        raise NotImplementedError  # `Databases.sb_db`, before this class in `Sandbox`'s order

    def _daemon(self, directory: Path, name: str, argv: list[str], *, env: dict[str, str] | None = None,
                unixctl: bool = True) -> None:
        raise NotImplementedError  # `Daemons._daemon`

    def start_tracers(self, azs: Iterable[str]) -> None:
        """One `ovn-trace --detach` per AZ. It reads the AZ's SB once, when it starts: start it
        after the last change (and `sync`), or call `stop_tracers` and start again."""
        def one(az: str) -> None:
            d = self.workdir / az
            self._daemon(d, "trace", ["ovn-trace", f"--db={self.sb_db(az)}"])
            client = Client(d / "trace.ctl")
            with self._lock:
                self._tracers[az] = client

        parallel(one, azs)

    def tracing(self, az: str) -> bool:
        """The AZ has a tracing daemon (`start_tracers`)."""
        return az in self._tracers

    def traced(self, az: str, datapath: str, flow: str, *options: str) -> str:
        """A trace answered by the AZ's tracing daemon (same text as `trace`)."""
        try:
            return self._tracers[az].call("trace", *options, datapath, flow)
        except UnixctlError as exc:
            raise SandboxError(f"ovn-trace in {az}: {exc}") from None

    def traced_many(self, az: str, traces: Sequence[tuple[str, str, Sequence[str]]]) -> list[str]:
        """Many traces (datapath, flow, options) answered by the AZ's tracing daemon, pipelined."""
        try:
            return self._tracers[az].call_many([("trace", *options, datapath, flow)
                                                for datapath, flow, options in traces])
        except UnixctlError as exc:
            raise SandboxError(f"ovn-trace in {az}: {exc}") from None

    def stop_tracers(self) -> None:
        for az, client in list(self._tracers.items()):
            with contextlib.suppress(OSError, UnixctlError):
                client.call("exit")
            client.close()
            del self._tracers[az]
