"""From the agent's events to what the REPL shows: committed blocks for the scrollback, and a small live region.

The renderer is pure (events in, ANSI text out), so it is tested on recorded event streams without a
terminal. Text streams into the live region; each paragraph is committed (as Markdown, with highlighted
code) once a blank line outside a code fence closes it, so the live region stays a few lines tall and a
redraw only repaints what is still changing. Tool calls are one line each: running in the live region,
then committed with their status, duration and a summary of the result; edits commit as a coloured diff.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import Any, Literal, assert_never

from sagent.attachments import attachment_labels, typed_text
from sagent.events import (
    AdvisorConsulted,
    Compacted,
    ContextPruned,
    ErrorEvent,
    Event,
    HookNotice,
    MessageAdded,
    ModelSwitched,
    Result,
    Retrying,
    Rewound,
    SessionStarted,
    SmallModelCall,
    TaskListChanged,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolFinished,
    ToolResultsCleared,
    ToolStarted,
    TurnFinished,
)
from sagent.lib.words import plural, quantity
from sagent.repl import tool_view
from sagent.types import AssistantMessage, Message, PeerMessage, ThinkingPart, ToolCall, ToolResult, UserMessage

ThinkingDisplay = Literal["show", "collapse"]

# SGR codes; with colour off every one of them is the empty string.
_CODES = {
    "dim": "\x1b[2m",
    "bold": "\x1b[1m",
    "red": "\x1b[31m",
    "green": "\x1b[32m",
    "yellow": "\x1b[33m",
    "blue": "\x1b[34m",
    "cyan": "\x1b[36m",
    "reset": "\x1b[0m",
}
_FENCE = re.compile(r"^\s*(```|~~~)")
_KEY_ARGS = ("path", "file_path", "pattern", "command", "url", "query", "label", "prompt")


@dataclass
class Settings:
    width: int = 100
    color: bool = True
    thinking: ThinkingDisplay = "show"
    markdown: bool = True
    expand_tools: bool = False  # Ctrl+O: each tool call's whole output is printed under its line


@dataclass
class _Running:
    call: ToolCall
    line: str


@dataclass
class Renderer:
    settings: Settings = field(default_factory=Settings)
    text: str = ""  # the paragraph streaming now, not committed yet
    thinking: str = ""
    running: dict[str, _Running] = field(default_factory=dict)
    asking: set[str] = field(default_factory=set)  # running calls that wait for the user's approval
    status: str = ""  # a transient note (retrying...) shown in the live region
    turn_start_usd: float = 0.0  # the session's spend when the current turn began (for the turn's footer)
    _calls: dict[str, ToolCall] = field(default_factory=dict)
    outputs: tool_view.ToolOutputs = field(default_factory=tool_view.ToolOutputs)  # what Ctrl+O expands
    _console: Any = None

    # ------------------------------------------------------------------------------------ styling

    def c(self, name: str, text: str) -> str:
        if not self.settings.color or not text:
            return text
        return f"{_CODES[name]}{text}{_CODES['reset']}"

    def _clip(self, text: str, room: int) -> str:
        text = " ".join(text.split())
        return text if len(text) <= room else text[: max(room - 1, 1)] + "…"

    # ------------------------------------------------------------------------------------- events

    def feed(self, event: Event) -> list[str]:
        """Take one event; return the blocks to commit to the scrollback (often none)."""
        out: list[str] = []
        # Every event has its case, and the type checker proves it (`assert_never`): a new event must be
        # given its place on the screen, or said here to have none.
        match event:
            case TextDelta():
                out += self._flush_thinking()
                self.status = ""
                self.text += event.text
                out += self._commit_paragraphs()
            case ThinkingDelta():
                self.status = ""
                self.thinking += event.text
            case Retrying():
                self.text, self.thinking = "", ""
                self.status = self.c("yellow", f"retrying in {event.delay:.1f}s ({self._clip(event.error, 60)})")
            case ToolStarted():
                out += self._flush_thinking() + self._flush_text()
                self._calls[event.call.id] = event.call
                self.running[event.call.id] = _Running(event.call, self._tool_head(event.call))
            case ToolFinished():
                self.running.pop(event.result.call_id, None)
                call = self._calls.pop(event.result.call_id, None)
                out.append(self.tool_line(call, event.result, event.duration_ms))
            case TurnFinished():
                out += self._flush_thinking() + self._flush_text()
            case MessageAdded():
                if isinstance(event.message, UserMessage | PeerMessage):
                    out.append(self.user_block(event.message))
            case ModelSwitched():
                out.append(self.c("dim", f"switched to {event.provider}/{event.model}"))
            case ContextPruned() | Compacted() | Rewound():
                out += self._flush_thinking() + self._flush_text()
                out.append(self.c("dim", event.line()))
            case ErrorEvent():
                out += self._flush_thinking() + self._flush_text()
                out.append(self.c("red", f"error: {event.message}"))
            case AdvisorConsulted():
                out += self._flush_thinking() + self._flush_text()
                where = f" ({event.agent})" if event.agent and event.agent != "main" else ""
                out.append(self.c("dim", f"advisor{where}: {event.line()}"))
            case HookNotice():
                out += self._flush_thinking() + self._flush_text()
                color = {"error": "red", "warning": "yellow"}.get(event.level, "dim")
                out.append(self.c(color, f"hook {event.line()}"))
            case Result():
                out += self._flush_thinking() + self._flush_text()
                self.running.clear()
                self.status = ""
                out.append(self.result_line(event))
            case SessionStarted() | ToolCallDelta() | ToolResultsCleared() | SmallModelCall():
                pass  # not shown: a tool call is shown when it starts (ToolStarted)
            case TaskListChanged():
                pass  # shown above the prompt, from the agent's list (sagent/repl/task_view.py)
            case _:
                assert_never(event)
        return out

    def live(self) -> str:
        """The region under the scrollback that is still changing: thinking, the paragraph streaming now,
        running tools, a retry note."""
        parts: list[str] = []
        if self.thinking:
            parts.append(self._thinking_text(final=False))
        if self.text:
            parts.append(self.text.rstrip("\n"))
        for running in self.running.values():
            state = " waiting for your approval" if running.call.id in self.asking else " running…"
            parts.append(self._tool_head(running.call, after=len(state)) + self.c("dim", state))
        if self.status:
            parts.append(self.status)
        return "\n".join(parts)

    # ----------------------------------------------------------------------------- text and thinking

    def _commit_paragraphs(self) -> list[str]:
        """Commit every whole paragraph of the streaming text (a blank line outside a code fence ends one)."""
        cut = 0
        fenced = False
        position = 0
        lines = self.text.split("\n")
        for index, line in enumerate(lines[:-1]):  # the last line is still streaming
            position += len(line) + 1
            if _FENCE.match(line):
                fenced = not fenced
            elif not fenced and not line.strip() and index > 0:
                cut = position
        if not cut:
            return []
        done, self.text = self.text[:cut], self.text[cut:]
        return [self.markdown(done)] if done.strip() else []

    def _flush_text(self) -> list[str]:
        done, self.text = self.text, ""
        return [self.markdown(done)] if done.strip() else []

    def _flush_thinking(self) -> list[str]:
        if not self.thinking.strip():
            self.thinking = ""
            return []
        block = self._thinking_text(final=True)
        self.thinking = ""
        return [block]

    def _thinking_text(self, final: bool) -> str:
        if self.settings.thinking == "collapse":
            words = len(self.thinking.split())
            return self.c(
                "dim",
                f"✻ thought for {quantity(words, 'word')}" if final else f"✻ thinking… ({quantity(words, 'word')})",
            )
        return self.c("dim", "✻ " + self.thinking.strip())

    def markdown(self, text: str) -> str:
        """`text` rendered as Markdown at the terminal width (plain when Markdown is off)."""
        text = text.strip("\n")
        if not self.settings.markdown:
            return text
        from rich.markdown import Markdown

        console = self._rich()
        with console.capture() as capture:
            console.print(Markdown(text, code_theme="monokai"))
        return "\n".join(line.rstrip(" ") for line in capture.get().rstrip("\n").split("\n"))

    def _rich(self) -> Any:
        # One column short of the terminal: a line that fills it exactly makes some terminals wrap twice.
        width = max(self.settings.width - 1, 20)
        if self._console is None or self._console.width != width:
            from rich.console import Console

            self._console = Console(
                file=io.StringIO(),
                width=width,
                force_terminal=self.settings.color,
                color_system="256" if self.settings.color else None,
                no_color=not self.settings.color,
                highlight=False,
            )
        return self._console

    # ------------------------------------------------------------------------------------ lines

    def user_block(self, message: UserMessage | PeerMessage) -> str:
        if isinstance(message, PeerMessage):
            return self.c("cyan", f"✉ {message.sender}: ") + message.text
        labels = [self.c("dim", f"  ↳ {label}") for label in attachment_labels(message)]
        return "\n".join([self.c("bold", "› ") + self.c("bold", typed_text(message)), *labels])

    def _tool_head(self, call: ToolCall | None, name: str = "", after: int = 0) -> str:
        if call is None:
            return self.c("bold", name or "tool")
        key = tool_view.fit_head(call.name, _key_argument(call), self.settings.width, after)
        return self.c("bold", call.name) + (self.c("dim", "(") + key + self.c("dim", ")") if key else "")

    def tool_line(self, call: ToolCall | None, result: ToolResult, duration_ms: float) -> str:
        """A finished call on one line that fits the terminal: status, `name(key)`, time, the output's first
        line and how many lines are hidden; an edit's diff under it; the whole output with Ctrl+O on."""
        took = f"{duration_ms / 1000:.1f}s" if duration_ms >= 1000 else f"{duration_ms:.0f}ms"
        took = took if duration_ms > 0 else ""  # a call replayed from the log has no duration
        text = result.text.strip()
        lines = text.splitlines()
        edit = call is not None and call.name == "Edit" and not result.is_error
        hidden = len(lines) - 1 if len(lines) > 1 and not edit and not self.settings.expand_tools else 0
        fitted = tool_view.fit_tool_line(
            call.name if call is not None else (result.name or "tool"),
            _key_argument(call) if call is not None else "",
            took,
            lines[0] if lines else "no output",
            tool_view.hidden_label(hidden) if hidden else "",
            self.settings.width,
        )
        mark = self.c("red", "✗") if result.is_error else self.c("green", "✓")
        head = self.c("bold", fitted.name)
        if fitted.key:
            head += self.c("dim", "(") + fitted.key + self.c("dim", ")")
        line = f"{mark} {head}" + (" " + self.c("dim", fitted.took) if fitted.took else "")
        if fitted.summary:
            summary = fitted.summary if lines else self.c("dim", fitted.summary)
            line += self.c("dim", tool_view.SEPARATOR) + (self.c("red", summary) if result.is_error else summary)
        if fitted.label:
            line += self.c("dim", tool_view.SEPARATOR + fitted.label)
        self.outputs.add(tool_view.ToolOutput(ANSI_CODES.sub("", f"{mark} {head}"), result.text, result.is_error))
        if edit:
            assert call is not None
            diff = self.edit_diff(call, result)
            return f"{line}\n{diff}" if diff else line
        if self.settings.expand_tools and len(lines) > 1:
            return "\n".join([line, *tool_view.output_lines(self.outputs.recent[-1])])
        return line

    def edit_diff(self, call: ToolCall, result: ToolResult, limit: int = tool_view.DIFF_LINES) -> str:
        """An edit's diff, coloured, with the file's lines around each change and their numbers."""
        rows = tool_view.diff_rows(result.text) or tool_view.snippet_rows(
            str(call.arguments.get("old_string", "")), str(call.arguments.get("new_string", ""))
        )
        return self._diff_block(rows, limit)

    def diff(self, old: str, new: str, limit: int = tool_view.DIFF_LINES, numbered: bool = False) -> str:
        """A unified diff of `old` to `new`, red for removed lines and green for added ones, with two lines
        of context, at most `limit` lines; `numbered` (for whole files) puts the lines' numbers before them."""
        return self._diff_block(tool_view.snippet_rows(old, new, numbered=numbered), limit)

    def _diff_block(self, rows: list[tool_view.DiffRow], limit: int) -> str:
        digits = max((len(str(r.number)) for r in rows if r.number is not None), default=0)
        colour = {"+": "green", "-": "red"}
        width = self.settings.width
        shown = tool_view.whitespace_shown(rows[:limit])
        out = [self.c(colour.get(r.kind, "dim"), tool_view.diff_text(r, digits, width)) for r in shown]
        if len(rows) > limit:
            out.append(self.c("dim", f"  … {quantity(len(rows) - limit, 'more diff line')}"))
        return "\n".join(out)

    def result_line(self, result: Result) -> str:
        """The footer of a turn: this turn's tokens, cost and time, labelled as such, and the session's
        total beside them (`turn_start_usd` is what had been spent when the turn began)."""
        tokens = result.usage.total_input_tokens + result.usage.output_tokens
        seconds = result.duration_ms / 1000
        turn_usd = max(result.total_cost_usd - self.turn_start_usd, 0.0)
        facts = (
            f"this turn: {_k(tokens)} {plural(tokens, 'token')} · ${turn_usd:.4f} · {seconds:.1f}s "
            f"│ session: ${result.total_cost_usd:.4f}"
        )
        if result.subtype == "success":
            return self.c("dim", f"─ {facts}")
        label = {
            "interrupted": "interrupted: what was produced so far is kept",
            "error_max_turns": "stopped at the tool-round limit",
            "error_max_budget_usd": "stopped at the budget",
            "error_during_execution": "stopped by an error",
        }.get(result.subtype, result.subtype)
        return self.c("yellow", f"─ {label}") + self.c("dim", f" · {facts}")

    # ---------------------------------------------------------------------------------- history

    def history(self, messages: list[Message]) -> list[str]:
        """Blocks that show a restored session's history, as it looked when it happened."""
        out: list[str] = []
        calls: dict[str, ToolCall] = {}
        for message in messages:
            if isinstance(message, UserMessage | PeerMessage):
                out.append(self.user_block(message))
            elif isinstance(message, AssistantMessage):
                thought = " ".join(p.text for p in message.content if isinstance(p, ThinkingPart) and p.text)
                if thought and self.settings.thinking == "show":
                    out.append(self.c("dim", "✻ " + thought.strip()))
                if message.text.strip():
                    out.append(self.markdown(message.text))
                calls.update({c.id: c for c in message.tool_calls})
            elif isinstance(message, ToolResult):
                out.append(self.tool_line(calls.get(message.call_id), message, 0))
        return out


ANSI_CODES = re.compile(r"\x1b\[[0-9;]*m")


def _key_argument(call: ToolCall) -> str:
    """The argument that says what a call is about (its path, command, URL...), else its first string."""
    key = next((call.arguments[k] for k in _KEY_ARGS if isinstance(call.arguments.get(k), str)), None)
    if key is None:
        key = next((v for v in call.arguments.values() if isinstance(v, str)), "")
    return str(key)


def _k(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)
