"""`--history N` and the `history` settings key from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_sessions_cli import env_for, sagent
from tests.fakes.anthropic_server import FakeAnthropic, text_response


def test_history_sends_only_the_last_turns_and_the_settings_key_does_the_same(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with FakeAnthropic([text_response(f"Answer {n}.") for n in range(4)]) as fake:
        env = env_for(fake, tmp_path / "data")
        assert sagent(["-p", "the codename is heron"], env, project).returncode == 0
        assert sagent(["--continue", "-p", "second"], env, project).returncode == 0
        done = sagent(["--continue", "--history", "1", "-p", "third"], env, project)
        assert done.returncode == 0, done.stderr
        sent = json.dumps(fake.requests[-1]["body"]["messages"])
        assert "heron" not in sent and "second" not in sent and "2 earlier turns" in sent
        user_settings = Path(env["XDG_CONFIG_HOME"]) / "sagent" / "settings.json"
        user_settings.parent.mkdir(parents=True, exist_ok=True)
        user_settings.write_text('{"history": 2}')
        sagent(["--continue", "-p", "fourth"], env, project)
        sent = json.dumps(fake.requests[-1]["body"]["messages"])
        assert "third" in sent and "second" not in sent
    bad = sagent(["--history", "0", "-p", "x"], env, project)
    assert bad.returncode == 2 and "--history must be at least 1" in bad.stderr
