"""Images in a request to a model known not to read them: each is replaced by a short note, so the request
is one the provider takes. An image reaches the history from a model that reads images (a pasted
screenshot, a Read of a PNG) and stays there after `/model` switches to one that does not; sent as it is,
it would fail that request and every later one. A model sagent knows nothing about (an id the catalog lacks,
on an endpoint of the user's) is sent the images as they are: the user who sends one knows the model."""

from __future__ import annotations

from dataclasses import replace

from sagent.providers.base import Model
from sagent.providers.catalog import lookup
from sagent.types import ImagePart, Message, ModelRequest, TextPart, ToolResult, UserMessage

IMAGE_NOTE = TextPart("[an image was here, but the current model cannot read images]")


def readable_request(model: Model, request: ModelRequest) -> ModelRequest:
    """`request` with its images replaced by `IMAGE_NOTE` when `model` is known not to read images (it
    says so itself, or the catalog does); else `request` itself."""
    if not known_not_to_read_images(model) or not any(_has_image(m) for m in request.messages):
        return request
    return replace(request, messages=tuple(_without_images(m) for m in request.messages))


def known_not_to_read_images(model: Model) -> bool:
    """True when the model says it reads no images (an `accepts_images` of False), or the catalog says so."""
    said = getattr(model, "accepts_images", None)
    if isinstance(said, bool):
        return not said
    info = lookup(model.name)
    return info is not None and not info.images


def _has_image(message: Message) -> bool:
    return isinstance(message, UserMessage | ToolResult) and any(isinstance(p, ImagePart) for p in message.content)


def _without_images(message: Message) -> Message:
    if not _has_image(message):
        return message
    assert isinstance(message, UserMessage | ToolResult)
    return replace(message, content=tuple(IMAGE_NOTE if isinstance(p, ImagePart) else p for p in message.content))
