"""The SDK prefetch: started from the provider's name, in a daemon thread, and harmless when it fails."""

from __future__ import annotations

import subprocess
import sys

from sagent.providers.prefetch import sdk_of


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
