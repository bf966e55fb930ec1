"""Loading a SelfHosted model once per process, and sharing it.

`acquire(spec)` returns the `LoadedModel` for a spec, loading it the first time (torch and transformers are
imported here, never before); every further agent that names the same model, device and dtype gets the same
weights, counted. `release` gives one back; when no agent holds it any more it is dropped (and the GPU's
cache emptied), so its memory is freed. A lock per loaded model lets one generation run at a time on it.

What the device and dtype can run is checked before the weights load: `+cuda` where torch sees no GPU, or a
dtype whose matrix product fails on the device, is a `SpecError` saying so.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from sagent.providers.selfhosted_spec import HostedSpec, SpecError


def install_hint() -> str:
    """How to install the selfhosted extra, for the way this copy of sagent was installed (never from PyPI)."""
    from sagent.lib.install import extra_hint

    return f"install the selfhosted extra: {extra_hint('selfhosted')}"


def extra_missing() -> str | None:
    """What of the selfhosted extra is not installed (torch, transformers), or None. Imports nothing."""
    missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    are = "is" if len(missing) == 1 else "are"
    return f"{' and '.join(missing)} {are} not installed; {install_hint()}"


def config_window(config: Any) -> int | None:
    """The context window a transformers config (or its dict) declares, or None."""
    if isinstance(config, dict):
        text = config.get("text_config")
        values = [config.get(k) for k in ("max_position_embeddings", "n_positions", "max_sequence_length")]
        if isinstance(text, dict):
            values.append(text.get("max_position_embeddings"))
    else:
        values = [getattr(config, k, None) for k in ("max_position_embeddings", "n_positions", "max_sequence_length")]
        text_config = getattr(config, "text_config", None)
        values.append(getattr(text_config, "max_position_embeddings", None) if text_config is not None else None)
    return next((v for v in values if isinstance(v, int) and v > 0), None)


def window_on_disk(spec: HostedSpec) -> int | None:
    """The context window from a local snapshot's config.json, read without loading anything; None when the
    source is a repo id or the file is unreadable."""
    folder = spec.local_path
    if folder is None:
        return None
    try:
        return config_window(json.loads((folder / "config.json").read_text()))
    except (OSError, ValueError):
        return None


def choose_device(device: str, torch: Any) -> str:
    """The device `auto` stands for on this machine, or the one asked for once torch can use it."""
    if device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        return "mps" if mps is not None and mps.is_available() else "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise SpecError(f"+{device} was asked for, but torch sees no CUDA GPU on this machine (use +cpu)")
        index = int(device.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            raise SpecError(f"+{device}: this machine has {torch.cuda.device_count()} CUDA GPU(s)")
    if device == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise SpecError("+mps was asked for, but torch sees no Apple GPU (MPS) on this machine")
    return device


def choose_dtype(dtype: str, device: str, torch: Any) -> str:
    """The dtype `auto` stands for on `device`, after checking the device can multiply matrices in it."""
    if dtype == "auto":
        if device.startswith("cuda"):
            dtype = "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
        else:
            dtype = "float16" if device == "mps" else "float32"
    try:
        probe = torch.ones((2, 2), dtype=getattr(torch, dtype), device=device)
        (probe @ probe).sum().item()
    except (RuntimeError, TypeError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise SpecError(f"+{dtype} cannot run on {device}: {reason} (try +float32)") from None
    return dtype


@dataclass(eq=False)
class LoadedModel:
    """One model's weights and tokenizer in memory, shared by every agent that names them."""

    key: tuple[str, str, str, bool]
    model: Any
    tokenizer: Any
    device: str
    dtype: str
    context_window: int | None
    load_seconds: float
    users: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while a generation runs: one at a time on these weights."""


_LOADED: dict[tuple[str, str, str, bool], LoadedModel] = {}
_REGISTRY_LOCK = threading.Lock()


def loaded_models() -> list[LoadedModel]:
    """The models in memory now (for `/status`-like reports and the tests)."""
    with _REGISTRY_LOCK:
        return list(_LOADED.values())


def _load(spec: HostedSpec, key: tuple[str, str, str, bool]) -> LoadedModel:
    import time

    started = time.perf_counter()
    import torch
    import transformers

    transformers.utils.logging.set_verbosity_error()  # no progress bars or notices over the REPL's screen
    transformers.utils.logging.disable_progress_bar()
    device = choose_device(spec.device, torch)
    dtype = choose_dtype(spec.dtype, device, torch)
    source = str(spec.local_path) if spec.local_path is not None else spec.source
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source)
        model = transformers.AutoModelForCausalLM.from_pretrained(source, dtype=getattr(torch, dtype))
    except (OSError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise SpecError(f"cannot load {spec.source!r}: {first}") from None
    model.to(device)
    model.eval()
    if spec.compile:
        model.forward = torch.compile(model.forward)
    window = config_window(model.config)
    return LoadedModel(key, model, tokenizer, device, dtype, window, time.perf_counter() - started)


def acquire(spec: HostedSpec) -> LoadedModel:
    """The loaded model for `spec`, loading it when no agent holds it yet; one more user counted. Blocking
    (call it in a thread). SpecError for a device or dtype this machine cannot run, or weights that cannot
    be read."""
    missing = extra_missing()
    if missing:
        raise SpecError(f"the SelfHosted provider cannot run: {missing}")
    source = str(spec.local_path.resolve()) if spec.local_path is not None else spec.source
    key = (source, spec.device, spec.dtype, spec.compile)
    with _REGISTRY_LOCK:
        found = _LOADED.get(key)
        if found is None:
            found = _LOADED[key] = _load(spec, key)
        found.users += 1
        return found


def release(loaded: LoadedModel) -> None:
    """One user fewer; at none, the weights are dropped and their memory given back."""
    with _REGISTRY_LOCK:
        loaded.users -= 1
        if loaded.users > 0 or _LOADED.get(loaded.key) is not loaded:
            return
        del _LOADED[loaded.key]
        loaded.model = loaded.tokenizer = None
    gc.collect()
    if loaded.device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()
