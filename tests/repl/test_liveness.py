"""The spinner's clock, Esc and Ctrl+C, /budget and /help's columns, without a terminal (the same behaviour on
a real screen is in test_liveness_tmux.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from prompt_toolkit.buffer import Buffer

from sagent.agent.agent import Agent
from sagent.events import TextDelta, ThinkingDelta, ToolCallDelta, TurnFinished
from sagent.providers.scripted import ScriptedModel
from sagent.repl import stopping
from sagent.repl.app import Repl
from sagent.repl.budget import parse_usd, raise_hint
from sagent.repl.commands import COMMANDS, CommandError, columns
from sagent.repl.host import QUIT_WINDOW_S, Queued, ReplState
from sagent.repl.liveness import FRAME_S, WorkClock, count_text, doing_text, duration_text
from sagent.repl.render import Settings
from sagent.types import AssistantMessage, Cost, TextPart, Usage, UserMessage

# ------------------------------------------------------------------------------------------ the clock


def test_the_spinner_frame_and_seconds_follow_the_time_not_the_repaints() -> None:
    clock = WorkClock()
    clock.start(0.0, now=100.0)
    first = clock.line(now=100.0)
    assert first.endswith("working… 0s · 0 tokens · esc to interrupt")
    assert clock.line(now=100.0) == first  # a repaint at the same moment draws the same line
    assert clock.line(now=100.0 + 1.5 * FRAME_S)[0] != first[0]  # a frame later the spinner has turned
    assert "… 75s ·" not in clock.line(now=175.0) and "… 1m 15s ·" in clock.line(now=175.0)


def test_tokens_so_far_count_finished_responses_and_estimate_the_streaming_one() -> None:
    clock = WorkClock()
    clock.start(0.0)
    clock.feed(ThinkingDelta("x" * 40))
    clock.feed(TextDelta("y" * 40))
    clock.feed(ToolCallDelta(0, "id", "Bash", '{"command": "ls"}'))
    assert clock.tokens == (40 + 40 + 4 + 17) // 4
    message = AssistantMessage((TextPart("done"),))
    clock.feed(TurnFinished(message, Usage(input_tokens=5000, output_tokens=1234), Cost(), 0.0, 10.0))
    assert clock.tokens == 1234  # the provider's count replaces the estimate; input is not "so far"
    clock.feed(TextDelta("z" * 400))
    assert clock.tokens == 1334 and "1.3k tokens" in clock.line()
    clock.start(0.0)  # the next turn counts from zero
    assert clock.tokens == 0


def test_short_figures_for_the_spinner() -> None:
    assert [duration_text(s) for s in (0, 59.9, 60, 3599, 3600 * 2 + 120)] == [
        "0s",
        "59s",
        "1m 00s",
        "59m 59s",
        "2h 02m",
    ]
    assert [count_text(n) for n in (999, 1000, 12_345, 2_500_000)] == ["999", "1.0k", "12k", "2.5M"]
    assert doing_text([]) == "working" and doing_text(["Bash", "Read"]) == "running Bash, Read"
    assert doing_text(["A", "B", "C", "D", "E"]) == "running A, B, C +2"


# ------------------------------------------------------------------------------------ Esc and Ctrl+C


class Host:
    """What Esc and Ctrl+C use of the REPL: its state, its queue and whether it is busy."""

    def __init__(self, busy: bool, queued: list[Queued], delivered: set[str]) -> None:
        self.busy = busy
        self.state = ReplState(queued=list(queued))
        self.delivered = delivered
        self.interrupted = 0
        self.quitted = 0

    def pull_back(self) -> str | None:
        while self.state.queued:
            item = self.state.queued.pop()
            if item.deferred or item.message.text not in self.delivered:
                return item.message.text
        return None

    def interrupt(self) -> None:
        self.interrupted += 1

    def quit(self) -> None:
        self.quitted += 1

    def refresh(self) -> None:
        pass


def queued(*texts: str, deferred: bool = False) -> list[Queued]:
    return [Queued(UserMessage.of(t), deferred=deferred) for t in texts]


def test_esc_interrupts_and_gives_back_what_was_queued_in_order_before_what_is_typed() -> None:
    host = Host(True, [*queued("first", "taken already"), *queued("held", deferred=True)], {"taken already"})
    buffer = Buffer(multiline=True)
    buffer.text = "typing now"
    assert stopping.stop_work(host, buffer) == 2  # type: ignore[arg-type]
    assert host.interrupted == 1 and host.state.queued == []
    assert buffer.text == "first\n\nheld\n\ntyping now" and buffer.cursor_position == len(buffer.text)
    assert host.state.note == "interrupted · your 2 queued messages are back in the input: Enter sends, Ctrl+C clears"


def test_esc_with_nothing_queued_only_interrupts() -> None:
    host = Host(True, [], set())
    buffer = Buffer()
    assert stopping.stop_work(host, buffer) == 0  # type: ignore[arg-type]
    assert host.interrupted == 1 and buffer.text == "" and host.state.note == "interrupted"


def test_ctrl_c_stops_work_then_quits_only_within_the_window() -> None:
    host = Host(True, queued("later"), set())
    buffer = Buffer()
    stopping.ctrl_c(host, buffer, now=1000.0)  # type: ignore[arg-type]
    assert host.interrupted == 1 and host.quitted == 0 and buffer.text == "later"
    assert host.state.note.endswith("press Ctrl+C again to quit")
    stopping.ctrl_c(host, buffer, now=1000.5)  # type: ignore[arg-type]
    assert buffer.text == "" and host.quitted == 0  # first it clears the input it gave back
    host.busy = False
    stopping.ctrl_c(host, buffer, now=1000.0 + QUIT_WINDOW_S + 0.1)  # type: ignore[arg-type]
    assert host.quitted == 0 and host.state.note == "press Ctrl+C again to quit"  # expired: armed anew
    stopping.ctrl_c(host, buffer, now=1000.0 + QUIT_WINDOW_S + 0.5)  # type: ignore[arg-type]
    assert host.quitted == 1


async def test_the_quit_hint_goes_away_by_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stopping, "QUIT_WINDOW_S", 0.05)
    host = Host(False, [], set())
    stopping.ctrl_c(host, Buffer())  # type: ignore[arg-type]
    assert host.state.note == "press Ctrl+C again to quit"
    await asyncio.sleep(0.2)
    assert host.state.note == "" and host.state.ctrl_c_at == 0.0


# ---------------------------------------------------------------------------------- /budget and /help


@pytest.fixture
def repl(tmp_path: Path) -> Iterator[Repl]:
    agent = Agent(ScriptedModel([]), cwd=tmp_path, max_budget_usd=0.05)
    yield Repl(agent, new_agent=lambda path=None: agent, settings=Settings(width=100, color=False))
    asyncio.run(agent.aclose())


def test_budget_shows_raises_and_removes_the_limit(repl: Repl) -> None:
    budget = COMMANDS["budget"].handler
    assert budget(repl, "") == ["budget: $0.0000 spent of $0.0500; /budget USD changes it, /budget off"]
    assert budget(repl, "$0.20")[0].startswith("budget: $0.0000 spent of $0.2000")
    assert repl.agent.snapshot(measure=False).budget_usd == 0.2 and repl.agent.settings.max_budget_usd == 0.2
    assert budget(repl, "off") == ["no budget now ($0.0000 spent so far)"]
    assert repl.agent.snapshot(measure=False).budget_usd is None and repl.agent.settings.max_budget_usd is None
    assert budget(repl, "") == ["no budget: $0.0000 spent so far; /budget USD sets one"]
    for bad in ("lots", "-1", "nan", "inf", "0"):
        with pytest.raises(CommandError):
            parse_usd(bad)


def test_the_hint_at_the_budget_names_a_larger_amount(repl: Repl) -> None:
    hint = raise_hint(repl.agent)
    assert hint.startswith("the budget of $0.05 is reached ($0.0000 spent)") and "/budget 0.1 raises the limit" in hint


def test_exit_is_quit() -> None:
    assert COMMANDS["exit"].handler is COMMANDS["quit"].handler


def test_help_columns_align_and_a_long_entry_keeps_its_description_in_the_column() -> None:
    rows = [("/a", "one"), ("/bb [x]", "two"), ("/" + "long" * 10, "three")]
    lines = columns(rows)
    assert lines[:2] == ["  /a       one", "  /bb [x]  two"]
    assert lines[2] == "  /" + "long" * 10 and lines[3] == "           three"
