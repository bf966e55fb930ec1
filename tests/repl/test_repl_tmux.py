"""The real REPL in a real terminal (tmux) against the fake Anthropic server, as a user works in it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_response, tool_use_response
from tests.repl.tmux import HAVE_TMUX, Tmux

pytestmark = pytest.mark.skipif(not HAVE_TMUX, reason="tmux is not installed")


def env_for(fake: FakeAnthropic, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "ANTHROPIC_BASE_URL": fake.url,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "TERM": "xterm-256color",
        "EDITOR": "true",
    }


@pytest.fixture
def project(tmp_path: Path, trust_tmp_path: None) -> Path:
    """A project whose settings let Bash run unasked: these tests are about the screen and the queue, and
    tests/repl/test_permissions_tmux.py about the questions."""
    root = tmp_path / "project"
    (root / ".sagent").mkdir(parents=True)
    (root / ".sagent" / "settings.json").write_text('{"permissions": {"allow": ["Bash"]}}')
    return root


def user_texts(body: dict) -> list[str]:
    return [
        block.get("text", "")
        for message in body["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "text"
    ]


def test_a_task_streams_tool_lines_and_input_typed_meanwhile_preempts_the_long_call(
    project: Path, tmp_path: Path
) -> None:
    steps = [
        tool_use_response([("Bash", {"command": "sleep 2; echo built"})], text="Building it now."),
        text_response("Bye! The build goes on."),
        text_response("Built."),  # the background job's result, when it arrives
    ]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("build it")
        term.press("Enter")
        term.wait_for("running…")
        term.type("also say bye")
        term.press("Enter")
        # Read at once: the Bash call moves to the background (nothing killed) and the model answers.
        screen = term.wait_for("Bye! The build goes on.")
        assert "Building it now." in screen
        order = [screen.index(s) for s in ("› build it", "Bash(sleep 2; echo built)", "› also say bye", "Bye!")]
        assert order == sorted(order)
        screen = term.wait_for("Built.")
        second, third = fake.requests[1]["body"], fake.requests[2]["body"]
    assert user_texts(second)[-1] == "also say bye"
    moved = [b for b in second["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert moved and "moved to the background" in str(moved[0]["content"])
    assert "built" in str(third["messages"][-1])  # the job's output, reported when it ended


def test_esc_mid_stream_keeps_the_partial_answer(project: Path, tmp_path: Path) -> None:
    long_answer = " ".join(f"word{n}" for n in range(200))
    slow = Reply([{"type": "text", "text": long_answer}], delay=0.05)
    steps = [slow, text_response("Picking up where I stopped.")]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("write a lot")
        term.press("Enter")
        term.wait_for("word3 ")
        term.press("Escape")
        screen = term.wait_for("interrupted")
        assert "word3" in screen and "word199" not in screen
        term.type("go on")
        term.press("Enter")
        term.wait_for("Picking up where I stopped.")
        second = fake.requests[1]["body"]
    kept = [m for m in second["messages"] if m["role"] == "assistant"]
    assert len(kept) == 1 and "word3" in kept[0]["content"][0]["text"]
    assert "word199" not in kept[0]["content"][0]["text"]


def test_model_switch_then_quit_then_continue_restores_the_history(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([text_response("Hello from Haiku.")]) as fake:
        env = env_for(fake, tmp_path)
        with Tmux([], env, project) as term:
            term.wait_for("Esc interrupts")
            term.type("/modle")
            term.press("Enter")
            term.wait_for("did you mean /model?")
            term.type("/model claude-haiku-4-5")
            term.press("Enter")
            term.wait_for("switched to anthropic/claude-haiku-4-5")
            term.wait_for("anthropic/claude-haiku-4-5 │")  # the status line follows
            term.type("hi there")
            term.press("Enter")
            term.wait_for("Hello from Haiku.")
            term.press("C-c")
            term.wait_for("press Ctrl+C again to quit")
            term.press("C-c")
            term.wait_for("[sagent exited 0]")
        assert fake.requests[0]["body"]["model"] == "claude-haiku-4-5"

        with Tmux(["--continue"], env, project) as term:
            term.wait_for("resumed session")
            screen = term.wait_for("anthropic/claude-haiku-4-5 │")  # the session's model, not the default
            assert "› hi there" in screen and "Hello from Haiku." in screen
            term.type("/quit")
            term.press("Enter")
            term.wait_for("[sagent exited 0]")


def test_tab_holds_input_until_idle_and_up_takes_queued_input_back(project: Path, tmp_path: Path) -> None:
    answered = threading.Event()  # the first answer waits until the test has pulled "oops" back

    def round_one(request: dict) -> Reply:
        answered.wait(90)
        return text_response("Round one done.")

    steps = [round_one, text_response("Later done.")]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("start")
        term.press("Enter")
        term.wait_for("› start")
        term.type("later please")
        term.press("Tab")
        term.wait_for("after this task: later please")
        term.type("oops")
        term.press("Enter")
        term.wait_for("queued: oops")
        term.press("Up")  # back into the input box, no longer queued
        screen = term.wait_for("⋯ oops")
        assert "queued: oops" not in screen
        term.press("C-c")  # clears the input box while it holds text
        answered.set()
        screen = term.wait_for("Later done.")
        assert screen.index("Round one done.") < screen.index("› later please") < screen.index("Later done.")
        bodies = fake.bodies()
    assert "later please" not in str(bodies[0]) and user_texts(bodies[1])[-1] == "later please"
    assert "oops" not in str(bodies)


def test_compact_replaces_the_history_with_a_summary(project: Path, tmp_path: Path) -> None:
    steps = [text_response("The parser is in src/parse.py."), text_response("Summary: parser lives in src/parse.py.")]
    with FakeAnthropic([*steps, text_response("Still with you.")]) as fake:
        with Tmux([], env_for(fake, tmp_path), project) as term:
            term.wait_for("Esc interrupts")
            term.type("where is the parser?")
            term.press("Enter")
            term.wait_for("The parser is in src/parse.py.")
            term.type("/compact file locations")
            term.press("Enter")
            term.wait_for("compacted 2 of 2 messages into a summary")
            term.type("thanks")
            term.press("Enter")
            term.wait_for("Still with you.")
        asked, after = fake.requests[1]["body"], fake.requests[2]["body"]
    assert "file locations" in user_texts(asked)[-1]
    summary, *rest = user_texts(after)
    assert "Summary: parser lives in src/parse.py." in summary
    # The old turns are gone; the user's words live on only inside the summary, kept verbatim by its check.
    assert "> where is the parser?" in summary and rest == ["thanks"]
    assert "The parser is in src/parse.py." not in str(after)


def test_sub_agents_show_live_and_the_user_can_message_one(project: Path, tmp_path: Path) -> None:
    import re

    def label_of(request: dict) -> str:
        system = " ".join(block.get("text", "") for block in request["body"].get("system") or [])
        found = re.search(r'You are the sub-agent "([^"]+)"', system)
        return found.group(1) if found else "main"

    scripts = {
        "main": [
            tool_use_response([("AgentSpawn", {"prompt": "build the site", "label": "w1", "persistent": True})]),
            text_response("w1 is on it."),
            *[text_response("Noted w1's report.") for _ in range(3)],
        ],
        "w1": [
            tool_use_response([("Bash", {"command": "sleep 3; echo built"})]),
            text_response("Built the site and checked the docs."),
        ],
    }
    with FakeAnthropic(scripts=scripts, route=label_of) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("build the site with a worker")
        term.press("Enter")
        term.wait_for("w1 is on it.")
        # The live panel is redrawn on its own tick, so it may land a frame after the answer's text.
        screen = term.wait_for("◆ w1 · claude-sonnet-4-6 · working", timeout=5)
        assert re.search(r"◆ w1 · claude-sonnet-4-6 · working · \$0\.\d{4}", screen), screen
        term.type("/send w1 also check the docs")
        term.press("Enter")
        term.wait_for("delivered to w1; it is working and will read it at its next safe point")
        # Esc ends main's wait; the worker goes on, and its report later wakes main by itself.
        term.press("Escape")
        screen = term.wait_for("Noted w1's report.", timeout=20)
        term.type("/cost")
        term.press("Enter")
        screen = term.wait_for("with sub-agents")
        assert re.search(r"\n\s+w1\s+claude-sonnet-4-6\s+0\.\d{4}", screen), screen
        w1_requests = [r for r in fake.requests if label_of(r) == "w1"]
    assert "also check the docs" in user_texts(w1_requests[-1]["body"])
    assert any("Built the site and checked the docs." in t for t in user_texts(fake.requests[-1]["body"]))


def test_a_background_job_is_listed_and_its_result_wakes_the_idle_agent(project: Path, tmp_path: Path) -> None:
    steps = [
        tool_use_response([("Bash", {"command": "sleep 3; echo site built", "background": True})]),
        text_response("The build runs in the background."),
        text_response("The job reported: site built."),
    ]
    with FakeAnthropic(steps) as fake, Tmux([], env_for(fake, tmp_path), project) as term:
        term.wait_for("Esc interrupts")
        term.type("build the site in the background")
        term.press("Enter")
        screen = term.wait_for("The build runs in the background.")
        assert "started in the background as job-1" in screen
        term.wait_for("1 job in background")  # the status line
        term.type("/jobs")
        term.press("Enter")
        screen = term.wait_for("Ctrl+B moves running calls here")
        assert "job-1  running" in screen and "Bash sleep 3; echo site built" in screen
        # Nobody types: the job's result arrives as a message and the agent answers it by itself.
        term.wait_for("The job reported: site built.", timeout=20)
        last = fake.requests[-1]["body"]
    assert any("[message from background job job-1]" in t and "site built" in t for t in user_texts(last))


def test_sessions_lists_them_and_one_is_resumed_by_number(project: Path, tmp_path: Path) -> None:
    import re

    with FakeAnthropic([text_response("The parser is in src/parse.py.")]) as fake:
        env = env_for(fake, tmp_path)
        with Tmux([], env, project) as term:
            term.wait_for("Esc interrupts")
            term.type("where is the parser?")
            term.press("Enter")
            term.wait_for("The parser is in src/parse.py.")
            term.type("/quit")
            term.press("Enter")
            term.wait_for("[sagent exited 0]")

        with Tmux([], env, project) as term:
            term.wait_for("Esc interrupts")
            term.type("/sessions")  # a bare /resume opens a list to search: tests/repl/test_sessions_tmux.py
            term.press("Enter")
            screen = term.wait_for("/resume N or /resume ID opens one")
            assert "failed" not in screen and "TypeError" not in screen
            rows = {m.group(1): m.group(0) for m in re.finditer(r"^\s*(\d+)\. .*$", screen, re.MULTILINE)}
            # Both sessions are listed: the one just started (marked), and the earlier one with its prompt.
            assert len(rows) == 2 and sum("(open now)" in row for row in rows.values()) == 1
            (earlier,) = [number for number, row in rows.items() if "where is the parser?" in row]
            term.type(f"/resume {earlier}")
            term.press("Enter")
            screen = term.wait_for("─ resumed ")
            # The picked session's history is shown again, and the new REPL works on it.
            assert screen.count("The parser is in src/parse.py.") == 1
            term.type("/quit")
            term.press("Enter")
            term.wait_for("[sagent exited 0]")
