"""The MCP client against real servers written with the SDK: stdio subprocesses and HTTP on 127.0.0.1.

The agent runs on the scripted model; each test checks what the model was offered and what came back.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.hooks import ALLOW, Deny, Hook, ToolDecision
from sagent.events import ToolFinished
from sagent.mcp.config import ServerConfig
from sagent.mcp.setup import McpRun, mcp_run, prompt_text, status_lines
from sagent.providers.scripted import RoutedModel, ScriptedModel, text_turn, tool_turn
from sagent.tools import builtin_tools
from sagent.tools.base import MAX_OUTPUT, ImagePart, ToolContext
from sagent.types import ToolCall
from tests.mcp.conftest import stdio

CONNECT = 60.0  # seconds a server may take to start on a loaded machine (generous: tests never wait it out)


def run_with(configs: list[ServerConfig], tmp_path: Path, report: list[str] | None = None) -> McpRun:
    run = mcp_run(configs, tmp_path, report.append if report is not None else None)
    assert run is not None
    for connection in run.servers.connections.values():
        connection.connect_timeout = CONNECT
    return run


async def agent_run(
    run: McpRun, model: ScriptedModel, tmp_path: Path, tools: list | None = None, hooks: tuple = ()
) -> tuple[Agent, list[ToolFinished]]:
    agent = Agent(model, tools=[*(tools or []), *run.tools], hooks=(run.hook, *hooks), cwd=tmp_path)
    try:
        finished = [e async for e in agent.run("go") if isinstance(e, ToolFinished)]
    finally:
        await agent.aclose()
    return agent, finished


def offered(model: ScriptedModel, request: int) -> list[str]:
    return [spec.name for spec in model.requests[request].tools]


async def test_tools_load_lazily_and_map_text_images_structured_content_and_errors(tmp_path: Path) -> None:
    run = run_with([stdio("basic", "basic")], tmp_path)
    model = ScriptedModel(
        [
            tool_turn(("ToolSearch", {"query": "add numbers"})),
            tool_turn(
                ("mcp__basic__add", {"a": 2, "b": 40}),
                ("mcp__basic__pixel", {}),
                ("mcp__basic__weather", {"city": "Oslo"}),
                ("mcp__basic__fail", {"reason": "because"}),
            ),
            text_turn("done"),
        ]
    )
    try:
        _, finished = await agent_run(run, model, tmp_path)
    finally:
        await run.servers.aclose()
    results = {f.result.name.removeprefix("mcp__basic__"): f.result for f in finished}  # in the order they end
    search, add, pixel, weather, fail = (results[n] for n in ("ToolSearch", "add", "pixel", "weather", "fail"))
    assert "mcp__basic__add" in search.text and not search.is_error
    assert add.text == "42" and not add.is_error
    assert pixel.text == "a pixel" and any(isinstance(p, ImagePart) for p in pixel.content)
    assert json.loads(weather.text) == {"city": "Oslo", "celsius": 21}
    assert fail.is_error
    # The first request went out with the search and resource tools only; the server's few tools were
    # then offered as they are, after them, in the server's order.
    assert offered(model, 0) == ["ToolSearch", "ListMcpResources", "ReadMcpResource"]
    later = offered(model, 1)
    assert later[:3] == offered(model, 0)
    assert later[3:] == [f"mcp__basic__{n}" for n in ("add", "echo", "pixel", "weather", "fail", "grow")]


async def test_a_server_that_crashes_mid_call_gives_a_tool_error_and_is_started_again(tmp_path: Path) -> None:
    report: list[str] = []
    run = run_with([stdio("crash", "crash")], tmp_path, report)
    ctx = ToolContext(cwd=tmp_path)
    run.servers.start()
    try:
        await run.servers.settle(CONNECT)
        tools = {t.name: t for t in run.hook.catalog.all_tools()}
        first_pid = (await tools["mcp__crash__alive"].run({}, ctx))[0].text  # type: ignore[index,union-attr]
        with pytest.raises(Exception, match=r"stopped during tool boom.*exiting on purpose"):
            await tools["mcp__crash__boom"].run({}, ctx)
        assert report and "crash" in report[0] and "exiting on purpose" in report[0]
        second_pid = (await tools["mcp__crash__alive"].run({}, ctx))[0].text  # type: ignore[index,union-attr]
    finally:
        await run.servers.aclose()
    assert first_pid.startswith("alive") and second_pid.startswith("alive") and first_pid != second_pid


async def test_a_hanging_server_never_holds_back_the_first_request(tmp_path: Path) -> None:
    run = run_with([stdio("hang", "hang"), stdio("basic", "basic")], tmp_path)
    model = ScriptedModel([text_turn("answered")])
    try:
        agent, _ = await agent_run(run, model, tmp_path)
        # The run is over while the hanging server is still connecting: nothing waited for it.
        assert run.servers.connections["hang"].state == "connecting"
        assert agent.history[-1].text == "answered"
    finally:
        await run.servers.aclose()


async def test_a_call_of_a_tool_whose_server_is_still_starting_waits_for_it(tmp_path: Path) -> None:
    """The first answer calls an MCP tool at once (a model that knows the tool by name): its server starts
    only once that request is out, and the call waits for it instead of finding an unknown tool."""
    run = run_with([stdio("basic", "basic")], tmp_path)
    model = ScriptedModel([tool_turn(("mcp__basic__add", {"a": 2, "b": 40})), text_turn("done")])
    try:
        _, finished = await agent_run(run, model, tmp_path)
    finally:
        await run.servers.aclose()
    assert "mcp__basic__add" not in offered(model, 0)  # not connected when the first request went out
    [add] = [f.result for f in finished]
    assert add.text == "42" and not add.is_error
    assert "mcp__basic__add" in offered(model, 1)


async def test_a_headless_run_waits_for_its_servers_before_the_first_request_and_says_which_is_slow(
    tmp_path: Path,
) -> None:
    report: list[str] = []
    run = mcp_run([stdio("basic", "basic"), stdio("hang", "hang")], tmp_path, report.append, wait_first=True)
    assert run is not None
    run.servers.connections["basic"].connect_timeout = CONNECT
    run.servers.connections["hang"].connect_timeout = 3.0  # MCP_TIMEOUT bounds the wait for a server that hangs
    model = ScriptedModel([text_turn("answered")])
    try:
        await agent_run(run, model, tmp_path)
    finally:
        await run.servers.aclose()
    assert "mcp__basic__add" in offered(model, 0)  # the first request already carries the server's tools
    assert any("waiting for MCP server hang to start" in line for line in report), report
    assert any(line.startswith("MCP server hang failed: no answer within 3 s") for line in report), report


async def test_a_server_that_does_not_answer_in_time_is_reported_as_failed(tmp_path: Path) -> None:
    report: list[str] = []
    run = run_with([stdio("hang", "hang")], tmp_path, report)
    run.servers.connections["hang"].connect_timeout = 0.5
    run.servers.start()
    try:
        await run.servers.settle(CONNECT)
    finally:
        await run.servers.aclose()
    assert run.servers.connections["hang"].state == "failed"
    assert report == ["MCP server hang failed: no answer within 0.5 s of starting (MCP_TIMEOUT)"]
    assert "failed" in "\n".join(status_lines(run.servers))


async def test_a_tool_call_that_hangs_ends_as_a_tool_error_at_the_call_timeout(tmp_path: Path) -> None:
    run = run_with([stdio("slow", "slow")], tmp_path)
    run.servers.connections["slow"].call_timeout = 0.5
    run.servers.start()
    try:
        await run.servers.settle(CONNECT)
        (tool,) = run.hook.catalog.all_tools()
        with pytest.raises(Exception, match=r"gave no answer in 0\.5 s"):
            await tool.run({}, ToolContext(cwd=tmp_path))
    finally:
        await run.servers.aclose()


async def test_a_huge_result_is_capped_and_saved_whole(tmp_path: Path) -> None:
    run = run_with([stdio("huge", "huge")], tmp_path)
    model = ScriptedModel(
        [
            tool_turn(("ToolSearch", {"query": "select:mcp__huge__dump"})),
            tool_turn(("mcp__huge__dump", {})),
            text_turn("ok"),
        ]
    )
    try:
        _, finished = await agent_run(run, model, tmp_path)
    finally:
        await run.servers.aclose()
    text = finished[-1].result.text
    assert len(text) < MAX_OUTPUT + 500 and "characters cut" in text
    spill = Path(text.split("the whole output is in ")[1].split(":")[0])
    assert spill.read_text().count("\n") == 6_000


async def test_tool_names_that_collide_with_builtins_stay_apart(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("sagent's own file\n")
    run = run_with([stdio("collide", "collide")], tmp_path)
    model = ScriptedModel(
        [
            tool_turn(("ToolSearch", {"query": "read"})),
            tool_turn(("Read", {"path": "a.txt"}), ("mcp__collide__Read", {"path": "a.txt"})),
            text_turn("ok"),
        ]
    )
    try:
        _, finished = await agent_run(run, model, tmp_path, tools=builtin_tools(fleet=False))
    finally:
        await run.servers.aclose()
    # Both calls run at once: which finishes first depends on the machine's load, so each is found by its call.
    by_name = {event.result.name: event.result for event in finished}
    builtin, remote = by_name["Read"], by_name["mcp__collide__Read"]
    assert "sagent's own file" in builtin.text
    assert remote.text == "server's own Read of a.txt"
    names = offered(model, 2)
    assert names.count("Read") == 1 and {"mcp__collide__Read", "mcp__collide__Bash"} <= set(names)


async def test_a_tool_list_change_is_appended_once_keeping_the_prefix(tmp_path: Path) -> None:
    run = run_with([stdio("basic", "basic")], tmp_path)
    model = ScriptedModel(
        [
            tool_turn(("ToolSearch", {"query": "grow"})),
            tool_turn(("mcp__basic__grow", {})),
            tool_turn(("ToolSearch", {"query": "select:mcp__basic__double"})),
            tool_turn(("mcp__basic__double", {"x": 21})),
            text_turn("ok"),
        ]
    )
    try:
        _, finished = await agent_run(run, model, tmp_path)
    finally:
        await run.servers.aclose()
    assert finished[-1].result.text == "42"
    before, after = offered(model, 2), offered(model, 4)
    assert after[: len(before)] == before and after[len(before) :] == ["mcp__basic__double"]


async def test_many_tools_are_found_by_search_instead_of_riding_in_every_request(tmp_path: Path) -> None:
    run = run_with([stdio(f"s{i}", "many:20") for i in range(3)], tmp_path)
    model = ScriptedModel(
        [
            tool_turn(("ToolSearch", {"query": "tool_07", "max_results": 2})),
            tool_turn(("mcp__s1__tool_07", {"query": "x"})),
            text_turn("ok"),
        ]
    )
    try:
        _, finished = await agent_run(run, model, tmp_path)
    finally:
        await run.servers.aclose()
    assert offered(model, 0) == offered(model, 0)[:3]
    loaded = offered(model, 1)[3:]
    assert len(loaded) == 2 and all(n.endswith("tool_07") for n in loaded)
    assert finished[-1].result.text == "result of tool 7 for x"


async def test_resources_and_prompts(tmp_path: Path) -> None:
    run = run_with([stdio("basic", "basic")], tmp_path)
    list_tool, read_tool = run.tools[1], run.tools[2]
    ctx = ToolContext(cwd=tmp_path)
    try:
        listing = await list_tool.run({}, ctx)
        content = await read_tool.run({"server": "basic", "uri": "note://readme"}, ctx)
        named = await prompt_text(run.servers, "mcp__basic__review", "topic=the-diff tone=harsh")
        positional = await prompt_text(run.servers, "mcp__basic__review", "'the diff' sharp")
        last_takes_the_rest = await prompt_text(run.servers, "mcp__basic__review", "code very kind")
    finally:
        await run.servers.aclose()
    assert "note://readme" in str(listing)
    assert content[0].text == "resource text: hello from the server"  # type: ignore[union-attr,index]
    assert named == "Please review the-diff in a harsh tone."
    assert positional == "Please review the diff in a sharp tone."
    assert last_takes_the_rest == "Please review code in a very kind tone."


async def test_permission_hooks_see_mcp_calls_as_any_other(tmp_path: Path) -> None:
    class NoBasic(Hook):
        async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
            return Deny("no basic tools") if call.name.startswith("mcp__basic__") else ALLOW

    run = run_with([stdio("basic", "basic")], tmp_path)
    model = ScriptedModel(
        [
            tool_turn(("ToolSearch", {"query": "echo"})),
            tool_turn(("mcp__basic__echo", {"text": "hi"})),
            text_turn("ok"),
        ]
    )
    try:
        _, finished = await agent_run(run, model, tmp_path, hooks=(NoBasic(),))
    finally:
        await run.servers.aclose()
    assert finished[-1].result.is_error and "no basic tools" in finished[-1].result.text


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_http_and_legacy_sse_servers(
    tmp_path: Path, http_server: Callable[[str, str], str], transport: str
) -> None:
    url = await asyncio.to_thread(http_server, "basic", transport)
    run = run_with([ServerConfig("web", transport, url=url)], tmp_path)  # type: ignore[arg-type]
    run.servers.start()
    try:
        await run.servers.settle(CONNECT)
        tools = {t.name: t for t in run.hook.catalog.all_tools()}
        result = await tools["mcp__web__echo"].run({"text": "over " + transport}, ToolContext(cwd=tmp_path))
    finally:
        await run.servers.aclose()
    assert result[0].text == f"echo: over {transport}"  # type: ignore[index,union-attr]


async def test_a_sub_agent_given_a_list_of_tools_gets_no_mcp_tools_beside_them(tmp_path: Path) -> None:
    run = run_with([stdio("basic", "basic")], tmp_path)
    parent_script = ScriptedModel([text_turn("ready")])
    kid_script = ScriptedModel([text_turn("read it")])
    model = RoutedModel({"main": parent_script, "kid": kid_script})
    read = [t for t in builtin_tools() if t.name == "Read"]
    agent = Agent(model, tools=[*read, *run.tools], hooks=(run.hook,), cwd=tmp_path)
    try:
        await agent.run("warm up")  # the servers start once the first request is out
        for _ in range(600):
            if run.servers.connections["basic"].state == "connected":
                break
            await asyncio.sleep(0.1)
        child = agent.spawn("read the notes", label="kid", tools=["Read"])
        await child.wait()
        await agent.aclose()
    finally:
        await run.servers.aclose()
    assert [spec.name for spec in kid_script.requests[0].tools] == ["Read"]
