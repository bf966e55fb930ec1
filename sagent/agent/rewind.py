"""Going back in a session (`rewind`) and branching it (`fork`), at one of the user's messages.

    turns = user_turns(agent)            # the user's messages the conversation can go back to
    event = rewind(agent, turns[-2])     # the history from that message on is dropped, files put back
    path = fork(agent, turns[-2])        # a new session holding the conversation before that message

A rewind is a change of the history like a compaction: a `Rewound` event goes to the session log first
(`Agent.apply`), so a resumed session opens as rewound. The files sagent changed since that message are
put back from its checkpoints (`sagent.agent.checkpoints`), each only where it still holds what sagent
last wrote: a file changed since by someone else is listed in `UserTurn.changed` and the event's `left`,
and is put back only when named in `overwrite` (`rewind_change` gives its diff, to show before asking).
Files changed by shell commands are not tracked and never touched.

A fork is a new session log in the same folder: the records of the original before that message (all of
them for a fork "now"), its header naming the original (`forked_from`) and where it branched
(`fork_seq`), and a copy of the checkpoints of those records, so the fork can be rewound too. The
original is not touched.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sagent.agent.checkpoints import Checkpoints, FileChange, checkpoints_of
from sagent.agent.compaction import HistoryChange, is_summary
from sagent.agent.session import SessionError, SessionLog, peek_state
from sagent.agent.session_check import check, split_lines
from sagent.attachments import typed_text, without_blocks
from sagent.events import Rewound, TaskListChanged
from sagent.lib.realpaths import real_path
from sagent.lib.words import quantity
from sagent.types import UserMessage

if TYPE_CHECKING:
    from sagent.agent.agent import Agent

# What a record copied into a fork gets anew, and what of the header a fork does not keep.
_COPIED_OUT = ("seq", "prev", "hash")
_HEADER_OWN = (*_COPIED_OUT, "ts", "kind", "session_id", "cwd", "forked_from", "fork_seq", "title")


@dataclass(frozen=True, slots=True)
class UserTurn:
    """A user's message the conversation can go back to: its place in the history (`index`), its text,
    the seq of its record in the session log (None when the log cannot say: files cannot be put back
    then), the files sagent changed since it (those a rewind puts back), and of those the ones changed
    since by someone else (`changed`: a rewind leaves them alone unless told to overwrite them)."""

    index: int
    text: str
    seq: int | None
    files: tuple[Path, ...] = ()
    changed: tuple[Path, ...] = ()


def user_turns(agent: Agent) -> list[UserTurn]:
    """The user's messages in the agent's history, oldest first (a compaction's summary is not one: the
    messages it replaced cannot be gone back to)."""
    seqs = _seqs(agent)
    store = checkpoints_of(agent)
    digests: dict[Path, str | None] = {}  # each file is read once for the whole list
    turns = []
    for index, message in enumerate(agent.history):
        if isinstance(message, UserMessage) and not is_summary(message):
            seq = seqs[index]
            found = store.changes(seq, digests) if seq is not None else []
            # by path: calls that ran side by side wrote in whichever order they finished
            changes = sorted((c for c in found if c.state != "same"), key=lambda c: str(c.path))
            files = tuple(c.path for c in changes)
            changed = tuple(c.path for c in changes if c.state == "changed" and not c.before.skipped)
            turns.append(UserTurn(index, as_typed(message), seq, files, changed))
    return turns


def rewind_change(agent: Agent, turn: UserTurn, path: Path) -> FileChange | None:
    """What a rewind to `turn` would do to `path`: the file's bytes now and put back (`FileChange.diff`
    shows them), or None when sagent changed nothing there since."""
    if turn.seq is None:
        return None
    return checkpoints_of(agent).change(turn.seq, Path(real_path(str(path), str(agent.context.cwd))))


def rewind(
    agent: Agent,
    turn: UserTurn,
    *,
    files: bool = True,
    conversation: bool = True,
    overwrite: Collection[Path] = (),
) -> Rewound:
    """Go back to just before `turn`: with `conversation`, the history from it on is dropped; with `files`,
    every file sagent changed since is put back as it was then (a file it created is deleted) where it
    still holds what sagent last wrote. A file changed since by someone else (`turn.changed`) is left as
    it is (the event's `left`) unless it is in `overwrite`. The event, already logged (with only `files`,
    it drops nothing). Only while the agent is idle; ValueError when `turn` is not one of
    `user_turns(agent)` now."""
    if agent.running:
        raise RuntimeError("cannot rewind while the agent is running")
    _check_turn(agent, turn)
    restored: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    left: tuple[str, ...] = ()
    if files and turn.seq is not None:
        named = [Path(real_path(str(p), str(agent.context.cwd))) for p in overwrite]  # as the checkpoints name them
        done = checkpoints_of(agent).restore(turn.seq, named, now=agent.session.seq)
        for path in (*done.restored, *done.deleted):
            agent.context.read_files.pop(path, None)  # read again before the next write
        restored = tuple(str(p) for p in done.restored)
        deleted = tuple(str(p) for p in done.deleted)
        failed = done.failed
        left = tuple(str(p) for p in done.left)
    kept = turn.index if conversation else len(agent.history)
    event = Rewound(kept, len(agent.history) - kept, turn.text, restored, deleted, failed, left)
    agent.apply(HistoryChange(event, tuple(agent.history[:kept])))
    _task_list_back(agent)
    return event


def _task_list_back(agent: Agent) -> None:
    """The agent's task list as it was at the point rewound to, read back from its log (a session without
    one keeps its list)."""
    if agent.session.path is None:
        return
    try:
        tasks = peek_state(agent.session.path).task_list
    except (SessionError, OSError):
        return
    if tasks != agent.task_list:
        agent.emit(TaskListChanged(tasks, agent.label))
        agent.task_list = tasks


def fork(agent: Agent, turn: UserTurn | None = None) -> Path:
    """A new session branched from the agent's at `turn` (holding the conversation as it was just before
    that message), or as it is now when None; its path. The agent and its log go on unchanged. Only while
    the agent is idle, and for a session that has a log file."""
    if agent.running:
        raise RuntimeError("cannot fork while the agent is running")
    path = agent.session.path
    if path is None:
        raise ValueError("an ephemeral session has no log to fork")
    if turn is not None:
        _check_turn(agent, turn)
        if turn.seq is None:
            raise ValueError("the session log does not say where that message is")
    return fork_log(path, turn.seq if turn is not None else None, checkpoints=checkpoints_of(agent))


def fork_log(path: Path, before: int | None, *, checkpoints: Checkpoints | None = None) -> Path:
    """A new session in `path`'s folder holding its records before seq `before` (all when None); the
    header names the original and the point. `checkpoints` are copied up to there."""
    records = check(split_lines(path.read_bytes())[0], path)
    end = len(records) if before is None else before
    if not 0 < end <= len(records):
        raise ValueError(f"{path.stem} has no record {end}")
    header = records[0]
    kept = {k: v for k, v in header.items() if k not in _HEADER_OWN}
    kept |= {"forked_from": header.get("session_id", path.stem), "fork_seq": end}
    log = SessionLog.create(Path(header.get("cwd") or "."), kept, directory=path.parent)
    try:
        for record in records[1:end]:
            log.append({k: v for k, v in record.items() if k not in _COPIED_OUT})
    finally:
        log.close()
    assert log.path is not None and log.session_dir is not None
    if checkpoints is not None:
        checkpoints.copy_to(log.session_dir / "checkpoints", end)
    return log.path


def _check_turn(agent: Agent, turn: UserTurn) -> None:
    history = agent.history
    if not 0 <= turn.index < len(history):
        raise ValueError(f"no message {turn.index} in the history ({quantity(len(history), 'message')})")
    message = history[turn.index]
    if not isinstance(message, UserMessage) or is_summary(message) or as_typed(message) != turn.text:
        raise ValueError("that message is no longer where it was: list the turns again")


def as_typed(message: UserMessage) -> str:
    """What the user typed for `message`, as a rewind or fork puts it back in the input box: its `typed`
    text, or for a message logged without one (an older session) its text without the attachment
    blocks (also those an older rewind had put back into the text itself)."""
    if message.typed is not None:
        return message.typed
    return without_blocks(typed_text(message))


def _seqs(agent: Agent) -> list[int | None]:
    """The log seq of each message of the agent's history: read back from its log file, else from the
    marks its checkpoint hook made (None for a message neither knows)."""
    path = agent.session.path
    if path is not None:
        try:
            state = peek_state(path)
        except (SessionError, OSError):
            state = None
        if state is not None and len(state.seqs) == len(agent.history):
            return list(state.seqs)
    store = checkpoints_of(agent)
    return [store.marked(m) for m in agent.history]
