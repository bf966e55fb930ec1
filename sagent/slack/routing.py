"""Where a Slack event goes: a pure function of the event and what the service knows, in a fixed order.

The order (see docs/slack.md): a reaction goes to the owner of the reacted-to agent message; a message in
an agent's log channel goes to that agent; a message starting with an active agent's name goes to it
(case-insensitive); a thread reply goes to the agent that owns the thread; a command (by mention or DM)
goes to the router; with exactly one active agent, an ordinary message goes to it; otherwise the router
answers with the active agents or how to create one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from sagent.slack.commands import parse_command

Rule = Literal["reaction", "log-channel", "name", "thread", "command", "only-agent", "router"]


@dataclass(frozen=True, slots=True)
class Incoming:
    """One Slack event, reduced to what routing needs: a message, or a reaction to a message."""

    channel: str
    user: str
    text: str = ""
    ts: str = ""
    thread_ts: str | None = None  # set on a reply in a thread (not on the thread's first message)
    direct: bool = False  # a DM to the bot, or a message that mentions it
    reaction: str | None = None  # the emoji name, for a reaction
    item_ts: str | None = None  # the reacted-to message, for a reaction


@dataclass
class Directory:
    """What routing knows: the active agents, their log channels, the threads and messages they own."""

    active: list[str] = field(default_factory=list)
    log_channels: dict[str, str] = field(default_factory=dict)  # channel id -> agent
    threads: dict[str, str] = field(default_factory=dict)  # "channel/thread_ts" -> agent
    messages: dict[str, str] = field(default_factory=dict)  # "channel/ts" -> agent (what it posted)

    def owner(self, table: dict[str, str], channel: str, ts: str | None) -> str | None:
        """The active agent `table` names for (channel, ts), or None."""
        name = table.get(f"{channel}/{ts}") if ts else None
        return name if name in self.active else None


@dataclass(frozen=True, slots=True)
class Route:
    """Where an event goes (`agent`, or None for the router), by which rule, with the text to hand on."""

    agent: str | None
    rule: Rule
    text: str


def route(event: Incoming, known: Directory) -> Route | None:
    """The route of `event`, or None when it goes nowhere (a reaction to a message no agent owns)."""
    if event.reaction is not None:
        owner = known.owner(known.messages, event.channel, event.item_ts)
        return Route(owner, "reaction", f":{event.reaction}:") if owner else None
    text = event.text.strip()
    log_owner = known.log_channels.get(event.channel)
    if log_owner is not None and log_owner in known.active:
        return Route(log_owner, "log-channel", text)
    named = _named(text, known.active)
    if named is not None:
        return Route(named, "name", text)
    if event.thread_ts is not None:
        owner = known.owner(known.threads, event.channel, event.thread_ts)
        if owner is not None:
            return Route(owner, "thread", text)
    if event.direct and parse_command(text) is not None:
        return Route(None, "command", text)
    if len(known.active) == 1:
        return Route(known.active[0], "only-agent", text)
    return Route(None, "router", text)


def _named(text: str, active: list[str]) -> str | None:
    """The active agent whose name starts `text` as a whole word (the longest, when names overlap)."""
    lowered = text.lower()
    for name in sorted(active, key=len, reverse=True):
        if lowered.startswith(name.lower()) and not re.match(r"[\w-]", lowered[len(name) : len(name) + 1]):
            return name
    return None


MENTION = re.compile(r"^\s*<@([A-Z0-9]+)(?:\|[^>]*)?>[\s:,]*")


def strip_mention(text: str, bot_user: str) -> tuple[str, bool]:
    """`text` without a leading mention of the bot, and whether there was one."""
    match = MENTION.match(text)
    if match is None or match.group(1) != bot_user:
        return text, False
    return text[match.end() :], True
