"""In-process MCP servers of a Claude Agent SDK application (`create_sdk_mcp_server`, `"type": "sdk"` in
`--mcp-config`): sagent's MCP client reaches them with `mcp_message` control requests, and their tools join
the run as any MCP server's do (`mcp__server__tool`, offered from the first request of a headless run).

The SDK's side is the SDK itself: its `@tool` functions in a server made by `create_sdk_mcp_server`, served
by the bridge its query uses for `mcp_message` requests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import create_sdk_mcp_server, tool
from claude_agent_sdk._internal.sdk_mcp_bridge import SdkMcpBridge

from sagent.agent.agent import Agent
from sagent.cli.control.requester import ControlError
from sagent.cli.control.sdk_mcp import attach_sdk_servers, sdk_server_configs
from sagent.events import ToolFinished
from sagent.mcp.setup import McpRun, mcp_run
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from tests.sdk.fake_requester import FakeRequester

added: list[tuple[float, float]] = []


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    added.append((args["a"], args["b"]))
    return {"content": [{"type": "text", "text": f"{args['a'] + args['b']:g}"}]}


@tool("divide", "Divide a by b", {"a": float, "b": float})
async def divide(args: dict[str, Any]) -> dict[str, Any]:
    if args["b"] == 0:
        return {"content": [{"type": "text", "text": "cannot divide by zero"}], "is_error": True}
    return {"content": [{"type": "text", "text": f"{args['a'] / args['b']:g}"}]}


class SdkSide:
    """The SDK application's process as the control protocol shows it: its servers by name, each behind
    the bridge the SDK's query serves `mcp_message` requests with."""

    def __init__(self, **servers: Any) -> None:
        self.bridges = {name: SdkMcpBridge(name, config["instance"]) for name, config in servers.items()}
        self.requester = FakeRequester(self.answer)

    async def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        assert request["subtype"] == "mcp_message"
        bridge = self.bridges.get(request["server_name"])
        if bridge is None:
            message = {"code": -32601, "message": f"Server '{request['server_name']}' not found"}
            return {"mcp_response": {"jsonrpc": "2.0", "id": request["message"].get("id"), "error": message}}
        reply = await bridge.handle(request["message"])
        return {"mcp_response": reply if reply is not None else {"jsonrpc": "2.0", "result": {}}}

    def methods(self) -> list[str]:
        return [r["message"].get("method", "") for r in self.requester.of("mcp_message")]

    async def aclose(self) -> None:
        for bridge in self.bridges.values():
            await bridge.aclose()


def calc() -> dict[str, Any]:
    return dict(create_sdk_mcp_server("calc", tools=[add, divide]))


async def run_agent(run: McpRun, model: ScriptedModel, tmp_path: Path) -> list[ToolFinished]:
    agent = Agent(model, tools=list(run.tools), hooks=(run.hook,), cwd=tmp_path)
    try:
        return [e async for e in agent.run("go") if isinstance(e, ToolFinished)]
    finally:
        await agent.aclose()
        await run.servers.aclose()


def test_the_sdk_entries_of_an_mcp_config_become_servers_reached_over_the_control_protocol() -> None:
    requester = FakeRequester(lambda r: {})
    servers = {
        "calc": {"type": "sdk", "name": "calc"},
        "files": {"command": "files-server"},  # not the SDK's: the ordinary configuration reads it
    }
    [config] = sdk_server_configs(servers, requester)
    assert config.name == "calc" and config.transport == "sdk"
    assert "SDK" in config.describe()
    assert requester.requests == []  # nothing is asked before the servers start


@pytest.mark.parametrize(
    ("servers", "named"),
    [
        ({"calc": "sdk"}, "mcpServers.calc"),
        ({"bad name!": {"type": "sdk", "name": "bad name!"}}, "mcpServers.bad name!"),
        ({"calc": {"type": "sdk", "name": 3}}, "mcpServers.calc.name"),
    ],
)
def test_a_bad_sdk_entry_is_an_error_naming_the_key(servers: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named.replace(".", r"\.").replace("!", "!")):
        sdk_server_configs(servers, FakeRequester(lambda r: {}))


async def test_an_sdk_tool_is_offered_from_the_first_request_and_called_through_the_control_protocol(
    tmp_path: Path,
) -> None:
    sdk = SdkSide(calc=calc())
    run = mcp_run(
        sdk_server_configs({"calc": {"type": "sdk", "name": "calc"}}, sdk.requester), tmp_path, wait_first=True
    )
    assert run is not None
    model = ScriptedModel(
        [
            tool_turn(("mcp__calc__add", {"a": 2, "b": 40}), ("mcp__calc__divide", {"a": 1, "b": 0})),
            text_turn("42"),
        ]
    )
    added.clear()
    try:
        finished = await run_agent(run, model, tmp_path)
    finally:
        await sdk.aclose()
    assert {"mcp__calc__add", "mcp__calc__divide"} <= {t.name for t in model.requests[0].tools}
    results = {f.result.name: f.result for f in finished}
    assert results["mcp__calc__add"].text == "42" and not results["mcp__calc__add"].is_error
    assert results["mcp__calc__divide"].is_error and "cannot divide by zero" in results["mcp__calc__divide"].text
    assert added == [(2, 40)]
    methods = sdk.methods()
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/list"]
    assert methods.count("tools/call") == 2
    assert all(r["server_name"] == "calc" for r in sdk.requester.requests)
    call = next(r["message"] for r in sdk.requester.requests if r["message"].get("method") == "tools/call")
    assert call["jsonrpc"] == "2.0" and call["params"]["name"] in ("add", "divide")
    assert json.dumps(sdk.requester.requests)  # every request is plain JSON, as the wire needs


async def test_a_server_the_sdk_does_not_have_fails_with_its_reason_and_the_run_goes_on(tmp_path: Path) -> None:
    sdk = SdkSide()  # the application passed no server of that name
    report: list[str] = []
    configs = sdk_server_configs({"ghost": {"type": "sdk", "name": "ghost"}}, sdk.requester)
    run = mcp_run(configs, tmp_path, report.append, wait_first=True)
    assert run is not None
    model = ScriptedModel([tool_turn(("mcp__ghost__boo", {})), text_turn("done")])
    finished = await run_agent(run, model, tmp_path)
    assert any("ghost" in line and "not found" in line for line in report), report
    assert finished[0].result.is_error


async def test_a_control_error_fails_the_call_instead_of_hanging(tmp_path: Path) -> None:
    sdk = SdkSide(calc=calc())
    calls = 0

    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        nonlocal calls
        if request["message"].get("method") == "tools/call":
            calls += 1
            raise ControlError("the SDK's process closed its end")
        return await sdk.answer(request)

    requester = FakeRequester(answer)
    run = mcp_run(sdk_server_configs({"calc": {"type": "sdk", "name": "calc"}}, requester), tmp_path, wait_first=True)
    assert run is not None
    model = ScriptedModel([tool_turn(("mcp__calc__add", {"a": 1, "b": 2})), text_turn("done")])
    try:
        finished = await run_agent(run, model, tmp_path)
    finally:
        await sdk.aclose()
    result = finished[0].result
    assert calls == 1 and result.is_error and "the SDK's process closed its end" in result.text


async def test_a_slow_sdk_tool_does_not_hold_up_the_next_call(tmp_path: Path) -> None:
    import asyncio

    released = asyncio.Event()

    @tool("wait", "Wait until released", {})
    async def wait(args: dict[str, Any]) -> dict[str, Any]:
        await asyncio.wait_for(released.wait(), 30)
        return {"content": [{"type": "text", "text": "released"}]}

    @tool("release", "Release the waiting call", {})
    async def release(args: dict[str, Any]) -> dict[str, Any]:
        released.set()
        return {"content": [{"type": "text", "text": "let go"}]}

    sdk = SdkSide(gate=dict(create_sdk_mcp_server("gate", tools=[wait, release])))
    run = mcp_run(
        sdk_server_configs({"gate": {"type": "sdk", "name": "gate"}}, sdk.requester), tmp_path, wait_first=True
    )
    assert run is not None
    model = ScriptedModel([tool_turn(("mcp__gate__wait", {}), ("mcp__gate__release", {})), text_turn("done")])
    try:
        finished = await run_agent(run, model, tmp_path)
    finally:
        await sdk.aclose()
    assert sorted(f.result.text for f in finished) == ["let go", "released"]
    assert not any(f.result.is_error for f in finished)


# ------------------------------------------------------- servers named in initialize (the TypeScript SDK)


async def test_servers_named_in_initialize_join_an_agent_that_has_no_mcp_yet(tmp_path: Path) -> None:
    sdk = SdkSide(calc=calc())
    model = ScriptedModel([tool_turn(("mcp__calc__add", {"a": 1, "b": 2})), text_turn("3")])
    agent = Agent(model, cwd=tmp_path)
    report: list[str] = []
    servers = attach_sdk_servers(agent, ["calc"], sdk.requester, report.append)
    assert servers is not None and list(servers.connections) == ["calc"]
    added.clear()
    try:
        finished = [e async for e in agent.run("go") if isinstance(e, ToolFinished)]
    finally:
        await agent.aclose()
        await servers.aclose()
        await sdk.aclose()
    assert "mcp__calc__add" in {t.name for t in model.requests[0].tools}  # from the first request on
    assert [f.result.text for f in finished] == ["3"] and added == [(1, 2)]
    assert report == []


async def test_servers_named_in_initialize_join_the_runs_other_servers(tmp_path: Path) -> None:
    sdk = SdkSide(calc=calc(), gate=dict(create_sdk_mcp_server("gate", tools=[add])))
    run = mcp_run(
        sdk_server_configs({"calc": {"type": "sdk", "name": "calc"}}, sdk.requester), tmp_path, wait_first=True
    )
    assert run is not None
    model = ScriptedModel(
        [tool_turn(("mcp__calc__add", {"a": 1, "b": 2}), ("mcp__gate__add", {"a": 3, "b": 4})), text_turn("ok")]
    )
    agent = Agent(model, tools=list(run.tools), hooks=(run.hook,), cwd=tmp_path)
    assert attach_sdk_servers(agent, ["gate", "calc"], sdk.requester) is None  # closed with the run's servers
    assert list(run.servers.connections) == ["calc", "gate"]  # calc is not added twice
    assert "(calc, gate)" in agent.tools["ToolSearch"].description
    try:
        finished = [e async for e in agent.run("go") if isinstance(e, ToolFinished)]
    finally:
        await agent.aclose()
        await run.servers.aclose()
        await sdk.aclose()
    assert sorted(f.result.text for f in finished) == ["3", "7"]
    assert {"mcp__calc__add", "mcp__gate__add"} <= {t.name for t in model.requests[0].tools}


def test_a_bad_server_name_in_initialize_is_an_error() -> None:
    agent = Agent(ScriptedModel([]))
    with pytest.raises(ValueError, match="sdkMcpServers"):
        attach_sdk_servers(agent, ["no spaces please"], FakeRequester(lambda r: {}))
    with pytest.raises(ValueError, match="sdkMcpServers"):
        attach_sdk_servers(agent, "calc", FakeRequester(lambda r: {}))
