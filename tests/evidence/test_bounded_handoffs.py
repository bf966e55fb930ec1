"""Bounded handoffs: a spawn (and a message to a persistent agent) carries the last N capsules of the
sender's handoff history ahead of its text, the capsule records the tokens that saved against carrying them
all, the logs still verify, and `sagent trace` shows it. Without the setting the text goes alone, as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.session import SessionLog
from sagent.cli.main import main as cli
from sagent.evidence.capsules import sha256_text
from sagent.evidence.verify import verify_tree
from sagent.providers.scripted import RoutedModel, text_turn, tool_turn
from sagent.tools import AgentSend, AgentSpawn
from sagent.types import PeerMessage, UserMessage


def spawn(label: str, prompt: str, **more: object) -> object:
    return tool_turn(("AgentSpawn", {"prompt": prompt, "label": label, **more}))


def first_prompt(model: RoutedModel, label: str) -> str:
    request = model.requests(label)[0]
    message = request.messages[0]
    assert isinstance(message, UserMessage)
    return message.text


def capsules(path: Path) -> list[dict]:
    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    return [r for r in records if r["kind"] == "capsule" and r["role"] == "sent"]


async def five_spawns(folder: Path, carry: int, **request: object) -> tuple[RoutedModel, Path]:
    """main spawns a, b, c, d one after another (each answers), then e."""
    script = {"main": [spawn(x, f"task for {x}", **request) for x in "abcde"] + [text_turn("all done")]}
    script |= {x: [text_turn(f"answer of {x}")] for x in "abcde"}
    model = RoutedModel(script)
    log = SessionLog.create(folder, {"provider": "scripted", "model": "scripted"}, directory=folder)
    agent = Agent(model, tools=[AgentSpawn(), AgentSend()], session=log, cwd=folder, handoff_capsules=carry)
    async for _ in agent.run("work"):
        pass
    await agent.aclose()
    assert log.path is not None
    return model, log.path


async def test_a_spawn_carries_the_last_n_handoffs_and_the_saving_is_recorded(tmp_path: Path, capsys) -> None:
    model, path = await five_spawns(tmp_path, 4)
    prompt = first_prompt(model, "e")
    # Before e: 4 spawns and 4 answers; the last 4 of those 8 go with e's task, oldest first.
    assert prompt == (
        "[Earlier handoffs: the last 4 of 8, oldest first]\n"
        "(1) spawn main → c: task for c\n"
        "(2) result c → main: answer of c\n"
        "(3) spawn main → d: task for d\n"
        "(4) result d → main: answer of d\n"
        "[Your task]\n"
        "task for e"
    )
    assert first_prompt(model, "a") == "task for a"  # nothing before the first handoff
    sent = {c["capsule"]["receiver"]["label"]: c["capsule"] for c in capsules(path) if c["capsule"]["type"] == "spawn"}
    context = sent["e"]["context"]
    assert (context["capsules"], context["carried"], context["of"]) == (4, 4, 8)
    assert context["tokens_all"] > context["tokens"] > 0
    assert context["saved"] == context["tokens_all"] - context["tokens"]
    assert sent["e"]["prompt_sha256"] == sha256_text(prompt)  # the hash is of the text as sent
    assert sent["b"]["context"]["of"] == 2 and sent["b"]["context"]["saved"] == 0  # all there was: nothing saved

    report = verify_tree(path)
    assert report.ok and report.paired == 10, report.first_break
    assert cli(["trace", str(path)]) == 0
    assert f"main → e: spawn (carried 4 of 8 handoffs, {context['tokens']} tokens; {context['saved']} saved)" in (
        capsys.readouterr().out
    )


async def test_without_the_setting_the_task_goes_alone(tmp_path: Path) -> None:
    model, path = await five_spawns(tmp_path, 0)
    assert first_prompt(model, "e") == "task for e"
    assert all("context" not in c["capsule"] for c in capsules(path))


async def test_the_spawn_request_overrides_the_setting(tmp_path: Path) -> None:
    model, _ = await five_spawns(tmp_path, 0, capsules=1)
    assert first_prompt(model, "e").startswith("[Earlier handoffs: the last 1 of 8, oldest first]\n(1) result d")
    model, _ = await five_spawns(tmp_path / "x", 4, capsules=0)
    assert first_prompt(model, "e") == "task for e"


async def test_a_message_to_a_persistent_agent_carries_what_it_has_not_seen(tmp_path: Path) -> None:
    model = RoutedModel(
        {
            "main": [
                spawn("p", "stay around", persistent=True),
                spawn("a", "task for a"),
                tool_turn(("AgentSend", {"to": "p", "message": "use what a found"})),
                text_turn("sent"),
                text_turn("noted"),  # for p's report, should it come before the run ends
            ],
            "p": [text_turn("ready"), text_turn("got it")],
            "a": [text_turn("answer of a")],
        }
    )
    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "scripted"}, directory=tmp_path)
    agent = Agent(model, tools=[AgentSpawn(), AgentSend()], session=log, cwd=tmp_path, handoff_capsules=4)
    async for _ in agent.run("work"):
        pass
    await agent.aclose()
    message = next(c["capsule"] for c in capsules(log.path) if c["capsule"]["type"] == "message")
    # p's own spawn and report are not carried to it; a's task and answer are.
    expected = (
        "[Earlier handoffs: the last 2 of 2, oldest first]\n(1) spawn main → a: task for a\n"
        "(2) result a → main: answer of a\n[Your task]\nuse what a found"
    )
    assert message["prompt_sha256"] == sha256_text(expected)
    assert (message["context"]["carried"], message["context"]["of"]) == (2, 2)
    # What p received is recorded in its log as the same capsule (and, once read, reached its model).
    assert verify_tree(log.path).ok
    seen = [m.text for r in model.requests("p") for m in r.messages if isinstance(m, PeerMessage)]
    assert all(text == expected for text in seen)


def test_the_flag_and_the_setting(tmp_path: Path, capsys, monkeypatch) -> None:
    from sagent.agent.settings import AgentSettings

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    assert cli(["config", "--json", "--handoff-capsules", "4"]) == 0
    assert json.loads(capsys.readouterr().out)["settings"]["handoffCapsules"] == {"value": 4, "from": "flag"}

    with pytest.raises(ValueError, match="handoff_capsules"):
        AgentSettings(handoff_capsules=-1)
    assert cli(["--handoff-capsules", "-2", "-p", "x"]) == 2
    assert "--handoff-capsules must be 0 or more" in capsys.readouterr().err
