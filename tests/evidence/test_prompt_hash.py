"""The per-turn prompt hash: the manifest names exactly what each request sent, `sagent compare` says turn
by turn whether two runs sent the same prompts (and "not recorded" for logs from before the hash), and a
replay sends each turn with the sampling settings the original recorded."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.session import SessionLog, verify_chain
from sagent.cli.main import main as cli
from sagent.evidence.replay import Scratch, replay, replay_plan
from sagent.lib.json import canonical_json
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import tool
from sagent.types import to_dict


@tool
async def shout(text: str) -> str:
    """Repeat the text in capitals."""
    return text.upper()


def steps(turns: int) -> list:
    """A shout call and its answer for each of `turns` user turns (each call with an id of its own)."""
    return [step for _ in range(turns) for step in (tool_turn(("shout", {"text": "hi"})), text_turn("HI"))]


async def run(
    folder: Path, prompts: list[str], *, system: str = "Be brief.", name: str = "m1", **settings: object
) -> tuple[Path, ScriptedModel]:
    model = ScriptedModel(steps(len(prompts)), name=name, provider="scripted")
    log = SessionLog.create(folder, {"provider": "scripted", "model": name}, directory=folder / "s")
    agent = Agent(model, tools=[shout], session=log, system=system, cwd=folder, **settings)  # type: ignore[arg-type]
    for prompt in prompts:
        async for _ in agent.run(prompt):
            pass
    await agent.aclose()
    assert log.path is not None
    return log.path, model


def manifests(path: Path) -> list[dict]:
    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    return [r["manifest"] for r in records if r["kind"] == "manifest"]


async def test_the_manifest_hashes_exactly_what_each_request_sent(tmp_path: Path) -> None:
    path, model = await run(tmp_path, ["shout hi", "again"])
    recorded = manifests(path)
    assert len(recorded) == len(model.requests) == 4
    not_sent = ("usage", "stop_reason", "response_id", "provider", "model", "typed")
    for manifest, sent in zip(recorded, model.requests, strict=True):
        tools = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in sent.tools]
        whole = {
            "system": sent.system,
            "tools": tools,
            "messages": [{k: v for k, v in to_dict(m).items() if k not in not_sent} for m in sent.messages],
        }
        assert manifest["prompt_sha256"] == hashlib.sha256(canonical_json(whole)).hexdigest()
    assert len({m["prompt_sha256"] for m in recorded}) == 4  # each request carries more history


async def test_compare_says_turn_by_turn_whether_the_prompts_match(tmp_path: Path, capsys) -> None:
    a, _ = await run(tmp_path / "a", ["shout hi", "again"])
    same, _ = await run(tmp_path / "b", ["shout hi", "again"], effort="high")  # same prompts, other settings
    other, _ = await run(tmp_path / "c", ["shout hi", "something else"])
    system, _ = await run(tmp_path / "d", ["shout hi"], system="Be verbose.")

    assert cli(["compare", str(a), str(same)]) == 0
    text = capsys.readouterr().out
    # The scripted model numbers its calls from one counter, as real models' ids differ from run to run.
    assert "prompts: the same at every turn but for tool call ids (4)" in text
    assert "turn 1  same; settings differ: effort" in text and "turn 2  same but tool call ids" in text

    assert cli(["compare", str(a), str(other), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["prompts"]
    assert [r["verdict"] for r in rows] == ["same", "same but tool call ids", "differ", "differ"]
    assert rows[2]["differs"] == ["messages"] and rows[2]["a"] != rows[2]["b"]
    assert cli(["compare", str(a), str(other)]) == 0
    assert "prompts: differ from turn 3 (2 of 4 the same)" in capsys.readouterr().out

    assert cli(["compare", str(a), str(system)]) == 0
    text = capsys.readouterr().out
    assert "turn 1  differ (system)" in text and "turn 3  only in A" in text
    page = tmp_path / "c.html"
    assert cli(["compare", str(a), str(other), "--html", str(page)]) == 0
    assert "prompts: differ from turn 3" in page.read_text() and "turn 3  differ (messages)" in page.read_text()


async def test_logs_without_the_hash_verify_and_compare_as_not_recorded(tmp_path: Path, capsys) -> None:
    a, _ = await run(tmp_path / "a", ["shout hi"])
    # A log an older sagent wrote: its manifests have no prompt hash (rewritten and sealed anew).
    old = SessionLog.create(tmp_path, {"provider": "scripted", "model": "m1"}, directory=tmp_path / "old")
    for record in [json.loads(line) for line in a.read_bytes().splitlines()][1:]:
        if record["kind"] == "manifest":
            record["manifest"].pop("prompt_sha256")
        old.append({k: v for k, v in record.items() if k not in ("seq", "prev", "hash", "ts")})
    old.close()
    assert old.path is not None and verify_chain(old.path)
    assert cli(["sessions", "verify", str(old.path)]) == 0
    capsys.readouterr()
    assert cli(["compare", str(a), str(old.path)]) == 0
    text = capsys.readouterr().out
    assert "prompts: not recorded" in text and "turn 1  not recorded" in text


async def test_replay_sends_each_turn_with_the_recorded_sampling_settings(tmp_path: Path) -> None:
    original, _ = await run(tmp_path, ["shout hi", "again"], max_tokens=1234, effort="high", thinking_budget=2048)
    plan = replay_plan(original)
    assert plan.sampling[0] == {"max_tokens": 1234, "effort": "high", "thinking_budget": 2048, "temperature": None}
    again = ScriptedModel(steps(2), name="m2")
    scratch = Scratch(tmp_path, tmp_path, "copy")
    path, _ = await replay(plan, again, [shout], scratch, mode="live", system="Be brief.")
    assert [(r.max_tokens, r.effort, r.thinking_budget) for r in again.requests] == [(1234, "high", 2048)] * 4
    # The same system, tools and answers: the same prompts but for the calls' ids, turn by turn.
    assert path is not None
    replayed, recorded = manifests(path), manifests(original)
    assert replayed[0]["prompt_sha256"] == recorded[0]["prompt_sha256"]
    assert [m["prompt_unnumbered_sha256"] for m in replayed] == [m["prompt_unnumbered_sha256"] for m in recorded]

    low = ScriptedModel(steps(2), name="m2")
    await replay(plan, low, [shout], scratch, system="Be brief.", overrides={"effort": "low"})
    assert {(r.max_tokens, r.effort) for r in low.requests} == {(1234, "low")}
