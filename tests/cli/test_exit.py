"""`exit_now`: the `sagent` command leaves without the interpreter's teardown, and loses nothing by it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

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
