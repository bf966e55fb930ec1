"""Reading a small file that someone else may have put there (a settings file, a skill, a plugin's manifest):
only a regular file, never more than a limit, and never a wait on a FIFO or a device put in its place."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal


class UnreadableFile(Exception):
    """Why a file was not read: `kind` says which way it failed, `detail` the system's words (for
    "unreadable"), so each caller can say it in its own message."""

    def __init__(self, kind: Literal["unreadable", "not_regular", "too_large"], detail: str = "") -> None:
        super().__init__(detail or kind)
        self.kind = kind
        self.detail = detail


def read_bounded(path: Path, limit: int, *, missing_ok: bool = False) -> bytes | None:
    """The bytes of the regular file `path`, at most `limit` of them; UnreadableFile when it cannot be
    opened or read, is not a regular file, or holds more than `limit` bytes. With `missing_ok`, None when
    there is no such file (or a file stands where a folder of its path should be)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (FileNotFoundError, NotADirectoryError) as error:
        if missing_ok:
            return None
        raise UnreadableFile("unreadable", error.strerror or str(error)) from None
    except OSError as error:
        raise UnreadableFile("unreadable", error.strerror or str(error)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnreadableFile("not_regular")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise UnreadableFile("unreadable", error.strerror or str(error)) from None
    finally:
        os.close(fd)
    if size > limit:
        raise UnreadableFile("too_large")
    return b"".join(chunks)
