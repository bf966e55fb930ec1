"""The SelfHosted model spec grammar (`REPO_OR_FOLDER+device+dtype+compile`) on a table of good and bad specs,
and the device and dtype checks made when a model loads (here on a stand-in for torch, so every branch runs
on any machine; the real CPU runs are in tests/selfhosted)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from sagent.providers.selfhosted_load import choose_device, choose_dtype, config_window
from sagent.providers.selfhosted_spec import HostedSpec, SpecError, parse_spec

GOOD = [
    ("Qwen/Qwen3.6-27B", HostedSpec("Qwen/Qwen3.6-27B")),
    ("Qwen/Qwen3.6-27B+bfloat16+cuda", HostedSpec("Qwen/Qwen3.6-27B", "cuda", "bfloat16")),
    ("Qwen/Qwen3.6-27B+cuda+bfloat16", HostedSpec("Qwen/Qwen3.6-27B", "cuda", "bfloat16")),
    ("owner/model+cuda:1+fp16+compile", HostedSpec("owner/model", "cuda:1", "float16", True)),
    ("owner/model+compile+bf16", HostedSpec("owner/model", "auto", "bfloat16", True)),
    ("owner/model+CPU+Float32", HostedSpec("owner/model", "cpu", "float32")),
    ("owner/model+mps+half", HostedSpec("owner/model", "mps", "float16")),
    ("owner/model+cpu+auto", HostedSpec("owner/model", "cpu", "auto")),
    ("  ~/models/snap+cpu  ", HostedSpec("~/models/snap", "cpu")),
]

BAD = [
    ("", "needs --model"),
    ("+cuda", "names no model"),
    ("owner/model+gpu", "unknown suffix 'gpu'"),
    ("owner/model+int4", "unknown suffix 'int4'"),
    ("owner/model+cuda+cpu", "gives the device twice"),
    ("owner/model+fp16+bfloat16", "gives the dtype twice"),
    ("owner/model+compile+compile", "gives the compile twice"),
    ("owner/model++cuda", "empty suffix"),
    ("owner/model+cuda+", "empty suffix"),
]


@pytest.mark.parametrize(("text", "expected"), GOOD)
def test_good_specs_parse_in_any_order(text: str, expected: HostedSpec) -> None:
    assert parse_spec(text) == expected


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_specs_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(SpecError, match=message.replace("+", r"\+")):
        parse_spec(text)


def test_a_local_folder_with_a_plus_in_its_name_is_taken_whole(tmp_path: Path) -> None:
    folder = tmp_path / "model+cuda"
    folder.mkdir()
    assert parse_spec(str(folder)) == HostedSpec(str(folder))
    assert parse_spec(f"{folder}+cpu") == HostedSpec(str(folder), "cpu")
    assert parse_spec(f"{folder}+cpu").local_path == folder


def test_the_spec_is_written_back_with_the_suffixes_given() -> None:
    assert parse_spec("o/m+bf16+cuda+compile").text() == "o/m+cuda+bfloat16+compile"
    assert parse_spec("o/m").text() == "o/m"


def fake_torch(*, cuda: int = 0, mps: bool = False, bf16: bool = True, broken: tuple[str, ...] = ()) -> Any:
    """A stand-in for torch with `cuda` GPUs, an MPS device or not, and matrix products that fail in the
    dtypes of `broken` (as float16 did on the CPU in older torch)."""

    class Tensor:
        def __init__(self, dtype: str) -> None:
            self.dtype = dtype

        def __matmul__(self, other: Tensor) -> Tensor:
            if self.dtype in broken:
                raise RuntimeError(f"\"addmm_impl_cpu_\" not implemented for '{self.dtype}'")
            return self

        def sum(self) -> Tensor:
            return self

        def item(self) -> float:
            return 8.0

    return SimpleNamespace(
        cuda=SimpleNamespace(is_available=lambda: cuda > 0, device_count=lambda: cuda, is_bf16_supported=lambda: bf16),
        backends=SimpleNamespace(mps=SimpleNamespace(is_available=lambda: mps)),
        float32="float32",
        float16="float16",
        bfloat16="bfloat16",
        ones=lambda shape, dtype, device: Tensor(dtype),
    )


def test_auto_picks_the_gpu_when_there_is_one_else_the_cpu() -> None:
    assert choose_device("auto", fake_torch(cuda=1)) == "cuda"
    assert choose_device("auto", fake_torch(mps=True)) == "mps"
    assert choose_device("auto", fake_torch()) == "cpu"
    assert choose_dtype("auto", "cuda", fake_torch(cuda=1)) == "bfloat16"
    assert choose_dtype("auto", "cuda", fake_torch(cuda=1, bf16=False)) == "float16"
    assert choose_dtype("auto", "cpu", fake_torch()) == "float32"


def test_a_device_this_machine_lacks_is_refused() -> None:
    with pytest.raises(SpecError, match=r"\+cuda was asked for, but torch sees no CUDA GPU"):
        choose_device("cuda", fake_torch())
    with pytest.raises(SpecError, match=r"\+cuda:2: this machine has 1 CUDA GPU"):
        choose_device("cuda:2", fake_torch(cuda=1))
    with pytest.raises(SpecError, match="no Apple GPU"):
        choose_device("mps", fake_torch())
    assert choose_device("cuda:1", fake_torch(cuda=2)) == "cuda:1"


def test_a_dtype_the_device_cannot_multiply_in_is_refused() -> None:
    torch = fake_torch(broken=("float16",))
    with pytest.raises(SpecError, match=r"\+float16 cannot run on cpu: .*not implemented.* \(try \+float32\)"):
        choose_dtype("float16", "cpu", torch)
    assert choose_dtype("bfloat16", "cpu", torch) == "bfloat16"


def test_the_context_window_is_read_from_a_config() -> None:
    assert config_window({"max_position_embeddings": 32768}) == 32768
    assert config_window({"text_config": {"max_position_embeddings": 8192}}) == 8192
    assert config_window({"n_positions": 1024}) == 1024
    assert config_window({}) is None
    assert config_window(SimpleNamespace(max_position_embeddings=4096)) == 4096


def test_nothing_heavy_loads_until_a_selfhosted_model_runs() -> None:
    """The class, the spec and the CLI's provider table import neither torch nor transformers."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom sagent.providers import SelfHosted\nfrom sagent.providers.selfhosted_spec import parse_spec\n"
        "from sagent.providers.registry import choose\nparse_spec('o/m+cuda+bf16'); choose('SelfHosted', 'o/m')\n"
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_model_of_this_machine_is_free_and_known_as_local() -> None:
    from sagent.providers.catalog import cost_of, lookup, register_local_model, runs_locally
    from sagent.types import Usage

    name = "Example/Tiny-Test-Model+cpu"
    assert lookup(name) is None and not cost_of(name, Usage(10, 10)).priced  # unknown: unpriced
    register_local_model(name, "selfhosted", 32768)
    cost = cost_of(name, Usage(1_000_000, 1_000_000))
    assert cost.priced and cost.total == 0 and runs_locally(name) and runs_locally("smollm2")
    info = lookup(name)
    assert info is not None and info.context_window == 32768
    assert not runs_locally("claude-sonnet-4-6")


def test_the_errors_speak_of_a_model_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from sagent.providers import SelfHosted
    from sagent.providers.base import BadRequestError
    from sagent.providers.selfhosted_load import extra_missing

    with pytest.raises(BadRequestError) as raised:
        SelfHosted().model()
    assert "runs in this process" in raised.value.message and "server" not in raised.value.message
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in ("torch", "transformers") else real(name, *a)
    )
    assert (extra_missing() or "").startswith("torch and transformers are not installed; install the selfhosted extra")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else object())
    assert (extra_missing() or "").startswith("torch is not installed;")
