"""From the agent's events to what the REPL shows: committed blocks for the scrollback, and a small live region.

The renderer is pure (events in, ANSI text out), so it is tested on recorded event streams without a
terminal. Text streams into the live region; each paragraph is committed (as Markdown, with highlighted
code) once a blank line outside a code fence closes it, so the live region stays a few lines tall and a
redraw only repaints what is still changing. Tool calls are one line each: running in the live region,
then committed with their status, duration and a summary of the result; edits commit as a coloured diff.
"""

from __future__ import annotations

import difflib
import io
import re
from dataclasses import dataclass, field
from typing import Any, Literal, assert_never

from sagent.events import (
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
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolFinished,
    ToolResultsCleared,
    ToolStarted,
    TurnFinished,
)
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
    status: str = ""  # a transient note (retrying...) shown in the live region
    _calls: dict[str, ToolCall] = field(default_factory=dict)
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
            parts.append(running.line + self.c("dim", " running…"))
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
            return self.c("dim", f"✻ thought for {words} words" if final else f"✻ thinking… ({words} words)")
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
        return self.c("bold", "› ") + self.c("bold", message.text)

    def _tool_head(self, call: ToolCall | None, name: str = "") -> str:
        if call is None:
            return self.c("bold", name or "tool")
        key = next((call.arguments[k] for k in _KEY_ARGS if isinstance(call.arguments.get(k), str)), None)
        if key is None:
            key = next((v for v in call.arguments.values() if isinstance(v, str)), "")
        room = max(self.settings.width - len(call.name) - 30, 10)
        return self.c("bold", call.name) + (
            self.c("dim", "(") + self._clip(key, room) + self.c("dim", ")") if key else ""
        )

    def tool_line(self, call: ToolCall | None, result: ToolResult, duration_ms: float) -> str:
        mark = self.c("red", "✗") if result.is_error else self.c("green", "✓")
        took = f"{duration_ms / 1000:.1f}s" if duration_ms >= 1000 else f"{duration_ms:.0f}ms"
        head = f"{mark} {self._tool_head(call, result.name)} {self.c('dim', took)}"
        summary = self._summary(result)
        line = f"{head}{self.c('dim', ' · ')}{summary}" if summary else head
        if call is not None and call.name == "Edit" and not result.is_error:
            diff = self.diff(str(call.arguments.get("old_string", "")), str(call.arguments.get("new_string", "")))
            return f"{line}\n{diff}" if diff else line
        return line

    def _summary(self, result: ToolResult) -> str:
        text = result.text.strip()
        if not text:
            return self.c("dim", "no output")
        lines = text.splitlines()
        first = self._clip(lines[0], max(self.settings.width - 40, 20))
        more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
        return (self.c("red", first) if result.is_error else first) + self.c("dim", more)

    def diff(self, old: str, new: str, limit: int = 40) -> str:
        """A unified diff of an edit, red for removed lines and green for added ones, at most `limit` lines."""
        rows = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1))[2:]
        out = []
        for row in rows[:limit]:
            if row.startswith("-"):
                out.append(self.c("red", "  " + row))
            elif row.startswith("+"):
                out.append(self.c("green", "  " + row))
            elif not row.startswith("@@"):
                out.append(self.c("dim", "  " + row))
        if len(rows) > limit:
            out.append(self.c("dim", f"  … {len(rows) - limit} more diff lines"))
        return "\n".join(out)

    def result_line(self, result: Result) -> str:
        tokens = result.usage.total_input_tokens + result.usage.output_tokens
        seconds = result.duration_ms / 1000
        facts = f"{result.num_turns} turns · {_k(tokens)} tokens · ${result.total_cost_usd:.4f} · {seconds:.1f}s"
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
                out.append(self.tool_line(calls.get(message.call_id), message, 0).replace(" 0ms", "", 1))
        return out


def _k(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)
