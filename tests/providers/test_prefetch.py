"""The SDK prefetch: started from the provider's name, in a daemon thread, and harmless when it fails; the
TLS context built beside it, or, for a plain HTTP endpoint, one that loads its trust store on first use."""

from __future__ import annotations

import contextlib
import socket
import ssl
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sagent.providers.lazy_tls import TrustOnFirstUse
from sagent.providers.specs import find_spec
from tests.tools.test_web import certificate


def sdk_of(provider: str) -> str | None:
    spec = find_spec(provider)
    return spec.sdk if spec is not None else None


def test_each_provider_prefetches_the_sdk_its_adapter_imports() -> None:
    assert sdk_of("anthropic") == "anthropic"
    assert sdk_of("google") == "google.genai"
    assert sdk_of("openai") == "openai"
    assert sdk_of("moonshot") == "openai"  # an OpenAI-compatible preset
    assert sdk_of("local") == "openai"  # the llama.cpp server is spoken to through the OpenAI SDK
    assert sdk_of("LlamaCpp") == "openai"  # any spelling of a provider
    assert sdk_of("no-such-provider") is None  # left for the registry to report


def test_the_prefetch_imports_the_sdk_in_a_daemon_thread() -> None:
    code = (
        "import sys; from sagent.providers.prefetch import start; "
        "t = start('anthropic'); assert t.daemon; t.join(); "
        "assert 'anthropic' in sys.modules and 'anyio._backends._asyncio' in sys.modules; print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout == "ok\n", done.stderr


def test_a_missing_sdk_is_left_for_the_adapter_to_report() -> None:
    code = (
        "import sys; sys.modules['openai'] = None; "  # as if the SDK were not installed
        "from sagent.providers.prefetch import start; start('openai').join(); print('quiet')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.stdout, done.stderr) == ("quiet\n", "")


def test_a_plain_http_endpoint_loads_no_trust_store_at_start_up() -> None:
    code = (
        "from sagent.providers import prefetch; "
        "prefetch.start('openai', 'http://127.0.0.1:9/v1').join(); local = prefetch._tls_started.is_set(); "
        "prefetch.start('anthropic').join(); remote = prefetch._tls_started.is_set(); "
        "lazy = prefetch.tls_context('openai', 'HTTP://127.0.0.1:9'); "
        "built = prefetch.tls_context('anthropic', 'https://api.example'); "
        "print(local, remote, type(lazy).__name__, lazy.cert_store_stats()['x509_ca'], "
        "built.cert_store_stats() == __import__('ssl').create_default_context().cert_store_stats())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["False", "True", "TrustOnFirstUse", "0", "True"], done.stderr


def serve_tls_once(server: ssl.SSLContext) -> tuple[int, threading.Thread]:
    listener = socket.create_server(("127.0.0.1", 0))

    def accept() -> None:
        with listener:
            conn, _ = listener.accept()
            with contextlib.suppress(OSError), server.wrap_socket(conn, server_side=True) as tls:
                tls.sendall(b"hello")

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    return listener.getsockname()[1], thread


def test_the_lazy_context_verifies_against_the_trust_store_it_loads_on_first_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, _ = certificate(tmp_path, "localhost")
    # Not trusted by the system's store: the handshake fails, as with any default context.
    lazy = TrustOnFirstUse()
    assert lazy.verify_mode == ssl.CERT_REQUIRED and lazy.check_hostname
    port, thread = serve_tls_once(server)
    with pytest.raises(ssl.SSLCertVerificationError), socket.create_connection(("127.0.0.1", port)) as raw:
        lazy.wrap_socket(raw, server_hostname="localhost")
    thread.join(5)
    # The default store, read when the context is first used: here, the test's certificate alone.
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "cert.pem"))
    lazy = TrustOnFirstUse()
    assert lazy.cert_store_stats()["x509_ca"] == 0
    port, thread = serve_tls_once(server)
    raw = socket.create_connection(("127.0.0.1", port))
    with lazy.wrap_socket(raw, server_hostname="localhost") as tls:
        assert tls.recv(5) == b"hello"
    assert lazy.cert_store_stats()["x509_ca"] == 1
    thread.join(5)
