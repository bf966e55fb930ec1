"""SelfHosted: a HuggingFace model run in this process with transformers on torch (the `selfhosted` extra).

    sagent --provider SelfHosted --model Qwen/Qwen3.6-27B+bfloat16+cuda
    sagent --provider SelfHosted --model ~/models/my-snapshot+cpu

The model spec (`sagent.providers.selfhosted_spec`) names a repo id (fetched into the HuggingFace cache when
online) or a local snapshot folder, with device, dtype and compile suffixes. The weights load on the first
request, in a thread, and are shared by every agent of the process that names the same spec
(`sagent.providers.selfhosted_load`); `aclose()` gives them back.

Generation runs `model.generate` in a thread with transformers' `AsyncTextIteratorStreamer`, so text reaches
the event flow as it is made; a stopping criterion reads a flag that cancellation (Esc, closing the agent)
sets, so an abandoned generation stops at its next token. Usage is counted from the tokenizer (prompt and
generated tokens); the cost is 0, as the catalog registers the model as local.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from sagent.events import ModelEvent, ResponseComplete
from sagent.providers.base import BadRequestError, ContextTooLongError, Model
from sagent.providers.catalog import register_local_model
from sagent.providers.selfhosted_chat import (
    ThinkSplitter,
    opens_in_thinking,
    parse_calls,
    render_prompt,
    split_thinking,
    template_features,
)
from sagent.providers.selfhosted_load import (
    LoadedModel,
    acquire,
    extra_missing,
    release,
    window_on_disk,
)
from sagent.providers.selfhosted_spec import HostedSpec, SpecError, parse_spec
from sagent.types import AssistantContent, AssistantMessage, ModelRequest, StopReason, TextPart, ThinkingPart, Usage

PROVIDER = "selfhosted"
DEFAULT_MAX_TOKENS = 4096
_CALLS = itertools.count(1)


def stop_flag_criteria(flag: threading.Event) -> Any:
    """A transformers `StoppingCriteria` that ends generation once `flag` is set (built lazily: transformers
    loads only with the model)."""
    import torch
    from transformers import StoppingCriteria

    class _StopWhenFlagged(StoppingCriteria):  # type: ignore[misc]
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            return torch.full((input_ids.shape[0],), flag.is_set(), dtype=torch.bool, device=input_ids.device)

    return _StopWhenFlagged()


class SelfHostedModel(Model):
    """The `Model` for a HuggingFace causal LM in this process. Construction parses the spec (SpecError,
    a ValueError, for a bad one) and loads nothing; the first request loads the weights."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        stop: tuple[str, ...] = (),
        generation: dict[str, Any] | None = None,
    ) -> None:
        """`model`: the spec (repo id or folder, then `+` suffixes). `max_tokens`: the cap when a request
        names none. `stop`: stop sequences, which end the response at their first appearance (left out of
        the text). `generation`: more `generate` options (e.g. `{"do_sample": False}` for greedy decoding,
        or `logits_processor`). `api_key` and `base_url` are taken and ignored: nothing is remote."""
        try:
            self.spec: HostedSpec = parse_spec(model)
        except SpecError as error:
            raise BadRequestError(str(error), provider=PROVIDER) from None
        missing = extra_missing()
        if missing:
            raise BadRequestError(f"the SelfHosted provider cannot run: {missing}", provider=PROVIDER)
        if self.spec.device != "auto":
            check_device(self.spec.device)  # `+cuda` on a machine without one fails now, not at the first prompt
        self._max_tokens = max_tokens
        self.stop = tuple(s for s in stop if s)
        self.generation = dict(generation or {})
        self._loaded: LoadedModel | None = None
        self._load_lock = asyncio.Lock()
        self._flags: set[threading.Event] = set()
        register_local_model(self.name, PROVIDER, window_on_disk(self.spec))

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def name(self) -> str:
        return self.spec.text()

    @property
    def context_window(self) -> int | None:
        """From the model's config: the loaded one, else a local snapshot's config.json; None for a repo id
        not loaded yet."""
        if self._loaded is not None and self._loaded.context_window:
            return self._loaded.context_window
        return window_on_disk(self.spec)

    @property
    def accepts_images(self) -> bool:
        return False

    @property
    def loaded(self) -> LoadedModel | None:
        """The shared weights this model holds, once its first request loaded them."""
        return self._loaded

    async def load(self) -> LoadedModel:
        """Load (or join) the shared weights now; BadRequestError when they cannot run here."""
        async with self._load_lock:
            if self._loaded is None:
                try:
                    self._loaded = await asyncio.to_thread(acquire, self.spec)
                except SpecError as error:
                    raise BadRequestError(str(error), provider=PROVIDER) from None
                register_local_model(self.name, PROVIDER, self._loaded.context_window)
            return self._loaded

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        loaded = await self.load()
        tokenizer = loaded.tokenizer
        native = bool(request.tools) and template_features(tokenizer).tools
        try:
            prompt = render_prompt(tokenizer, request)
        except Exception as error:  # a template that refuses the conversation (roles must alternate, ...)
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise BadRequestError(f"the chat template of {self.name} refused the request: {first}") from None
        inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False).to(loaded.device)
        prompt_tokens = int(inputs["input_ids"].shape[-1])
        window = loaded.context_window
        if window is not None and prompt_tokens >= window:
            raise ContextTooLongError(
                f"the prompt is {prompt_tokens:,} tokens and {self.name} holds {window:,}", provider=PROVIDER
            )
        limit = request.max_tokens or self._max_tokens
        if window is not None:
            limit = max(1, min(limit, window - prompt_tokens))
        flag = threading.Event()
        self._flags.add(flag)
        splitter = ThinkSplitter(opens_in_thinking(prompt))
        pieces: list[str] = []
        result: dict[str, Any] = {}
        try:
            streamer = _streamer(tokenizer)
            worker = threading.Thread(
                target=_generate,
                args=(loaded, inputs, streamer, limit, self._options(tokenizer, flag), flag, result),
                name="sagent-selfhosted-generate",
                daemon=True,
            )
            worker.start()
            async for chunk in streamer:
                pieces.append(chunk)
                for event in splitter.feed(chunk):
                    yield event
            for event in splitter.finish():
                yield event
            await asyncio.to_thread(worker.join)
        finally:
            flag.set()  # a consumer that stopped early (Esc, a closed agent) stops the generation too
            self._flags.discard(flag)
        if "error" in result:
            raise BadRequestError(f"generation failed: {result['error']}", provider=PROVIDER)
        yield ResponseComplete(self._message(tokenizer, "".join(pieces), prompt, native, prompt_tokens, result, limit))

    def _options(self, tokenizer: Any, flag: threading.Event) -> dict[str, Any]:
        from transformers import StoppingCriteriaList

        options: dict[str, Any] = {"pad_token_id": tokenizer.pad_token_id or tokenizer.eos_token_id}
        options.update(self.generation)
        criteria = StoppingCriteriaList([stop_flag_criteria(flag), *options.pop("stopping_criteria", [])])
        options["stopping_criteria"] = criteria
        if self.stop:
            options["stop_strings"] = list(self.stop)
            options["tokenizer"] = tokenizer
        return options

    def _message(
        self,
        tokenizer: Any,
        generated: str,
        prompt: str,
        native: bool,
        prompt_tokens: int,
        result: dict[str, Any],
        limit: int,
    ) -> AssistantMessage:
        thought, answer = split_thinking(generated, opens_in_thinking(prompt))
        stopped_at = _cut_at_stop(answer, self.stop)
        text, calls = parse_calls(tokenizer, stopped_at, native)
        number = next(_CALLS)
        calls = tuple(replace(c, id=f"hf_{number}_{i}") for i, c in enumerate(calls))
        parts: list[AssistantContent] = [ThinkingPart(thought, provider=PROVIDER)] if thought else []
        if text:
            parts.append(TextPart(text))
        parts += calls
        output_tokens = int(result.get("output_tokens", 0))
        stop: StopReason = "end_turn"
        if calls:
            stop = "tool_use"
        elif output_tokens >= limit and stopped_at == answer:
            stop = "max_tokens"
        usage = Usage(input_tokens=prompt_tokens, output_tokens=output_tokens)
        return AssistantMessage(tuple(parts), PROVIDER, self.name, usage, stop)

    def cancel(self) -> None:
        """Stop every generation of this model now (each ends at its next token)."""
        for flag in list(self._flags):
            flag.set()

    async def aclose(self) -> None:
        """Stop its generations and give the shared weights back (freed when no other agent holds them)."""
        self.cancel()
        async with self._load_lock:
            if self._loaded is not None:
                loaded, self._loaded = self._loaded, None
                await asyncio.to_thread(release, loaded)


def check_device(device: str) -> None:
    """BadRequestError when torch cannot use `device` on this machine (imports torch)."""
    import torch

    from sagent.providers.selfhosted_load import choose_device

    try:
        choose_device(device, torch)
    except SpecError as error:
        raise BadRequestError(str(error), provider=PROVIDER) from None


def _streamer(tokenizer: Any) -> Any:
    from transformers import AsyncTextIteratorStreamer

    return AsyncTextIteratorStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True)


def _generate(
    loaded: LoadedModel,
    inputs: Any,
    streamer: Any,
    limit: int,
    options: dict[str, Any],
    flag: threading.Event,
    result: dict[str, Any],
) -> None:
    """`generate` in a worker thread, one at a time per loaded model; the streamer always ends, so the
    reader never waits for ever."""
    import torch

    try:
        with loaded.lock:
            if flag.is_set():  # cancelled while another generation held the model
                result["output_tokens"] = 0
                streamer.end()
                return
            with torch.inference_mode():
                out = loaded.model.generate(**inputs, max_new_tokens=limit, streamer=streamer, **options)
            result["output_tokens"] = int(out.shape[-1] - inputs["input_ids"].shape[-1])
    except Exception as error:  # reported on the event loop's side as a provider error
        result["error"] = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        with contextlib.suppress(Exception):
            streamer.end()


def _cut_at_stop(text: str, stops: tuple[str, ...]) -> str:
    """`text` up to the first stop sequence (generation stops after the token that completes one)."""
    ends = [text.find(s) for s in stops if s in text]
    return text[: min(ends)] if ends else text
