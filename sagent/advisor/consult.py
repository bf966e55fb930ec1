"""One consultation: what the advisor is shown (the task, the executor's context cut to fit its window, why
it is asked), the call to the advisor's model, and its cost counted apart under `advisor/<model>`; each is
reported as an `AdvisorConsulted` event (logged, and a record in stream-json)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sagent.advisor.answer import ADVICE_SCHEMA, StructuredAdvice, parse_advice
from sagent.agent.pricing import has_price, unpriced_message
from sagent.encoding import scrub_deep
from sagent.events import AdvisorConsulted, HookNotice, ResponseComplete
from sagent.providers.base import Model, ProviderError, stream_with_retry
from sagent.providers.catalog import cost_of, request_cost
from sagent.types import AssistantMessage, Cost, Message, ModelRequest, ToolResult, Usage, UserMessage

if TYPE_CHECKING:
    from sagent.agent.agent import Agent

ROLE_PREFIX = "advisor/"
"""The advisor's spend is counted under `advisor/<model>` in the cost tables (`modelUsage`, `/cost`)."""
NOTE_HEADER = "[advisor note]"
"""How guidance is marked where the executor reads it."""
ADVISOR_SYSTEM = (
    "You advise another AI agent (the executor) that is doing a task with tools. You never act and never "
    "talk to the user: the executor does the work and writes every word the user sees. Read the task, the "
    "executor's work so far and why you are consulted, then give short, concrete guidance: what is going "
    "wrong, what to try next, what to check. No preamble."
)
STRUCTURED_ASK = (
    "Give your guidance to the executor as your assessment of the situation, the next steps it should take "
    "(in order, each concrete) and the risks it should watch for."
)
UNKNOWN_WINDOW = 128_000
CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class Consultation:
    """One consultation, as recorded: why, the guidance, and what it cost."""

    trigger: str
    reason: str
    guidance: str
    model: str
    usage: Usage
    cost: Cost
    structured: StructuredAdvice | None = None
    """The answer in the seed's form, when the provider gave it structured (`guidance` is its rendering)."""

    def line(self) -> str:
        """The consultation in one line for people."""
        u = self.usage
        return (
            f"consulted {self.model} (trigger: {self.trigger}): {u.input_tokens:,} input / {u.output_tokens:,} "
            f"output tokens, ${self.cost.total:.6f}"
        )


def transcript(history: Sequence[Message], limit_chars: int) -> str:
    """The executor's context as text for the advisor: the first message (the task) and as much of the end
    as fits in `limit_chars`, with a note where the middle was left out."""
    lines = [_render(m) for m in history]
    if not lines:
        return "(nothing yet)"
    head, rest = lines[0], lines[1:]
    room = limit_chars - len(head)
    kept: list[str] = []
    for line in reversed(rest):
        if len(line) > room:
            if not kept:
                kept.append(line[-max(room, 0) :])
            break
        kept.append(line)
        room -= len(line)
    left_out = len(rest) - len(kept)
    middle = [f"[... {left_out} earlier messages left out to fit ...]"] if left_out else []
    return "\n\n".join([head, *middle, *reversed(kept)])


def _render(message: Message) -> str:
    if isinstance(message, AssistantMessage):
        calls = "".join(f"\n-> {c.name}({c.arguments})" for c in message.tool_calls)
        return f"EXECUTOR: {message.text}{calls}".strip()
    if isinstance(message, ToolResult):
        status = "ERROR" if message.is_error else "ok"
        return f"TOOL RESULT ({message.name}, {status}): {message.text[:4000]}"
    return f"USER: {getattr(message, 'text', '')}"


def advisor_request(
    agent: Agent, model: Model, trigger: str, reason: str, max_tokens: int, structured: bool = False
) -> ModelRequest:
    """The request the advisor gets: its own system prompt and one message holding everything it sees;
    with `structured`, asking for the seed's form (assessment, next steps, risks) as structured output."""
    window = model.context_window or UNKNOWN_WINDOW
    room = max(2_000, (window - max_tokens) * CHARS_PER_TOKEN // 2)
    ask = STRUCTURED_ASK if structured else "Give your guidance to the executor."
    text = (
        f"## Why you are consulted ({trigger})\n{reason}\n\n## The executor's work so far\n"
        f"{transcript(agent.history, room)}\n\n{ask}"
    )
    schema = ADVICE_SCHEMA if structured else None
    return ModelRequest(ADVISOR_SYSTEM, (UserMessage.of(text),), max_tokens=max_tokens, response_schema=schema)


async def consult(
    agent: Agent, model: Model, trigger: str, reason: str, max_tokens: int, structured: bool = False
) -> Consultation | str:
    """Ask the advisor; the consultation, or why it was not asked (the budget) or failed (a provider error).
    With `structured`, the answer is asked for in the seed's form where the model supports structured
    output (free text elsewhere, or when the endpoint refuses the schema). Its cost is added to the agent's
    spend under `advisor/<model>` and a notice records it."""
    if agent.cost.budgeted() is not None and not has_price(model):
        return f"not consulted: {unpriced_message(model)}"
    structured = structured and model.structured_output
    request = scrub_deep(advisor_request(agent, model, trigger, reason, max_tokens, structured))
    chars = len(request.system) + sum(len(getattr(m, "text", "")) for m in request.messages)
    estimate = request_cost(model.name, chars // CHARS_PER_TOKEN, 0, max_tokens)
    if agent.cost.refusing(estimate) is not None:
        return "not consulted: the budget (max_budget_usd) would be crossed"
    try:
        try:
            message = await _answer(agent, model, request)
        except ProviderError as error:
            if request.response_schema is None or error.status != 400:
                raise
            # an endpoint that does not take the schema (a proxy, an older model): ask again for free text
            plain = advisor_request(agent, model, trigger, reason, max_tokens)
            message = await _answer(agent, model, scrub_deep(plain))
    except ProviderError as error:
        agent.notify(HookNotice("Advisor", f"{model.name} could not answer: {error.message}", "warning"))
        return f"the advisor could not answer: {error.message}"
    if message is None:
        return "the advisor gave no answer"
    cost = cost_of(model.name, message.usage)
    agent.cost.add(ROLE_PREFIX + model.name, message.usage, cost)
    advice = parse_advice(message.text) if structured else None
    guidance = advice.render() if advice is not None else message.text.strip()
    done = Consultation(trigger, reason, guidance, model.name, message.usage, cost, advice)
    agent.notify(AdvisorConsulted(trigger, model.name, message.usage, cost, advice=done.guidance))
    return done


async def _answer(agent: Agent, model: Model, request: ModelRequest) -> AssistantMessage | None:
    message: AssistantMessage | None = None
    async for event in stream_with_retry(model, request, agent.retry):
        if isinstance(event, ResponseComplete):
            message = scrub_deep(event.message)
    return message
