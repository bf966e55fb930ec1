"""The routing rules and the command parser, as pure functions: each rule, and which wins when several apply."""

from __future__ import annotations

from sagent.slack.commands import Command, parse_command
from sagent.slack.routing import Directory, Incoming, route, strip_mention


def known() -> Directory:
    return Directory(
        active=["alice", "bob", "bob-2"],
        log_channels={"CLOGA": "alice"},
        threads={"C1/100.1": "bob"},
        messages={"C1/100.2": "alice"},
    )


def test_a_reaction_goes_to_the_author_of_the_message_or_nowhere() -> None:
    assert route(Incoming("C1", "U1", reaction="eyes", item_ts="100.2"), known()).agent == "alice"  # type: ignore[union-attr]
    assert route(Incoming("C1", "U1", reaction="eyes", item_ts="999.9"), known()) is None


def test_the_log_channel_beats_a_name() -> None:
    decision = route(Incoming("CLOGA", "U1", "bob, hi", "1.0"), known())
    assert decision is not None and (decision.agent, decision.rule) == ("alice", "log-channel")


def test_a_name_beats_the_thread_and_matches_whole_words_in_any_case() -> None:
    decision = route(Incoming("C1", "U1", "ALICE: look", "2.0", thread_ts="100.1"), known())
    assert decision is not None and (decision.agent, decision.rule) == ("alice", "name")
    assert route(Incoming("C1", "U1", "bob-2 go", "2.1"), known()).agent == "bob-2"  # type: ignore[union-attr]
    assert route(Incoming("C1", "U1", "alicex go", "2.2"), known()).rule == "router"  # type: ignore[union-attr]


def test_a_thread_reply_goes_to_the_thread_owner() -> None:
    decision = route(Incoming("C1", "U1", "and then?", "3.0", thread_ts="100.1"), known())
    assert decision is not None and (decision.agent, decision.rule) == ("bob", "thread")


def test_commands_need_a_mention_or_dm_then_one_agent_takes_the_rest() -> None:
    one = Directory(active=["solo"])
    assert route(Incoming("D1", "U1", "list", "4.0", direct=True), one).rule == "command"  # type: ignore[union-attr]
    assert route(Incoming("C1", "U1", "list", "4.1"), one).agent == "solo"  # type: ignore[union-attr]
    assert route(Incoming("C1", "U1", "hello", "4.2"), Directory()).rule == "router"  # type: ignore[union-attr]
    assert route(Incoming("C1", "U1", "hello", "4.3"), known()).rule == "router"  # type: ignore[union-attr]


def test_stopped_agents_own_nothing() -> None:
    directory = known()
    directory.active.remove("bob")
    decision = route(Incoming("C1", "U1", "and then?", "5.0", thread_ts="100.1"), directory)
    assert decision is not None and decision.rule == "router"


def test_commands_parse() -> None:
    assert parse_command("help") == Command("help")
    assert parse_command("LIST") == Command("list")
    assert parse_command("create reviewer") == Command("create", "reviewer", "reviewer")
    assert parse_command("create reviewer as alice") == Command("create", "reviewer", "alice")
    assert parse_command("create ../x") == Command("create")
    assert parse_command("stop alice") == Command("stop", name="alice")
    assert parse_command("help me with this") is None
    assert parse_command("please create") is None


def test_a_mention_of_the_bot_is_stripped() -> None:
    assert strip_mention("<@UBOT> create x", "UBOT") == ("create x", True)
    assert strip_mention("<@UOTHER> create x", "UBOT") == ("<@UOTHER> create x", False)
