"""The control channel: sagent's side of the Claude Agent SDK's control protocol on stdin and stdout.

One reader takes every stdin line (`read_stream_json` hands each to `take`): a `control_request` from the
SDK is answered by a task of its own (`sagent.cli.control.answers`), so a slow answer never holds up the
lines after it; a `control_response` settles the request sagent sent with that id; a
`control_cancel_request` cancels the answer under way to the request it names; anything else (a `user`
message) goes on to the agent as before.

sagent's own requests (`can_use_tool`, `hook_callback`, `mcp_message`) go out with `request`, the
`Requester` of `sagent.cli.control.requester`: a unique id (`sagent_req_<n>`), the line on stdout, and the
answer's body once the SDK's `control_response` with that id arrives. An error response, a timeout or stdin
closing raise `ControlError`, and a request that times out is withdrawn with a `control_cancel_request`.

Every line goes out through `write`, from the event loop's thread, so records, requests and answers never
interleave inside a line.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from sagent.cli.control.requester import ControlError

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.cli.control.answers import Answers
    from sagent.cli.control.session_state import SessionState

CONTROL_TYPES = frozenset(
    {"control_request", "control_response", "control_cancel_request", "keep_alive", "update_environment_variables"}
)
"""The stdin lines the channel takes; every other line is a message for the agent."""


class ControlChannel:
    """sagent's end of the control protocol, for one run. `attach` gives it the run's agent, after which the
    SDK's requests are answered; until then they wait (the agent is built before stdin is read)."""

    def __init__(self, stdout: IO[str], *, on_error: Callable[[str], None] | None = None) -> None:
        self._stdout = stdout
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._answering: dict[str, asyncio.Task[None]] = {}
        self._closed = False
        self._on_error = on_error
        self._attached = asyncio.Event()
        self._initializing: asyncio.Task[None] | None = None
        self.initialized = False  # a program on the SDK is at the other end: it sent initialize
        self.agent: Agent | None = None
        self.answers: Answers | None = None
        self.state: SessionState | None = None  # reports requires_action while a request of sagent waits

    # ----------------------------------------------------------------------------------------- wiring

    def attach(self, agent: Agent, answers: Answers, state: SessionState | None = None) -> None:
        """The run's agent, and what answers the SDK's requests about it."""
        self.agent, self.answers, self.state = agent, answers, state
        self._attached.set()

    # ------------------------------------------------------------------------------------------ output

    def write(self, record: dict[str, Any]) -> None:
        """One JSON line on stdout."""
        self._stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._stdout.flush()

    # ------------------------------------------------------------------------------------------- input

    def take_line(self, line: bytes | str) -> bool:
        """Route one stdin line when it is the channel's; False for the others (user messages, and lines
        that are not JSON, which the message reader reports)."""
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            return False
        return self.take(record)

    async def before_message(self) -> None:
        """A user message is about to reach the agent: the program's initialize is answered first (its
        hooks and system prompt apply to the message), and the session is running from now on."""
        if self._initializing is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.shield(self._initializing)
        if self.state is not None:
            self.state.message_arrived()

    def take(self, record: Any) -> bool:
        """Route one parsed stdin line; False when it is not the channel's (a user message)."""
        if not isinstance(record, dict) or record.get("type") not in CONTROL_TYPES:
            return False
        kind = record["type"]
        if kind == "control_request":
            self._answer(record)
        elif kind == "control_response":
            self._settle(record.get("response"))
        elif kind == "control_cancel_request":
            task = self._answering.pop(str(record.get("request_id")), None)
            if task is not None:
                task.cancel()
        elif kind == "update_environment_variables" and isinstance(record.get("variables"), dict):
            # The program's new environment for what sagent starts from now on (tools, MCP servers).
            os.environ.update({str(k): v for k, v in record["variables"].items() if isinstance(v, str)})
        return True

    def close(self) -> None:
        """Stdin is closed: requests still waiting never get an answer."""
        self._closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ControlError("the SDK's program closed sagent's input"))
        self._pending.clear()

    # ------------------------------------------------------------------------ the SDK's requests to us

    def _answer(self, record: dict[str, Any]) -> None:
        request_id = str(record.get("request_id", ""))
        body = record.get("request")
        if not request_id or not isinstance(body, dict):
            self._report(f"a control_request without request_id or request: {json.dumps(record)[:200]}")
            if request_id:
                self._respond_error(request_id, "the control_request has no request object")
            return
        task = asyncio.get_running_loop().create_task(self._answer_one(request_id, body))
        self._answering[request_id] = task
        if body.get("subtype") == "initialize":
            self._initializing = task
            self.initialized = True
        task.add_done_callback(lambda _t: self._answering.pop(request_id, None))

    async def _answer_one(self, request_id: str, body: dict[str, Any]) -> None:
        await self._attached.wait()
        assert self.answers is not None
        try:
            response = await self.answers.answer(body)
        except asyncio.CancelledError:
            raise  # the SDK withdrew the request: it wants no answer
        except Exception as error:  # every request gets its answer: an error one, saying why
            self._respond_error(request_id, str(error) or type(error).__name__)
            return
        self.write(
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": request_id, "response": response or {}},
            }
        )

    def _respond_error(self, request_id: str, message: str) -> None:
        self.write(
            {"type": "control_response", "response": {"subtype": "error", "request_id": request_id, "error": message}}
        )

    # ------------------------------------------------------------------------ sagent's requests to the SDK

    async def request(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one control request to the SDK and wait for its answer (the `Requester` protocol)."""
        if self._closed:
            raise ControlError("the SDK's program closed sagent's input: nobody can answer")
        request_id = f"sagent_req_{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        if self.state is not None:
            self.state.asking(+1)
        try:
            self.write({"type": "control_request", "request_id": request_id, "request": request})
            try:
                return await asyncio.wait_for(future, timeout)
            except TimeoutError:
                self._withdraw(request_id)
                raise ControlError(f"no answer to {request.get('subtype')} within {timeout:g} s") from None
            except asyncio.CancelledError:  # the call that asked was interrupted: the program need not answer
                self._withdraw(request_id)
                raise
        finally:
            self._pending.pop(request_id, None)
            if self.state is not None:
                self.state.asking(-1)

    def _withdraw(self, request_id: str) -> None:
        if not self._closed:
            with contextlib.suppress(OSError, ValueError):
                self.write({"type": "control_cancel_request", "request_id": request_id})

    def _settle(self, response: Any) -> None:
        if not isinstance(response, dict):
            self._report("a control_response without a response object")
            return
        future = self._pending.pop(str(response.get("request_id")), None)
        if future is None or future.done():
            return  # an answer to a request that timed out or was never sent
        if response.get("subtype") == "error":
            future.set_exception(ControlError(str(response.get("error") or "the SDK answered with an error")))
            return
        body = response.get("response")
        future.set_result(body if isinstance(body, dict) else {})

    def _report(self, line: str) -> None:
        if self._on_error is not None:
            self._on_error(line)
