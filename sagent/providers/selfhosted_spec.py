"""The SelfHosted model spec: a HuggingFace repo id or a local snapshot folder, then `+` suffixes.

    Qwen/Qwen3.6-27B+bfloat16+cuda      ~/models/qwen3-0.6b+cpu      ./snapshot+float32+compile

Each suffix belongs to one category, in any order, each category at most once:

- device: `cpu`, `cuda`, `cuda:N`, `mps`, `auto` (the default: cuda when torch sees a GPU, else mps, else cpu)
- dtype: `float32` (`fp32`), `float16` (`fp16`, `half`), `bfloat16` (`bf16`), `auto` (the default:
  bfloat16 on a GPU that has it, float16 on another GPU or mps, float32 on the CPU)
- compile: `compile` (the model goes through `torch.compile` after loading)

A local folder whose name holds a `+` is taken whole when it exists (its suffixes follow it). Parsing imports
nothing heavy: what a device or dtype can actually run is checked when the model loads
(`sagent.providers.selfhosted_load`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DEVICES = ("cpu", "cuda", "mps", "auto")
DTYPES = {
    "float32": "float32",
    "fp32": "float32",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "auto": "auto",
}
_CUDA_INDEX = re.compile(r"^cuda:\d+$")
GRAMMAR = "device cpu|cuda|cuda:N|mps, dtype float32|float16|bfloat16 (fp32, fp16, bf16), compile"


class SpecError(ValueError):
    """A model spec that cannot be run as written; the message says what is wrong and what is accepted."""


@dataclass(frozen=True, slots=True)
class HostedSpec:
    """A parsed SelfHosted model spec: where the weights are and how to run them."""

    source: str
    """The repo id (`owner/name`) or the local snapshot folder, as written."""
    device: str = "auto"
    """`cpu`, `cuda`, `cuda:N`, `mps` or `auto` (decided when the model loads)."""
    dtype: str = "auto"
    """`float32`, `float16`, `bfloat16` or `auto` (decided with the device)."""
    compile: bool = False
    """Whether the loaded model goes through `torch.compile`."""

    @property
    def local_path(self) -> Path | None:
        """The snapshot folder when `source` names one on this machine, else None (a repo id)."""
        path = Path(self.source).expanduser()
        return path if path.is_dir() else None

    def text(self) -> str:
        """The spec written back, with the suffixes that were given (defaults left out)."""
        parts = [self.source]
        parts += [p for p in (self.device, self.dtype) if p != "auto"]
        return "+".join([*parts, "compile"] if self.compile else parts)


def _category(word: str) -> tuple[str, str | bool]:
    """The category a suffix word belongs to and its value; SpecError for a word of none."""
    lowered = word.lower()
    if lowered in DEVICES or _CUDA_INDEX.match(lowered):
        return "device", lowered
    if lowered in DTYPES:
        return "dtype", DTYPES[lowered]
    if lowered == "compile":
        return "compile", True
    raise SpecError(f"unknown suffix {word!r} in the model spec; suffixes are: {GRAMMAR}")


def parse_spec(text: str) -> HostedSpec:
    """`text` as a `HostedSpec`; SpecError for an empty source, an empty or unknown suffix, or a category
    given twice (`+cpu+cuda`). `auto` counts as a device (its dtype twin is `+auto` only when a device was
    already given)."""
    spec = text.strip()
    if not spec:
        raise SpecError("the SelfHosted provider needs --model: a HuggingFace repo id or a local snapshot folder")
    parts = spec.split("+")
    # The longest `+`-joined head that is a folder here is the source (a folder may have `+` in its name).
    cut = next((n for n in range(len(parts), 1, -1) if Path("+".join(parts[:n])).expanduser().is_dir()), 1)
    source, suffixes = "+".join(parts[:cut]), parts[cut:]
    if not source.strip():
        raise SpecError(f"model spec {spec!r} names no model before its suffixes")
    chosen: dict[str, str | bool] = {}
    for word in suffixes:
        if not word.strip():
            raise SpecError(f"model spec {spec!r} has an empty suffix (two `+` in a row, or one at the end)")
        category, value = _category(word.strip())
        if category == "device" and value == "auto" and "device" in chosen:
            category, value = "dtype", "auto"
        if category in chosen:
            raise SpecError(f"model spec {spec!r} gives the {category} twice; each of {GRAMMAR} at most once")
        chosen[category] = value
    return HostedSpec(
        source.strip(),
        device=str(chosen.get("device", "auto")),
        dtype=str(chosen.get("dtype", "auto")),
        compile=bool(chosen.get("compile", False)),
    )
