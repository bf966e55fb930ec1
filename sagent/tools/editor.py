"""The editor a session runs in, when it lends sagent its files and terminals (an Agent Client Protocol
client such as Zed): Read, Write and Edit then see and change the editor's buffers, unsaved edits
included, and Bash runs in the editor's terminal, where the user watches it.

An `Editor` is set on the agent's settings (`AgentSettings.editor`, inherited by sub-agents); the tools
reach it through `ToolContext.editor()`. Without one, the tools use the disk and sagent's own processes.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True, slots=True)
class TerminalRun:
    """What a command run in the editor's terminal left: its output (as the editor kept it), its exit code
    (None when a signal ended it) and whether it was ended for running past its timeout."""

    output: str
    exit_code: int | None
    signal: str | None = None
    timed_out: bool = False
    truncated: bool = False


class Editor(Protocol):
    """The editor's side of the files and commands of a session."""

    reads_files: bool
    """Read, Write and Edit read files through the editor (its buffers, unsaved edits included)."""
    writes_files: bool
    """Write and Edit write through the editor (it updates its buffers, and the disk)."""
    runs_commands: bool
    """Bash runs commands in the editor's terminals (only where sagent's OS sandbox does not confine them:
    the editor's terminal is outside it)."""

    async def read_text(self, path: Path) -> str | None:
        """The text of the file at the absolute `path` as the editor has it; None when the editor has no
        such file (the tool then reads the disk, and reports a missing file as it always does)."""
        ...

    async def write_text(self, path: Path, content: str) -> None:
        """Write `content` to the file at the absolute `path` through the editor; OSError when it refuses."""
        ...

    async def run_command(self, command: str, cwd: Path, env: dict[str, str], timeout: float) -> TerminalRun:
        """Run `command` (a bash script) in a terminal of the editor, in `cwd`, until it exits or `timeout`
        seconds pass (then it is killed); the terminal is released either way, and killed when the call is
        cancelled."""
        ...


def text_stamp(text: str) -> tuple[int, int]:
    """The (mtime_ns, size) stamp of a file read through the editor: its content's checksum in place of a
    modification time (-1 marks it), so Write and Edit see a buffer changed since it was read."""
    return -1 - zlib.crc32(text.encode("utf-8", errors="surrogatepass")), len(text)
