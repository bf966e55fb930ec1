"""`sagent config set KEY VALUE` and `sagent config unset KEY`: one key of a settings file changed from the
command line, checked as a run would check it (an unknown key names the nearest known one)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from sagent.cli.flags import build_parser
from sagent.cli.settings_files import KEYS, SettingsError, check_value, nearest_key, read_file, settings_files

SET_USAGE = """\
usage: sagent config set KEY VALUE [--scope user|project|local]
       sagent config unset KEY [--scope user|project|local]

Writes KEY in one settings file, keeping its other keys: the user's file by default
($XDG_CONFIG_HOME/sagent/settings.json), or the project's .sagent/settings.json (project) or
.sagent/settings.local.json (local). VALUE is read as JSON when it is JSON (100, true, ["Read"],
{"allow": ["Bash(git diff:*)"]}), else as the text given: `sagent config set model gpt-5.4`.
A key no setting has, or a value of the wrong shape, is an error (exit 2) and nothing is written.
Keys: docs/settings.md.
"""

SCOPES = ("user", "project", "local")


def set_command(argv: list[str], unset: bool = False) -> int:
    """0 after writing; 2 for bad usage, an unknown key, a bad value or a file that cannot be used."""
    if any(arg in ("-h", "--help") for arg in argv):
        sys.stdout.write(SET_USAGE)
        return 0
    scope, words = _scope(argv)
    if scope is None or len(words) != (1 if unset else 2) or any(w.startswith("--") for w in words[:1]):
        sys.stderr.write(SET_USAGE)
        return 2
    name = words[0]
    path = dict(settings_files(Path.cwd()))[scope]
    try:
        if name not in KEYS:
            raise SettingsError(_unknown(name))
        data = read_file(path) or {}
        if unset:
            data.pop(name, None)
        else:
            warnings: list[str] = []
            data[name] = check_value(path, name, _value(name, words[1]), warnings, build_parser())
            for warning in warnings:
                sys.stderr.write(f"sagent: warning: {warning}\n")
        _write(path, data)
    except SettingsError as error:
        sys.stderr.write(f"sagent: error: {error}\n")
        return 2
    except OSError as error:
        sys.stderr.write(f"sagent: error: {path}: cannot write it ({error.strerror or error})\n")
        return 2
    print(f"{'removed' if unset else 'set'} {name} in {path}")
    if scope != "user" and not unset:
        from sagent.cli.settings_files import project_root
        from sagent.cli.trust import is_trusted

        root = project_root(Path.cwd())
        if not is_trusted(root):
            print(f"{root} is not trusted, so this file does not apply yet: `sagent trust {root}` (docs/settings.md)")
    return 0


def _scope(argv: list[str]) -> tuple[str | None, list[str]]:
    scope, words, rest = "user", [], list(argv)
    while rest:
        word = rest.pop(0)
        if word == "--scope" or word.startswith("--scope="):
            scope = word.partition("=")[2] if "=" in word else (rest.pop(0) if rest else "")
            if scope not in SCOPES:
                return None, []
        else:
            words.append(word)
    return scope, words


def _unknown(name: str) -> str:
    near = nearest_key(name, KEYS)
    hint = f'; did you mean "{near}"?' if near else ""
    return f'unknown settings key "{name}"{hint} (the keys: docs/settings.md, or `sagent config`)'


def _value(name: str, text: str) -> Any:
    """The value as JSON when it is JSON, else the text; the text as given for a key that takes text."""
    if KEYS[name].shape in ("string", "text"):
        return text
    try:
        return json.loads(text)
    except ValueError:
        if KEYS[name].shape == "names":  # tools Read,Grep: the form of the flag
            return [part.strip() for part in text.split(",") if part.strip()]
        return text


def _write(path: Path, data: dict[str, Any]) -> None:
    """The file written whole to a temporary name, then renamed over the old one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)
