"""`fabricgen status --serve ADDRESS`: a Prometheus exporter of the fabric's status.

One thread reads and judges the fabric every `interval` seconds, one reading after another (never
two at once: a reading slower than the interval delays the next one, it does not overlap it);
each command of a reading has its own bound (`observe.read_commands`), so a zone that does not
answer becomes `unreachable` series while the others keep reporting. The HTTP server answers
`GET /metrics` from the latest reading, never by reading itself, so concurrent and frequent
scrapes cost nothing; before the first reading it answers 503. A reading that fails as a whole
(the fabric no longer loads) keeps the last one and counts the failure.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from fabricgen.errors import FabricgenError
from fabricgen.judge.openmetrics import Metric, family, openmetrics
from fabricgen.judge.verdicts import Report
from fabricgen.live_text import redact

CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
EXPORTER_METRICS = (  # served beside the reading's (`openmetrics.METRICS`), with --serve only
    Metric("fabricgen_exporter_readings", "gauge", "Readings of the fabric since the exporter started.", ()),
    Metric("fabricgen_exporter_reading_failures", "gauge",
           "Readings that failed as a whole since the exporter started (the last good one is served).", ()),
    Metric("fabricgen_exporter_reading_seconds", "gauge", "How long the latest reading took.", ()),
)


class Latest:
    """The latest reading's metrics, and the exporter's own."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.body: str | None = None
        self.readings = 0
        self.failures = 0
        self.seconds = 0.0

    def text(self) -> str | None:
        with self.lock:
            if self.body is None:
                return None
            values = (str(self.readings), str(self.failures), f"{self.seconds:.3f}")
            own = [line for metric, value in zip(EXPORTER_METRICS, values, strict=True)
                   for line in family(metric, [f"{metric.name} {value}"])]
            return self.body.removesuffix("# EOF\n") + "\n".join(own) + "\n# EOF\n"


def reading_loop(latest: Latest, read: Callable[[], Report], interval: float) -> None:
    while True:
        start = time.monotonic()
        try:
            body = openmetrics(read())
        except FabricgenError as exc:
            sys.stderr.write(f"fabricgen status --serve: the reading failed: {redact(str(exc))}\n")
            with latest.lock:
                latest.failures += 1
        else:
            with latest.lock:
                latest.body, latest.readings, latest.seconds = body, latest.readings + 1, time.monotonic() - start
        time.sleep(max(0.0, interval - (time.monotonic() - start)))


def serve(address: str, read: Callable[[], Report], interval: float) -> None:
    """Serve until interrupted (SIGINT, SIGTERM: `fabricgen.cli`)."""
    host, _, port = address.rpartition(":")
    latest = Latest()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] != "/metrics":
                self.send_error(404, "only /metrics is served")
                return
            text = latest.text()
            if text is None:
                self.send_error(503, "no reading yet")
                return
            data = text.encode()
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            return  # scrapes are not news

    server = ThreadingHTTPServer((host or "127.0.0.1", int(port)), Handler)
    server.daemon_threads = True
    threading.Thread(target=reading_loop, args=(latest, read, interval), daemon=True).start()
    bound_host, bound_port = str(server.server_address[0]), int(server.server_address[1])
    sys.stderr.write(f"fabricgen status: serving http://{bound_host}:{bound_port}/metrics, reading every "
                     f"{interval:g} s\n")
    sys.stderr.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
