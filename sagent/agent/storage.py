"""Where a session log keeps its records: a file by default (`SessionLog.create`), or any storage an
application plugs in: a database row, an object store, memory in a test.

    from sagent import Agent
    from sagent.agent.session import SessionLog
    from sagent.agent.storage import MemoryStorage

    store = MemoryStorage()
    agent = Agent(model, session=SessionLog.in_storage(store, cwd=Path.cwd()))
    ...                                             # later, in another process with the same store:
    agent = Agent.resume(store, model)

The log itself (each record sealed with its hash and chained to the one before, secrets redacted, checked
whole when it is read back) is the same whatever keeps it; a storage only keeps bytes. Persist, then act
holds as far as the storage holds it: `append` must not return before the line is as durable as the
application needs.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class SessionStorage(Protocol):
    """The bytes of one session log. A line is one record, ending in a newline."""

    name: str
    """How messages name the storage (a file's path, a key, a row's id)."""

    def append(self, line: bytes) -> None:
        """Add one whole line after the others; return only once it is kept. On failure raise OSError and
        keep nothing of the line (the log then refuses further writes, and the run stops before acting)."""
        ...

    def read(self) -> bytes:
        """Every line kept so far, in order (a line cut short by a crash may end it: it is dropped on read)."""
        ...

    def close(self) -> None:
        """The session is done with the storage (release a lock, a connection)."""
        ...


class MemoryStorage:
    """A session log in memory: for tests, and as the smallest example of a storage."""

    def __init__(self, name: str = "memory") -> None:
        self.name = name
        self.lines: list[bytes] = []
        self.closed = False

    def append(self, line: bytes) -> None:
        self.lines.append(bytes(line))

    def read(self) -> bytes:
        return b"".join(self.lines)

    def close(self) -> None:
        self.closed = True
