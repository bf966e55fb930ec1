"""sagent's custom commands (`sagent.custom_commands`: `/review FILE` from .sagent/commands/ and the
user's) as the editor's slash commands: offered with `available_commands_update`, and a prompt that
starts with one run as `sagent -p` runs it (its prompt, its allowed tools, its model)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagent.types import UserMessage

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


def available_commands(cwd: Path) -> list[Any]:
    """The commands in reach from `cwd`, as the protocol offers them."""
    from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

    from sagent.skill_commands import load_prompt_commands

    found, _ = load_prompt_commands(cwd)  # the skills too
    return [
        AvailableCommand(
            name=name,
            description=command.summary(),
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=command.argument_hint))
            if command.argument_hint
            else None,
        )
        for name, command in found.items()
    ]


def expanded(agent: Agent, message: UserMessage) -> tuple[UserMessage, Callable[[], None] | None]:
    """The prompt a custom command `/name args` stands for, and what undoes its tools and model after the
    turn; the message unchanged (nothing to undo) when it names none. ValueError for a command that
    cannot run (a broken file, a model that cannot be had)."""
    text = message.text
    if not text.startswith("/"):
        return message, None
    from sagent.agent.fleet import FleetError
    from sagent.custom_commands import CustomCommandError, apply_command, expand_input
    from sagent.providers.base import ProviderError
    from sagent.skill_commands import load_prompt_commands

    found, broken = load_prompt_commands(agent.context.cwd)  # the skills too
    name = text[1:].split(None, 1)[0] if text[1:].strip() else ""
    if name in broken:
        raise ValueError(broken[name])
    expansion = expand_input(text, found)
    if expansion is None:
        return message, None
    try:
        undo = apply_command(agent, expansion)
    except (CustomCommandError, FleetError, ProviderError) as error:
        raise ValueError(getattr(error, "message", None) or str(error)) from None
    return UserMessage.of(expansion.prompt), undo
