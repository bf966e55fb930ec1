"""An image in the history goes to a model that reads images, and as a note to one that does not: after a
switch to a text-only model, no request carries it."""

from __future__ import annotations

import base64

from sagent import Agent, ImagePart, ScriptedModel, TextPart, ToolResult, UserMessage
from sagent.agent.images import IMAGE_NOTE
from sagent.providers.scripted import text_turn

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(25)).decode()


async def test_a_switch_to_a_model_without_images_sends_notes_in_their_place() -> None:
    seeing = ScriptedModel([text_turn("A dot.")], accepts_images=True)
    blind = ScriptedModel([text_turn("Noted.")], accepts_images=False)
    agent = Agent(seeing)
    await agent.run(UserMessage((TextPart("what is this?"), ImagePart(PNG, "image/png"))))
    assert seeing.requests[0].messages[-1].content[-1] == ImagePart(PNG, "image/png")
    agent.switch_model(blind)
    await agent.run("and now?")
    sent = blind.requests[0].messages
    parts = [p for m in sent if isinstance(m, UserMessage | ToolResult) for p in m.content]
    assert not any(isinstance(p, ImagePart) for p in parts) and IMAGE_NOTE in parts
    assert any(isinstance(p, ImagePart) for p in agent.history[0].content)  # the history keeps it
    await agent.aclose()


async def test_a_model_the_catalog_lacks_is_sent_its_images_and_a_text_only_one_in_it_notes() -> None:
    from sagent.agent.images import readable_request
    from sagent.types import ModelRequest

    request = ModelRequest("", (UserMessage((TextPart("see"), ImagePart(PNG, "image/png"))),))

    class Named:
        provider = "openai"

        def __init__(self, name: str) -> None:
            self.name = name

    assert readable_request(Named("my-own-vision-model"), request) is request  # type: ignore[arg-type]
    notes = readable_request(Named("kimi-k2-thinking"), request)  # type: ignore[arg-type]
    assert notes.messages[0].content == (TextPart("see"), IMAGE_NOTE)  # type: ignore[union-attr]
