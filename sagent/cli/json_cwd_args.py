"""The arguments of the small listing commands (`sagent doctor`, `sagent skills`): `[--json] [--cwd DIR]`
and `--help`, read the same way by each."""

from __future__ import annotations

import sys
from pathlib import Path


def json_cwd_args(argv: list[str], command: str, usage: str) -> tuple[bool, Path] | int:
    """(whether --json was given, the folder --cwd names or "."), or the exit code to return at once: 0
    after --help printed `usage`, 2 after one line on stderr for an unknown argument or a missing folder."""
    if "-h" in argv or "--help" in argv:
        sys.stdout.write(usage)
        return 0
    as_json = "--json" in argv
    rest = [a for a in argv if a != "--json"]
    cwd = Path(".")
    if rest[:1] == ["--cwd"] and len(rest) == 2:
        cwd, rest = Path(rest[1]), []
    elif len(rest) == 1 and rest[0].startswith("--cwd="):
        cwd, rest = Path(rest[0].partition("=")[2]), []
    if rest:
        sys.stderr.write(f"sagent {command}: unknown argument {rest[0]!r}\n{usage}")
        return 2
    if not cwd.is_dir():
        sys.stderr.write(f"sagent {command}: --cwd {cwd}: not a folder\n")
        return 2
    return as_json, cwd
