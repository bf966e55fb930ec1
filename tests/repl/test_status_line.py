"""The status line at every width: it fits, the permission mode stays, and a cut ends with an ellipsis."""

from __future__ import annotations

import pytest

from sagent.repl.status_line import SEPARATOR, StatusFacts, fit, forms
from sagent.repl.tool_view import cells

BUSY = StatusFacts(
    provider="anthropic",
    model="claude-sonnet-4-6",
    cost="$12.3456+?",
    used_tokens=123_456,
    context_window=200_000,
    fleet="fleet review as critic",
    fleet_label="critic",
    jobs=2,
    running=("Bash", "Read", "Grep"),
    mode="bypassPermissions",
)
QUIET = StatusFacts(
    provider="anthropic",
    model="claude-sonnet-4-6",
    cost="$0.0000",
    used_tokens=0,
    context_window=200_000,
    mode="default",
)
WIDE_MODEL = StatusFacts(
    provider="openrouter",
    model="模型-qwen/qwen3-coder-480b-a35b-instruct:free",
    cost="$0.0000",
    used_tokens=1_602,
    context_window=None,
    mode="acceptEdits",
)
NO_MODE = StatusFacts(
    provider="anthropic", model="claude-sonnet-4-6", cost="$0.0012", used_tokens=1_000, context_window=8_000
)
ALL = [BUSY, QUIET, WIDE_MODEL, NO_MODE]


def whole(facts: StatusFacts) -> str:
    return fit(facts, 10_000)


@pytest.mark.parametrize("facts", ALL)
@pytest.mark.parametrize("width", range(20, 201))
def test_the_line_fits_keeps_the_mode_and_marks_a_cut(facts: StatusFacts, width: int) -> None:
    room = width - 2  # the line's padding, as the screen draws it
    line = fit(facts, room)
    assert cells(line) <= room
    if facts.mode:
        assert line.endswith(facts.mode) or f"{facts.mode} mode" in line  # the mode's name, whole, every time
    if cells(whole(facts)) <= room:
        assert line == whole(facts)  # nothing is taken from a line that fits
    shown = {form for options in forms(facts).values() for form in options}
    for part in line.split(SEPARATOR):
        # Every part shown is one of its forms, or the start of one cut with an ellipsis: never cut silently.
        assert part in shown or (part.endswith("…") and any(f.startswith(part[:-1]) for f in shown)), part


@pytest.mark.parametrize("facts", ALL)
def test_a_wider_terminal_never_shows_fewer_parts(facts: StatusFacts) -> None:
    previous = ""
    for room in range(10, 200):
        line = fit(facts, room)
        assert line.count(SEPARATOR) >= previous.count(SEPARATOR), (previous, line)
        previous = line


def test_the_least_useful_parts_go_first() -> None:
    assert whole(BUSY) == (
        "anthropic/claude-sonnet-4-6 │ $12.3456+? │ ctx 123,456/200k (62%) │ fleet review as critic │ "
        "2 jobs in background │ running Bash, Read, Grep │ bypassPermissions mode (⇧Tab)"
    )
    assert fit(BUSY, 98) == "claude-sonnet-4-6 │ $12.3456+? │ ctx 62% │ critic │ 2 jobs │ bypassPermissions mode"
    assert fit(BUSY, 78) == "claude-sonnet-4-6 │ ctx 62% │ critic │ 2 jobs │ bypassPermissions mode"
    assert fit(BUSY, 58) == "claude-sonnet-4-6 │ ctx 62% │ bypassPermissions mode"
    assert fit(BUSY, 38) == "claude-sonnet-4-6 │ bypassPermissions"
    # Narrower still: the model's name is cut with an ellipsis; the mode is cut only when it alone is too wide.
    assert fit(BUSY, 28) == "claude-… │ bypassPermissions"
    assert fit(BUSY, 18) == "bypassPermissions"
    assert fit(BUSY, 10) == "bypassPer…"


def test_the_quiet_line_at_80_and_60_columns() -> None:
    assert fit(QUIET, 78) == "anthropic/claude-sonnet-4-6 │ $0.0000 │ ctx 0/200k (0%) │ default mode (⇧Tab)"
    assert fit(QUIET, 58) == "claude-sonnet-4-6 │ $0.0000 │ ctx 0% │ default mode"
    assert fit(QUIET, 23) == "claude-sonne… │ default"


def test_a_wide_characters_model_is_cut_by_columns() -> None:
    line = fit(WIDE_MODEL, 38)
    assert line == "模型-qwen/qwen3-coder-4… │ acceptEdits" and cells(line) == 38


def test_without_a_mode_the_end_is_cut_with_an_ellipsis() -> None:
    assert fit(NO_MODE, 10) == "claude-so…"
    assert fit(NO_MODE, 38) == "claude-sonnet-4-6 │ $0.0012 │ ctx 12%"


def test_one_job_is_one_job() -> None:
    assert "│ 1 job in background" in whole(StatusFacts("p", "m", "$0", 0, None, jobs=1))
    assert "│ 3 jobs in background" in whole(StatusFacts("p", "m", "$0", 0, None, jobs=3))
    assert fit(StatusFacts("p", "m", "$0", 0, None, jobs=1, mode="plan"), 30) == "m │ ctx 0 │ 1 job │ plan mode"
