"""Stagnation is high text overlap between the executor's last responses (not only exact repeats), and the
seed's `[NEED_ADVICE]` marker asks for help by default."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagent.advisor import Advisor, AdvisorPolicy
from sagent.advisor.similarity import similarity, stagnating
from sagent.agent.agent import Agent
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import tool
from sagent.types import Usage

LONG = "The test still fails at line 42 with a KeyError. Let me run it again to see the traceback."
NEAR_REPEATS = [
    (LONG, LONG.replace("42", "57")),  # a changed number
    (LONG, "Let me run it again to see the traceback. The test still fails at line 42 with a KeyError."),  # reordered
    (LONG, LONG.replace("Let me", "I will")),  # reworded a little
]
DIFFERENT = [
    ("I will read the config file to find the port the server uses.", "Now I run the tests to see if it works."),
    ('Read {"file_path": "src/app.py"}', 'Read {"file_path": "tests/test_app.py"}'),
    ("The tests pass now.", "I will read the config file first."),
]


@pytest.mark.parametrize(("a", "b"), NEAR_REPEATS)
def test_near_repeats_are_similar(a: str, b: str) -> None:
    assert similarity(a, b) >= AdvisorPolicy().similarity


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_different_answers_are_not(a: str, b: str) -> None:
    assert similarity(a, b) < AdvisorPolicy().similarity


def test_the_window_needs_every_response_alike() -> None:
    drift = [LONG, LONG.replace("42", "57"), LONG.replace("42", "58"), LONG.replace("42", "61")]
    assert stagnating(drift, 4, 0.7)
    assert not stagnating(drift[:3], 4, 0.7)  # fewer responses than the window
    assert not stagnating([*drift[:3], "Found it: the key is misspelled in config.py, fixing it now."], 4, 0.7)
    assert similarity("", "") == 1.0 and similarity("same", "same") == 1.0


@tool
async def Probe(line: int) -> str:
    """Look at a line."""
    return f"line {line}: nothing"


def _run_with(texts: list[str], tmp_path: Path, **policy: object) -> tuple[Advisor, Agent, ScriptedModel]:
    strong = ScriptedModel([text_turn("Change approach.", Usage(10, 5))], name="claude-opus-4-7")
    adv = Advisor(strong, AdvisorPolicy(failures=None, confidence=None, **policy))  # type: ignore[arg-type]
    steps = [tool_turn(("Probe", {"line": i}), text=t) for i, t in enumerate(texts)]
    model = ScriptedModel([*steps, text_turn("done")], name="claude-haiku-4-5")
    return adv, Agent(model, tools=[Probe], advisor=adv, cwd=tmp_path), strong


async def test_near_repeating_responses_bring_the_advisor_by_default(tmp_path: Path) -> None:
    texts = [LONG.replace("42", str(n)) for n in (42, 43, 44, 45)]  # a different call each time, the same words
    adv, agent, _ = _run_with(texts, tmp_path)
    await agent.run("go")
    assert [c.trigger for c in adv.hook.consultations] == ["stagnation"]
    await agent.aclose()


async def test_responses_that_move_on_do_not(tmp_path: Path) -> None:
    texts = [
        "I will read the config file to find the port.",
        "The port is 8080; now I run the server.",
        "The server starts, so I check the failing test.",
        "The test expects 8081; I update the fixture.",
    ]
    adv, agent, _ = _run_with(texts, tmp_path)
    await agent.run("go")
    assert adv.hook.consultations == []
    await agent.aclose()


async def test_the_seeds_marker_asks_by_default_beside_todays(tmp_path: Path) -> None:
    for marker in ("[NEED_ADVICE]", "[[ASK_ADVISOR]]"):
        adv, agent, strong = _run_with([f"{marker} I cannot find the bug."], tmp_path, stagnation=None)
        await agent.run("go")
        assert [c.trigger for c in adv.hook.consultations] == ["marker"], marker
        assert "cannot find the bug" in strong.requests[0].messages[0].text
        await agent.aclose()
    assert AdvisorPolicy(marker="HELP").markers() == ("HELP",) and AdvisorPolicy(marker=None).markers() == ()
