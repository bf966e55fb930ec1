"""How a tool call looks in the REPL, as plain text the renderer colours: one line that fits the terminal
(the parts cut with an ellipsis, never left for the terminal to wrap mid-word), the hidden part of the
output labelled as hidden, an edit's diff with the file's own lines around the change, and the recent
outputs that Ctrl+O shows in full.

Everything here is pure (strings in, strings out) and measured in terminal cells, so a wide character
counts twice.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import deque
from dataclasses import dataclass, field

from sagent.lib.words import quantity

ELLIPSIS = "…"
SEPARATOR = " · "
EXPANDED_LINES = 200
"""At most this many lines of one call's output are printed when Ctrl+O expands it (/output pages all)."""
DIFF_LINES = 40
"""At most this many lines of an edit's diff are printed under its tool line."""

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def cells(text: str) -> int:
    """How many terminal columns `text` takes (wide characters two, combining marks none)."""
    if text.isascii():  # the common case, without a table lookup per character
        return len(text)
    return sum(_cell(ch) for ch in text)


def _cell(ch: str) -> int:
    if unicodedata.combining(ch) or ch in "\u200b\u200d":
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def clip(text: str, room: int, squeeze: bool = True) -> str:
    """`text` cut to `room` cells with an ellipsis; on one line, runs of whitespace made one space, unless
    `squeeze` is False (a row laid out in columns)."""
    text = " ".join(text.split()) if squeeze else text.replace("\n", " ")
    if cells(text) <= room:
        return text
    if room <= 0:
        return ""
    if text.isascii():
        return text[: room - 1].rstrip() + ELLIPSIS
    out, used = [], 0
    for ch in text:
        width = _cell(ch)
        if used + width > room - 1:
            break
        out.append(ch)
        used += width
    return "".join(out).rstrip() + ELLIPSIS


def hidden_label(count: int) -> str:
    """What a tool line says of the output lines it does not show."""
    return f"+{count} line{'s' if count != 1 else ''} hidden (ctrl+o)"


@dataclass(frozen=True)
class ToolLine:
    """The parts of a tool line after fitting: each already cut to its room; empty when left out."""

    name: str
    key: str
    took: str
    summary: str
    label: str

    def plain(self, mark: str = "✓") -> str:
        """The line without colours (what the renderer colours part by part)."""
        head = self.name + (f"({self.key})" if self.key else "")
        parts = [f"{mark} {head}" + (f" {self.took}" if self.took else "")]
        return SEPARATOR.join(parts + [p for p in (self.summary, self.label) if p])


def fit_tool_line(name: str, key: str, took: str, summary: str, label: str, width: int) -> ToolLine:
    """Fit `✓ name(key) took · summary · label` into `width - 1` cells (the last column is left free: a
    line that fills it makes some terminals wrap). The label is kept whole while it fits; the key and the
    summary share what is left, the key first but leaving the summary half of the room."""
    room = max(width - 1, 12)
    name = clip(name, max(room - 2, 1))
    fixed = 2 + cells(name) + (1 + cells(took) if took else 0)
    if took and fixed > room:
        took, fixed = "", fixed - 1 - cells(took)
    if label and room - fixed - len(SEPARATOR) - cells(label) < 16:  # narrow: the key hint goes first
        label = label.split(" (")[0]
    if label and fixed + len(SEPARATOR) + cells(label) > room:
        label = ""
    avail = room - fixed - (len(SEPARATOR) + cells(label) if label else 0)
    key = " ".join(key.split())
    summary = " ".join(summary.split())
    key_cost = cells(key) + 2 if key else 0
    summary_cost = len(SEPARATOR) + cells(summary) if summary else 0
    if key_cost + summary_cost > avail:
        keep_for_summary = min(summary_cost, avail // 2)
        if keep_for_summary < len(SEPARATOR) + 6:  # too little for a useful summary: the key takes it all
            keep_for_summary = 0
        key_room = min(key_cost, avail - keep_for_summary)
        key = clip(key, key_room - 2) if key_room >= 5 else ""
        left = avail - (cells(key) + 2 if key else 0) - len(SEPARATOR)
        summary = clip(summary, left) if left >= 6 else ""
    return ToolLine(name, key, took, summary, label)


def fit_head(name: str, key: str, width: int, after: int = 0) -> str:
    """The key argument of a running call's `name(key)` head, cut so the head and `after` more cells fit."""
    room = max(width - 1, 12) - 2 - cells(name) - after - 2
    return clip(key, room) if room >= 3 else ""


# ------------------------------------------------------------------------------------------- diffs


@dataclass(frozen=True)
class DiffRow:
    """One row of an edit's diff: `kind` is "+", "-", " " (context) or "…" (a gap between hunks); `number`
    the line's number in the file after the edit ("+", " ") or before it ("-"); None for a gap."""

    kind: str
    number: int | None
    text: str


def diff_rows(result_text: str) -> list[DiffRow]:
    """The rows of the unified diff an Edit's result carries (the file's lines around each change, with
    their numbers); empty when the text holds no diff."""
    rows: list[DiffRow] = []
    old = new = 0
    seen_hunk = False
    for line in result_text.splitlines():
        hunk = _HUNK.match(line)
        if hunk:
            if seen_hunk:
                rows.append(DiffRow("…", None, ""))
            old, new, seen_hunk = int(hunk.group(1)), int(hunk.group(2)), True
            continue
        if not seen_hunk:  # the first line ("edited PATH"), and the diff's file names
            continue
        if line.startswith("+"):
            rows.append(DiffRow("+", new, line[1:]))
            new += 1
        elif line.startswith("-"):
            rows.append(DiffRow("-", old, line[1:]))
            old += 1
        elif line.startswith(" ") or line == "":
            rows.append(DiffRow(" ", new, line[1:]))
            old, new = old + 1, new + 1
        else:  # a note the tool appended ("[… 12 more diff lines]")
            rows.append(DiffRow("…", None, line.strip("[]")))
    return rows


def snippet_rows(old: str, new: str, context: int = 2, numbered: bool = False) -> list[DiffRow]:
    """Diff rows from two texts: numbered when they are whole files, unnumbered for an edit's own strings
    (when its result holds no diff), whose numbers would count from the snippet, not the file."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=context)
    rows = diff_rows("\n".join(lines))
    return rows if numbered else [DiffRow(r.kind, None, r.text) for r in rows]


def diff_text(row: DiffRow, digits: int, width: int) -> str:
    """A diff row as printed, `  12 +text` (`  +text` when `digits` is 0: no numbers), cut to the width."""
    number = (f"{row.number:>{digits}} " if row.number is not None else " " * (digits + 1)) if digits else ""
    if row.kind == "…":
        return clip(f"  {number}⋮ {row.text}", max(width - 1, 12)).rstrip()
    prefix = f"  {number}{row.kind}"
    text = row.text.expandtabs(TAB)  # the line as written: its indentation kept, never squeezed
    return prefix + clip(text, max(width - 1 - cells(prefix), 8), squeeze=False)


TAB = 4
"""Columns of a tab stop in a diff."""


def whitespace_shown(rows: list[DiffRow]) -> list[DiffRow]:
    """The rows, with the tabs and trailing spaces of a removed or added line made visible (`→` a tab, `·`
    a trailing space) where its change is whitespace alone, which would print as two identical lines."""
    looks: dict[str, dict[str, set[str]]] = {"-": {}, "+": {}}
    for row in rows:
        if row.kind in looks:
            looks[row.kind].setdefault(_looks(row.text), set()).add(row.text)
    out = []
    for row in rows:
        other = {"-": "+", "+": "-"}.get(row.kind)
        twins = looks[other].get(_looks(row.text), set()) if other else set()
        if twins - {row.text}:
            row = DiffRow(row.kind, row.number, _visible(row.text))
        out.append(row)
    return out


def _looks(text: str) -> str:
    return text.expandtabs(TAB).rstrip()


def _visible(text: str) -> str:
    body = text.rstrip(" \t")
    out: list[str] = []
    column = 0
    for index, ch in enumerate(text):
        if ch == "\t":
            room = TAB - column % TAB
            out.append("→" + " " * (room - 1))
            column += room
            continue
        out.append("·" if ch == " " and index >= len(body) else ch)
        column += _cell(ch)
    return "".join(out)


# ------------------------------------------------------------------------------------ recent outputs


@dataclass(frozen=True)
class ToolOutput:
    """A finished call as Ctrl+O and /output show it: its line's head and its whole output."""

    head: str
    text: str
    is_error: bool

    @property
    def hidden(self) -> int:
        """The output lines the tool line did not show (all but the first)."""
        return max(len(self.text.strip().splitlines()) - 1, 0)


@dataclass
class ToolOutputs:
    """The REPL's most recent tool outputs, newest last, and whether they are shown in full as they come."""

    expanded: bool = False
    recent: deque[ToolOutput] = field(default_factory=lambda: deque(maxlen=50))
    shown: int = 0
    """How many of `recent` (counted from the oldest kept) were printed in full already."""

    def add(self, output: ToolOutput) -> None:
        """Keep one more output (the oldest goes when the store is full)."""
        if len(self.recent) == self.recent.maxlen:
            self.shown = max(self.shown - 1, 0)
        self.recent.append(output)
        if self.expanded:
            self.shown = len(self.recent)

    def unseen(self, limit: int = 5) -> list[ToolOutput]:
        """The newest outputs with hidden lines not yet printed in full, oldest first, at most `limit`."""
        fresh = [o for o in list(self.recent)[self.shown :] if o.hidden]
        return fresh[-limit:]

    def toggle(self) -> list[ToolOutput]:
        """Ctrl+O: switch full output on (returning what to print now: the recent calls' hidden output)
        or off (returning nothing)."""
        self.expanded = not self.expanded
        if not self.expanded:
            return []
        shown = self.unseen()
        self.shown = len(self.recent)
        return shown

    def nth(self, n: int) -> ToolOutput | None:
        """The n-th newest output (1 is the last), or None."""
        return self.recent[-n] if 1 <= n <= len(self.recent) else None


def output_lines(output: ToolOutput, limit: int = EXPANDED_LINES) -> list[str]:
    """A call's whole output, indented under its head, at most `limit` lines (then a note how to page it)."""
    lines = output.text.rstrip("\n").splitlines() or ["(no output)"]
    shown = ["  " + line.replace("\t", "    ") for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"  … {quantity(len(lines) - limit, 'more line')} (/output pages all of it)")
    return shown
