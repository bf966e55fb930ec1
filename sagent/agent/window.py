"""One agent's context window: how full it is, and making it smaller when it must be.

`ContextWindow` sits between the agent and the pure pieces (`tokens` counts, `compaction` decides what
replaces what). It knows the window of the model in use, checks the threshold before each request, and
works out a compaction: prune first, summarise when still over, check the summary. It never assigns the
history: each step is returned as a `HistoryChange` (the event and the history after it), which the agent
logs and then takes (`Agent.apply`), so every change is in the session log before the history changes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from sagent.agent.compaction import (
    CompactionPolicy,
    HistoryChange,
    Thread,
    Trigger,
    check_summary,
    halves,
    prune,
    recent_start,
    replace_results,
    summary_message,
    summary_request,
    with_task_list,
)
from sagent.agent.tokens import ContextMeter, ContextSize
from sagent.events import Compacted, ContextPruned
from sagent.providers.base import ContextTooLongError, Model, ProviderError
from sagent.providers.catalog import cost_of, lookup
from sagent.types import AssistantMessage, Cost, Message, ModelRequest, Usage

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


class ContextWindow:
    def __init__(self, agent: Agent, policy: CompactionPolicy | None = None) -> None:
        self.agent = agent
        self.policy = policy or CompactionPolicy()
        self.meter = ContextMeter()
        # The user's messages and the files touched, carried from compaction to compaction.
        self.thread = Thread()

    # ------------------------------------------------------------------------------------- measuring

    @property
    def limit(self) -> int | None:
        """The context window of the model in use, in tokens, when known."""
        return self.limit_of(self.agent.model)

    def limit_of(self, model: Model) -> int | None:
        """The context window of `model` (the agent's, or another a tool asks), in tokens, when known."""
        own = getattr(model, "context_window", None)
        if isinstance(own, int) and own > 0:
            return own
        info = lookup(model.name)
        return info.context_window if info is not None else self.policy.window

    def tokens(self, request: ModelRequest | None = None) -> int:
        """The size of the next request (without building it while the last report still holds): `request`
        when the caller has it as it will be sent, else `next_request()`."""
        known = self.meter.since_report(self.agent.history)
        if known is not None:
            return known
        request = request or self.next_request()
        return self.meter.estimate(request.system, request.tools, self.agent.history)

    def size(self) -> ContextSize:
        """The next request by part: system prompt, tools, messages, tool results."""
        request = self.next_request()
        return self.meter.measure(request.system, request.tools, self.agent.history, self.limit)

    def next_request(self) -> ModelRequest:
        """The agent's next request with the system prompt and the tools its hooks would send
        (`Hook.shape_request`): the tools offered on demand and those a rule denies are not in it."""
        request = self.agent.request()
        for hook in self.agent.settings.hooks:
            request = hook.shape_request(self.agent, request)
        return request

    def observed(self, request: ModelRequest, usage: Usage) -> None:
        """A response to `request` arrived and joined the history."""
        self.meter.observe(usage, request.system, request.tools, self.agent.history)

    def rewritten(self) -> None:
        """The agent's history was replaced: the last reported count no longer holds."""
        self.meter.rewritten()

    def threshold_tokens(self) -> int | None:
        """The context size at which the agent compacts by itself; None when it never does."""
        threshold = self.policy.threshold_for(self.agent.model.name)
        limit = self.limit
        return int(threshold * limit) if threshold is not None and limit is not None else None

    def over_threshold(self) -> bool:
        threshold = self.threshold_tokens()
        return threshold is not None and self.tokens() > threshold

    def policy_line(self) -> str:
        """When this agent compacts by itself, for people."""
        threshold = self.policy.threshold_for(self.agent.model.name)
        if threshold is None:
            return "automatic compaction: off (compacting by hand still works)"
        at = self.threshold_tokens()
        tokens = f" ({at:,} tokens)" if at is not None else ", once the window is known"
        return f"compacts automatically at {threshold:.0%} of the window{tokens}"

    # ------------------------------------------------------------------------------------ compacting

    async def compact(
        self, history: Sequence[Message], focus: str | None, trigger: Trigger, *, keep_recent: bool = True
    ) -> AsyncIterator[HistoryChange]:
        """Prune old reproducible tool outputs of `history`, then (unless pruning freed enough for an
        automatic compaction) summarise the older part, keeping the recent part verbatim. Yields each step
        as a `HistoryChange` for the agent to apply before the next step is worked out; nothing when there
        is nothing to compact."""
        if not history:
            return
        for hook in self.agent.settings.hooks:
            await hook.before_compact(self.agent, trigger, focus)
        request = self.next_request()
        before = self.meter.next_total(request.system, request.tools, history)  # the last count, if it holds
        keep = self.policy.recent_tokens(self.limit or before) if keep_recent else 0
        recent_from = recent_start(history, keep)
        stubs = prune(history, recent_from, self._reproducible, self.policy.min_prune_tokens)
        if stubs:
            pruned = replace_results(history, stubs)
            after = self._tokens_of(pruned)
            yield HistoryChange(ContextPruned(stubs, before, after), tuple(pruned))
            history = pruned
            if trigger == "auto" and not self._still_over(after):
                return
        start = recent_start(history, keep)
        if start == 0:
            if trigger == "auto":
                return  # all of it is recent: a summary would free nothing
            start = len(history)  # asked for, or the provider refused: summarise all of it
        older, recent = history[:start], history[start:]
        text, usage, cost = await self._summarise(older, focus)
        thread = self.thread.extended(older)
        text, repaired = check_summary(text, thread)
        summary = summary_message(with_task_list(text, self.agent.task_list))
        compacted: tuple[Message, ...] = (summary, *recent)
        event = Compacted(
            summary,
            len(older),
            usage,
            cost,
            self.agent.model.name,
            kept=len(recent),
            trigger=trigger,
            tokens_before=before,
            tokens_after=self._tokens_of(compacted),
            user_messages=thread.user_messages,
            files_read=thread.files_read,
            files_modified=thread.files_modified,
            repaired=repaired,
        )
        yield HistoryChange(event, compacted)
        self.thread = thread  # once the agent took the summary

    def _still_over(self, tokens: int) -> bool:
        threshold = self.threshold_tokens()
        return threshold is not None and tokens > threshold * self.policy.after_prune

    def _tokens_of(self, history: Sequence[Message]) -> int:
        request = self.next_request()
        return self.meter.estimate(request.system, request.tools, history)

    def _reproducible(self, name: str) -> bool:
        return bool(getattr(self.agent.tools.get(name), "reproducible", False))

    async def _summarise(self, older: Sequence[Message], focus: str | None) -> tuple[str, Usage, Cost]:
        """The model's summary of `older`. When even that request is too long for the model, the older
        part is summarised in two halves, the second carrying the first's summary."""
        try:
            message = await self._complete(summary_request(self.agent.request(), older, focus))
        except ContextTooLongError:
            cut = halves(older)
            if cut is None:
                raise
            first, usage, cost = await self._summarise(older[:cut], focus)
            rest, more_usage, more_cost = await self._summarise([summary_message(first), *older[cut:]], focus)
            return rest, usage + more_usage, cost + more_cost
        text = message.text.strip()
        if not text:
            raise ProviderError("the model returned an empty summary; the history is unchanged")
        return text, message.usage, cost_of(message.model, message.usage)

    async def _complete(self, request: ModelRequest) -> AssistantMessage:
        """Through the agent's gate: a summary request larger than the window is refused there (and
        summarised in parts by the caller), one that would cross the budget is never sent."""
        tokens = self.meter.estimate(request.system, request.tools, request.messages)
        return await self.agent.gate.complete(self.agent.model, request, tokens=tokens)
