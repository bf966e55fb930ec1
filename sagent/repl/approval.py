"""The REPL's answer to `Ask`: a question under the live area, one at a time, for the main agent and its
sub-agents alike (a sub-agent's question is labelled with its name).

Before asking, what the call will do goes to the scrollback: the full command, the diff of an edit or a
write, the URL, or the plan. Then:

    1 yes   2 yes, and don't ask again this session for <rule>   3 … in this project   4 (n) no, and say why

"In this project" writes the rule to `.sagent/settings.local.json` (`permissions.allow`). A refusal's
reason goes back to the model as the call's error. Shift+Tab cycles the permission mode; /permissions
shows the mode and the rules with where each came from, and changes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sagent.agent.hooks import ALLOW, Allow, Deny
from sagent.lib.realpaths import real_path
from sagent.lib.words import quantity
from sagent.permissions.modes import DESCRIPTIONS, MODES, PLAN_TOOL, next_mode, parse_mode
from sagent.permissions.policy import Permissions, set_mode
from sagent.permissions.rules import READING_TOOLS, Rule, RuleError, parse_rule
from sagent.permissions.suggest import remembered, suggest_rules
from sagent.repl import notify
from sagent.repl.commands import CommandError, command
from sagent.repl.tool_view import clip

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import Container

    from sagent.agent.agent import Agent
    from sagent.repl.host import ReplHost
    from sagent.types import ToolCall

PREVIEW_LINES = 60  # of a command, a file written or a plan, shown before the question


@dataclass
class Question:
    """The question on screen: whose call, what it asks, the rules "don't ask again" would add."""

    agent: Agent
    call: ToolCall
    reason: str
    rules: list[str]
    future: asyncio.Future[Allow | Deny]
    awaiting_reason: bool = False
    keys: dict[str, str] = field(default_factory=dict)  # key -> choice name

    @property
    def is_plan(self) -> bool:
        return self.call.name == PLAN_TOOL


class Approvals:
    """The REPL's approver (`AgentSettings.approver`): asks its user, one question at a time."""

    def __init__(self, repl: ReplHost) -> None:
        self.repl = repl
        self.lock = asyncio.Lock()
        self.current: Question | None = None
        self.session: list[Rule] = []
        """Rules the user allowed for this session ("yes, and don't ask again")."""

    async def __call__(self, agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        if self._remembered(agent, call):
            return ALLOW
        asking = self.repl.renderer.asking  # the live area shows the call as waiting, not running
        asking.add(call.id)
        try:
            answer = await self._ask(agent, call, reason)
        finally:
            asking.discard(call.id)
        mark = self.repl.renderer.c("green", "  ✓ approved") if isinstance(answer, Allow) else None
        self.repl.commit([mark or self.repl.renderer.c("red", f"  ✗ refused: {answer.reason}")])  # type: ignore[union-attr]
        return answer

    async def _ask(self, agent: Agent, call: ToolCall, reason: str) -> Allow | Deny:
        async with self.lock:
            if self._remembered(agent, call):  # answered while this call waited for its turn
                return ALLOW
            loop = asyncio.get_running_loop()
            question = Question(agent, call, reason, suggest_rules(agent, call), loop.create_future())
            question.keys = _keys(question)
            self.repl.commit(self._preview(question))
            self.current = question
            self.repl.refresh()
            notify.question_waits(self.repl, call)  # a terminal not focused is told; the Notification hooks run
            try:
                return await question.future
            finally:
                self.current = None
                self.repl.state.note = ""
                self.repl.refresh()

    def _remembered(self, agent: Agent, call: ToolCall) -> bool:
        return remembered(agent, call, self.session)

    # ------------------------------------------------------------------------------------ answers

    def press(self, key: str) -> None:
        """A key pressed while a question waits (1-4, y, n)."""
        question = self.current
        if question is None or question.future.done():
            return
        choice = question.keys.get(key)
        if choice is None:
            return
        if choice == "no":
            question.awaiting_reason = True
            self.repl.state.note = "Why not? Type it for the model and press Enter (Enter alone: no reason)"
            self.repl.refresh()
            return
        if question.is_plan:
            set_mode(question.agent, "acceptEdits" if choice == "accept" else "default", "the approved plan")
        elif choice in ("session", "project"):
            self._remember(question, project=choice == "project")
        question.future.set_result(ALLOW)

    def take_reason(self, text: str) -> bool:
        """Enter while a refusal waits for its reason: True when `text` was that reason."""
        question = self.current
        if question is None or not question.awaiting_reason or question.future.done():
            return False
        reason = " ".join(text.split())
        if question.is_plan:
            told = f"the user did not approve the plan: {reason}" if reason else "the user did not approve the plan"
            question.future.set_result(Deny(told + "; stay in plan mode and revise it"))
        else:
            question.future.set_result(Deny(f"the user said no: {reason}" if reason else "the user said no"))
        return True

    def _remember(self, question: Question, project: bool) -> None:
        cwd = str(question.agent.context.cwd)
        for text in question.rules:
            with contextlib.suppress(RuleError):
                self.session.append(parse_rule(text, "this session", cwd))
        if project:
            try:
                path = save_project_rules(Path(cwd), question.rules)
                self.repl.commit([self.repl.renderer.c("dim", f"  saved to {path}: {', '.join(question.rules)}")])
                if not _trusted(Path(cwd)):  # the file is read at the next start only in a trusted folder
                    note = "  this folder is not trusted: saved rules apply after `sagent trust`; kept for this session"
                    self.repl.commit([self.repl.renderer.c("yellow", note)])
            except (OSError, ValueError) as error:
                self.repl.commit([self.repl.renderer.c("yellow", f"  not saved ({error}); kept for this session")])

    # ----------------------------------------------------------------------------------- showing

    def _preview(self, question: Question) -> list[str]:
        r = self.repl.renderer
        call, agent = question.call, question.agent
        who = "" if agent is self.repl.agent else f"[{agent.label}] "
        if question.is_plan:
            plan = str(call.arguments.get("plan", "")).rstrip()
            lines = [r.c("bold", f"{who}Plan for approval:"), *_cut(plan.splitlines())]
            return ["\n".join(lines)]
        head = r.c("bold", f"{who}{call.name} asks for approval") + r.c("dim", f" · {question.reason}")
        return [f"{head}\n{describe(call, str(agent.context.cwd), r.diff)}"]

    def text(self) -> str:
        """The question's lines for the live area."""
        question = self.current
        if question is None:
            return ""
        r = self.repl.renderer
        who = "" if question.agent is self.repl.agent else f"[{question.agent.label}] "
        if question.awaiting_reason:
            return r.c("yellow", f"? {who}{question.call.name}: why not? (for the model)")
        title = "Approve this plan?" if question.is_plan else f"Allow {question.call.name}?"
        options = [f"{key} {label}" for key, label in _labels(question)]
        subject = "" if question.is_plan else call_text(question.call, r.settings.width - 4)
        lines = [r.c("yellow", f"? {who}{title}"), *([r.c("bold", f"  {subject}")] if subject else [])]
        return "\n".join(lines) + "\n  " + "\n  ".join(options)


def call_text(call: ToolCall, width: int) -> str:
    """The call a question decides, on one line of at most `width` cells: the command, the file, the URL,
    or the tool's key argument."""
    args = call.arguments
    if call.name == "Bash":
        text = "$ " + str(args.get("command", ""))
    elif call.name in ("Edit", "Write", "Read") and "path" in args:
        text = str(args["path"])
    elif call.name == "WebFetch":
        text = str(args.get("url", ""))
    else:
        key = next((v for v in args.values() if isinstance(v, str)), "")
        text = f"{call.name}({key})" if key else call.name
    return clip(text, max(width, 12))


def _keys(question: Question) -> dict[str, str]:
    names = [name for name, _ in _choices(question)]
    keys = {str(i + 1): name for i, name in enumerate(names)}
    keys["y"] = names[0]
    keys["n"] = "no"
    return keys


def _choices(question: Question) -> list[tuple[str, str]]:
    if question.is_plan:
        return [
            ("accept", "yes, and accept edits (acceptEdits mode)"),
            ("default", "yes, asking before each edit (default mode)"),
            ("no", "no, keep planning (n: say what to change)"),
        ]
    rules = ", ".join(question.rules)
    if not rules:  # nothing a rule could name safely (a line that cannot be split): ask each time
        return [("yes", "yes"), ("no", "no, and tell the model why (n)")]
    return [
        ("yes", "yes"),
        ("session", f"yes, and don't ask again this session for {rules}"),
        ("project", f"yes, and don't ask again in this project for {rules} (.sagent/settings.local.json)"),
        ("no", "no, and tell the model why (n)"),
    ]


def _labels(question: Question) -> list[tuple[str, str]]:
    return [(str(i + 1), label) for i, (_, label) in enumerate(_choices(question))]


def _cut(lines: list[str]) -> list[str]:
    if len(lines) <= PREVIEW_LINES:
        return ["  " + line for line in lines]
    return ["  " + line for line in lines[:PREVIEW_LINES]] + [
        f"  … {quantity(len(lines) - PREVIEW_LINES, 'more line')}"
    ]


def describe(call: ToolCall, cwd: str, diff: object) -> str:
    """What the call will do: the full command, the diff of an edit or write, the URL, or its arguments."""
    args = call.arguments
    render = diff if callable(diff) else None
    if call.name == "Bash":
        return "\n".join(_cut(("$ " + str(args.get("command", ""))).splitlines()))
    if call.name in ("Edit", "Write"):
        given = str(args.get("path", ""))
        path = real_path(given, cwd)  # the file the tool will really write, symlinks followed
        written = os.path.normpath(os.path.join(cwd, os.path.expanduser(given)))
        whole = call.name == "Write"
        if call.name == "Edit":
            old, new = str(args.get("old_string", "")), str(args.get("new_string", ""))
            old, new, whole = _edited_file(path, old, new, bool(args.get("replace_all")))
        else:
            try:
                old = Path(path).read_text(errors="replace")[:200_000]
            except OSError:
                old = ""
            new = str(args.get("content", ""))
        shown = render(old, new, numbered=whole) if render is not None else ""
        note = f" (written as {given})" if written != path else ""
        return (
            f"  {path}{note}"
            + (" (new file)" if call.name == "Write" and not old else "")
            + (f"\n{shown}" if shown else "")
        )
    if call.name == "WebFetch":
        return f"  {args.get('url', '')}"
    if call.name in READING_TOOLS:
        return "  " + ", ".join(f"{k}={v}" for k, v in args.items())
    text = json.dumps(args, ensure_ascii=False)
    return "  " + (text if len(text) <= 600 else text[:600] + " …")


def _edited_file(path: str, old: str, new: str, every: bool) -> tuple[str, str, bool]:
    """The file before and after an edit, so its preview shows the lines around the change with their
    numbers; the edit's own strings (and False) when the file cannot be read or does not hold `old`."""
    try:
        text = Path(path).read_text(errors="replace")[:200_000]
    except OSError:
        return old, new, False
    if not old or old not in text:
        return old, new, False
    return text, text.replace(old, new) if every else text.replace(old, new, 1), True


def _trusted(cwd: Path) -> bool:
    from sagent.cli.settings_files import project_root
    from sagent.cli.trust import is_trusted

    return is_trusted(project_root(cwd))


def save_project_rules(cwd: Path, rules: list[str]) -> Path:
    """Add `rules` to `permissions.allow` in the project's `.sagent/settings.local.json`; its path."""
    from sagent.cli.settings_files import project_root, read_file

    path = project_root(cwd) / ".sagent" / "settings.local.json"
    data = read_file(path) if path.exists() else None
    data = data if isinstance(data, dict) else {}
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise ValueError(f"{path}: permissions is not an object")
    allow = permissions.setdefault("allow", [])
    allow.extend(r for r in rules if r not in allow)
    from sagent.cli.config_set import write_settings

    write_settings(path, data)  # whole or not at all; kept out of git in a repository
    return path


# ---------------------------------------------------------------------------------------- wiring


def install(repl: ReplHost) -> Approvals:
    """Make the REPL its agent's approver (sub-agents and agents built by /clear inherit it)."""
    approvals = Approvals(repl)
    repl.agent.settings = dataclasses.replace(repl.agent.settings, approver=approvals)
    return approvals


def approvals_of(repl: ReplHost) -> Approvals | None:
    """The REPL's approver, when it asks through this module."""
    approver = repl.agent.settings.approver
    return approver if isinstance(approver, Approvals) else None


def cycle_mode(repl: ReplHost) -> None:
    """Shift+Tab: the main agent's next mode."""
    policy = repl.agent.settings.permissions
    if not isinstance(policy, Permissions):
        return
    mode = next_mode(policy.mode, include_bypass=policy.started_in_bypass)
    set_mode(repl.agent, mode, "Shift+Tab")
    repl.state.note = f"{mode}: {DESCRIPTIONS[mode]}"
    repl.refresh()


HOLD_S = 0.4
"""How long an answer key waits before it counts. The first letter of a message typed while a question
waits is followed by the next one sooner than that: it then goes into the message, answering nothing."""


class _HeldKey:
    """An answer key pressed on an empty input, waiting `HOLD_S` to be sure it is not the start of a message."""

    def __init__(self, repl: ReplHost, buffer: Buffer) -> None:
        self.repl, self.buffer = repl, buffer
        self.key: str | None = None
        self._question: Question | None = None  # the question the key was pressed for
        self._timer: asyncio.TimerHandle | None = None
        buffer.on_text_changed += self._typed

    def hold(self, key: str) -> None:
        if self.key is not None:  # a second key within the hold: both are typed text
            self._as_text(key)
            return
        self.key = key
        approvals = approvals_of(self.repl)
        self._question = approvals.current if approvals is not None else None
        try:
            self._timer = asyncio.get_running_loop().call_later(HOLD_S, self._answer)
        except RuntimeError:  # no loop (a test calling the key's function): it counts at once
            self._answer()

    def _answer(self) -> None:
        key, self.key = self.key, None
        approvals = approvals_of(self.repl)
        same = approvals is not None and approvals.current is self._question
        if key is not None and approvals is not None and same and not self.buffer.text:
            approvals.press(key)

    def _typed(self, _: object) -> None:
        if self.key is not None and self.buffer.text:
            self._as_text("")

    def _as_text(self, more: str) -> None:
        """The held key was the first letter of a message: it goes back in front of what followed it."""
        key, self.key = self.key, None
        if self._timer is not None:
            self._timer.cancel()
        text = (key or "") + more + self.buffer.text
        self.buffer.text = text
        self.buffer.cursor_position = len(text)


def add_keys(keys: KeyBindings, repl: ReplHost, buffer: Buffer) -> None:
    """The question's keys (while one waits and the input box is empty; each counts after `HOLD_S`, unless
    more typing follows it) and Shift+Tab."""
    from prompt_toolkit.filters import Condition

    held = _HeldKey(repl, buffer)

    def waiting() -> bool:
        approvals = approvals_of(repl)
        question = approvals.current if approvals is not None else None
        return question is not None and not question.awaiting_reason and not buffer.text

    for key in ("1", "2", "3", "4", "y", "n"):

        def answer(event: object, key: str = key) -> None:
            held.hold(key)

        keys.add(key, filter=Condition(waiting))(answer)

    @keys.add("s-tab")
    def _cycle(event: object) -> None:
        cycle_mode(repl)


def question_window(repl: ReplHost) -> Container:
    """The question, above the input box, while one waits."""
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.formatted_text import ANSI
    from prompt_toolkit.layout import ConditionalContainer, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    def text() -> ANSI:
        approvals = approvals_of(repl)
        return ANSI(approvals.text() if approvals is not None else "")

    def shown() -> bool:
        approvals = approvals_of(repl)
        return approvals is not None and approvals.current is not None

    return ConditionalContainer(
        Window(FormattedTextControl(text), wrap_lines=True, dont_extend_height=True), filter=Condition(shown)
    )


# -------------------------------------------------------------------------------------- /permissions


@command(
    "permissions", "the permission mode and rules; change the mode", "/permissions [MODE | allow RULE | deny RULE]"
)
def _permissions(repl: ReplHost, arg: str) -> list[str]:
    policy = repl.agent.settings.permissions
    if not isinstance(policy, Permissions):
        raise CommandError("this agent has no permission policy")
    word, _, rest = arg.partition(" ")
    if word in ("mode",):
        word, _, rest = rest.strip().partition(" ")
    if word and word not in ("allow", "deny"):
        try:
            mode = parse_mode(word)
        except ValueError as error:
            raise CommandError(str(error)) from None
        set_mode(repl.agent, mode, "/permissions")
        return [f"mode: {mode}: {DESCRIPTIONS[mode]}"]
    if word in ("allow", "deny"):
        try:
            rule = parse_rule(rest.strip(), "this session (/permissions)", str(repl.agent.context.cwd))
        except RuleError as error:
            raise CommandError(str(error)) from None
        changed = policy.with_rule("allow" if word == "allow" else "deny", rule)
        repl.agent.settings = dataclasses.replace(repl.agent.settings, permissions=changed)
        return [f"{word} {rule.text} for this session"]
    from sagent.sandbox.status import sandbox_lines

    lines = [*policy.describe(), *sandbox_lines(repl.agent.context.sandbox, repl.agent.context.roots)]
    approvals = approvals_of(repl)
    for rule in approvals.session if approvals is not None else ():
        lines.append(f"allow {rule.text}   (this session)")
    lines.append(repl.renderer.c("dim", f"modes: {', '.join(MODES)} — /permissions MODE, or Shift+Tab to cycle"))
    return lines
