"""Questions from a sub-agent on a worker to the person who approves its parent's calls.

A call of the child that its policies would ask about (see `policy`) is put to the parent's approver when
the parent has one (a person at the REPL, an application's approver): the worker's child gets a
`ParentApprover` that asks on `sagent.<fleet>.agent.<child>.approve`, and the parent's process answers
there (`answer_questions`) by calling its own approver with the child's call, the reason naming the child.
The answer is that approver's. When nobody answers (the parent is gone, its process never subscribed)
the call is refused: a question never turns into a yes by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from typing import TYPE_CHECKING, Any

from sagent.agent.hooks import ALLOW, Allow, Deny, Rewrite
from sagent.fleet_nats import names
from sagent.types import ToolCall

if TYPE_CHECKING:
    from nats.aio.msg import Msg
    from nats.aio.subscription import Subscription

    from sagent.agent.agent import Agent
    from sagent.fleet_nats.bus import NatsBus

QUESTION_WAIT = 24 * 3600.0  # seconds a child waits for its parent's person (a stop ends the wait sooner)


async def answer_questions(bus: NatsBus, parent: Agent, label: str) -> Subscription:
    """Answer the questions of the child `label` elsewhere with `parent`'s approver, on `parent`'s loop."""
    loop = asyncio.get_running_loop()

    async def ask(call: ToolCall, reason: str) -> Allow | Deny:
        approver = parent.settings.approver
        if approver is None or parent.closed:
            return Deny(f"nobody approves {parent.label}'s calls now")
        try:
            answer = await approver(parent, call, f"{label} (a sub-agent in another process) asks: {reason}")
        except Exception as error:  # an approver that fails never lets a call through
            return Deny(f"the approver failed: {type(error).__name__}: {error}")
        if isinstance(answer, Rewrite):  # the child would run the call as it asked, not as approved
            return Deny("the approver changed the call's arguments, which a sub-agent in another process cannot take")
        return answer

    async def on_question(msg: Msg) -> None:
        reply: dict[str, Any] = {"allow": False, "reason": "the question could not be read"}
        try:
            data = json.loads(msg.data)
            tool, arguments = data["tool"], data["arguments"]
            if not isinstance(tool, str) or not isinstance(arguments, dict):
                raise ValueError("not a question")
            call = ToolCall(f"{label}-{uuid.uuid4().hex[:8]}", tool, arguments)
            work = asyncio.run_coroutine_threadsafe(ask(call, str(data.get("reason", ""))), loop)
            answer = await asyncio.wrap_future(work)
            reply = {"allow": isinstance(answer, Allow), "reason": "" if isinstance(answer, Allow) else answer.reason}
        except (ValueError, KeyError, TypeError):
            pass
        except Exception as error:  # the parent's loop is gone
            reply = {"allow": False, "reason": f"{parent.label} could not be asked: {error}"}
        with contextlib.suppress(Exception):
            await msg.respond(json.dumps(reply).encode())

    subject = names.agent_subject(bus.fleet, label, "approve")
    return await asyncio.wrap_future(
        asyncio.run_coroutine_threadsafe(bus.nc.subscribe(subject, cb=on_question), bus.loop)
    )


class ParentApprover:
    """The approver of a child on a worker: asks its parent's process, and refuses when nobody answers."""

    def __init__(self, bus: NatsBus, parent_label: str) -> None:
        self.bus = bus
        self.parent_label = parent_label

    async def __call__(self, agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        question = {"tool": call.name, "arguments": call.arguments, "reason": reason}
        subject = names.agent_subject(self.bus.fleet, agent.label, "approve")
        asking = self.bus.nc.request(subject, json.dumps(question).encode(), timeout=QUESTION_WAIT)
        future = asyncio.run_coroutine_threadsafe(asking, self.bus.loop)
        try:
            reply = await asyncio.wrap_future(future)
            data = json.loads(reply.data)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as error:
            return Deny(f"{reason}; {self.parent_label} could not be asked ({str(error) or type(error).__name__})")
        if isinstance(data, dict) and data.get("allow") is True:
            return ALLOW
        why = data.get("reason") if isinstance(data, dict) else ""
        return Deny(f"{self.parent_label}'s approver said no" + (f": {why}" if why else ""))
