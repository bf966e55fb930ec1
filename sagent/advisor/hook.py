"""`AdvisorHook`: watches the executor through the loop's hook points and consults the advisor when a
trigger fires and the gates allow.

- the `Advisor` tool: the call's result is replaced by the guidance (`after_tool`);
- failures and stagnation: seen as tool results come back; the guidance is appended, as a marked note, to
  the result of the call that tripped the trigger (`after_tool`);
- the marker and low confidence: seen in a response (`after_response`); the note joins the next tool result
  of that round, or, when the response is the final answer, keeps the run going (`on_stop`);
- review: once per run, before the final answer (`on_stop`); the executor then answers, so every word the
  user reads is the executor's.

When executor and advisor are both Anthropic's, each request offers the advisor as a `server_advisor`
(`before_request`): Anthropic consults it within the response, in place of the `Advisor` tool, and the
consultations are counted from the response (`after_response`) under the same gates.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import TYPE_CHECKING

from sagent.advisor.consult import NOTE_HEADER, ROLE_PREFIX, Consultation, consult
from sagent.advisor.policy import AdvisorPolicy
from sagent.advisor.similarity import stagnating
from sagent.agent.hooks import Hook
from sagent.events import AdvisorConsulted, HookNotice
from sagent.lib.words import quantity
from sagent.providers.base import Model
from sagent.providers.catalog import cost_of
from sagent.types import (
    AssistantMessage,
    ModelRequest,
    ServerAdvisor,
    ServerToolPart,
    TextPart,
    ToolCall,
    ToolResult,
    Usage,
)

if TYPE_CHECKING:
    from sagent.agent.agent import Agent

TOOL_NAME = "Advisor"
NATIVE_PROVIDER = "anthropic"  # the provider whose API can run the advisor on its side
_CONFIDENCE = re.compile(r"confidence\s*[:=]\s*(\d+(?:\.\d+)?)\s*(%?)", re.IGNORECASE)


@dataclass
class _State:
    """What the hook remembers of one agent."""

    turn: int = 0
    consultations: int = 0
    last_turn: int | None = None
    failures: int = 0
    recent: list[str] = field(default_factory=list)
    pending: tuple[str, str] | None = None  # (trigger, reason) waiting for a place to put the note
    reviewed: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def reported_confidence(text: str) -> float | None:
    """The confidence a response reports (`confidence: 0.3`, `Confidence = 30%`), from 0 to 1; None if none."""
    found = _CONFIDENCE.search(text)
    if found is None:
        return None
    value = float(found.group(1))
    return value / 100 if found.group(2) or value > 1 else value


class AdvisorHook(Hook):
    """Consults `model` for every agent that runs this hook, under `policy`. `consultations` keeps every
    consultation made, in order (the cost tables have them too, under `advisor/<model>`)."""

    def __init__(self, model: Model, policy: AdvisorPolicy | None = None) -> None:
        self.model = model
        self.policy = policy or AdvisorPolicy()
        self.consultations: list[Consultation] = []
        self._states: dict[int, _State] = {}

    def _state(self, agent: Agent) -> _State:
        return self._states.setdefault(id(agent), _State())

    def spent(self, agent: Agent) -> Decimal:
        """What the advisor has cost in this agent's tree so far."""
        key = ROLE_PREFIX + self.model.name
        spend = agent.cost.by_model.get(key)
        return spend.cost.usd_total if spend is not None else Decimal(0)

    def blocked(self, agent: Agent, state: _State, trigger: str) -> str | None:
        """Why a consultation may not happen now (a gate), or None."""
        p = self.policy
        if state.consultations >= p.max_consultations:
            return f"the limit of {p.max_consultations} consultations is reached"
        cooling = state.last_turn is not None and state.turn - state.last_turn < p.cooldown
        if trigger != "tool" and cooling:
            return f"cooling down ({quantity(p.cooldown, 'turn')} between consultations)"
        if p.max_usd is not None and self.spent(agent) >= Decimal(str(p.max_usd)):
            return f"the advisor's budget of ${p.max_usd} is spent"
        if agent.cost.over_budget():
            return "the budget is spent"
        return None

    async def ask(self, agent: Agent, trigger: str, reason: str) -> str | None:
        """Consult now if the gates allow: the marked guidance, or None (with a notice saying why not)."""
        state = self._state(agent)
        gate = self.blocked(agent, state, trigger)
        if gate is not None:
            agent.notify(HookNotice("Advisor", f"not consulted ({trigger}): {gate}"))
            return f"the advisor was not consulted: {gate}" if trigger == "tool" else None
        state.consultations += 1
        state.last_turn = state.turn
        done = await consult(agent, self.model, trigger, reason, self.policy.max_tokens, self.policy.structured)
        if isinstance(done, str):
            return done if trigger == "tool" else None
        self.consultations.append(done)
        return f"{NOTE_HEADER} ({done.model}, asked because: {trigger})\n{done.guidance}"

    def native(self, agent: Agent) -> ServerAdvisor | None:
        """The server-side advisor the next request may offer: when the executor and the advisor are both
        Anthropic's, the policy allows it and the gates are open; None otherwise."""
        p = self.policy
        if not (p.tool and p.native) or {self.model.provider, agent.model.provider} != {NATIVE_PROVIDER}:
            return None
        state = self._state(agent)
        if self.blocked(agent, state, "tool") is not None:
            return None
        return ServerAdvisor(self.model.name, p.max_consultations - state.consultations, p.max_tokens, TOOL_NAME)

    def record_native(self, agent: Agent, part: ServerToolPart) -> None:
        """Count one consultation Anthropic ran within a response: its cost under `advisor/<model>` and
        its event, as for one sagent ran."""
        state = self._state(agent)
        state.consultations += 1
        state.last_turn = state.turn
        model = part.model or self.model.name
        usage = part.usage or Usage()
        cost = cost_of(model, usage)
        agent.cost.add(ROLE_PREFIX + model, usage, cost)
        reason = "The executor asked (on the provider's side)."
        self.consultations.append(Consultation("tool", reason, part.text, model, usage, cost))
        agent.notify(AdvisorConsulted("tool", model, usage, cost, native=True, advice=part.text))

    # ------------------------------------------------------------------------------------ the hook points

    async def before_request(self, agent: Agent, request: ModelRequest) -> ModelRequest:
        advisor = self.native(agent)
        return replace(request, server_advisor=advisor) if advisor is not None else request

    async def after_response(self, agent: Agent, message: AssistantMessage) -> None:
        state = self._state(agent)
        for part in message.content:
            if isinstance(part, ServerToolPart) and part.name == "advisor" and part.provider == NATIVE_PROVIDER:
                self.record_native(agent, part)
        state.turn += 1
        p = self.policy
        text = message.text
        if any(marker in text for marker in p.markers()):
            state.pending = ("marker", f"The executor asked for help: {text.strip()[:2000]}")
            return
        confidence = reported_confidence(text) if p.confidence is not None else None
        if p.confidence is not None and confidence is not None and confidence < p.confidence:
            state.pending = ("confidence", f"The executor reports confidence {confidence:.2f}: {text.strip()[:2000]}")
            return
        if p.stagnation is not None:
            calls = "\n".join(f"{c.name} {json.dumps(c.arguments, sort_keys=True)}" for c in message.tool_calls)
            state.recent = [*state.recent, f"{text.strip()}\n{calls}"][-p.stagnation :]
            if stagnating(state.recent, p.stagnation, p.similarity):
                state.recent = []
                reason = f"The executor's last {p.stagnation} responses are nearly the same: it may be stuck."
                state.pending = ("stagnation", reason)

    async def after_tool(self, agent: Agent, call: ToolCall, result: ToolResult) -> ToolResult | None:
        state = self._state(agent)
        p = self.policy
        async with state.lock:
            if call.name == TOOL_NAME and p.tool:
                question = str(call.arguments.get("question", "")).strip() or "(no question given)"
                answer = await self.ask(agent, "tool", f"The executor asks: {question}")
                return ToolResult.of(call, answer or "the advisor gave no guidance")
            state.failures = state.failures + 1 if result.is_error else 0
            if p.failures is not None and state.failures >= p.failures and state.pending is None:
                reason = f"{state.failures} tool calls failed in a row; the last ({call.name}): {result.text[:1500]}"
                state.pending = ("failures", reason)
                state.failures = 0
            if state.pending is None:
                return None
            trigger, reason = state.pending
            state.pending = None
            note = await self.ask(agent, trigger, reason)
        if note is None:
            return None
        return replace(result, content=(*result.content, TextPart(f"\n\n{note}")))

    async def on_stop(self, agent: Agent, message: AssistantMessage, active: bool) -> str | None:
        state = self._state(agent)
        async with state.lock:
            if state.pending is not None:
                trigger, reason = state.pending
                state.pending = None
                return await self.ask(agent, trigger, reason)
            if self.policy.review and not state.reviewed:
                state.reviewed = True
                reason = f"Review the executor's final answer before the user gets it:\n{message.text[:4000]}"
                note = await self.ask(agent, "review", reason)
                return f"{note}\nWrite your final answer for the user now." if note else None
        return None
