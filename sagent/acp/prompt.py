"""A prompt's way in and out: the editor's content blocks as a sagent user message, and the end of the run
as the protocol's stop reason."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlparse

from sagent.types import AssistantMessage, ImagePart, TextPart, UserContent, UserMessage

if TYPE_CHECKING:
    from sagent.acp.session import AcpSession
    from sagent.events import Result

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


def user_message(blocks: list[Any], cwd: Path) -> UserMessage:
    """The prompt's blocks in order: text as it is, images as images, a resource the editor embedded (a
    file, with its unsaved text) as an attached file, a link to one as a mention the model can Read."""
    from acp.schema import (
        EmbeddedResourceContentBlock,
        ImageContentBlock,
        ResourceContentBlock,
        TextContentBlock,
        TextResourceContents,
    )

    parts: list[UserContent] = []
    typed: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(TextPart(block.text))
            typed.append(block.text)
        elif isinstance(block, ImageContentBlock):
            parts.append(ImagePart(block.data, block.mime_type))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            shown = _shown(resource.uri, cwd)
            if isinstance(resource, TextResourceContents):
                text = resource.text.rstrip("\n")
                lines = len(text.splitlines())
                parts.append(TextPart(f'<file path="{_attr(shown)}" lines="{lines}">\n{text}\n</file>'))
            else:
                parts.append(TextPart(f"[attached: {shown} ({resource.mime_type or 'binary'}), not text]"))
            typed.append(f"@{shown}")
        elif isinstance(block, ResourceContentBlock):
            shown = _shown(block.uri, cwd)
            parts.append(TextPart(f"@{shown}"))
            typed.append(f"@{shown}")
    if not parts:
        parts.append(TextPart(""))
    text = " ".join(typed)
    plain = all(isinstance(p, TextPart) for p in parts) and len(parts) == len(typed)
    return UserMessage(tuple(parts), typed=None if plain else text)


def _shown(uri: str, cwd: Path) -> str:
    """A file's path for the model: relative to the session's folder when inside it."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        return uri
    path = unquote(parsed.path) if parsed.scheme == "file" else uri
    relative = os.path.relpath(path, cwd) if os.path.isabs(path) else path
    return path if relative.startswith("..") else relative


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def stop_reason(result: Result | None, session: AcpSession) -> tuple[StopReason | None, str]:
    """Why the turn ended, for the editor, and what to tell the user with it; (None, why) for a run that
    failed (the prompt's error)."""
    if result is None or result.subtype == "interrupted" or session.cancelled:
        return "cancelled", ""
    if result.subtype == "error_max_turns":
        return "max_turn_requests", ""
    if result.subtype == "error_max_budget_usd":
        return "end_turn", f"\n\n[sagent: {result.text or 'the budget is spent'}]"
    if result.subtype == "error_during_execution":
        return None, result.text or session.updates.last_error or "the run failed"
    last = next((m for m in reversed(session.agent.history) if isinstance(m, AssistantMessage)), None)
    if last is not None and last.stop_reason == "max_tokens":
        return "max_tokens", ""
    if last is not None and last.stop_reason == "refusal":
        return "refusal", ""
    return "end_turn", ""
