"""The router's commands, said to the bot by mention or DM: help, list, create, stop."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Verb = Literal["help", "list", "create", "stop"]

HELP = """\
I run sagent agents in this workspace. Say to me (mention me, or DM me):
• `help`: this text
• `list`: the active agents
• `create <persona> [as <name>]`: start an agent from the persona `<persona>.md` (else `default.md`)
• `stop <name>`: stop an agent
Talk to an agent by starting a message with its name, or reply in its thread; with one agent, any message
goes to it. Each agent writes its tool calls and costs to its own log channel."""

_NAME = r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}"
_CREATE = re.compile(rf"^create\s+({_NAME})(?:\s+as\s+({_NAME}))?\s*$", re.IGNORECASE)
_STOP = re.compile(rf"^stop\s+({_NAME})\s*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Command:
    """A parsed command: `create` has a persona and a name; `stop` a name."""

    verb: Verb
    persona: str = ""
    name: str = ""


def parse_command(text: str) -> Command | None:
    """The command `text` says, or None when its first word is not a command (a malformed `create` or
    `stop` is still that command, with no name: the router says how to write it)."""
    text = text.strip()
    word = text.split(maxsplit=1)[0].lower() if text else ""
    if word in ("help", "list") and text.lower() == word:
        return Command(word)  # type: ignore[arg-type]
    if word == "create":
        match = _CREATE.match(text)
        if match is None:
            return Command("create")
        persona = match.group(1)
        return Command("create", persona=persona, name=match.group(2) or persona)
    if word == "stop":
        match = _STOP.match(text)
        return Command("stop", name=match.group(1) if match else "")
    return None
