"""The Slack service against a fake Slack: commands, personas, routing rules, mirroring."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.slack_server import BOT_USER, FakeSlack
from tests.slack.harness import answer, echo_model, replies, running, until


@pytest.fixture
def fake() -> FakeSlack:
    with FakeSlack() as slack:
        yield slack


def mention(text: str) -> str:
    return f"<@{BOT_USER}> {text}"


async def test_help_list_and_the_router_with_no_agents(fake: FakeSlack, tmp_path: Path) -> None:
    async with running(fake, echo_model(), tmp_path):
        ts = fake.message(mention("help"))
        assert "create <persona>" in await answer(fake, ts, "sagent", "create")
        ts = fake.message(mention("list"))
        await answer(fake, ts, "sagent", "No agents are running")
        ts = fake.message("hello, anyone?")
        await answer(fake, ts, "sagent", "create <persona>")


async def test_create_from_a_persona_file_answers_in_a_thread_under_its_name(fake: FakeSlack, tmp_path: Path) -> None:
    personas = tmp_path / "personas"
    personas.mkdir()
    (personas / "reviewer.md").write_text("You review code with care.")
    model = echo_model()
    async with running(fake, model, tmp_path, persona_dir=personas) as service:
        ts = fake.message(mention("create reviewer"))
        reply = await answer(fake, ts, "sagent", "Created `reviewer`")
        assert "reviewer.md" in reply
        assert service.slots["reviewer"].agent.settings.system == "You review code with care."
        log = fake.channel("sagent-reviewer-log")
        assert f"<#{log}>" in reply
        ts = fake.message("please look at main.py")  # the only agent: ordinary messages go to it
        said = await answer(fake, ts, "reviewer", "reviewer heard")
        assert "please look at main.py" in said
        posted = next(p for p in fake.posted if p.get("username") == "reviewer")
        assert posted["metadata"]["event_payload"] == {"agent": "reviewer"}
        await until(lambda: any("💲" in t for t in fake.texts(log)))  # costs in the log channel


async def test_persona_fallbacks_default_file_then_built_in(fake: FakeSlack, tmp_path: Path) -> None:
    personas = tmp_path / "personas"
    personas.mkdir()
    (personas / "default.md").write_text("You are a helpful teammate.")
    async with running(fake, echo_model(), tmp_path, persona_dir=personas) as service:
        ts = fake.message(mention("create tester as alice"))
        assert "default.md" in await answer(fake, ts, "sagent", "Created `alice`")
        assert service.slots["alice"].agent.settings.system == "You are a helpful teammate."
        assert service.slots["alice"].record.persona == "tester"
    async with running(fake, echo_model(), tmp_path / "other", persona_dir=None) as service:
        ts = fake.message(mention("create reviewer"))
        assert "built-in" in await answer(fake, ts, "sagent", "Created `reviewer`")
        assert service.slots["reviewer"].agent.settings.system == "You are reviewer."


async def test_stop_and_the_mistakes_the_router_explains(fake: FakeSlack, tmp_path: Path) -> None:
    async with running(fake, echo_model(), tmp_path) as service:
        ts = fake.message(mention("create helper"))
        await answer(fake, ts, "sagent", "Created")
        ts = fake.message(mention("create helper"))
        await answer(fake, ts, "sagent", "already running")
        ts = fake.message(mention("create ../../etc/passwd"))
        await answer(fake, ts, "sagent", "Say `create <persona>")
        ts = fake.message(mention("stop nobody"))
        await answer(fake, ts, "sagent", "No agent is called `nobody`")
        ts = fake.message(mention("stop helper"))
        await answer(fake, ts, "sagent", "Stopped `helper`")
        assert service.slots == {}
        assert [r.active for r in service.session.manifest.agents] == [False]
        ts = fake.message("still there?")
        await answer(fake, ts, "sagent", "No agents are running")


async def test_routing_rules_in_order(fake: FakeSlack, tmp_path: Path) -> None:
    async with running(fake, echo_model(), tmp_path) as service:
        for name in ("alice", "bob"):
            ts = fake.message(mention(f"create x as {name}"))
            await answer(fake, ts, "sagent", f"Created `{name}`")
        # A name at the start (any case) goes to that agent.
        first = fake.message("BOB: what is 2+2?")
        await answer(fake, first, "bob", "bob heard")
        # A reply in bob's thread goes to bob, even when it names nobody.
        reply = fake.message("and 3+3?", thread_ts=first)
        said = await until(lambda: [t for t in replies(fake, first, "bob") if "3+3" in t])
        assert said
        # A message in alice's log channel goes to alice.
        log = fake.channel("sagent-alice-log")
        in_log = fake.message("why that tool?", channel=log)
        await answer(fake, in_log, "alice", "alice heard")
        # A name beats a thread: "alice ..." in bob's thread goes to alice.
        fake.message("alice, your view?", thread_ts=first)
        await until(lambda: [t for t in replies(fake, first, "alice") if "your view" in t])
        # Two agents and no name: the router lists them.
        ts = fake.message("who is here?")
        assert "`alice`" in await answer(fake, ts, "sagent", "Active agents")
        # A reaction to bob's message goes to bob.
        bob_message = next(p for p in fake.posted if p.get("username") == "bob")
        fake.deliver(
            {
                "type": "reaction_added",
                "user": "UHUMAN",
                "reaction": "thumbsup",
                "item": {"type": "message", "channel": bob_message["channel"], "ts": bob_message["ts"]},
            }
        )
        await until(lambda: [t for t in replies(fake, first, "bob") if ":thumbsup:" in t])
        # A reaction to a message no agent wrote goes nowhere.
        fake.deliver(
            {
                "type": "reaction_added",
                "user": "UHUMAN",
                "reaction": "eyes",
                "item": {"type": "message", "channel": "C0GENERAL", "ts": reply},
            }
        )
        router_log = fake.channel("router-log")
        rules = await until(
            lambda: [
                t.split(":")[0]
                for t in fake.texts(router_log)
                if t.split(":")[0] in ("name", "thread", "log-channel", "reaction")
            ]
        )
        assert {"name", "thread", "log-channel"} <= set(rules)
        assert service.known.active == ["alice", "bob"]


async def test_bots_are_ignored_unless_a_sagent_agent_sent_them(fake: FakeSlack, tmp_path: Path) -> None:
    async with running(fake, echo_model(), tmp_path):
        ts = fake.message(mention("create solo"))
        await answer(fake, ts, "sagent", "Created")
        other = fake.message("I am another bot", user="UOTHER", bot_id="BOTHER")
        managed = fake.message(
            "from a sagent agent elsewhere",
            user="UOTHER",
            bot_id="BOTHER",
            metadata={"event_type": "sagent_agent", "event_payload": {"agent": "remote"}},
        )
        said = await answer(fake, managed, "solo", "solo heard")
        assert "agent remote" in said
        assert replies(fake, other) == []
        own = fake.message("my own echo", user=BOT_USER, bot_id="BBOT")
        assert replies(fake, own) == []


async def test_the_example_personas_load(fake: FakeSlack, tmp_path: Path) -> None:
    examples = Path(__file__).parent.parent.parent / "examples" / "slack_personas"
    async with running(fake, echo_model(), tmp_path, persona_dir=examples) as service:
        ts = fake.message(mention("create reviewer as rev"))
        await answer(fake, ts, "sagent", "Created `rev`")
        assert service.slots["rev"].agent.settings.system == (examples / "reviewer.md").read_text().strip()
        ts = fake.message(mention("create designer"))
        await answer(fake, ts, "sagent", "default.md")


async def test_progress_is_one_message_edited_not_a_flood(fake: FakeSlack, tmp_path: Path) -> None:
    from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
    from sagent.tools import tools_by_name

    (tmp_path / "a.txt").write_text("alpha\n")
    steps = [
        tool_turn(("Read", {"path": "a.txt"})),
        tool_turn(("Read", {"path": "a.txt"})),
        text_turn("a.txt says alpha"),
    ]
    async with running(fake, ScriptedModel(steps), tmp_path, tools=tools_by_name(["Read"])):
        ts = fake.message(mention("create reader"))
        await answer(fake, ts, "sagent", "Created")
        ts = fake.message("what is in a.txt?")
        await answer(fake, ts, "reader", "a.txt says alpha")
        mine = [p for p in fake.posted if p.get("thread_ts") == ts and p.get("username") == "reader"]
        assert len(mine) == 1  # the "working" message, edited into the answer
        assert [u["text"] for u in fake.updates if u["ts"] == mine[0]["ts"]][-1] == "a.txt says alpha"
        log = fake.channel("sagent-reader-log")
        await until(lambda: sum("`Read`" in t for t in fake.texts(log)) >= 4)  # two calls, two results


def test_a_call_a_rule_wants_asked_about_is_refused_in_slack(tmp_path: Path) -> None:
    import asyncio

    from sagent.agent.fleet import Fleet
    from sagent.agent.hooks import Deny
    from sagent.providers.scripted import ScriptedModel
    from sagent.slack.cli import build_slack_parser
    from sagent.slack.manifest import SlackSession
    from sagent.slack.run import AgentMaker
    from sagent.types import ToolCall

    args = build_slack_parser().parse_args(["--no-memory", "--tools", "none"])
    maker = AgentMaker(args, [], tmp_path, ScriptedModel(), Fleet(), SlackSession.new(tmp_path / "s"))
    settings = maker.settings("alice", "You are alice.")
    assert settings.label == "alice" and settings.system == "You are alice." and settings.approver is not None
    answer = asyncio.run(settings.approver(None, ToolCall("c1", "Bash", {"command": "ls"}), "rule says ask"))  # type: ignore[arg-type]
    assert isinstance(answer, Deny) and "no one to ask" in answer.reason


async def test_commands_by_dm_without_a_mention(fake: FakeSlack, tmp_path: Path) -> None:
    async with running(fake, echo_model(), tmp_path) as service:
        ts = fake.message("create helper", channel="D0DM", channel_type="im")
        await answer(fake, ts, "sagent", "Created `helper`")
        ts = fake.message("list", channel="D0DM", channel_type="im")
        await answer(fake, ts, "sagent", "`helper` (persona helper)")
        assert service.known.active == ["helper"]
