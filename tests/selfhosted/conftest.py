"""The tiny HuggingFace snapshots the SelfHosted tests run on, built once per test session (no download:
HF_HUB_OFFLINE is set, so nothing here may reach the hub). The tests skip, saying why, without the
`selfhosted` extra."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_VERBOSITY"] = "error"

if importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None:
    pytest.skip("the selfhosted extra is not installed (uv sync --extra selfhosted)", allow_module_level=True)


@pytest.fixture(scope="session")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer Llama whose chat template takes tools and `enable_thinking`."""
    from tests.selfhosted.tiny_hf import build_snapshot

    return build_snapshot(tmp_path_factory.mktemp("hf") / "tiny-tools")


@pytest.fixture(scope="session")
def plain_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same kind of model with a plain ChatML template (no tools, no thinking: the text protocol) and
    a 4096-token window."""
    from tests.selfhosted.tiny_hf import PLAIN_TEMPLATE, build_snapshot

    return build_snapshot(tmp_path_factory.mktemp("hf") / "tiny-plain", PLAIN_TEMPLATE, window=4096)
