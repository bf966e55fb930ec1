"""The garbage collector is paused while the `sagent` command starts a run, and runs again (over what the
run creates from then on) once the agent is built and the SDK is imported: see `sagent.lib.startup`."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.cli.test_headless import env_for
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response


def run_script(body: str, tmp_path: Path, env: dict[str, str] | None = None) -> dict[str, object]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_collector_resumes_only_when_every_part_of_the_start_up_is_done(tmp_path: Path) -> None:
    seen = run_script(
        """
        import gc, json
        from sagent.lib import startup

        startup.done("main")  # nothing paused: nothing changes
        untouched = gc.isenabled() and gc.get_freeze_count() == 0
        startup.pause()
        startup.expect("sdk")
        paused = not gc.isenabled()
        startup.done("main")
        waits_for_sdk = not gc.isenabled()
        startup.done("sdk")
        print(json.dumps({
            "untouched": untouched, "paused": paused, "waits_for_sdk": waits_for_sdk,
            "enabled": gc.isenabled(), "frozen": gc.get_freeze_count(),
        }))
        """,
        tmp_path,
    )
    assert seen["untouched"] and seen["paused"] and seen["waits_for_sdk"] and seen["enabled"]
    assert isinstance(seen["frozen"], int) and seen["frozen"] > 0  # what start-up built is out of the collector's way


def test_a_run_of_the_command_works_with_the_collector_on_and_a_bad_one_leaves_it_on(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a note\n")
    steps = [tool_use_response([("Read", {"path": "notes.txt"})]), text_response("read it")]
    with FakeAnthropic(steps) as fake:
        seen = run_script(
            f"""
            import contextlib, gc, io, json
            from sagent.cli.main import main
            from sagent.providers import anthropic

            rounds = []
            stream = anthropic.AnthropicModel.stream

            def watched(self, request):
                rounds.append(gc.isenabled())
                return stream(self, request)

            anthropic.AnthropicModel.stream = watched
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = main(["-p", "read notes.txt", "--provider", "anthropic", "--base-url", {fake.url!r},
                             "--output-format", "json"], command=True)
            after_run = gc.isenabled()
            gc.unfreeze()
            try:
                with contextlib.redirect_stderr(io.StringIO()):
                    bad = main(["-p", "x", "--max-turns", "-3"], command=True)
            except SystemExit as refused:  # argparse's error exit
                bad = refused.code
            print(json.dumps({{
                "code": code, "result": json.loads(out.getvalue())["result"], "rounds": rounds,
                "after_run": after_run, "bad": bad, "after_bad": gc.isenabled(),
            }}))
            """,
            tmp_path,
            env_for(fake, tmp_path),
        )
    assert seen["code"] == 0 and seen["result"] == "read it"
    assert seen["rounds"][-1] is True  # the agent's second round runs with the collector on
    assert seen["after_run"] is True
    assert seen["bad"] == 2 and seen["after_bad"] is True  # a run refused at its flags does not leave it off


def test_a_library_call_of_main_leaves_the_collector_alone(tmp_path: Path) -> None:
    with FakeAnthropic([text_response("hello")]) as fake:
        seen = run_script(
            f"""
            import contextlib, gc, io, json
            from sagent.cli.main import main

            with contextlib.redirect_stdout(io.StringIO()):
                code = main(["-p", "hi", "--provider", "anthropic", "--base-url", {fake.url!r}])
            print(json.dumps({{"code": code, "enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}}))
            """,
            tmp_path,
            env_for(fake, tmp_path),
        )
    assert seen == {"code": 0, "enabled": True, "frozen": 0}
