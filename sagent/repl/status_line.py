"""The REPL's status line, fitted to the terminal's width.

The line holds the model, the session's cost, the context gauge, the fleet place, background jobs, the
tools running and the permission mode. When it does not fit, the least useful parts are shortened, then
left out, in a fixed order (`LADDER`): the running tools first (the spinner line names them too), the
mode's key hint, the long forms of the gauge and the jobs, the model's provider, the cost... The permission
mode stays to the last, because it decides what the agent may do unasked; what is still too long at the
end is cut with an ellipsis, the mode last of all.
"""

from __future__ import annotations

from dataclasses import dataclass

from sagent.lib.words import quantity
from sagent.repl.tool_view import cells, clip

SEPARATOR = " │ "
PARTS = ("model", "cost", "context", "fleet", "jobs", "running", "mode")
"""The parts in the order they are shown."""

LADDER: tuple[tuple[str, int], ...] = (
    ("running", 1),
    ("mode", 1),
    ("context", 1),
    ("jobs", 1),
    ("model", 1),
    ("fleet", 1),
    ("cost", 1),
    ("jobs", 2),
    ("fleet", 2),
    ("context", 2),
    ("mode", 2),
)
"""The steps that shorten the line, in order: (part, form): each part's forms go from full to left out."""


@dataclass(frozen=True)
class StatusFacts:
    """What the status line says, before it is fitted."""

    provider: str
    model: str
    cost: str
    """`$0.0123`, with `+?` when a model had no price."""
    used_tokens: int
    context_window: int | None
    fleet: str = ""
    """`fleet NAME as LABEL` in a fleet across processes, else empty."""
    fleet_label: str = ""
    jobs: int = 0
    running: tuple[str, ...] = ()
    mode: str = ""
    """The permission mode's name (`default`, `plan`...); empty when there is none to show."""


def forms(facts: StatusFacts) -> dict[str, list[str]]:
    """Each part's forms, longest first; the last is what remains when the part is shortened all the way
    (empty: left out)."""
    used, limit = facts.used_tokens, facts.context_window
    if limit:
        percent = f"{100 * used / limit:.0f}%"
        context = [f"ctx {used:,}/{limit // 1000}k ({percent})", f"ctx {percent}", ""]
    else:
        context = [f"ctx {used:,}", f"ctx {_short_count(used)}", ""]
    jobs = facts.jobs
    mode = facts.mode
    return {
        "model": [f"{facts.provider}/{facts.model}", facts.model],
        "cost": [facts.cost, ""],
        "context": context,
        "fleet": [facts.fleet, facts.fleet_label, ""] if facts.fleet else [""],
        "jobs": [quantity(jobs, "job") + " in background", quantity(jobs, "job"), ""] if jobs else [""],
        "running": ["running " + ", ".join(facts.running), ""] if facts.running else [""],
        "mode": [f"{mode} mode (⇧Tab)", f"{mode} mode", mode] if mode else [""],
    }


def fit(facts: StatusFacts, room: int) -> str:
    """The status line in at most `room` columns: whole when it fits, else shortened along `LADDER`, then
    cut with an ellipsis, keeping the mode's name to the end."""
    options = forms(facts)
    level = dict.fromkeys(PARTS, 0)

    def line() -> str:
        return SEPARATOR.join(t for t in (options[p][min(level[p], len(options[p]) - 1)] for p in PARTS) if t)

    text = line()
    for part, form in LADDER:
        if cells(text) <= room:
            return text
        level[part] = max(level[part], form)
        text = line()
    if cells(text) <= room:
        return text
    mode = options["mode"][-1]
    if not mode:
        return clip(text, room, squeeze=False)
    rest = text[: -len(SEPARATOR + mode)] if text != mode else ""
    left = room - cells(SEPARATOR + mode)
    if rest and left >= 2:  # room for a letter and the ellipsis
        return clip(rest, left, squeeze=False) + SEPARATOR + mode
    return clip(mode, room, squeeze=False) if cells(mode) > room else mode


def _short_count(n: int) -> str:
    return f"{n / 1000:.0f}k" if n >= 1000 else str(n)
