"""The Slack service: events in from Socket Mode, routed to persistent agents or the router, and the
agents' work mirrored back; the agents, threads and logs kept in a session directory for `--continue`.

All agents share one fleet, so they can AgentSend each other (and spawn sub-agents) as anywhere else.
Each Slack event is handled once, in the order it came: Slack sends an envelope again when its
acknowledgement was not seen (a dropped connection), and the repeat is recognised by its event id.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.slack.api import Identity, SlackApi
from sagent.slack.commands import HELP, parse_command
from sagent.slack.manifest import AgentRecord, SlackSession
from sagent.slack.mirror import Mirror, Target
from sagent.slack.personas import persona_system
from sagent.slack.routing import Directory, Incoming, Route, route, strip_mention
from sagent.types import UserMessage

if TYPE_CHECKING:
    from sagent.agent.agent import Agent

ROUTER = "sagent"  # the name the router posts under
REMEMBERED_EVENTS = 5000  # event ids kept to recognise a repeat
_TAKEN_SUBTYPES = (None, "thread_broadcast", "file_share")  # edits, deletions, joins are not prompts


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    """The service's own settings (the agents' come from the shared flags, through the agent maker)."""

    persona_dir: Path | None = None
    log_prefix: str = "sagent-"
    router_log_channel: str | None = "router-log"


NewAgent = Callable[[str, str], "Agent"]
"""Builds a new agent from its name and system prompt, logging into the session's `agents/` folder."""
ResumeAgent = Callable[[AgentRecord, Path], "Agent"]
"""Rebuilds an agent of a continued session from its record and its session log."""


@dataclass
class _Slot:
    record: AgentRecord
    agent: Agent
    mirror: Mirror
    task: asyncio.Task[None]


class SlackService:
    """Routes a workspace's Slack events to persistent agents and mirrors their work back."""

    def __init__(
        self,
        api: SlackApi,
        me: Identity,
        session: SlackSession,
        config: ServiceConfig,
        new_agent: NewAgent,
        resume_agent: ResumeAgent | None = None,
    ) -> None:
        self.api = api
        self.me = me
        self.session = session
        self.config = config
        self.known = Directory(threads=session.manifest.threads, messages=session.manifest.messages)
        self.slots: dict[str, _Slot] = {}
        self._new_agent = new_agent
        self._resume_agent = resume_agent
        self._events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._router_log: str | None = None
        self._background: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------------ events in

    def feed(self, payload: dict[str, Any]) -> None:
        """Hand over one Events API payload; safe to call from any thread once `run` has started."""
        assert self._loop is not None, "the service is not running"
        self._loop.call_soon_threadsafe(self._events.put_nowait, payload)

    async def start(self) -> None:
        """Restore the session's agents and open the router log channel; then `feed` may be called."""
        self._loop = asyncio.get_running_loop()
        if self.config.router_log_channel:
            self._router_log = await self.api.channel(self.config.router_log_channel)
        for record in list(self.session.manifest.agents):
            if record.active and self._resume_agent is not None:
                agent = self._resume_agent(record, self.session.directory / record.log)
                await self._adopt(record, agent)

    async def serve(self) -> None:
        """Handle events, one at a time in order, until cancelled."""
        while True:
            payload = await self._events.get()
            try:
                await self.handle(payload)
            except Exception as error:  # one bad event must not end the service
                sys.stderr.write(f"sagent-slack: an event could not be handled: {type(error).__name__}: {error}\n")

    async def handle(self, payload: dict[str, Any]) -> None:
        """Route one Events API payload (a repeat of one already handled is ignored)."""
        if not self._first_time(str(payload.get("event_id", ""))):
            return
        event = payload.get("event") or {}
        incoming = self._incoming(event)
        if incoming is None:
            return
        decision = route(incoming, self.known)
        if decision is None:
            return
        if decision.agent is not None:
            self._deliver(decision.agent, incoming, decision)
        else:
            await self._router(incoming, decision)
        self._log_route(incoming, decision)

    def _first_time(self, key: str) -> bool:
        if not key:
            return True
        if key in self._seen:
            return False
        self._seen[key] = None
        while len(self._seen) > REMEMBERED_EVENTS:
            self._seen.popitem(last=False)
        return True

    def _incoming(self, event: dict[str, Any]) -> Incoming | None:
        """The event as routing sees it, or None for what is ignored: the bot's own posts, edits and
        deletions, and other bots' messages that no sagent-managed agent sent."""
        kind = event.get("type")
        user = str(event.get("user") or "")
        if kind == "reaction_added":
            item = event.get("item") or {}
            if user == self.me.user_id or item.get("type") != "message":
                return None
            return Incoming(
                str(item.get("channel")), user, reaction=str(event.get("reaction")), item_ts=str(item.get("ts"))
            )
        if kind not in ("message", "app_mention") or event.get("subtype") not in (
            None,
            "thread_broadcast",
            "file_share",
        ):
            return None
        if user == self.me.user_id or (event.get("bot_id") and event.get("bot_id") == self.me.bot_id):
            return None
        if event.get("bot_id") or event.get("subtype") == "bot_message":
            agent = _sagent_agent(event)
            if agent is None:
                return None
            user = f"agent {agent}"
        channel, ts = str(event.get("channel")), str(event.get("ts"))
        if not self._first_time(f"{channel}/{ts}"):  # a mention arrives as app_mention and as message
            return None
        text, mentioned = strip_mention(str(event.get("text") or ""), self.me.user_id)
        thread = event.get("thread_ts")
        return Incoming(
            channel,
            user,
            text,
            ts,
            str(thread) if thread and thread != ts else None,
            direct=mentioned or kind == "app_mention" or event.get("channel_type") == "im",
        )

    # ------------------------------------------------------------------ to an agent

    def _deliver(self, name: str, incoming: Incoming, decision: Route) -> None:
        slot = self.slots[name]
        if incoming.reaction is not None:
            target = slot.mirror.target or Target(incoming.channel, incoming.item_ts or "")
            text = f"<@{incoming.user}> reacted {decision.text} to your message {incoming.item_ts}"
        else:
            target = Target(incoming.channel, incoming.thread_ts or incoming.ts)
            who = incoming.user if incoming.user.startswith("agent ") else f"<@{incoming.user}>"
            text = f"{who} in <#{incoming.channel}>: {decision.text}"
            key = f"{target.channel}/{target.thread_ts}"
            if self.known.owner(self.known.threads, target.channel, target.thread_ts) is None:
                self.known.threads[key] = name  # the first agent to answer in a thread owns it
                self.session.save()
        slot.mirror.answer_to(target)
        slot.mirror.starting()
        slot.agent.send(UserMessage.of(text))

    # ------------------------------------------------------------------ the router

    async def _router(self, incoming: Incoming, decision: Route) -> None:
        command = parse_command(decision.text) if decision.rule == "command" else None
        if command is None:
            reply = self._who_is_here()
        elif command.verb == "help":
            reply = HELP
        elif command.verb == "list":
            reply = self._list()
        elif command.verb == "create":
            reply = (
                await self.create(command.persona, command.name)
                if command.name
                else ("Say `create <persona>` or `create <persona> as <name>` (one word each).")
            )
        else:
            reply = await self.stop(command.name) if command.name else "Say `stop <name>`."
        await self.api.post(incoming.channel, reply, thread_ts=incoming.thread_ts or incoming.ts, username=ROUTER)

    def _who_is_here(self) -> str:
        if not self.known.active:
            return "No agents are running. Mention me with `create <persona>` to start one (`help` for more)."
        names = ", ".join(f"`{n}`" for n in self.known.active)
        return f"Active agents: {names}. Start your message with an agent's name, or reply in its thread."

    def _list(self) -> str:
        if not self.slots:
            return "No agents are running. `create <persona>` starts one."
        lines = []
        for name, slot in self.slots.items():
            state = "working" if slot.agent.running else "idle"
            cost = slot.agent.cost.total_usd
            lines.append(f"• `{name}` (persona {slot.record.persona}): {state}, ${cost:.4f}")
        return "\n".join(lines)

    async def create(self, persona: str, name: str) -> str:
        """Start agent `name` from `persona`; the router's reply."""
        if name in self.slots:
            return f"`{name}` is already running; choose another name with `create {persona} as <name>`."
        if name.lower() in (ROUTER, "user") or name.lower() in (n.lower() for n in self.slots):
            return f"`{name}` cannot be used as an agent's name; choose another."
        system, source = persona_system(persona, self.config.persona_dir)
        try:
            agent = self._new_agent(name, system)
        except Exception as error:
            return f"cannot create `{name}`: {error}"
        log = agent.session.path
        relative = str(log.relative_to(self.session.directory)) if log is not None else ""
        record = AgentRecord(name, persona, system, relative)
        self.session.manifest.agents.append(record)
        log_channel = await self._adopt(record, agent)
        self.session.save()
        where = f"; its log is <#{log_channel}>" if log_channel else ""
        return (
            f"Created `{name}` from persona `{persona}` ({source}){where}. Start a message with `{name}` to talk to it."
        )

    async def stop(self, name: str) -> str:
        """Stop agent `name`; the router's reply."""
        slot = self.slots.pop(name, None)
        if slot is None:
            return f"No agent is called `{name}`. {self._who_is_here()}"
        self.known.active.remove(name)
        slot.record.active = False
        self.session.save()
        await self._close(slot)
        return f"Stopped `{name}`."

    async def _adopt(self, record: AgentRecord, agent: Agent) -> str | None:
        """Mirror and drive `agent`; its log channel's id."""
        log_channel = await self.api.channel(f"{self.config.log_prefix}{record.name}-log")
        if log_channel is not None:
            self.known.log_channels[log_channel] = record.name
        mirror = Mirror(record.name, self.api, log_channel, self._owned(record.name))
        agent.add_sink(mirror)
        task = asyncio.create_task(_drive(agent), name=f"sagent slack agent {record.name}")
        self.slots[record.name] = _Slot(record, agent, mirror, task)
        self.known.active.append(record.name)
        return log_channel

    def _owned(self, name: str) -> Callable[[str, str], None]:
        def owned(channel: str, ts: str) -> None:
            self.known.messages[f"{channel}/{ts}"] = name
            while len(self.known.messages) > REMEMBERED_EVENTS:
                self.known.messages.pop(next(iter(self.known.messages)))

        return owned

    def _log_route(self, incoming: Incoming, decision: Route) -> None:
        if self._router_log is None:
            return
        to = f"`{decision.agent}`" if decision.agent else "the router"
        who = incoming.user if incoming.user.startswith("agent ") else f"<@{incoming.user}>"
        line = f"{decision.rule}: {who} in <#{incoming.channel}> → {to}"
        task = asyncio.create_task(self.api.post(self._router_log, line, username=ROUTER))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # ------------------------------------------------------------------ shutting down

    async def aclose(self) -> None:
        """Stop every agent (the manifest keeps them active, for `--continue`) and post what is queued."""
        for slot in list(self.slots.values()):
            await self._close(slot)
        self.slots.clear()
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        self.session.save()

    async def _close(self, slot: _Slot) -> None:
        slot.agent.quit()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await slot.task
        await slot.agent.aclose(keep_model=True)
        await slot.mirror.aclose()


async def _drive(agent: Agent) -> None:
    """Run the agent each time input arrives, until it is stopped."""
    try:
        while await agent.wait_for_input():
            async for _ in agent.run():
                pass
    except Exception as error:
        sys.stderr.write(f"sagent-slack: {agent.label} failed: {type(error).__name__}: {error}\n")


def _sagent_agent(event: dict[str, Any]) -> str | None:
    """The agent a bot message says it is from (its `sagent_agent` metadata), or None."""
    metadata = event.get("metadata") or {}
    if metadata.get("event_type") != "sagent_agent":
        return None
    agent = (metadata.get("event_payload") or {}).get("agent")
    return str(agent) if agent else None
