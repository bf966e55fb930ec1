"""A history window: only the last N turns are sent; the rest stays in the log, and Recall finds it."""

from __future__ import annotations

from pathlib import Path

from sagent import Agent, ScriptedModel
from sagent.agent.history_window import windowed
from sagent.agent.session import SessionLog
from sagent.providers.scripted import text_turn, tool_turn
from sagent.tools.memory_tools import Recall
from sagent.types import AssistantMessage, PeerMessage, TextPart, ToolCall, ToolResult, UserMessage


def _user(text: str) -> UserMessage:
    return UserMessage.of(text)


def test_the_window_keeps_whole_turns_and_says_how_many_it_left_out() -> None:
    call = ToolCall("c1", "Read", {"path": "a"})
    history = [
        _user("one"),
        AssistantMessage((call,)),
        ToolResult.of(call, "A"),
        AssistantMessage((TextPart("done one"),)),
        PeerMessage("helper", "two"),
        AssistantMessage((TextPart("done two"),)),
        _user("three"),
        AssistantMessage((TextPart("done three"),)),
    ]
    assert windowed(history, None) == tuple(history)
    assert windowed(history, 3) == tuple(history)
    kept = windowed(history, 1)
    assert len(kept) == 2 and isinstance(kept[0], UserMessage)
    assert kept[0].text.endswith("three") and "2 earlier turns" in kept[0].text
    assert windowed(history, 2)[0] == history[4]  # a peer's message starts a turn; no note can be added to it


def test_a_cut_never_separates_a_result_from_its_call() -> None:
    call = ToolCall("c1", "Bash", {"command": "sleep 1"})
    # a message typed while the call ran landed before its result
    history = [
        _user("zero"),
        AssistantMessage((TextPart("ok"),)),
        _user("one"),
        AssistantMessage((call,)),
        _user("typed meanwhile"),
        ToolResult.of(call, "done"),
        AssistantMessage((TextPart("both"),)),
    ]
    kept = windowed(history, 1)
    assert kept[0].text.endswith("one") and kept[-2] == history[5]
    assert "1 earlier turn " in kept[0].text


async def test_recall_finds_the_turns_the_window_left_out(tmp_path: Path) -> None:
    model = ScriptedModel(
        [text_turn("noted"), text_turn("fine"), tool_turn(("Recall", {"query": "zanzibar"})), text_turn("found")]
    )
    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "scripted"})
    agent = Agent(model, session=log, tools=[Recall()], cwd=tmp_path, history_turns=1)
    await agent.run("the release is called zanzibar")
    await agent.run("something else")
    await agent.run("what was the release called?")
    assert "zanzibar" not in str(model.requests[-2].messages[0])  # out of sight...
    result = next(m for m in agent.history if isinstance(m, ToolResult))
    assert "[zanzibar]" in result.text and "no past session" not in result.text  # ...but found in the log


def test_the_noted_first_message_is_the_same_object_while_the_window_holds_still() -> None:
    """Providers keep what they converted by message: a first message rebuilt every round would have the
    whole windowed history converted again every round."""
    call = ToolCall("c1", "Read", {"path": "a"})
    history: list = [_user("one"), AssistantMessage((TextPart("done one"),)), _user("two")]
    first = windowed(history, 1)[0]
    history += [AssistantMessage((call,)), ToolResult.of(call, "A")]
    assert windowed(history, 1)[0] is first and "1 earlier turn" in first.text
    history += [AssistantMessage((TextPart("done two"),)), _user("three")]
    moved = windowed(history, 1)[0]
    assert moved is not first and moved.text.endswith("three") and "2 earlier turns" in moved.text
