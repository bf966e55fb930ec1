"""Reading one settings file safely: only a regular file, only its first MAX_BYTES, UTF-8 JSON holding an
object, or one line saying why not. `sagent.cli.settings_files` merges what this reads."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from sagent.lib.bounded_read import UnreadableFile, read_bounded
from sagent.lib.json import json_kind

MAX_BYTES = 1 << 20  # a settings file larger than this is a mistake (or /dev/zero), not settings


class SettingsError(Exception):
    """A settings file that cannot be used: unreadable, not JSON, or a value of the wrong shape. The
    message is one line naming the file (and the key, when one is at fault)."""


def read_file(path: Path) -> dict[str, Any] | None:
    """A settings file's object, or None when there is no file. Only a regular file is read, and only
    the first MAX_BYTES of it, so a FIFO or /dev/zero put in its place cannot hang or exhaust sagent."""
    try:  # a missing file, or `.sagent` being a file and not a folder: there is no settings file
        raw = read_bounded(path, MAX_BYTES, missing_ok=True)
    except UnreadableFile as refused:
        reason = {
            "unreadable": f"cannot read it ({refused.detail})",
            "not_regular": "not a regular file",
            "too_large": f"larger than {MAX_BYTES // 1024} KiB; is it a settings file?",
        }[refused.kind]
        raise SettingsError(f"{path}: {reason}") from None
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise SettingsError(f"{path}: not UTF-8 text (byte {error.start + 1})") from None
    try:
        # NaN and Infinity parse (as Python's json reads them) so that the key's own check names them
        data = json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise SettingsError(f"{path}: not valid JSON at {where}: {error.msg}") from None
    except RecursionError:
        raise SettingsError(f"{path}: nested too deeply to be settings") from None
    except ValueError:  # json reads integers with int(), which refuses more digits than Python's limit
        raise SettingsError(
            f"{path}: not valid JSON: a number has more than {sys.get_int_max_str_digits()} digits"
        ) from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: must hold a JSON object ({{...}}), not {json_kind(data)}")
    return data
