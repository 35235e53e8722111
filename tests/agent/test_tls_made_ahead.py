"""What the first calls need is made beside the worktree (ADR 0093): the TLS context of each
kind of URL the policy's workers use, and their wire formats' codecs, on a thread of their own;
the client then holds that very context."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from stepswitch.wire.client import new_http_client

from .test_warm_http import fresh_process


def test_expect_makes_the_workers_contexts_and_codecs_on_a_thread_of_its_own() -> None:
    """A fresh process: a policy with one https worker and one on a plain local server."""
    code = (
        "import sys, threading\n"
        "from stepswitch.agent.providers import HttpProviders\n"
        "from stepswitch.policy.model import WorkerConfig\n"
        "from stepswitch.registry.presets import load_registry\n"
        "mod = 'stepswitch.wire.formats.chat_completions'\n"
        "assert mod not in sys.modules\n"
        "p = HttpProviders(load_registry(), base_urls={'scripted': 'http://127.0.0.1:9/v1'})\n"
        "kw = dict(max_output_tokens=100, timeout=30)\n"
        "workers = [WorkerConfig(provider='tokenfactory', model='openai/gpt-oss-120b', **kw),\n"
        "           WorkerConfig(provider='scripted', model='scripted-mid', **kw)]\n"
        "p.expect(workers)\n"
        "names = [t.name for t in threading.enumerate()]\n"
        "ready = p._expected.result()\n"
        "print(sorted(ready), ready[True].verify_mode == 2, ready[False].verify_mode == 0,\n"
        "      mod in sys.modules, 'ssw-warm-tls' in names)\n"
    )
    assert fresh_process(code) == ["[False,", "True]", "True", "True", "True", "True"]


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"ok": True}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def https_server(tmp_path: Path):
    """A loopback HTTPS server whose certificate only a CA file of the test's vouches for."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"https://127.0.0.1:{server.server_address[1]}/", cert
    server.shutdown()
    server.server_close()


def test_the_client_holds_the_context_made_ahead(https_server: tuple[str, Path]) -> None:
    url, cert = https_server
    made_ahead = ssl.create_default_context(cafile=str(cert))  # as SSL_CERT_FILE would make it

    with new_http_client(tls=True, context=made_ahead) as client:
        assert client.get(url).json() == {"ok": True}
    # The control: the same client without it knows only the usual CA bundle, and refuses.
    with new_http_client(tls=True) as client, pytest.raises(httpx.ConnectError, match="CERT"):
        client.get(url)
