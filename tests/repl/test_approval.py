"""The REPL's approver without a terminal: one question at a time, a sub-agent's labelled with its name,
"don't ask again" remembered for the session or written for the project, and the suggested rules."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from sagent.agent.agent import Agent
from sagent.agent.hooks import Allow, Deny
from sagent.providers.scripted import ScriptedModel
from sagent.repl.approval import Approvals, suggest_rules
from sagent.repl.host import ReplState
from sagent.repl.render import Renderer, Settings
from sagent.types import ToolCall


class Host:
    """The little of the REPL an approver uses."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.renderer = Renderer(Settings(color=False))
        self.state = ReplState()
        self.lines: list[str] = []

    def commit(self, blocks: list[str]) -> None:
        self.lines += blocks

    def refresh(self) -> None:
        pass


def bash(command: str) -> ToolCall:
    return ToolCall(id="c", name="Bash", arguments={"command": command})


async def until_asked(approvals: Approvals) -> None:
    while approvals.current is None:
        await asyncio.sleep(0)


async def test_questions_come_one_at_a_time_and_a_childs_is_labelled(tmp_path: Path) -> None:
    main = Agent(ScriptedModel([]), cwd=tmp_path)
    child = Agent(ScriptedModel([]), cwd=tmp_path, parent=main, label="worker")
    host = Host(main)
    approvals = Approvals(host)  # type: ignore[arg-type]
    first = asyncio.ensure_future(approvals(child, bash("make test"), "default mode asks"))
    second = asyncio.ensure_future(approvals(main, bash("make lint"), "default mode asks"))
    await until_asked(approvals)
    assert approvals.current is not None and approvals.current.agent is child
    assert "[worker] Bash asks for approval" in host.lines[-1] and "$ make test" in host.lines[-1]
    assert "[worker] Allow Bash?" in approvals.text()
    approvals.press("y")
    assert isinstance(await first, Allow)
    await until_asked(approvals)
    assert approvals.current.agent is main and "[" not in approvals.text().splitlines()[0]
    approvals.press("n")
    assert approvals.take_reason("use ruff instead")
    answer = await second
    assert isinstance(answer, Deny) and answer.reason == "the user said no: use ruff instead"


async def test_dont_ask_again_remembers_for_the_session_and_writes_for_the_project(tmp_path: Path) -> None:
    (tmp_path / ".sagent").mkdir()
    (tmp_path / ".sagent" / "settings.local.json").write_text('{"model": "x", "permissions": {"allow": ["Read"]}}')
    main = Agent(ScriptedModel([]), cwd=tmp_path)
    approvals = Approvals(Host(main))  # type: ignore[arg-type]
    asked = asyncio.ensure_future(approvals(main, bash("git status -s && echo hi > out.txt"), ""))
    await until_asked(approvals)
    assert approvals.current is not None and approvals.current.rules == ["Bash(git status:*)", "Bash(echo:*)"]
    approvals.press("3")
    assert isinstance(await asked, Allow)
    saved = json.loads((tmp_path / ".sagent" / "settings.local.json").read_text())
    assert saved == {"model": "x", "permissions": {"allow": ["Read", "Bash(git status:*)", "Bash(echo:*)"]}}
    # Asked again: answered from memory, with no question.
    assert isinstance(await approvals(main, bash("git status; echo again"), ""), Allow)
    # A command no remembered rule covers still asks; so does echo writing a file (a prefix rule never does).
    again = asyncio.ensure_future(approvals(main, bash("echo x > f.txt"), ""))
    await until_asked(approvals)
    approvals.press("1")
    await again


def test_the_rules_offered_for_each_kind_of_call(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    agent = Agent(ScriptedModel([]), cwd=tmp_path)

    def rules(name: str, **arguments: object) -> list[str]:
        return suggest_rules(agent, ToolCall(id="c", name=name, arguments=dict(arguments)))

    assert rules("Bash", command="npm test -- --watch") == ["Bash(npm test:*)"]
    assert rules("Bash", command="ls -la | wc -l") == ["Bash(ls:*)", "Bash(wc:*)"]
    assert rules("Bash", command="echo 'unterminated") == []  # no rule can name it: only yes or no is offered
    assert rules("Edit", path="src/a.py", old_string="a", new_string="b") == ["Edit(src/**)"]
    assert rules("Write", path="a.py", content="") == ["Edit(./**)"]
    assert rules("Read", path="/etc/hostname") == ["Read(/etc/**)"]
    assert rules("WebFetch", url="https://docs.python.org/3/") == ["WebFetch(domain:docs.python.org)"]
    assert rules("mcp__github__create_issue") == ["mcp__github__create_issue"]


async def test_the_question_names_its_call_and_every_waiting_call_shows_as_waiting(tmp_path: Path) -> None:
    from sagent.events import ToolStarted

    main = Agent(ScriptedModel([]), cwd=tmp_path)
    host = Host(main)
    approvals = Approvals(host)  # type: ignore[arg-type]
    ls, nap = ToolCall("c1", "Bash", {"command": "ls -la"}), ToolCall("c2", "Bash", {"command": "sleep 30"})
    for call in (ls, nap):
        host.renderer.feed(ToolStarted(call))
    first = asyncio.ensure_future(approvals(main, ls, "default mode asks"))
    second = asyncio.ensure_future(approvals(main, nap, "default mode asks"))
    await until_asked(approvals)
    await asyncio.sleep(0)
    assert approvals.text().splitlines()[:2] == ["? Allow Bash?", "  $ ls -la"]
    live = host.renderer.live().splitlines()
    assert live == ["Bash(ls -la) waiting for your approval", "Bash(sleep 30) waiting for your approval"]
    approvals.press("1")
    assert isinstance(await first, Allow)
    await until_asked(approvals)
    assert approvals.text().splitlines()[1] == "  $ sleep 30" and "Bash(sleep:*)" in approvals.text()
    assert host.renderer.live().splitlines() == ["Bash(ls -la) running…", "Bash(sleep 30) waiting for your approval"]
    approvals.press("y")
    await second
    assert host.renderer.asking == set()


def test_a_question_names_a_file_a_url_or_the_calls_key_argument() -> None:
    from sagent.repl.approval import call_text

    assert call_text(ToolCall("a", "Edit", {"path": "src/app.py", "old_string": "x"}), 80) == "src/app.py"
    assert call_text(ToolCall("b", "WebFetch", {"url": "https://example.org/a"}), 80) == "https://example.org/a"
    assert call_text(ToolCall("c", "AgentSpawn", {"label": "scout", "prompt": "look"}), 80) == "AgentSpawn(scout)"
    long = call_text(ToolCall("d", "Bash", {"command": "echo " + "x" * 200}), 40)
    assert long.startswith("$ echo x") and long.endswith("…") and len(long) <= 40
