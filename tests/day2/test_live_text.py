"""What the live side prints cannot fool the terminal or leak a credential (`fabricgen.live_text`).

The token case is real: an HTTPS API server on 127.0.0.1 (Python's `ssl` with a certificate
`openssl` makes) that answers every request 403 with the request's `Authorization` header in its
error body, as a misconfigured proxy in front of an API server does; the real `kubectl` with a
kubeconfig of its own, one context using a bearer token and one an exec credential plugin that
logs its token on stderr; and `fabricgen status --capture` run as a user runs it. Neither the
report, nor its errors, nor any file of the capture may hold either token, and `status --from`
of the capture may not either.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fabricgen.cli import main
from fabricgen.live_text import escape, redact, safe
from support.fabrics import REPO

LAB = REPO / "sites" / "lab" / "fabric.yaml"
TOKEN = "Tq9vZ2tLm3XnP0sR7wYb4cE1hJ6kF8dA"
PLUGIN_TOKEN = "Pz8xW3nV6mQ1rT5yU9iO2pL4kJ7hG0fD"


# ---------------------------------------------------------------- the rule itself
def test_every_character_that_moves_the_terminal_is_escaped() -> None:
    hostile = "hq\x1b[31mRED\x1b]0;owned\x07\x1b[2J\r\x85\u2028\u2029\u202e\u2066\x00\x7f end"
    shown = escape(hostile)
    assert shown == ("hq\\x1b[31mRED\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x85\\u2028\\u2029\\u202e\\u2066\\x00\\x7f end")
    assert shown.isprintable()
    assert escape("two\nlines\tand a tab") == "two\nlines\tand a tab"


@pytest.mark.parametrize("text", [
    f"Authorization: Bearer {TOKEN}",
    f'{{"headers": {{"Authorization": ["Bearer {TOKEN}"]}}}}',
    f"authorization={TOKEN}",
    f"token: {TOKEN}",
    f'"token":"{TOKEN}"',
    f"client-key-data: {TOKEN}",
    f"password={TOKEN}",
    f"Bearer {TOKEN} was refused",
    f"zone aiBearer {TOKEN}",  # a name with the token glued on
    "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJlLWJ5dGVz",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + TOKEN + "\n-----END RSA PRIVATE KEY-----",
])
def test_credentials_are_redacted(text: str) -> None:
    out = redact(text)
    assert TOKEN not in out and "c2lnbmF0dXJl" not in out, out
    assert "<redacted" in out


def test_ordinary_words_are_kept() -> None:
    text = "transit switch ts has tunnel key 1025; a token: of trust; password policy"
    assert safe(text) == text


# ---------------------------------------------------------------- a real API server, a real kubectl
class _Echo(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        # A plain-text error body, as a proxy gives one: client-go shows it as the error's message
        # (k8s.io/client-go rest/request.go newUnstructuredResponseError).
        data = (f"forbidden: request headers: Authorization: {self.headers.get('Authorization')} "
                "\x1b]0;owned\x07\x1b[2J").encode()
        self.send_response(403)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def api_server(tmp_path: Path) -> Iterator[str]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def kubeconfig(tmp_path: Path, server: str) -> Path:
    plugin = tmp_path / "credential-plugin.sh"
    plugin.write_text("#!/bin/sh\n"
                      f"echo 'plugin debug: issued token={PLUGIN_TOKEN} for you' >&2\n"
                      f"printf '%s' '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
                      f"\"status\":{{\"token\":\"{PLUGIN_TOKEN}\"}}}}'\n")
    plugin.chmod(0o755)
    zones = ("hq", "ai", "edge", "dr")
    config = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "echo", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
        "users": [{"name": "token", "user": {"token": TOKEN}},
                  {"name": "plugin", "user": {"exec": {"apiVersion": "client.authentication.k8s.io/v1",
                                                       "command": str(plugin), "interactiveMode": "Never"}}}],
        "contexts": [{"name": z, "context": {"cluster": "echo", "user": "plugin" if z == "ai" else "token"}}
                     for z in zones],
        "current-context": "hq",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


@pytest.mark.lab
def test_a_server_that_echoes_the_token_and_a_plugin_that_logs_it_leak_nothing(
        api_server: str, tmp_path: Path) -> None:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl not installed")
    env = {**os.environ, "KUBECONFIG": str(kubeconfig(tmp_path, api_server)), "HOME": str(tmp_path)}
    # kubectl itself, as fabricgen runs it, does relay both (else this test proves nothing)
    said = subprocess.run(["kubectl", "--context", "hq", "-n", "kube-system", "get", "pods", "-o", "json"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert TOKEN in said.stderr, said.stderr
    said = subprocess.run(["kubectl", "--context", "ai", "-n", "kube-system", "get", "pods", "-o", "json"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert PLUGIN_TOKEN in said.stderr, said.stderr
    capture = tmp_path / "capture"
    done = subprocess.run([sys.executable, "-m", "fabricgen", "status", str(LAB), "--capture", str(capture)],
                          env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 8, done.stdout + done.stderr
    shown = done.stdout + done.stderr
    assert "forbidden" in shown and "<redacted>" in shown, shown
    assert TOKEN not in shown and PLUGIN_TOKEN not in shown
    assert "\x1b" not in shown and "\x07" not in shown, shown
    files = [p for p in capture.rglob("*") if p.is_file()]
    assert any(p.suffix == ".err" for p in files)
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert TOKEN not in text and PLUGIN_TOKEN not in text, path
    replay = subprocess.run([sys.executable, "-m", "fabricgen", "status", str(LAB), "--from", str(capture)],
                            env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert replay.returncode == 8
    assert TOKEN not in replay.stdout + replay.stderr and "\x1b" not in replay.stdout + replay.stderr


def test_status_from_a_hostile_capture_cannot_drive_the_terminal(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A capture attached to a ticket, its stderr files written by someone else: relayed escaped."""
    from fabricgen.observe import capture as captures
    from fabricgen.observe.capture import Observation

    fake = "\x1b]0;owned\x07\x1b[2J\x1b[31mFAKE: all ok\u202e"
    observations = {"ic/show": Observation("ic/show", ("kubectl", "get"), 1, "", fake + f" Bearer {TOKEN}")}
    target = tmp_path / "capture"
    captures.write(target, observations, site="lab", fabric=str(LAB))
    code = main(["status", str(LAB), "--from", str(target)])
    out, err = capsys.readouterr()
    assert code == 8
    for stream in (out, err):
        assert "\x1b" not in stream and "\x07" not in stream and "\u202e" not in stream and TOKEN not in stream
