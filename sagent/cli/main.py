"""The `sagent` command: dispatch to a mode (the flags are in `sagent.cli.flags`).

Only the standard library is imported at module level, so `--version`, `--help`, `sagent models` and
`sagent sessions` stay fast; the agent, the tools and a provider's SDK load when a task runs. A bare
`--version` does not even build the parser.

A task's start-up is shaped around its provider's SDK, whose import is most of it: when `--provider`
names the provider, the import starts before anything else (in a thread), and the flags, settings files,
tools, memory files and session are prepared while it goes on.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    import argparse

    from sagent.cli.flags import EXIT_USAGE, build_parser, positive_number

__all__ = ["EXIT_USAGE", "build_parser", "entry", "main", "positive_number"]


def __getattr__(name: str) -> Any:
    """The parser's names, kept importable from here, load with `sagent.cli.flags` on first use."""
    if name in ("EXIT_USAGE", "build_parser", "positive_number"):
        from sagent.cli import flags

        return getattr(flags, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None, *, command: bool = False) -> int:
    """Run the `sagent` command line `argv` (the process's arguments by default) and return its exit code.
    `command` says this is the `sagent` process itself, which pauses the garbage collector while a run
    starts (see `sagent.lib.startup`). A reader that closes the output early (`sagent models | head`) ends
    the command quietly with status 141, as SIGPIPE ends other tools (see `sagent.cli.closed_pipe`)."""
    try:
        code = _main(sys.argv[1:] if argv is None else argv, command)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's flush at exit
    except BrokenPipeError as error:
        from sagent.cli.closed_pipe import is_closed_output, quiet_closed_output

        if not is_closed_output(error):
            raise
        return quiet_closed_output()
    return code


def _main(argv: list[str], command: bool) -> int:
    if argv == ["--version"]:
        from sagent import __version__

        print(f"sagent {__version__}")
        return 0
    from sagent.cli import subcommands

    if argv and (argv[0].startswith("-") and any(subcommands.find(word) for word in argv)):
        argv, problem = _flags_before_subcommand(argv)
        if problem:
            sys.stderr.write(f"sagent: error: {problem}\n")
            return 2
    sub = subcommands.find(argv[0]) if argv else None
    if sub is not None:
        _safe_streams()
        return subcommands.run(sub, argv[1:])
    _safe_streams()
    if not command:
        return _task_or_repl(argv)
    from sagent.lib import startup

    startup.pause()
    try:
        return _task_or_repl(argv)
    finally:
        startup.done("main")  # already done once the agent was built; this covers a run that ended before


def _task_or_repl(argv: list[str], asked: bool = False) -> int:
    """A task (`-p`, piped input, a task after the flags) or the REPL (`asked`: the user was just asked
    about trusting the folder, and is not asked again)."""
    named = _prefetch_named(argv)
    from sagent.cli.flags import EXIT_USAGE, add_task_argument, build_parser, checked, parse_with_settings

    parser = build_parser()
    add_task_argument(parser)
    args = parse_with_settings(parser, argv, notice=False)
    if args is None:
        return EXIT_USAGE
    skipped = args.settings_files.loaded.skipped_notice()
    if skipped and not asked and _opens_repl(args):
        if _asked_to_trust(args):  # trusted now: the folder's files apply from the start
            return _task_or_repl(argv, asked=True)
    elif skipped:
        sys.stderr.write(f"sagent: {skipped}\n")
    _clean_text_flags(args)
    if args.ephemeral:
        from sagent.lib import codecache

        codecache.save_nothing()  # it leaves no file behind, not even the start-up's cache
    if args.effort == "none":
        args.effort = None  # as /effort off in the REPL: no effort is sent
    from sagent.cli.log_level import log_level_problem, start_logging
    from sagent.cli.sdk_flags import apply_sdk_flags

    problem = apply_sdk_flags(args) or checked(args) or log_level_problem(args.log_level)  # SDK flags first
    if problem:
        sys.stderr.write(f"sagent: error: {problem}\n")
        return EXIT_USAGE
    start_logging(args.log_level)
    if not named:
        _prefetch_sdk(args)
    piped = not sys.stdin.isatty()
    task = " ".join(args.task or []).strip()
    if task and args.prompt is not None:
        sys.stderr.write("sagent: error: give the task once: as -p TASK or as the words after the flags\n")
        return EXIT_USAGE
    if task and (piped or not sys.stdout.isatty() or args.output_format != "text"):
        args.prompt = task  # no terminal to open the REPL on, or an output for programs: run it as a task
    if args.prompt is None and not piped:
        if not sys.stdout.isatty():
            sys.stderr.write("sagent: the REPL needs a terminal; give a task with -p TASK or on standard input\n")
            return EXIT_USAGE
        from sagent.cli.run import run_interactive

        return run_interactive(args)
    if args.resume is not None:
        sys.stderr.write("sagent: error: --resume opens the REPL; with -p or piped input use --session ID\n")
        return EXIT_USAGE
    from sagent.cli.run import run_task

    return run_task(args, piped)


def _flags_before_subcommand(argv: list[str]) -> tuple[list[str], str | None]:
    """`sagent --model M config`: run flags given before a subcommand's name go after it, for a subcommand
    that takes them; for one that does not, a problem to report (never a task sent to the model). The
    words are read as the run's parser reads them, so `-p config` stays a task."""
    from sagent.cli import subcommands
    from sagent.cli.flags import build_parser

    options = build_parser()._option_string_actions
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
        name, _, inline = argv[i].partition("=")
        action = options.get(name) or _abbreviated(options, name)
        i += 1
        if action is None or inline or action.nargs == 0:
            continue
        if action.nargs in (None, 1):
            i += 1
        elif action.nargs in ("?", "+", "*"):
            while i < len(argv) and not argv[i].startswith("-"):
                i += 1
                if action.nargs == "?":
                    break
    sub = subcommands.find(argv[i]) if i < len(argv) else None
    if sub is None:
        return argv, None
    flags = argv[:i]
    if any(flag in ("-h", "--help", "--version") for flag in flags):
        return argv, None  # sagent's own help or version, as the flags ask
    return [sub.name, *flags, *argv[i + 1 :]], subcommands.leading_flags_problem(flags, sub, argv[i + 1 :])


def _abbreviated(options: dict[str, argparse.Action], name: str) -> argparse.Action | None:
    """The option `name` abbreviates, as argparse takes one (`--mod` for `--model`), when only one fits."""
    found = {id(action): action for flag, action in options.items() if name.startswith("--") and flag.startswith(name)}
    return next(iter(found.values())) if len(found) == 1 else None


def _opens_repl(args: argparse.Namespace) -> bool:
    """Whether these arguments open the REPL (no task, a terminal on both ends), as decided below."""
    if args.prompt is not None or not sys.stdin.isatty() or not sys.stdout.isatty():
        return False
    return not (args.task and args.output_format != "text")


def _asked_to_trust(args: argparse.Namespace) -> bool:
    """The REPL's question in a folder not trusted whose files were skipped; True when the user trusted it.
    The environment is first put back as it was before the settings' `env` (the user's own may move
    XDG_CONFIG_HOME), so the answer is recorded where the trust was read, and the settings read again
    start from it."""
    from sagent.cli.trust import TrustError
    from sagent.cli.trust_cmd import ask_to_trust

    loaded = args.settings_files.loaded
    applied = dict(os.environ)
    os.environ.clear()
    os.environ.update(args.settings_files.environ_before)
    try:
        trusted = ask_to_trust(loaded.root, loaded.skipped, sys.stderr, sys.stdin)
    except TrustError as error:
        sys.stderr.write(f"sagent: error: {error}; continuing without this folder's settings\n")
        trusted = False
    if not trusted:
        os.environ.clear()
        os.environ.update(applied)
    return trusted


def _prefetch_named(argv: list[str]) -> bool:
    """Start importing the SDK of the provider `--provider` names, before the flags are even parsed (a flag
    wins over the settings files, so nothing parsed later can change the provider). Not for `--help` or
    `--version`, which exit without a request."""
    if any(arg in ("-h", "--help", "--version") for arg in argv):
        return False
    from sagent.providers import prefetch

    name = prefetch.named_provider(argv)
    if name:
        prefetch.start(name, prefetch.named_base_url(argv))
    return bool(name)


def _prefetch_sdk(args: argparse.Namespace) -> None:
    """Start importing the provider's SDK in the background when the flags and environment name the
    provider, so the import overlaps the rest of the start-up (a continued session may name another one,
    read from its log later: then nothing is started)."""
    continues = args.continue_ or args.session or args.resume is not None
    if continues and args.provider is None and args.model is None:
        return
    from sagent.providers import prefetch
    from sagent.providers.registry import choose

    try:
        prefetch.start(choose(args.provider, args.model).provider, args.base_url)
    except Exception:  # a bad name is reported where the model is built, in one line
        return


def _safe_streams() -> None:
    """Writing to stdout or stderr never raises on a character their encoding lacks (a Latin-1 locale, a
    lone surrogate from a file name): it is written as a backslash escape instead. A stream the shell
    closed (`<&-`) reads as empty, or swallows what is written, rather than being None."""
    if sys.stdin is None:
        sys.stdin = open(os.devnull)  # noqa: SIM115 (the process's own stdin, open until it exits)
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _clean_text_flags(args: argparse.Namespace) -> None:
    """Text flags that reach the model hold no lone surrogates (how Python passes bytes of an argument that
    are not UTF-8): they become U+FFFD, and the user is told once."""
    from sagent.cli.decoding import InputNotice
    from sagent.encoding import scrub

    notice = InputNotice(sys.stderr, "the command line")
    for name in ("prompt", "task", "system", "append_system"):
        value = getattr(args, name)
        if isinstance(value, str):
            value, replaced = scrub(value)
            notice.count(replaced, "byte")
            setattr(args, name, value)


def entry() -> NoReturn:
    """The `sagent` command: `main`, then an exit that skips the interpreter's teardown (see `leave`), also
    when the command ends by `SystemExit` (argparse's usage errors) or by Ctrl-C before a run has started
    (status 130 and one line, not a traceback of whatever was being imported)."""
    try:
        code = main(command=True)
    except SystemExit as stop:
        from sagent.cli.exit import exit_code

        code = exit_code(stop)
    except KeyboardInterrupt:
        sys.stderr.write("sagent: interrupted\n")
        code = 130
    from sagent.cli.exit import leave

    leave(code)


if __name__ == "__main__":
    entry()
