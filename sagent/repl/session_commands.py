"""`/rewind`, `/fork` and the searchable session list of a bare `/resume`.

`/rewind` goes back to one of the user's messages: the conversation from it on is dropped, the files
sagent wrote since are put back, and the message returns to the input box to edit and send again.
`/fork` branches the session at one of them (or as it is now) into a new session, which the REPL then
continues; the original stays as it was on disk.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from sagent.agent.rewind import UserTurn, fork, rewind, user_turns
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
        lines = _rewind_to(repl, turn, how)
        if how != "files":
            _to_input(repl, turn.text)
        return lines

    def done(turn: UserTurn, how: str) -> str | None:
        try:
            repl.commit(_rewind_to(repl, turn, how))
        except (CommandError, ValueError, RuntimeError) as error:
            repl.commit([repl.renderer.c("yellow", f"/rewind: {error}")])
            return None
        return turn.text if how != "files" else None

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


def _item(value: object, line: str) -> PickItem:
    """A row of a list whose search looks at the line itself."""
    return PickItem(line, line, value)


def _files_note(turn: UserTurn, how: str) -> str:
    if how == "conversation":
        return ""
    count = len(turn.files)
    return f": {count} file{'s' if count != 1 else ''} put back"


def _rewind_to(repl: ReplHost, turn: UserTurn, how: str) -> list[str]:
    if repl.busy:
        raise CommandError("the agent is working; press Esc first")
    event = rewind(repl.agent, turn, files=how != "conversation", conversation=how != "files")
    repl.state.last_input_tokens = repl.agent.context_tokens
    c = repl.renderer.c
    dropped = f"{quantity(event.dropped, 'message')} dropped" if how != "files" else "the conversation kept"
    lines = [c("dim", f"─ rewound to before “{_one_line(turn.text, 60)}”: {dropped}")]
    lines += [c("dim", f"  put back {path}") for path in event.restored]
    lines += [c("dim", f"  deleted {path} (created since)") for path in event.deleted]
    lines += [c("yellow", f"  not put back: {problem}") for problem in event.failed]
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
    note = f"  ({changed} file{'s' if changed != 1 else ''} changed since)" if files and changed else ""
    return f"{number:>3}. {_one_line(turn.text)}{note}"
