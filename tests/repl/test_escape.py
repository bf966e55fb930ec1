"""Esc Esc when idle, as the REPL decides it: the first press says what a second would do; a second close
behind it clears the input (kept in the history) or, on an empty input, opens the rewind list."""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.buffer import Buffer

from sagent.agent.agent import Agent
from sagent.providers.scripted import ScriptedModel, text_turn
from sagent.repl.app import Repl
from sagent.repl.escape import AGAIN_TO_CLEAR, AGAIN_TO_REWIND, DOUBLE_ESC_S, DoubleEscape
from sagent.repl.render import Settings


async def repl_after(tmp_path: Path, prompts: list[str]) -> Repl:
    agent = Agent(ScriptedModel([text_turn(f"answer to {p}") for p in prompts]), cwd=tmp_path)
    for prompt in prompts:
        async for _ in agent.run(prompt):
            pass
    return Repl(agent, new_agent=lambda path=None: agent, settings=Settings(width=100, color=False))


async def test_esc_esc_on_an_empty_input_opens_the_list_of_messages(tmp_path: Path) -> None:
    repl = await repl_after(tmp_path, ["first", "second"])
    double = DoubleEscape(repl, Buffer())
    double.press(now=100.0)
    assert repl.state.note == AGAIN_TO_REWIND and repl.state.picker is None
    double.press(now=100.0 + DOUBLE_ESC_S / 2)
    assert repl.state.picker is not None and repl.state.picker.title == "Rewind to before which message?"
    assert [item.value.text for item in repl.state.picker.items] == ["second", "first"]
    assert repl.state.note == ""
    await repl.agent.aclose()


async def test_two_presses_far_apart_are_two_first_presses(tmp_path: Path) -> None:
    repl = await repl_after(tmp_path, ["first"])
    double = DoubleEscape(repl, Buffer())
    double.press(now=100.0)
    double.press(now=100.0 + DOUBLE_ESC_S + 1)
    assert repl.state.picker is None and repl.state.note == AGAIN_TO_REWIND
    await repl.agent.aclose()


async def test_esc_esc_with_text_clears_it_into_the_history(tmp_path: Path) -> None:
    repl = await repl_after(tmp_path, ["first"])
    buffer = Buffer(multiline=True)
    buffer.text = "a draft"
    double = DoubleEscape(repl, buffer)
    double.press(now=10.0)
    assert repl.state.note == AGAIN_TO_CLEAR and buffer.text == "a draft"
    double.press(now=10.1)
    assert buffer.text == "" and repl.state.picker is None
    assert "a draft" in buffer.history.get_strings()  # Up brings it back
    await repl.agent.aclose()


async def test_esc_esc_with_nothing_to_go_back_to_says_so(tmp_path: Path) -> None:
    repl = await repl_after(tmp_path, [])
    double = DoubleEscape(repl, Buffer())
    double.press(now=1.0)
    double.press(now=1.2)
    assert repl.state.picker is None and repl.state.note == "no message of yours to go back to yet"
    await repl.agent.aclose()


async def test_a_key_typed_between_two_presses_breaks_the_pair(tmp_path: Path) -> None:
    repl = await repl_after(tmp_path, ["first"])
    buffer = Buffer(multiline=True)
    double = DoubleEscape(repl, buffer)
    double.press(now=5.0)
    buffer.insert_text("x")
    double.press(now=5.1)
    assert buffer.text == "x" and repl.state.picker is None and repl.state.note == AGAIN_TO_CLEAR
    await repl.agent.aclose()
