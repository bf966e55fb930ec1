"""What a part of sagent needs to ask the SDK's process something: one control request, its answer."""

from __future__ import annotations

from typing import Any, Protocol


class ControlError(Exception):
    """The SDK answered a control request with an error, did not answer in time, or its process is gone."""


class Requester(Protocol):
    """Sends one `control_request` to the SDK's process and waits for its `control_response`.

    `request` is the request's body (`{"subtype": "can_use_tool", ...}`); the answer is the body of a
    success response (`response.response`, `{}` when it has none). An error response, a timeout or the SDK's
    process closing its end raises `ControlError`."""

    async def request(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]: ...
