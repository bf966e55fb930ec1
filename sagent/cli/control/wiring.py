"""The control protocol in a headless run: the channel made at the start of a stream-json run, and, once
the agent is built, what answers the SDK's requests, the program as the agent's approver
(`--permission-prompt-tool stdio`), and the session-state records the SDK waits on."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING

from sagent.cli.control.channel import ControlChannel

if TYPE_CHECKING:
    from sagent.agent.agent import Agent


def open_channel(args: argparse.Namespace, stdout: IO[str], stderr: IO[str]) -> ControlChannel | None:
    """The run's control channel: every run that reads and writes stream-json has one (an SDK's program
    may send control requests on it); None for the others."""
    from sagent.cli.sdk_flags import sdk_run

    if not sdk_run(args):
        return None

    def report(line: str) -> None:
        stderr.write(f"sagent: warning: {line}\n")
        stderr.flush()

    return ControlChannel(stdout, on_error=report)


def attach(channel: ControlChannel, agent: Agent, args: argparse.Namespace, stderr: IO[str] | None = None) -> None:
    """Answer the SDK's requests about `agent`; with `--permission-prompt-tool stdio` the program approves
    what the policy asks about; and write session-state records when the SDK asked for them."""
    from sagent.cli.control.answers import Answers
    from sagent.cli.control.approver import SdkApprover
    from sagent.cli.control.session_state import SessionState

    stderr = stderr or sys.stderr
    approver = None
    if getattr(args, "permission_prompt_tool", None) == "stdio":
        approver = SdkApprover(channel, stderr)
        approver.refuse_all = bool(getattr(args, "refuse_unasked", False))
        agent.configure(approver=approver)
    host_only = SessionState.wanted()
    state = SessionState(channel.write, agent, host_only=host_only) if host_only is not None else None
    if state is not None:
        agent.add_sink(state)
    cwd = Path(agent.settings.cwd or ".")
    answers = Answers(agent, channel, approver, stderr)
    answers.compose_system = lambda text, more: _system(args, cwd, text, more)
    channel.attach(agent, answers, state)


def _system(args: argparse.Namespace, cwd: Path, text: str | None, more: str | None) -> str:
    """The system prompt the flags would make with `text` in place of --system-prompt (None: sagent's own)
    and `more` added to --append-system-prompt."""
    from sagent.cli.agent_setup import system_prompt

    appended = "\n\n".join(p for p in (args.append_system, more) if p)
    return system_prompt(args, cwd, text if text is not None else args.system, appended or None)
