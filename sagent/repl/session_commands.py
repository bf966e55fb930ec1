"""`/rewind`, `/fork` and the searchable session list of a bare `/resume`.

`/rewind` goes back to one of the user's messages: the conversation from it on is dropped, the files
sagent changed since are put back, and the message returns to the input box to edit and send again. A
file changed since sagent last wrote it (by the user, say) is shown as a diff and asked about, one file
at a time: kept as it is unless the user says to put it back.
`/fork` branches the session at one of them (or as it is now) into a new session, which the REPL then
continues; the original stays as it was on disk.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sagent.agent.rewind import UserTurn, fork, rewind, rewind_change, user_turns
from sagent.agent.session import SessionError, SessionInfo, age_text
from sagent.agent.session_list import ListedSession, listed_sessions
from sagent.lib.words import quantity
from sagent.repl.commands import CommandError, command
from sagent.repl.picker import Picker, PickItem, open_picker

if TYPE_CHECKING:
    from sagent.repl.host import ReplHost

MAX_LISTED = 500
"""Sessions a bare /resume offers (the newest trees first)."""


def _one_line(text: str, size: int = 70) -> str:
    line = " ".join(text.split())
    return line if len(line) <= size else line[: size - 1] + "…"


# ------------------------------------------------------------------------------------------ /resume


@command("resume", "open another session of this directory (alone: search them)", "/resume [N|id]")
def _resume(repl: ReplHost, arg: str) -> list[str]:
    if repl.busy:
        raise CommandError("the agent is working; press Esc first")
    if not arg:
        return pick_session(repl)
    rows = listed_sessions(repl.agent.context.cwd)
    if arg.isdigit() and 1 <= int(arg) <= len(rows):
        chosen = rows[int(arg) - 1].info
    else:
        matches = [r.info for r in rows if r.info.id.startswith(arg)]
        if len(matches) != 1:
            raise CommandError(f"no single session matches {arg!r}; /sessions lists them")
        chosen = matches[0]
    return open_session(repl, chosen)


def open_session(repl: ReplHost, chosen: SessionInfo) -> list[str]:
    """Move the REPL to the session `chosen` (its history shown again); the lines to show."""
    if repl.busy:
        raise CommandError("the agent is working; press Esc first")
    if chosen.path == repl.agent.session.path:
        raise CommandError(f"{chosen.id} is the session open now")
    try:
        agent = repl.new_agent(chosen.path)
    except SessionError as error:  # damaged, or written by another sagent
        raise CommandError(str(error)) from None
    repl.replace_agent(agent)
    return [*repl.renderer.history(list(repl.agent.history)), repl.renderer.c("dim", f"─ resumed {chosen.id}")]


def pick_session(repl: ReplHost) -> list[str]:
    """Open the searchable list of this directory's sessions; picking one resumes it."""
    rows = listed_sessions(repl.agent.context.cwd)[:MAX_LISTED]
    if not rows:
        return ["no sessions here yet"]
    now = repl.agent.session.path
    choices = [
        PickItem(session_line(row) + ("  (open now)" if row.info.path == now else ""), row.search_text, row)
        for row in rows
    ]

    def resume(row: ListedSession) -> None:
        try:
            repl.commit(open_session(repl, row.info))
        except CommandError as error:
            repl.commit([repl.renderer.c("yellow", f"/resume: {error}")])

    open_picker(repl, Picker("Resume which session?", choices, resume))
    return []


def session_line(row: ListedSession) -> str:
    """A session as a picker shows it: id, date, age and title, a fork under the session it came from."""
    fork_mark = "  " * (row.depth - 1) + "└ " if row.depth else ""
    age = age_text(time.time() - row.info.modified)
    return f"{row.short_id:<20}  {row.when}  {age:>8}  {fork_mark}{_one_line(row.info.label or '(no prompt)', 60)}"


# ------------------------------------------------------------------------------------------ /rewind


REWIND_HOW = {
    "both": "the conversation and the files",
    "conversation": "the conversation only (the files stay as they are)",
    "files": "the files only (the conversation stays)",
}
"""What a rewind can go back on, as `/rewind N HOW` names it and the second list offers it."""


@command(
    "rewind",
    "go back to one of your messages, files too (HOW: both, conversation or files)",
    "/rewind [N [HOW]]",
)
def _rewind(repl: ReplHost, arg: str) -> list[str]:
    turns = _turns(repl)
    number, _, how = arg.partition(" ")
    if how.strip() and how.strip() not in REWIND_HOW:
        raise CommandError(f"rewind {' or '.join(REWIND_HOW)}, not {how.strip()!r}")
    if number:
        turn, how = _turn_numbered(turns, number), how.strip() or "both"
        if how != "conversation" and turn.changed:  # ask about each file changed since, first
            return _ask_then_rewind(repl, turn, how)
        lines = _rewind_to(repl, turn, how)
        if how != "files":
            _to_input(repl, turn.text)
        return lines

    def done(turn: UserTurn, how: str) -> str | None:
        if how != "conversation" and turn.changed:
            repl.commit(_ask_then_rewind(repl, turn, how))
            return None
        return _rewind_now(repl, turn, how)

    def chosen(turn: UserTurn) -> str | None:
        if not turn.files:  # nothing to put back: the conversation it is
            return done(turn, "both")
        ways = [_item(how, f"{text}{_files_note(turn, how)}") for how, text in REWIND_HOW.items()]
        title = f"Rewind to before “{_one_line(turn.text, 40)}”: go back on"
        open_picker(repl, Picker(title, ways, lambda how: done(turn, how)))
        return None

    choices = [_item(t, _turn_line(n, t)) for n, t in reversed(list(enumerate(turns, 1)))]
    open_picker(repl, Picker("Rewind to before which message?", choices, chosen))
    return []


def rewind_list(repl: ReplHost) -> list[str]:
    """Open the list `/rewind` shows (Esc Esc on an empty input opens it too); the lines to show."""
    return _rewind(repl, "")


def _rewind_now(repl: ReplHost, turn: UserTurn, how: str, overwrite: tuple[Path, ...] = ()) -> str | None:
    """Rewind and show what it did; the text for the input box (the message gone back before)."""
    try:
        repl.commit(_rewind_to(repl, turn, how, overwrite))
    except (CommandError, ValueError, RuntimeError) as error:
        repl.commit([repl.renderer.c("yellow", f"/rewind: {error}")])
        return None
    return turn.text if how != "files" else None


def _ask_then_rewind(repl: ReplHost, turn: UserTurn, how: str) -> list[str]:
    """Ask about each file changed since sagent last wrote it (its diff shown above the question), one at a
    time, then rewind, putting back only the files the user said yes to. Esc cancels the whole rewind."""
    pending = list(turn.changed)
    overwrite: list[Path] = []

    def ask() -> list[str]:
        if not pending:
            text = _rewind_now(repl, turn, how, tuple(overwrite))
            if text:
                _to_input(repl, text)
            return []
        path = pending.pop(0)
        number = len(turn.changed) - len(pending)
        lines, question = _changed_file(repl, turn, path)
        keep = _item(False, "keep it as it is now (the changes stay)")
        put = _item(True, f"put it back as it was before “{_one_line(turn.text, 30)}” (the changes shown are lost)")
        title = f"{question} ({number} of {len(turn.changed)})"
        repl.commit(lines)
        open_picker(repl, Picker(title, [keep, put], answer(path), header="Esc cancels the rewind"))
        return []

    def answer(path: Path) -> Callable[[bool], str | None]:
        def chosen(yes: bool) -> str | None:
            if yes:
                overwrite.append(path)
            ask()
            return None

        return chosen

    return ask()


def _changed_file(repl: ReplHost, turn: UserTurn, path: Path) -> tuple[list[str], str]:
    """The lines that show how `path` differs from what the rewind would put back, and the question."""
    c = repl.renderer.c
    change = rewind_change(repl.agent, turn, path)
    if change is None:
        return [], f"{path} changed since sagent wrote it: put it back?"
    now = change.current.decode("utf-8", errors="replace") if change.current is not None else ""
    back = change.put_back.decode("utf-8", errors="replace") if change.put_back is not None else ""
    if change.current is None:
        what = "was deleted since sagent wrote it; the rewind would write it again"
    elif change.put_back is None:
        what = "changed since sagent created it; the rewind would delete it"
    else:
        what = "changed since sagent last wrote it (red: lost by putting it back, green: put back)"
    if b"\0" in (change.current or b"") + (change.put_back or b""):  # a binary file: no lines to show
        sizes = [f"{len(data):,} bytes" if data is not None else "none" for data in (change.current, change.put_back)]
        shown = c("dim", f"  (a binary file: {sizes[0]} now, {sizes[1]} put back)")
    else:
        shown = repl.renderer.diff(now, back) or c("dim", "  (no line differs)")
    lines = [c("yellow", f"! {path} {what}:"), shown]
    return lines, f"{path.name} changed since sagent wrote it: put it back?"


def _item(value: object, line: str) -> PickItem:
    """A row of a list whose search looks at the line itself."""
    return PickItem(line, line, value)


def _files_note(turn: UserTurn, how: str) -> str:
    if how == "conversation":
        return ""
    count = len(turn.files)
    asked = f" ({len(turn.changed)} edited since: asked first)" if turn.changed else ""
    return f": {count} file{'s' if count != 1 else ''} put back{asked}"


def _rewind_to(repl: ReplHost, turn: UserTurn, how: str, overwrite: tuple[Path, ...] = ()) -> list[str]:
    if repl.busy:
        raise CommandError("the agent is working; press Esc first")
    event = rewind(repl.agent, turn, files=how != "conversation", conversation=how != "files", overwrite=overwrite)
    repl.state.last_input_tokens = repl.agent.context_tokens
    c = repl.renderer.c
    dropped = f"{quantity(event.dropped, 'message')} dropped" if how != "files" else "the conversation kept"
    lines = [c("dim", f"─ rewound to before “{_one_line(turn.text, 60)}”: {dropped}")]
    lines += [c("dim", f"  put back {path}") for path in event.restored]
    lines += [c("dim", f"  deleted {path} (created since)") for path in event.deleted]
    lines += [c("yellow", f"  not put back: {problem}") for problem in event.failed]
    lines += [c("yellow", f"  left as it is (changed since sagent wrote it): {path}") for path in event.left]
    if turn.seq is None and how != "conversation":
        lines.append(c("yellow", "  files not put back: the session log does not say where that message was"))
    return lines


# -------------------------------------------------------------------------------------------- /fork


@command("fork", "branch the session into a new one, now or at one of your messages", "/fork [N|now]")
def _fork(repl: ReplHost, arg: str) -> list[str]:
    if repl.agent.session.path is None:
        raise CommandError("an ephemeral session (--ephemeral) has no log to fork")
    turns = _turns(repl, needed=False)
    if arg == "now":
        return _fork_at(repl, None)
    if arg:
        turn = _turn_numbered(turns, arg)
        lines = _fork_at(repl, turn)
        _to_input(repl, turn.text)
        return lines
    now = [_item(None, "now: the whole conversation so far")]
    at = [_item(t, _turn_line(n, t, files=False)) for n, t in reversed(list(enumerate(turns, 1)))]

    def chosen(turn: UserTurn | None) -> str | None:
        try:
            repl.commit(_fork_at(repl, turn))
        except (CommandError, ValueError, RuntimeError, OSError, SessionError) as error:
            repl.commit([repl.renderer.c("yellow", f"/fork: {error}")])
            return None
        return turn.text if turn is not None else None

    open_picker(repl, Picker("Fork the session before which message?", now + at, chosen))
    return []


def _fork_at(repl: ReplHost, turn: UserTurn | None) -> list[str]:
    if repl.busy:
        raise CommandError("the agent is working; press Esc first")
    parent = repl.agent.session_id
    path = fork(repl.agent, turn)
    try:
        agent = repl.new_agent(path)
    except SessionError as error:
        raise CommandError(str(error)) from None
    repl.replace_agent(agent)
    repl.state.last_input_tokens = agent.context_tokens
    where = f"before “{_one_line(turn.text, 50)}”" if turn is not None else "now"
    return [
        *repl.renderer.history(list(agent.history)),
        repl.renderer.c("dim", f"─ forked {parent} {where} into {agent.session_id}; the original is unchanged"),
    ]


# ------------------------------------------------------------------------------------------ helpers


def _turns(repl: ReplHost, needed: bool = True) -> list[UserTurn]:
    if repl.busy:
        raise CommandError("the agent is working; press Esc first")
    turns = user_turns(repl.agent)
    if needed and not turns:
        raise CommandError("no message of yours to go back to yet")
    return turns


def _to_input(repl: ReplHost, text: str) -> None:
    """Put `text` in the input box (a message gone back before, to edit and send again)."""
    if repl.app is not None and not repl.app.current_buffer.text:
        repl.app.current_buffer.text = text
        repl.app.current_buffer.cursor_position = len(text)


def _turn_numbered(turns: list[UserTurn], arg: str) -> UserTurn:
    if not arg.isdigit() or not 1 <= int(arg) <= len(turns):
        raise CommandError(f"give a message number from 1 to {len(turns)}, or nothing to choose from a list")
    return turns[int(arg) - 1]


def _turn_line(number: int, turn: UserTurn, files: bool = True) -> str:
    changed = len(turn.files)
    theirs = f"; {len(turn.changed)} edited after sagent: asked first" if turn.changed else ""
    note = f"  ({changed} file{'s' if changed != 1 else ''} changed since{theirs})" if files and changed else ""
    return f"{number:>3}. {_one_line(turn.text)}{note}"
