"""Small subcommands: `sagent models`, `sagent providers`, `sagent sessions` (and `sessions verify`)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from sagent.cli.subcommands import asks_help

MODELS_USAGE = """\
usage: sagent models [PROVIDER]

The model catalog: each model's provider, context window, most output tokens, prices in USD per million
tokens (input, output, cache write, cache read) and features. PROVIDER (e.g. anthropic, openai) keeps
that provider's rows. A model not listed still runs; its cost is reported as unpriced.
"""

PROVIDERS_USAGE = """\
usage: sagent providers

One row per provider: its name, other names it answers to, the variable its API key is read from, its
default model and its endpoint (the same rows as the table in docs/providers.md).
"""

SESSIONS_USAGE = """\
usage: sagent sessions [DIR]                 the sessions of DIR (default: here), newest first, forks indented
       sagent sessions verify ID|PATH|DIR [--tree]  check a session log or bundle (exit 0 whole, 1 damaged)
       sagent sessions search TEXT [--limit N] [--rebuild] [--json] [--ephemeral]
                                             this project's sessions holding every word of TEXT
       sagent sessions export ID|PATH DIR [--no-checkpoints]
                                             a session's whole tree as a checkable bundle folder
       sagent sessions import DIR            take a bundle back (refused whole when it does not check out)

Continue one with `sagent --session ID`, or open it in the REPL with `sagent --resume ID`.
"""


def list_models(argv: list[str]) -> int:
    from sagent.providers.catalog import CATALOG

    if asks_help(argv):
        sys.stdout.write(MODELS_USAGE)
        return 0
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        sys.stderr.write("usage: sagent models [PROVIDER]\n")
        return 2
    rows = [m for m in CATALOG if not argv or m.provider == argv[0]]
    if not rows:
        providers = sorted({m.provider for m in CATALOG})
        sys.stderr.write(f"sagent models: no models for {argv[0]!r}; providers: {', '.join(providers)}\n")
        return 2
    print(
        f"{'model':<24} {'provider':<10} {'context':>9} {'output':>7}  {'$/M in':>7} {'$/M out':>7} "
        f"{'cache w':>7} {'cache r':>7}  features"
    )
    for m in rows:
        features = ",".join(
            f
            for f, on in (("tools", m.tools), ("thinking", m.thinking), ("images", m.images), ("caching", m.caching))
            if on
        )
        print(
            f"{m.id:<24} {m.provider:<10} {m.context_window:>9,} {m.max_output:>7,}  "
            f"{m.input:>7.2f} {m.output:>7.2f} {m.cache_write:>7.2f} {m.cache_read:>7.3f}  {features}"
        )
    print(
        "Prices are USD per million tokens. Models not listed run, their cost reported as unpriced; under\n"
        "--max-budget-usd they are refused until the modelPrices setting prices them (docs/settings.md)."
    )
    return 0


def list_providers(argv: list[str]) -> int:
    """`sagent providers`: one row per provider spec, the same rows as the table in docs/providers.md."""
    from sagent.providers.specs import table_rows

    if asks_help(argv):
        sys.stdout.write(PROVIDERS_USAGE)
        return 0
    if argv:
        sys.stderr.write("sagent providers: takes no arguments\n")
        return 2
    rows = [("provider", "also called", "key variable", "default model", "endpoint"), *table_rows()]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  ".join(f"{cell:<{width}}" for cell, width in zip(row, widths, strict=False)) + f"  {row[-1]}")
    return 0


def list_session_files(argv: list[str]) -> int:
    from sagent.agent.session import age_text
    from sagent.agent.session_list import listed_sessions

    if argv[:1] == ["verify"]:
        return verify_session(argv[1:])
    if argv[:1] == ["search"]:
        from sagent.cli.sessions_cmd import search_command

        return search_command(argv[1:])
    if argv[:1] in (["export"], ["import"]):
        from sagent.cli import bundle_cmd

        return bundle_cmd.export_command(argv[1:]) if argv[0] == "export" else bundle_cmd.import_command(argv[1:])
    if asks_help(argv):
        sys.stdout.write(SESSIONS_USAGE)
        return 0
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        sys.stderr.write(
            "usage: sagent sessions [DIR] | sagent sessions verify ID|PATH [--tree] | sagent sessions search TEXT\n"
        )
        return 2
    cwd = Path(argv[0] if argv else ".").resolve()
    rows = listed_sessions(cwd)
    if not rows:
        print(f"no sessions in {cwd}")
        return 0
    now = time.time()
    for row in rows:  # forks under the session they came from
        age = age_text(now - row.info.modified)
        fork = "  " * (row.depth - 1) + "└ " if row.depth else ""
        print(f"{row.info.id}  {age:>8}  {fork}{row.info.label[:70]}")
    return 0


def verify_session(argv: list[str]) -> int:
    """`sagent sessions verify ID|PATH [--tree]`: 0 when the log checks out whole, 1 with the first bad line."""
    from sagent.cli.sessions_cmd import verify_command

    return verify_command(argv)
