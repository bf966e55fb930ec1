"""`exit_now`: the `sagent` command leaves without the interpreter's teardown, and loses nothing by it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli.test_headless import env_for, records, run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response


def run_script(body: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)


def test_the_teardown_of_modules_and_objects_is_skipped(tmp_path: Path) -> None:
    done = run_script(
        """
        import sys
        from sagent.cli.exit import exit_now

        class Noisy:
            def __del__(self):
                sys.stderr.write("torn down\\n")

        kept = Noisy()
        exit_now(5)
        """,
        tmp_path,
    )
    assert done.returncode == 5
    assert "torn down" not in done.stderr


def test_buffered_output_and_atexit_handlers_are_not_lost(tmp_path: Path) -> None:
    done = run_script(
        """
        import atexit, pathlib, sys
        from sagent.cli.exit import exit_now

        atexit.register(lambda: pathlib.Path("handler-ran").write_text("yes"))
        atexit.register(lambda: sys.stdout.write("written at exit\\n"))
        sys.stdout.write("x" * 300_000 + "\\n")  # more than a pipe holds, still in Python's buffer
        sys.stderr.write("a warning\\n")
        exit_now(3)
        """,
        tmp_path,
    )
    assert done.returncode == 3
    assert done.stdout == "x" * 300_000 + "\nwritten at exit\n"
    assert done.stderr == "a warning\n"
    assert (tmp_path / "handler-ran").read_text() == "yes"


def test_a_thread_that_is_not_a_daemon_is_waited_for(tmp_path: Path) -> None:
    done = run_script(
        """
        import pathlib, sys, threading, time
        from sagent.cli.exit import exit_now

        def work():
            time.sleep(0.3)
            pathlib.Path("finished").write_text("yes")

        threading.Thread(target=work).start()
        exit_now(0)
        sys.exit(4)  # exit_now returned: the ordinary exit, which waits for the thread
        """,
        tmp_path,
    )
    assert done.returncode == 4
    assert (tmp_path / "finished").read_text() == "yes"


def test_a_headless_run_keeps_its_whole_session_log_and_output(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n")
    steps = [tool_use_response([("Read", {"path": "notes.txt"})]), text_response("It says alpha.")]
    with FakeAnthropic(steps) as fake:
        args = ["-p", "read notes.txt", "--output-format", "stream-json"]
        done = run_sagent(args, env_for(fake, tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = records(done.stdout)
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "It says alpha."
    logs = list((tmp_path / "data").rglob("*.jsonl"))
    assert len(logs) == 1
    verified = run_sagent(["sessions", "verify", str(logs[0])], env_for(fake, tmp_path), cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    log = logs[0].read_text()
    assert log.endswith("\n") and '"result"' in log.splitlines()[-1]


# An SDK whose import runs, for FAKE_SDK_SECONDS, Python code called from pydantic-core's native code: the
# interpreter's teardown stopping a thread in there aborts the process ("FATAL: exception not rethrown").
SLOW_NATIVE_SDK = """
import os, time
from pydantic_core import SchemaValidator, core_schema

def _check(value, info):
    sum(range(200_000))
    return value

_validator = SchemaValidator(core_schema.with_info_plain_validator_function(_check))
_end = time.monotonic() + float(os.environ["FAKE_SDK_SECONDS"])
while time.monotonic() < _end:
    _validator.validate_python(1)
"""


def slow_sdk_env(tmp_path: Path, seconds: float, sdk: str = "mcp") -> dict[str, str]:
    """An environment whose `sdk` package (by default `mcp`, the SDK sagent imports first for AnthropicCLI)
    is `SLOW_NATIVE_SDK`, its import taking `seconds`."""
    import os

    package = tmp_path / "sdk" / sdk
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(SLOW_NATIVE_SDK)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return env | {"PYTHONPATH": str(tmp_path / "sdk"), "FAKE_SDK_SECONDS": str(seconds)}


def test_a_wrong_flag_while_the_sdk_is_still_loading_exits_2_at_once(tmp_path: Path) -> None:
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-m", "sagent", "--provider", "AnthropicCLI", "--auth", "token", "-p", "hi"],
            cwd=tmp_path,
            env=slow_sdk_env(tmp_path / str(_), 20),
            capture_output=True,
            text=True,
            timeout=15,  # the SDK's import would take 20 s: the command does not wait for it
        )
        assert done.returncode == 2, done.stderr
        assert "invalid choice: 'token'" in done.stderr and "FATAL" not in done.stderr


def test_the_ordinary_exit_waits_for_an_sdk_import_under_way(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            """
            import threading, time
            from sagent.cli.exit import leave
            from sagent.providers import prefetch

            prefetch.start("AnthropicCLI")
            time.sleep(0.3)  # the import is under way
            threading.Thread(target=time.sleep, args=(0.2,)).start()  # not a daemon: exit_now returns
            leave(3)
            """
        )
    )
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, str(script)],
            cwd=tmp_path,
            env=slow_sdk_env(tmp_path / str(_), 1.5),
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 3, done.stderr
        assert "FATAL" not in done.stderr


def test_an_exit_with_a_message_says_it_and_exits_1(tmp_path: Path) -> None:
    done = run_script(
        """
        from sagent.cli.exit import exit_code, leave

        leave(exit_code(SystemExit("sagent: cannot go on")))
        """,
        tmp_path,
    )
    assert done.returncode == 1
    assert done.stderr == "sagent: cannot go on\n"


@pytest.mark.parametrize("after", [0.3, 1.0, 2.5])
def test_ctrl_c_while_the_command_starts_exits_130_in_one_line(tmp_path: Path, after: float) -> None:
    """Ctrl-C while the command starts, its provider's SDK still loading (the run, once up, waits for it to
    build its client): one line and status 130, at once, whether it came during sagent's own imports or
    the run's wait; not a traceback of the import under way, nor an abort of the thread running it."""
    import signal
    import time

    env = slow_sdk_env(tmp_path, 30, "anthropic") | {"ANTHROPIC_API_KEY": "sk-test"}
    env |= {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "XDG_DATA_HOME": str(tmp_path / "data")}
    process = subprocess.Popen(
        [sys.executable, "-m", "sagent", "--provider", "anthropic", "-p", "hi"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(after)  # the SDK's import takes 30 s
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=15)
    assert process.returncode == 130, err
    assert err.startswith("sagent: interrupted") and err.count("\n") == 1 and out == ""
