"""`AdvisorPolicy`: when the executor consults its advisor (the triggers) and what holds it back (the gates)."""

from __future__ import annotations

from dataclasses import dataclass

MARKERS = ("[NEED_ADVICE]", "[[ASK_ADVISOR]]")
"""The markers an executor may write to ask for advice, by default."""
TRIGGERS = ("tool", "marker", "failures", "confidence", "stagnation", "review")
"""Why a consultation happens: the executor called the `Advisor` tool, wrote the marker, its tool calls
kept failing, it reported low confidence, it repeats itself, or its final answer is reviewed."""


@dataclass(frozen=True, slots=True)
class AdvisorPolicy:
    """Each trigger can be turned off (False or None); the gates always apply."""

    tool: bool = True
    """Offer the executor an `Advisor` tool it may call with a question."""
    marker: str | tuple[str, ...] | None = MARKERS
    """Text that, written by the executor, asks the advisor (for models without tools): one marker or
    several (by default the seed's `[NEED_ADVICE]` and `[[ASK_ADVISOR]]`); None or (): off."""
    failures: int | None = 2
    """Consult after this many failing tool calls in a row; None: off."""
    confidence: float | None = 0.4
    """Consult when the executor writes `confidence: X` (0 to 1, or a percentage) below this; None: off."""
    stagnation: int | None = 4
    """Consult when this many consecutive responses (their text and tool calls) are all alike, every pair at
    least `similarity` (see sagent.advisor.similarity); None: off."""
    similarity: float = 0.7
    """How alike responses must be to count as a repeat: Jaccard similarity of their word pairs, 0 to 1."""
    review: bool = False
    """Consult once before the final answer of a run; the executor then writes the final answer itself."""
    max_consultations: int = 3
    """At most this many consultations per agent."""
    cooldown: int = 2
    """Executor turns that must pass after a consultation before the next one (the `Advisor` tool excepted)."""
    max_usd: float | None = None
    """Stop consulting once the advisor has cost this many dollars; the agent's budget applies as well."""
    max_tokens: int = 1024
    """The longest piece of guidance the advisor may write."""
    structured: bool = True
    """Ask for the seed's structured answer (assessment, next steps, risks) where the advisor's provider
    supports structured output; free text elsewhere, or always with False."""
    native: bool = True
    """When the executor's provider can run the advisor itself (Anthropic's advisor tool, both models
    Anthropic's), the consultations the executor asks for run there, within its response; False: always
    sagent's own loop."""

    def __post_init__(self) -> None:
        if self.max_consultations < 0 or self.cooldown < 0:
            raise ValueError("max_consultations and cooldown must be 0 or more")
        if self.failures is not None and self.failures < 1:
            raise ValueError(f"failures must be at least 1, not {self.failures}")
        if self.stagnation is not None and self.stagnation < 2:
            raise ValueError(f"stagnation must be at least 2, not {self.stagnation}")
        if not 0 < self.similarity <= 1:
            raise ValueError(f"similarity must be above 0 and at most 1, not {self.similarity}")
        if self.confidence is not None and not 0 <= self.confidence <= 1:
            raise ValueError(f"confidence must be from 0 to 1, not {self.confidence}")

    def markers(self) -> tuple[str, ...]:
        """The markers that ask for advice (none when the trigger is off)."""
        if self.marker is None:
            return ()
        found = (self.marker,) if isinstance(self.marker, str) else self.marker
        return tuple(m for m in found if m)
