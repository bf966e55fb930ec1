"""The advisor strategy: a cheap executor does the work, and a stronger model is consulted only when the
executor needs help. The executor keeps control and writes every word the user reads; the advisor only
gives guidance, which comes back to the executor as a marked note (or as the `Advisor` tool's result).

    from sagent.advisor import Advisor, AdvisorPolicy
    agent = Agent(local_model, tools=builtin_tools(), advisor=Advisor(opus, AdvisorPolicy(review=True)))

Setting `advisor` adds the advisor's hook (`AdvisorHook`) to the agent's hooks and, unless the policy turns
it off, the `Advisor` tool to its tools; sub-agents inherit both. The advisor's spend is counted under
`advisor/<model>` in the cost tables, and each consultation is logged as a notice from `Advisor`.
This is the client-side strategy: it works for any pair of models, local ones included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sagent.advisor.answer import ADVICE_SCHEMA, StructuredAdvice, parse_advice
from sagent.advisor.consult import NOTE_HEADER, ROLE_PREFIX, Consultation, transcript
from sagent.advisor.hook import TOOL_NAME, AdvisorHook, reported_confidence
from sagent.advisor.policy import MARKERS, TRIGGERS, AdvisorPolicy
from sagent.advisor.target import advisor_target
from sagent.providers.base import Model
from sagent.tools.base import AnyOrder, ToolContext

if TYPE_CHECKING:
    from sagent.agent.settings import AgentSettings


class AdvisorTool(AnyOrder):
    """The tool the executor calls to ask its advisor; the advisor's hook answers it."""

    name = TOOL_NAME
    may_background = False
    description = (
        "Ask your advisor, a stronger model, for guidance when you are stuck, unsure or about to make a risky "
        "change. It sees the task and your work so far; it does not act. Give a precise question."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {"question": {"type": "string", "description": "what you need advice on"}},
        "required": ["question"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        return "no advisor is configured for this agent"  # the advisor's hook replaces this result


@dataclass(frozen=True, slots=True)
class Advisor:
    """An advisor for an agent: its model and its policy (the `advisor` setting of `AgentSettings`)."""

    model: Model
    policy: AdvisorPolicy = field(default_factory=AdvisorPolicy)
    hook: AdvisorHook = field(init=False)
    tool: AdvisorTool = field(init=False, default_factory=AdvisorTool)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hook", AdvisorHook(self.model, self.policy))

    def label(self) -> str:
        """`provider/model` of the advisor, for people."""
        return f"{self.model.provider}/{self.model.name}"


def with_advisor(
    settings: AgentSettings, value: str, models: Callable[[str | None, str | None], Model]
) -> AgentSettings:
    """`settings` with the advisor `value` names (`none`: no advisor; else a model id or `provider:model`,
    built by `models`, under the old advisor's policy): how AgentSpawn's `advisor` changes a sub-agent's.
    The old advisor's hook and tool are taken out; the new one's go in."""
    old = settings.advisor
    advisor = None
    if value.strip().lower() != "none":
        advisor = Advisor(models(*advisor_target(value)), old.policy if old is not None else AdvisorPolicy())
    hooks = tuple(h for h in settings.hooks if old is None or h is not old.hook)
    tools = tuple(t for t in settings.tools if old is None or t is not old.tool)
    return replace(settings, advisor=advisor, hooks=hooks, tools=tools)


__all__ = [
    "ADVICE_SCHEMA",
    "MARKERS",
    "NOTE_HEADER",
    "ROLE_PREFIX",
    "TOOL_NAME",
    "TRIGGERS",
    "Advisor",
    "AdvisorHook",
    "AdvisorPolicy",
    "AdvisorTool",
    "Consultation",
    "StructuredAdvice",
    "advisor_target",
    "parse_advice",
    "reported_confidence",
    "transcript",
    "with_advisor",
]
