"""Sealed handoffs: a three-level fleet's spawns, messages and results in both logs, verified from disk,
and a one-byte edit in a child's log found."""

from __future__ import annotations

import json
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.session import SessionLog
from sagent.cli.main import main as cli
from sagent.evidence.capsules import capsule_id, sha256_text
from sagent.evidence.verify import session_tree, verify_tree
from sagent.providers.scripted import RoutedModel, text_turn, tool_turn
from sagent.tools import AgentSend, AgentSpawn


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def capsules(path: Path) -> list[dict]:
    return [r for r in records(path) if r["kind"] == "capsule"]


async def run_fleet(folder: Path) -> Path:
    model = RoutedModel(
        {
            "main": [tool_turn(("AgentSpawn", {"prompt": "explore module a", "label": "a"})), text_turn("all done")]
            + [text_turn("noted")] * 3,
            "a": [
                tool_turn(("AgentSpawn", {"prompt": "dig into a.util", "label": "g"})),
                text_turn("a found gamma"),
            ],
            "g": [tool_turn(("AgentSend", {"to": "main", "message": "g says hello"})), text_turn("gamma")],
        },
        name="m1",
        provider="scripted",
    )
    log = SessionLog.create(folder, {"provider": "scripted", "model": "m1"}, directory=folder / "sessions")
    main = Agent(model, tools=[AgentSpawn(), AgentSend()], session=log, cwd=folder)
    try:
        async for _ in main.run("map the project"):
            pass
    finally:
        await main.aclose()
    assert log.path is not None
    return log.path


async def test_a_three_level_fleet_seals_every_handoff_in_both_logs(tmp_path: Path) -> None:
    root = await run_fleet(tmp_path)
    tree = session_tree(root)
    assert len(tree) == 3  # main, a, g
    a_log, g_log = tree[1], tree[2]
    assert records(a_log)[0]["label"] == "a" and records(g_log)[0]["label"] == "g"

    sent_by_main = [c for c in capsules(root) if c["role"] == "sent"]
    (spawn,) = sent_by_main
    body = spawn["capsule"]
    assert body["type"] == "spawn" and body["sender"]["label"] == "main" and body["receiver"]["label"] == "a"
    assert body["receiver"]["session"] == records(a_log)[0]["session_id"]
    assert body["prompt_sha256"] == sha256_text("explore module a")
    assert body["model"] == "scripted/m1"
    assert body["budget"]["tools"] == ["AgentSend", "AgentSpawn"]
    assert spawn["id"] == capsule_id(body)
    # The same capsule, received, is in a's log, before a's first message.
    a_records = records(a_log)
    received = [r for r in a_records if r["kind"] == "capsule" and r["role"] == "received"]
    assert received[0]["id"] == spawn["id"] and received[0]["capsule"] == body
    first_message = next(i for i, r in enumerate(a_records) if (r.get("event") or {}).get("type") == "message_added")
    assert a_records.index(received[0]) < first_message

    # g's message to main and its result to a; a's result to main: each in the sender's and receiver's logs.
    kinds = {
        (c["capsule"]["type"], c["capsule"]["sender"]["label"], c["capsule"]["receiver"]["label"], c["role"])
        for path in tree
        for c in capsules(path)
    }
    assert kinds == {
        ("spawn", "main", "a", "sent"), ("spawn", "main", "a", "received"),
        ("spawn", "a", "g", "sent"), ("spawn", "a", "g", "received"),
        ("message", "g", "main", "sent"), ("message", "g", "main", "received"),
        ("result", "g", "a", "sent"), ("result", "g", "a", "received"),
        ("result", "a", "main", "sent"), ("result", "a", "main", "received"),
    }  # fmt: skip
    message = next(c for c in capsules(g_log) if c["capsule"]["type"] == "message")
    assert message["capsule"]["prompt_sha256"] == sha256_text("g says hello")
    # g acted on its spawn capsule: it is the parent of what g sent.
    g_spawn = next(c for c in capsules(g_log) if c["capsule"]["type"] == "spawn")
    assert message["capsule"]["parents"] == [g_spawn["id"]]
    result = next(c for c in capsules(a_log) if c["capsule"]["type"] == "result" and c["role"] == "received")
    assert result["capsule"]["prompt_sha256"] == sha256_text("gamma")

    report = verify_tree(root)
    assert report.ok, report.first_break
    assert (len(report.sessions), report.capsules, report.paired) == (3, 10, 5)


async def test_a_one_byte_edit_in_a_child_log_breaks_verification(tmp_path: Path, capsys) -> None:
    root = await run_fleet(tmp_path)
    assert cli(["sessions", "verify", str(root), "--tree"]) == 0
    out = capsys.readouterr().out
    assert "ok: 3 sessions" in out and "5 handoffs sealed in both logs" in out

    g_log = session_tree(root)[2]
    raw = bytearray(g_log.read_bytes())
    at = raw.index(b"g says hello")
    raw[at] = ord("G")  # one byte
    g_log.write_bytes(bytes(raw))
    line = raw[:at].count(b"\n") + 1

    report = verify_tree(root)
    assert report.first_break is not None
    assert report.first_break.path == g_log and report.first_break.record == line
    assert "does not match its hash" in report.first_break.reason
    assert cli(["sessions", "verify", str(root), "--tree"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"broken: {g_log}: record {line}: ")
    # Without --tree only the root is checked, and it is whole.
    assert cli(["sessions", "verify", str(root)]) == 0


async def test_a_capsule_resealed_by_hand_is_found_by_its_id_and_its_pair(tmp_path: Path) -> None:
    """An edit that recomputes the line hashes still breaks the capsule: its id names its content."""
    root = await run_fleet(tmp_path)
    a_log = session_tree(root)[1]
    lines = records(a_log)
    for record in lines:
        if record["kind"] == "capsule" and record["capsule"]["type"] == "spawn" and record["role"] == "received":
            record["capsule"]["budget"]["max_depth"] = 99
    rewrite(a_log, lines)
    report = verify_tree(root)
    assert report.first_break is not None and report.first_break.path == a_log
    assert "does not match its id" in report.first_break.reason

    # Re-id it too: now the two logs disagree, and the pair is what breaks.
    for record in lines:
        if (
            record["kind"] == "capsule"
            and record["capsule"]["budget"]
            and record["capsule"]["budget"].get("max_depth") == 99
        ):
            record["id"] = capsule_id(record["capsule"])
    rewrite(a_log, lines)
    report = verify_tree(root)
    assert report.first_break is not None and "is not recorded as" in report.first_break.reason


def rewrite(path: Path, records_: list[dict]) -> None:
    """Write records back with a valid hash chain (what a careful forger would do)."""
    from sagent.agent.session_check import line_hash, seal

    prev = None
    out = []
    for record in records_:
        record = {k: v for k, v in record.items() if k != "hash"}
        record["prev"] = prev
        line = seal(json.dumps(record, ensure_ascii=False, separators=(",", ":"))).encode()
        prev = line_hash(line)
        out.append(line)
    path.write_bytes(b"\n".join(out) + b"\n")


def test_verify_usage_and_missing_session(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli(["sessions", "verify", "--tree"]) == 2
    assert "usage: sagent sessions verify" in capsys.readouterr().err
    assert cli(["sessions", "verify", "nope", "--tree"]) == 2
    assert "no session 'nope'" in capsys.readouterr().err
