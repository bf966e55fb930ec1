"""Token accounting before a request, the compaction policy, the summary check, and re-opening a session
from before a compaction."""

from __future__ import annotations

import pytest

from sagent.agent.agent import Agent
from sagent.agent.compaction import (
    COMPACT_PREFIX,
    CompactionPolicy,
    HistoryChange,
    Thread,
    check_summary,
    recent_start,
)
from sagent.agent.session import SessionLog, peek_state
from sagent.agent.tokens import estimate_message
from sagent.events import Compacted, ContextPruned, ToolResultsCleared
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import tool
from sagent.types import AssistantMessage, ToolCall, ToolResult, Usage, UserMessage


@pytest.fixture(autouse=True)
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


@tool
def dump(size: int) -> str:
    """Print `size` characters.

    Args:
        size: how many
    """
    return "x" * size


dump.reproducible = True  # type: ignore[attr-defined]


async def test_the_next_request_is_the_reported_count_plus_an_estimate_of_what_was_added() -> None:
    seen = []

    def measure(request):  # the second request: what the agent knew just before sending it
        seen.append(agent.context_size())
        return text_turn("done")

    model = ScriptedModel([tool_turn(("dump", {"size": 4000}), usage=Usage(1000, 50, cache_read_tokens=3000)), measure])
    agent = Agent(model, system="s" * 400, tools=[dump])
    before = agent.context_size()
    assert not before.measured and before.system == 100 and before.total == agent.context_tokens
    events = [e async for e in agent.run("go")]
    assert events[-1].subtype == "success"
    # 4,050 reported for the first response (cached tokens count), then an estimate of its tool result.
    size = seen[0]
    result_tokens = estimate_message(agent.history[2])
    assert size.measured and size.total > 4050 + result_tokens // 2
    assert size.system + size.tools + size.messages + size.tool_results == size.total
    assert size.tool_results > size.messages > 0
    assert any("tool results" in line for line in size.lines())


def test_a_history_rewrite_falls_back_to_a_scaled_estimate() -> None:
    agent = Agent(ScriptedModel([]), system="s" * 400)
    agent.history = [UserMessage.of("u" * 4000), AssistantMessage((), usage=Usage(2004, 0))]
    agent.window.observed(agent.request(), Usage(2004, 0))
    assert agent.context_tokens == 2004
    agent.clear_tool_results([])  # nothing cleared: the count still holds
    assert agent.context_size().measured
    agent.apply(HistoryChange(ToolResultsCleared(()), (UserMessage.of("u" * 400),)))
    size = agent.context_size()
    # Estimated from the text (100 + 100 + overhead), scaled by reported/estimated at the last report.
    assert not size.measured and 200 < size.total < 420
    # A provider that reports no usage (the local server) leaves the size to the estimate.
    agent.window.observed(agent.request(), Usage(2004, 0))
    assert agent.context_size().measured
    agent.window.observed(agent.request(), Usage())
    assert not agent.context_size().measured


def test_the_window_comes_from_the_model_the_catalog_or_the_policy() -> None:
    from sagent.providers.llamacpp import LlamaCppModel

    assert Agent(LlamaCppModel(context=4096)).window.limit == 4096  # the local server's own context
    assert Agent(ScriptedModel([], name="claude-sonnet-4-6")).window.limit == 200_000
    assert Agent(ScriptedModel([])).window.limit is None  # unknown: no automatic compaction
    assert Agent(ScriptedModel([]), compaction=CompactionPolicy(window=32_000)).window.limit == 32_000
    lines = [
        Agent(ScriptedModel([], name="claude-sonnet-4-6")).window.policy_line(),
        Agent(ScriptedModel([])).window.policy_line(),
        Agent(ScriptedModel([]), compaction=CompactionPolicy(threshold=None)).window.policy_line(),
    ]
    assert lines == [
        "compacts automatically at 80% of the window (160,000 tokens)",
        "compacts automatically at 80% of the window, once the window is known",
        "automatic compaction: off (compacting by hand still works)",
    ]


def test_the_policy_takes_a_fraction_or_off_per_model() -> None:
    policy = CompactionPolicy(threshold=0.7, per_model={"cheap": 0.5, "huge": None})
    assert policy.threshold_for("other") == 0.7
    assert policy.threshold_for("cheap") == 0.5 and policy.threshold_for("huge") is None
    with pytest.raises(ValueError, match="fraction of the window"):
        CompactionPolicy(threshold=1.5)


async def test_automatic_compaction_is_off_when_the_threshold_is_none() -> None:
    big = tool_turn(("dump", {"size": 40_000}))
    model = ScriptedModel([big, big, text_turn("done")])
    agent = Agent(model, tools=[dump], compaction=CompactionPolicy(threshold=None, window=18_000))
    events = [e async for e in agent.run("go")]
    assert not any(isinstance(e, Compacted | ContextPruned) for e in events)
    assert agent.context_tokens > 0.8 * 18_000  # past the default threshold, still within the window
    model.add(big, text_turn("done"))
    agent.window.policy = CompactionPolicy(threshold=0.5, window=18_000)
    events = [e async for e in agent.run("again")]
    pruned = next(e for e in events if isinstance(e, ContextPruned))
    assert pruned.tokens_before > 9_000 > pruned.tokens_after


def test_the_recent_part_never_starts_with_a_tool_result() -> None:
    call = ToolCall("c1", "dump", {"size": 10})
    history = [
        UserMessage.of("a" * 400),
        AssistantMessage((call,)),
        ToolResult.of(call, "x" * 40),
        UserMessage.of("b" * 40),
    ]
    # 14 tokens each for the last message and the tool result, 8 for the call: 30 tokens reach into the
    # result, which cannot start the recent part without its call; 36 take the call too.
    assert recent_start(history, 20) == 3
    assert recent_start(history, 30) == 3
    assert recent_start(history, 36) == 1
    assert recent_start(history, 10_000) == 0


def test_the_thread_holds_the_users_words_and_the_files_touched() -> None:
    from sagent.types import PeerMessage

    read, edit = ToolCall("c1", "Read", {"path": "a.py"}), ToolCall("c2", "Edit", {"path": "b.py"})
    history = [
        UserMessage.of("fix it"),
        AssistantMessage((read, edit)),
        ToolResult.of(read, "a"),
        ToolResult.of(edit, "edited"),
        PeerMessage("user", "also the docs"),  # a person's message to a sub-agent
        PeerMessage("w2", "done"),  # another agent's is not the user's
        UserMessage.of(f"{COMPACT_PREFIX}\n\nolder summary"),
    ]
    thread = Thread(("first",)).extended(history)
    assert thread == Thread(("first", "fix it", "also the docs"), ("a.py",), ("b.py",))


def test_the_check_puts_back_what_the_summary_lost() -> None:
    thread = Thread(("fix the\nparser", "use tabs"), ("src/parse.py",), ("src/parse.py", "tests/t.py"))
    kept, repaired = check_summary("## Goal\nFix it.\n## User messages\n> fix the\n> parser\nRead src/parse.py", thread)
    assert repaired == ("1 user message", "1 file path")
    assert kept.endswith("> use tabs\n\n## Files (kept by sagent)\nModified: tests/t.py")
    assert check_summary(kept, thread)[1] == ()  # what the check wrote passes the check


async def test_a_session_reopens_from_before_its_compaction(tmp_path) -> None:
    model = ScriptedModel(
        [text_turn("parser found"), text_turn("## Goal\nFix the parser.\n> where is it?"), text_turn("noted")]
    )
    log = SessionLog.create(tmp_path, {"model": "scripted"})
    agent = Agent(model, session=log, cwd=tmp_path)
    await agent.ask("where is it?")
    before = list(agent.history)
    done = await agent.compact()
    assert done is not None and agent.history[0].text.startswith(COMPACT_PREFIX)
    await agent.ask("thanks")
    await agent.aclose()
    assert log.path is not None
    original = log.path.read_bytes()

    model.add(text_turn("back before the summary"))
    forked = Agent.resume(log.path, model, before_compaction=True)
    assert forked.history == before and forked.session_id != agent.session_id
    assert (await forked.ask("and now?")).text == "back before the summary"
    await forked.aclose()
    assert log.path.read_bytes() == original  # the original log is untouched
    state = peek_state(log.path)
    assert state.thread.user_messages == ("where is it?",)
    with pytest.raises(ValueError, match="never compacted"):
        SessionLog.fork_before_compaction(forked.session.path)  # type: ignore[arg-type]


@tool
def fetch(size: int) -> str:
    """Fetch `size` characters that cannot be had again.

    Args:
        size: how many
    """
    return "y" * size


async def test_when_the_recent_turns_alone_fill_the_threshold_compaction_is_not_repeated_every_round() -> None:
    fetched = []

    def respond(request):
        if "write a summary" in request.messages[-1].text:
            return text_turn("## Goal\nFetch things.")
        fetched.append(1)
        return tool_turn(("fetch", {"size": 8000})) if len(fetched) <= 6 else text_turn("ok")

    # A 3,000-token threshold, but the newest 5,000 tokens stay verbatim: after one summary the context
    # is still over, and summarising again every round would free nothing.
    policy = CompactionPolicy(threshold=0.15, window=20_000, recent=0.25, recent_max=5_000)
    model = ScriptedModel([respond] * 10)
    agent = Agent(model, tools=[fetch], compaction=policy)
    events = [e async for e in agent.run("fetch")]
    assert events[-1].subtype == "success" and len(fetched) == 7
    assert len([e for e in events if isinstance(e, Compacted)]) == 1
    assert not any(isinstance(e, ContextPruned) for e in events)  # fetch is not reproducible: never pruned
    assert agent.window.over_threshold()


async def test_sub_agents_compact_by_their_parents_policy() -> None:
    from sagent.tools import AgentSpawn

    policy = CompactionPolicy(threshold=0.5, per_model={"scripted": None})
    model = ScriptedModel([tool_turn(("AgentSpawn", {"prompt": "p", "label": "w"})), text_turn("w"), text_turn("ok")])
    main = Agent(model, tools=[AgentSpawn()], compaction=policy)
    child = main.spawn("look", label="w2")
    assert child.agent.window.policy is policy
    await child.wait()
    await main.aclose()
