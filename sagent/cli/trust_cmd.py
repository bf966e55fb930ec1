"""`sagent trust [DIR]`, `--list`, `--revoke [DIR]`: the folders whose project files may configure sagent;
and the question the REPL asks in a folder not trusted yet."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from sagent.cli.trust import TrustError, revoke, trust, trust_file, trusted_by, trusted_folders

DESCRIPTION = """\
Trust a project folder, so that its own files configure sagent: .sagent/settings.json,
.sagent/settings.local.json, .mcp.json and .sagent/commands/. Until a folder is trusted, none of
what they define runs or loosens anything: no hooks, no MCP servers, no allow rules, permission
mode, extra folders, headlessDefault "allow", endpoint (baseUrl), key variable (apiKeyEnv), env,
model or custom commands. Their deny and ask rules (and headlessDefault "deny") still apply, and
your own settings always do. The REPL asks once per start in such a folder; a headless run says in
one line on stderr what it skipped.

DIR defaults to the project root (the nearest folder up holding .sagent/ or .git). Folders are
kept by real path (symlinks resolved) in $XDG_CONFIG_HOME/sagent/trusted-folders.json (default
~/.config/sagent/), which only you may write; a folder inside a trusted folder is trusted too, so
trusting ~/src trusts every repository you clone there.
"""


def trust_command(argv: list[str]) -> int:
    """`sagent trust ...`: 0 when done, 1 when a folder to revoke was not trusted, 2 for bad usage."""
    parser = argparse.ArgumentParser(
        prog="sagent trust",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dir", nargs="?", metavar="DIR", help="the folder (default: the current project root)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--list", action="store_true", help="print the trusted folders, one a line")
    which.add_argument("--revoke", action="store_true", help="stop trusting DIR (default: the project root)")
    args = parser.parse_args(argv)
    try:
        if args.list:
            if args.dir:
                parser.error("--list takes no folder")
            return _list()
        folder = Path(args.dir) if args.dir else _project_root()
        return _revoke(folder) if args.revoke else _trust(folder)
    except TrustError as error:
        sys.stderr.write(f"sagent trust: error: {error}\n")
        return 2


def _project_root() -> Path:
    from sagent.cli.settings_files import project_root

    return project_root(Path.cwd())


def _list() -> int:
    problems: list[str] = []
    folders = trusted_folders(problems)
    for line in problems:
        sys.stderr.write(f"sagent trust: warning: {line}\n")
    if not folders:
        sys.stderr.write(f"no folder is trusted ({trust_file()})\n")
    for folder in folders:
        print(folder)
    return 0


def _trust(folder: Path) -> int:
    path, added = trust(folder)
    print(f"trusted {path}" if added else f"{path} was already trusted")
    return 0


def _revoke(folder: Path) -> int:
    if revoke(folder):
        print(f"no longer trusted: {folder.resolve()}")
        cover = trusted_by(folder)
        if cover is not None:
            print(f"(it is still trusted through {cover}; `sagent trust --revoke {cover}` to end that)")
        return 0
    cover = trusted_by(folder)
    if cover is not None:
        sys.stderr.write(
            f"sagent trust: {folder} is trusted through {cover}; `sagent trust --revoke {cover}` to end that\n"
        )
    else:
        sys.stderr.write(f"sagent trust: {folder} is not trusted\n")
    return 1


def ask_to_trust(root: Path, skipped: list[Path], ask: TextIO, answer: TextIO) -> bool:
    """The REPL's question before anything of a project not trusted runs: trust this folder, or continue
    without its files. True (and the folder recorded) for trust; anything else continues without. An
    empty answer, end of input or Ctrl-C never trusts."""
    names = ", ".join(str(p.relative_to(root)) if p.is_relative_to(root) else str(p) for p in skipped)
    ask.write(
        f"\nDo you trust the files in this folder?\n\n  {root}\n\n"
        f"It holds {names}, which can run commands (hooks, MCP servers), loosen permissions and\n"
        "choose where your API key is sent. Trust it only if you wrote it or trust who did.\n\n"
        "  1. Yes, trust this folder (remembered; `sagent trust --revoke` undoes it)\n"
        "  2. No, continue without this folder's settings (its deny and ask rules still apply)\n\n"
        "Choose 1 or 2 [2]: "
    )
    ask.flush()
    try:
        line = answer.readline()
    except KeyboardInterrupt:
        line = ""
    choice = line.strip().lower()
    if choice in ("1", "y", "yes", "trust"):
        trust(root)
        ask.write(f"trusted {root}\n\n")
        return True
    ask.write("continuing without this folder's settings\n\n")
    return False
