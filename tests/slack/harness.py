"""The Slack service in the test's event loop, connected to a FakeSlack through the official clients."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from sagent.agent.agent import Agent
from sagent.agent.fleet import Fleet
from sagent.agent.session import SessionLog
from sagent.providers.base import Model
from sagent.providers.scripted import ScriptedModel, text_turn
from sagent.slack.api import SlackApi, socket_client
from sagent.slack.manifest import AgentRecord, SlackSession
from sagent.slack.personas import slack_role
from sagent.slack.service import ServiceConfig, SlackService
from sagent.tools.base import Tool
from sagent.types import AssistantMessage, ModelRequest, PeerMessage, UserMessage
from tests.fakes.slack_server import FakeSlack

_LABEL = re.compile(r'You are the agent "([^"]+)"')


def echo(request: ModelRequest) -> AssistantMessage:
    """An answer naming the agent and the last thing it was told."""
    found = _LABEL.search(request.system)
    label = found.group(1) if found else "?"
    last = request.messages[-1]
    heard = last.text if isinstance(last, UserMessage | PeerMessage) else "?"
    return text_turn(f"{label} heard: {heard}")


def echo_model() -> ScriptedModel:
    return ScriptedModel([echo] * 200)


async def until(check: Callable[[], Any], timeout: float = 20.0, describe: Callable[[], str] | None = None) -> Any:
    """Wait, without blocking the loop, until `check()` is truthy; its value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting; {describe()}" if describe else "timed out waiting")


@contextlib.asynccontextmanager
async def running(
    fake: FakeSlack,
    model: Model,
    root: Path,
    *,
    persona_dir: Path | None = None,
    session: SlackSession | None = None,
    router_log: str | None = "router-log",
    tools: Sequence[Tool] = (),
) -> AsyncIterator[SlackService]:
    """The service, started and connected; closed (agents kept in the manifest) on the way out."""
    api = SlackApi("xoxb-test", fake.url)
    me = await asyncio.to_thread(api.identity)
    session = session or SlackSession.new(root / "sessions")
    fleet = Fleet(models=lambda provider, name: model)

    def new(name: str, system: str) -> Agent:
        log = SessionLog.create(root, {"label": name}, directory=session.agents_dir)
        return Agent(
            model,
            system=system,
            label=name,
            role=slack_role(name),
            fleet=fleet,
            session=log,
            cwd=root,
            tools=tuple(tools),
        )

    def resume(record: AgentRecord, path: Path) -> Agent:
        return Agent.resume(
            path, model, system=record.system, label=record.name, role=slack_role(record.name), fleet=fleet, cwd=root
        )

    config = ServiceConfig(persona_dir=persona_dir, router_log_channel=router_log)
    service = SlackService(api, me, session, config, new, resume)
    await service.start()
    client = await asyncio.to_thread(socket_client, "xapp-test", api, service.feed, 0.2)
    serving = asyncio.create_task(service.serve())
    try:
        yield service
    finally:
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        await asyncio.to_thread(client.close)
        await service.aclose()


def replies(fake: FakeSlack, thread_ts: str, username: str | None = None) -> list[str]:
    """The latest text of each message posted in the thread `thread_ts` (by `username`, when given)."""
    latest = {u["ts"]: u["text"] for u in fake.updates}
    return [
        latest.get(p["ts"], p["text"])
        for p in fake.posted
        if p.get("thread_ts") == thread_ts and (username is None or p.get("username") == username)
    ]


async def answer(fake: FakeSlack, thread_ts: str, username: str, contains: str) -> str:
    """Wait for `username`'s message in the thread that contains `contains`."""
    found = await until(
        lambda: [t for t in replies(fake, thread_ts, username) if contains in t],
        describe=lambda: f"calls {[m for m, _ in fake.calls]}, posted {fake.posted}",
    )
    return str(found[0])
