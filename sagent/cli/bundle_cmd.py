"""`sagent sessions export ID DIR`, `sagent sessions import DIR` and `sagent sessions verify DIR`: a session
tree as a portable, checkable folder (`sagent.evidence.bundle`)."""

from __future__ import annotations

import sys
from pathlib import Path

from sagent.cli.subcommands import asks_help
from sagent.lib.words import quantity

EXPORT_USAGE = "usage: sagent sessions export ID|PATH DIR [--no-checkpoints]\n"
EXPORT_HELP = """
Copies a session's whole tree (its log, every sub-agent's log, spilled outputs, checkpoints and other side
files) into DIR, a new or empty folder, with bundle.json listing each file's size and SHA-256. The session
is checked first (hash chains, capsules, handoffs). The last line printed is the bundle's SHA-256: give
it to whoever receives the bundle by another way, so they know it is the one you sent.
  --no-checkpoints   leave out the file checkpoints (your files' contents before sagent changed them,
                     not redacted); the copy then cannot /rewind files
Exit 0 when written, 1 when the session does not check out, 2 on misuse, a session not found or DIR in use.
"""
IMPORT_USAGE = "usage: sagent sessions import DIR\n"
IMPORT_HELP = """
Takes a bundle written by `sagent sessions export` back into this directory's sessions, after checking it
whole: nothing but the listed files, each of its size and SHA-256, no links, no name leaving the bundle,
every log's hash chain and every handoff. A bundle that fails is refused, nothing written. Continue the
session with `sagent --session ID`.
Exit 0 when imported, 1 when the bundle is refused (tampered, partial, or the session is here already),
2 on misuse or a folder that cannot be read.
"""


def _say_problem(prog: str, error: Exception) -> None:
    if isinstance(error, OSError) and error.strerror:
        where = error.filename if error.filename is not None else ""
        sys.stderr.write(f"{prog}: {where}{': ' if where else ''}{error.strerror}\n")
    else:
        sys.stderr.write(f"{prog}: {error}\n")


def export_command(argv: list[str]) -> int:
    """0 when the bundle is written; 1 when the session does not check out; 2 on misuse or DIR in use."""
    from sagent.agent.session import find_session
    from sagent.evidence.bundle import BundleError, export_bundle

    if asks_help(argv):
        sys.stdout.write(EXPORT_USAGE + EXPORT_HELP)
        return 0
    checkpoints = "--no-checkpoints" not in argv
    rest = [a for a in argv if a != "--no-checkpoints"]
    if len(rest) != 2 or any(a.startswith("-") for a in rest):
        sys.stderr.write(EXPORT_USAGE)
        return 2
    try:
        log = find_session(rest[0], Path.cwd())
        report = export_bundle(log, Path(rest[1]), checkpoints=checkpoints)
    except BundleError as error:
        sys.stderr.write(f"sagent sessions export: {error}\n")
        return 1 if "does not check out" in str(error) else 2
    except OSError as error:
        _say_problem("sagent sessions export", error)
        return 2
    assert report.tree is not None
    print(
        f"exported {report.session} ({quantity(len(report.tree.sessions), 'session')}, "
        f"{quantity(len(report.files), 'file')}, {report.bytes:,} bytes) to {report.folder}"
    )
    for skipped in report.skipped:
        print(f"  left out: {skipped}")
    print(f"bundle sha256 {report.bundle_sha256}")
    return 0


def import_command(argv: list[str]) -> int:
    """0 when imported; 1 when the bundle is refused; 2 on misuse or a folder that cannot be read."""
    from sagent.agent.session import sessions_dir
    from sagent.evidence.bundle import BundleError, import_bundle

    if asks_help(argv):
        sys.stdout.write(IMPORT_USAGE + IMPORT_HELP)
        return 0
    if len(argv) != 1 or argv[0].startswith("-"):
        sys.stderr.write(IMPORT_USAGE)
        return 2
    folder = Path(argv[0])
    if not folder.is_dir():
        sys.stderr.write(f"sagent sessions import: {folder}: no such folder\n")
        return 2
    try:
        path, report = import_bundle(folder, sessions_dir(Path.cwd()))
    except BundleError as error:
        sys.stderr.write(f"sagent sessions import: refused {folder}: {error}; nothing was imported\n")
        return 1
    except OSError as error:
        _say_problem("sagent sessions import", error)
        return 2
    print(f"imported {report.session} ({quantity(len(report.files), 'file')}) to {path}")
    print(f"bundle sha256 {report.bundle_sha256}")
    print(f"  continue it: sagent --session {report.session}")
    return 0


def verify_bundle_command(folder: Path) -> int:
    """`sagent sessions verify DIR` on a bundle: 0 when it checks out whole, 1 with what does not."""
    from sagent.evidence.bundle import BundleError, verify_bundle

    try:
        report = verify_bundle(folder)
    except BundleError as error:
        print(f"broken: {folder}: {error}")
        return 1
    except OSError as error:
        _say_problem("sagent sessions verify", error)
        return 2
    assert report.tree is not None
    files = quantity(len(report.files), "file")
    print(f"{folder}: bundle of {report.session} ok: {files} as listed; {report.tree.summary()}")
    print(f"bundle sha256 {report.bundle_sha256}")
    return 0
