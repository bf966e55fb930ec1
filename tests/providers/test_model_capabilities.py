"""The optional capabilities of a model are protocol members with defaults: a model that subclasses
`Model` and writes only provider, name and stream still answers them, and `close_model` calls `aclose`."""

from __future__ import annotations

from collections.abc import AsyncIterator

from sagent.events import ModelEvent, ResponseComplete
from sagent.providers.base import Model, close_model
from sagent.providers.llamacpp import LlamaCppModel
from sagent.providers.scripted import ScriptedModel
from sagent.types import AssistantMessage, ModelRequest


class Minimal(Model):
    @property
    def provider(self) -> str:
        return "mine"

    @property
    def name(self) -> str:
        return "minimal"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        yield ResponseComplete(AssistantMessage(()))


async def test_a_minimal_model_inherits_the_defaults_and_closes() -> None:
    model = Minimal()
    assert model.context_window is None and model.accepts_images is None
    await close_model(model)  # nothing to release: no error


def test_models_that_know_better_say_so() -> None:
    assert LlamaCppModel(context=4096).context_window == 4096
    assert ScriptedModel(accepts_images=False).accepts_images is False
    assert ScriptedModel().context_window is None


async def test_close_model_calls_the_models_own_aclose() -> None:
    closed: list[str] = []

    class Holding(Minimal):
        async def aclose(self) -> None:
            closed.append(self.name)

    await close_model(Holding())
    assert closed == ["minimal"]
