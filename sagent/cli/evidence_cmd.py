"""`sagent compare A B` and `sagent trace SESSION`: two runs side by side, and a run's tree of agents as a
timeline (text, `--json`, or a self-contained HTML page with `--html FILE`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sagent.cli.subcommands import asks_help
from sagent.lib.words import quantity

COMPARE_USAGE = "usage: sagent compare A B [--json] [--html FILE]\n"
TRACE_USAGE = "usage: sagent trace SESSION [--html FILE]\n"
COMPARE_HELP = """
Two sessions (each an ID, a prefix of one, or a log's path) side by side, as text, as JSON (--json), or
also written as a self-contained HTML page (--html FILE). Exit 0, 1 when a log is damaged, 2 on misuse
or a session not found.
"""
TRACE_HELP = """
A session's tree of agents (the session and every sub-agent it started) as a timeline, as text, or also
written as a self-contained HTML page (--html FILE). Exit 0, 1 when a log is damaged, 2 on misuse or a
session not found.
"""


def _parse(prog: str, usage: str, argv: list[str], sessions: int) -> argparse.Namespace | None:
    parser = argparse.ArgumentParser(prog=prog, add_help=False, exit_on_error=False)
    parser.add_argument("sessions", nargs=sessions)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--html", type=Path)
    try:
        args, extra = parser.parse_known_args(argv)
    except (argparse.ArgumentError, SystemExit):
        args, extra = None, ["?"]
    if args is None or extra or any(s.startswith("-") for s in args.sessions):
        sys.stderr.write(usage)
        return None
    return args


def _problem(prog: str, error: Exception) -> int:
    from sagent.agent.session_check import SessionCorrupt

    if isinstance(error, BrokenPipeError):
        raise error  # the output's reader left: `main` ends quietly (sagent.cli.closed_pipe)

    if isinstance(error, SessionCorrupt):
        sys.stderr.write(f"{prog}: {error}\n")
        return 1
    text = f"{error.filename}: {error.strerror}" if isinstance(error, OSError) and error.strerror else str(error)
    sys.stderr.write(f"{prog}: {text}\n")
    return 2


def _write_page(path: Path, page: str) -> None:
    path.write_text(page, encoding="utf-8")
    print(f"wrote {path}")


def compare_command(argv: list[str]) -> int:
    """0 after printing the comparison; 1 when a log is damaged; 2 on misuse or a session not found."""
    from sagent.agent.session import SessionError, find_session
    from sagent.evidence import compare
    from sagent.evidence.runstats import run_stats

    if asks_help(argv):
        sys.stdout.write(COMPARE_USAGE + COMPARE_HELP)
        return 0
    args = _parse("sagent compare", COMPARE_USAGE, argv, 2)
    if args is None:
        return 2
    try:
        a, b = (run_stats(find_session(ref, Path.cwd())) for ref in args.sessions)
        data = compare.comparison(a, b)
        if args.html is not None:
            _write_page(args.html, compare.as_html(data))
    except (OSError, SessionError) as error:
        return _problem("sagent compare", error)
    print(compare.as_json(data) if args.json else compare.as_text(data))
    return 0


def trace_command(argv: list[str]) -> int:
    """0 after printing the timeline; 1 when a log is damaged; 2 on misuse or a session not found."""
    from sagent.agent.session import SessionError, find_session
    from sagent.evidence import trace

    if asks_help(argv):
        sys.stdout.write(TRACE_USAGE + TRACE_HELP)
        return 0
    args = _parse("sagent trace", TRACE_USAGE, argv, 1)
    if args is None or args.json:
        if args is not None:
            sys.stderr.write(TRACE_USAGE)
        return 2
    try:
        timeline = trace.build_trace(find_session(args.sessions[0], Path.cwd()))
        if args.html is not None:
            _write_page(args.html, trace.as_html(timeline))
    except (OSError, SessionError) as error:
        return _problem("sagent trace", error)
    print(trace.as_text(timeline))
    return 0


def _efforts() -> tuple[str, ...]:
    from typing import get_args

    from sagent.types import Effort

    return get_args(Effort)


def sampling_line(recorded: list[dict[str, object]], overrides: dict[str, object]) -> str:
    """What the replay was sent with: the first turn's recorded settings, and the overrides."""
    first = next((s for s in recorded if s), {})
    if not first:
        said = "no sampling settings recorded (a log without run manifests): the model's defaults"
    else:
        shown = [f"{k.replace('_', ' ')} {v}" for k, v in first.items() if v is not None]
        said = f"sampling as recorded: {', '.join(shown) or 'the model defaults'}"
    if overrides:
        said += "; instead: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in overrides.items())
    return said


REPLAY_USAGE = (
    "usage: sagent replay SESSION --model M [--provider P] [--tools live|recorded] [--effort E] "
    "[--max-tokens N] [--base-url URL] [--api-key-env VAR]\n"
)
REPLAY_HELP = """
Runs a session's user turns again on another model (--model, or --provider for its default model), in a
scratch copy of the project, and writes a new session to compare with the first (`sagent compare`).
  --tools live      run the tools again (default)
  --tools recorded  serve each tool call the result the session recorded
  --effort E, --max-tokens N   instead of the effort and response length each turn recorded (by default
                    every turn is sent with the sampling settings its run manifest recorded)
  --base-url URL, --api-key-env VAR   as for a run
Exit 0 when every turn ended well, 1 when one did not (or a log is damaged), 2 on misuse.
"""


def replay_command(argv: list[str]) -> int:
    """Run a session's user turns again on another model in a scratch tree; 0 when every turn ended well,
    1 when one did not (or a log is damaged), 2 on misuse."""
    import asyncio

    from sagent.agent.session import SessionError, find_session
    from sagent.evidence.replay import ReplayError, make_scratch, replay, replay_plan
    from sagent.providers.base import ProviderError
    from sagent.providers.registry import build_model, choose

    if asks_help(argv):
        sys.stdout.write(REPLAY_USAGE + REPLAY_HELP)
        return 0
    parser = argparse.ArgumentParser(prog="sagent replay", add_help=False, exit_on_error=False)
    parser.add_argument("session")
    parser.add_argument("--model")
    parser.add_argument("--provider")
    parser.add_argument("--tools", choices=("live", "recorded"), default="live")
    parser.add_argument("--base-url")
    parser.add_argument("--api-key-env")
    parser.add_argument("--effort", choices=_efforts())
    parser.add_argument("--max-tokens", type=int)
    try:
        args, extra = parser.parse_known_args(argv)
    except (argparse.ArgumentError, SystemExit):
        args, extra = None, ["?"]
    if args is None or extra or args.session.startswith("-") or (args.model is None and args.provider is None):
        sys.stderr.write(REPLAY_USAGE)
        return 2
    if args.max_tokens is not None and args.max_tokens < 1:
        sys.stderr.write(REPLAY_USAGE)
        return 2
    try:
        plan = replay_plan(find_session(args.session, Path.cwd()))
        model = build_model(choose(args.provider, args.model), base_url=args.base_url, api_key_env=args.api_key_env)
    except (OSError, SessionError, ReplayError) as error:
        return _problem("sagent replay", error)
    except ProviderError as error:
        sys.stderr.write(f"sagent replay: {error.message}\n")
        return 2
    from sagent.agent.prompt import coding_system_prompt
    from sagent.events import Result
    from sagent.tools import builtin_tools

    failed: list[Result] = []

    def watch(event: object) -> None:
        if isinstance(event, Result) and event.is_error:
            failed.append(event)

    try:
        scratch = make_scratch(plan)
        system = coding_system_prompt(scratch.cwd)
        overrides = {k: v for k, v in (("effort", args.effort), ("max_tokens", args.max_tokens)) if v is not None}
        path, served = asyncio.run(
            replay(
                plan, model, builtin_tools(), scratch, mode=args.tools, system=system, on_event=watch,
                overrides=overrides,
            )
        )  # fmt: skip
    except (OSError, SessionError, ReplayError) as error:
        return _problem("sagent replay", error)
    assert path is not None
    print(
        f"replayed {plan.session} ({quantity(len(plan.prompts), 'turn')}) on {model.provider}/{model.name}: "
        f"session {path.stem}"
    )
    print(
        f"  in {scratch.cwd} ({scratch.how}); tools {args.tools}"
        + (f", {quantity(served, 'recorded result')} served" if args.tools == "recorded" else "")
    )
    print(f"  {sampling_line(plan.sampling, overrides)}")
    print(f"  compare: sagent compare {path} {plan.path}")
    for result in failed:
        print(f"  a turn ended with {result.subtype}: {result.text}")
    return 1 if failed else 0
