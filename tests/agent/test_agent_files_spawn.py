"""AgentSpawn with `agent`: a sub-agent defined in a file starts with exactly its prompt, its tools (in
sagent's names, those the parent has) and its model, through the scripted models."""

from __future__ import annotations

import pytest

from sagent.agent.agent import Agent
from sagent.agent.fleet import Fleet
from sagent.events import Result, ToolFinished
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.tools import AgentSelf, AgentSend, AgentSpawn, Bash, Glob, Grep, List, Read
from sagent.tools.runtime import AgentDefinition
from sagent.types import ModelRequest, ToolResult

REVIEWER = AgentDefinition(
    "reviewer",
    "Reviews a change for bugs.",
    "You are a careful reviewer. Answer in one line.",
    tools=("Read", "Grep", "LS", "TodoWrite", "mcp__github__get_pr"),
)


def _tools(*agents: AgentDefinition) -> list:
    return [Read(), Grep(), Glob(), List(), Bash(), AgentSpawn(agents), AgentSend(), AgentSelf()]


def _results(request: ModelRequest) -> list[str]:
    return [m.text for m in request.messages if isinstance(m, ToolResult)]


async def _run(main: Agent, prompt: str) -> tuple[list, Result]:
    events = [e async for e in main.run(prompt)]
    assert isinstance(events[-1], Result)
    return events, events[-1]


async def test_a_file_agent_gets_exactly_its_prompt_its_tools_and_the_parents_model() -> None:
    model = RoutedModel(
        {
            "main": [
                tool_turn(("AgentSpawn", {"agent": "reviewer", "prompt": "review a.py", "label": "rev"})),
                lambda request: text_turn("main: " + _results(request)[-1]),
            ],
            "rev": [text_turn("looks fine")],
        }
    )
    main = Agent(model, tools=_tools(REVIEWER), system="You are the main agent, with a long prompt.")
    _, result = await _run(main, "review my change")
    assert result.subtype == "success" and "looks fine" in result.text
    child_request = model.requests("rev")[0]
    assert child_request.system.startswith("You are a careful reviewer. Answer in one line.\n\n")
    assert 'You are the sub-agent "rev"' in child_request.system
    assert "main agent" not in child_request.system
    # LS is sagent's List; TodoWrite and the MCP tool the parent lacks are left out, with one note.
    assert [t.name for t in child_request.tools] == ["Read", "Grep", "List"]
    assert "left out: TodoWrite, mcp__github__get_pr" in result.text
    # The parent was offered the agent by name and description.
    spawn = next(t for t in model.requests("main")[0].tools if t.name == "AgentSpawn")
    assert "- reviewer: Reviews a change for bugs." in spawn.description
    await main.aclose()


async def test_the_files_model_alias_and_inherit() -> None:
    built: list[tuple[str | None, str | None]] = []

    def models(provider: str | None, name: str | None) -> ScriptedModel:
        built.append((provider, name))
        return ScriptedModel([text_turn(f"on {name}")], provider=provider or "scripted", name=name or "m")

    agents = (
        AgentDefinition("fast", "quick looks", "Be quick.", model="haiku"),
        AgentDefinition("same", "same model", "Be same.", model="inherit"),
        AgentDefinition("pinned", "pinned", "Be pinned.", model="openai:gpt-5-mini"),
    )
    main_model = ScriptedModel(
        [
            tool_turn(
                ("AgentSpawn", {"agent": "fast", "prompt": "look"}),
                ("AgentSpawn", {"agent": "pinned", "prompt": "look"}),
            ),
            tool_turn(("AgentSpawn", {"agent": "same", "prompt": "look", "label": "same"})),
            text_turn("done"),
            text_turn("same answered"),
        ],
        provider="scripted",
        name="parent-model",
    )
    main = Agent(main_model, tools=_tools(*agents), fleet=Fleet(models=models))
    events, _ = await _run(main, "go")
    assert built == [("anthropic", "claude-haiku-4-5"), ("openai", "gpt-5-mini")]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert "on claude-haiku-4-5" in finished[0].result.text and "on gpt-5-mini" in finished[1].result.text
    # inherit: the parent's own model, no new one built (its answer came from the parent's script)
    assert "scripted/parent-model" in finished[2].result.text
    await main.aclose()


async def test_a_model_that_cannot_run_here_falls_back_to_the_parents_with_a_note() -> None:
    def models(provider: str | None, name: str | None) -> ScriptedModel:
        raise AssertionError("not built: the provider is not allowed")

    agents = (AgentDefinition("fast", "quick looks", "Be quick.", model="opus"),)
    model = RoutedModel(
        {
            "main": [tool_turn(("AgentSpawn", {"agent": "fast", "prompt": "x", "label": "f"})), text_turn("ok")],
            "f": [text_turn("did it")],
        }
    )
    fleet = Fleet(models=models, allow_providers={"scripted"})
    main = Agent(model, tools=_tools(*agents), fleet=fleet)
    events, _ = await _run(main, "go")
    text = next(e for e in events if isinstance(e, ToolFinished)).result.text
    assert "did it" in text and "asks for model opus, which cannot run here" in text
    await main.aclose()


async def test_an_unknown_agent_is_an_error_naming_the_known_ones() -> None:
    model = ScriptedModel([tool_turn(("AgentSpawn", {"agent": "nobody", "prompt": "x"})), text_turn("ok")])
    main = Agent(model, tools=_tools(REVIEWER))
    events, _ = await _run(main, "go")
    finished = next(e for e in events if isinstance(e, ToolFinished))
    assert finished.result.is_error and "'nobody'" in finished.result.text and "reviewer" in finished.result.text
    await main.aclose()


async def test_an_agent_named_where_no_files_were_found_is_an_unknown_argument() -> None:
    model = ScriptedModel([tool_turn(("AgentSpawn", {"agent": "reviewer", "prompt": "x"})), text_turn("ok")])
    main = Agent(model, tools=[Read(), AgentSpawn()])
    events, _ = await _run(main, "go")
    finished = next(e for e in events if isinstance(e, ToolFinished))
    assert finished.result.is_error and "unknown argument(s): agent" in finished.result.text
    await main.aclose()


@pytest.mark.parametrize("given", [None, ["Read"]])
async def test_fields_given_in_the_call_still_work_with_an_agent(given: list[str] | None) -> None:
    model = RoutedModel(
        {
            "main": [
                tool_turn(
                    (
                        "AgentSpawn",
                        {"agent": "reviewer", "prompt": "x", "label": "r", "tools": given, "max_tool_rounds": 1},
                    )
                ),
                text_turn("ok"),
            ],
            "r": [text_turn("fine")],
        }
    )
    main = Agent(model, tools=_tools(REVIEWER))
    await _run(main, "go")
    names = [t.name for t in model.requests("r")[0].tools]
    assert names == (given or ["Read", "Grep", "List"])
    await main.aclose()


@pytest.mark.parametrize(
    ("tools", "disallowed", "expected"),
    [
        ((), (), []),  # `tools: []`: none
        (None, ("Bash", "MultiEdit"), ["Read", "Grep", "Glob", "List", "AgentSpawn", "AgentSend", "AgentSelf"]),
        (("Bash(git diff:*)", "Task", "Read"), (), ["Bash", "AgentSpawn", "Read"]),
    ],
)
async def test_the_tool_list_forms(tools: tuple[str, ...] | None, disallowed: tuple[str, ...], expected: list) -> None:
    definition = AgentDefinition("w", "works", "Work.", tools=tools, disallowed_tools=disallowed)
    model = RoutedModel(
        {
            "main": [tool_turn(("AgentSpawn", {"agent": "w", "prompt": "x", "label": "k"})), text_turn("ok")],
            "k": [text_turn("done")],
        }
    )
    main = Agent(model, tools=_tools(definition))
    await _run(main, "go")
    assert [t.name for t in model.requests("k")[0].tools] == expected
    await main.aclose()


async def test_subagent_start_hooks_match_and_hear_the_agent_files_name() -> None:
    from sagent.cli.control.hooks import install_hook_callbacks
    from tests.sdk.test_hooks_bridge import callbacks, matcher

    seen: list[dict] = []

    def start(hook_input: dict) -> dict:
        seen.append(hook_input)
        return {}

    parent = Agent(ScriptedModel([text_turn("done"), text_turn("done")]), tools=_tools(REVIEWER))
    config = {"SubagentStart": [matcher("hook_0", matcher="reviewer")]}
    assert install_hook_callbacks(parent, config, callbacks(hook_0=start)) == []
    from sagent.tools.runtime import SpawnRequest

    await parent.spawn(SpawnRequest("look", label="plain")).wait()
    await parent.spawn(SpawnRequest("look", label="rev", agent=REVIEWER)).wait()
    await parent.aclose()
    assert [(s["agent_id"], s["agent_type"]) for s in seen] == [("rev", "reviewer")]


async def test_a_file_agent_without_a_label_is_named_after_its_file() -> None:
    spawn = ("AgentSpawn", {"agent": "reviewer", "prompt": "x"})
    model = RoutedModel(
        {
            "main": [tool_turn(spawn, spawn), lambda request: text_turn(" | ".join(_results(request)))],
            "reviewer": [text_turn("first")],
            "reviewer-2": [text_turn("second")],
        }
    )
    main = Agent(model, tools=_tools(REVIEWER))
    _, result = await _run(main, "go")
    assert "reviewer (scripted/scripted" in result.text and "reviewer-2 (scripted/scripted" in result.text
    await main.aclose()
