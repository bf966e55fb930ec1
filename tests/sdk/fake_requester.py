"""A stand-in for the Claude Agent SDK's side of the control protocol: it records each control request
sagent sends and answers it from a function, as the SDK's process would (or raises `ControlError`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from sagent.cli.control.requester import ControlError

Answer = Callable[[dict[str, Any]], dict[str, Any] | Awaitable[dict[str, Any]]]


class FakeRequester:
    """Answers every request with `answer(request)`; an exception it raises becomes a `ControlError`."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self.timeouts: list[float | None] = []

    async def request(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        self.requests.append(request)
        self.timeouts.append(timeout)
        try:
            answer = self.answer(request)
            if asyncio.iscoroutine(answer) or isinstance(answer, asyncio.Future):
                answer = await asyncio.wait_for(answer, timeout)
        except ControlError:
            raise
        except TimeoutError:
            raise ControlError(f"no answer to {request['subtype']} in {timeout} s") from None
        except Exception as error:
            raise ControlError(str(error)) from None
        assert isinstance(answer, dict)
        return answer

    def of(self, subtype: str) -> list[dict[str, Any]]:
        """The requests of one subtype, in order."""
        return [r for r in self.requests if r["subtype"] == subtype]
