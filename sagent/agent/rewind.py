"""Going back in a session (`rewind`) and branching it (`fork`), at one of the user's messages.

    turns = user_turns(agent)            # the user's messages the conversation can go back to
    event = rewind(agent, turns[-2])     # the history from that message on is dropped, files put back
    path = fork(agent, turns[-2])        # a new session holding the conversation before that message

A rewind is a change of the history like a compaction: a `Rewound` event goes to the session log first
(`Agent.apply`), so a resumed session opens as rewound. The files sagent wrote since that message are put
back from its checkpoints (`sagent.agent.checkpoints`); files changed by shell commands are not.

A fork is a new session log in the same folder: the records of the original before that message (all of
them for a fork "now"), its header naming the original (`forked_from`) and where it branched
(`fork_seq`), and a copy of the checkpoints of those records, so the fork can be rewound too. The
original is not touched.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sagent.agent.checkpoints import Checkpoints, checkpoints_of
from sagent.agent.compaction import HistoryChange, is_summary
from sagent.agent.session import SessionError, SessionLog, peek_state
from sagent.agent.session_check import check, split_lines
from sagent.events import Rewound
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
    then), and the files sagent wrote since it (those a rewind puts back)."""

    index: int
    text: str
    seq: int | None
    files: tuple[Path, ...] = ()


def user_turns(agent: Agent) -> list[UserTurn]:
    """The user's messages in the agent's history, oldest first (a compaction's summary is not one: the
    messages it replaced cannot be gone back to)."""
    seqs = _seqs(agent)
    store = checkpoints_of(agent)
    turns = []
    for index, message in enumerate(agent.history):
        if isinstance(message, UserMessage) and not is_summary(message):
            seq = seqs[index]
            files = tuple(store.since(seq)) if seq is not None else ()
            turns.append(UserTurn(index, message.text, seq, files))
    return turns


def rewind(agent: Agent, turn: UserTurn, *, files: bool = True, conversation: bool = True) -> Rewound:
    """Go back to just before `turn`: with `conversation`, the history from it on is dropped; with `files`,
    every file sagent wrote since is put back as it was then (a file it created is deleted). The event,
    already logged (with only `files`, it drops nothing). Only while the agent is idle; ValueError when
    `turn` is not one of `user_turns(agent)` now."""
    if agent.running:
        raise RuntimeError("cannot rewind while the agent is running")
    _check_turn(agent, turn)
    restored: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    if files and turn.seq is not None:
        done = checkpoints_of(agent).restore(turn.seq)
        for path in (*done.restored, *done.deleted):
            agent.context.read_files.pop(path, None)  # read again before the next write
        restored = tuple(str(p) for p in done.restored)
        deleted = tuple(str(p) for p in done.deleted)
        failed = done.failed
    kept = turn.index if conversation else len(agent.history)
    event = Rewound(kept, len(agent.history) - kept, turn.text, restored, deleted, failed)
    agent.apply(HistoryChange(event, tuple(agent.history[:kept])))
    return event


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
    if not isinstance(message, UserMessage) or is_summary(message) or message.text != turn.text:
        raise ValueError("that message is no longer where it was: list the turns again")


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
