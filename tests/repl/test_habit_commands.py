"""The commands Claude Code and pi users reach for, at function level: /status, /config, /init, /doctor and
`# note`, on a REPL with a scripted model (the tmux tests drive the same in a real terminal)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.cli.flags import build_parser, parse_with_settings
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.repl.app import Repl
from sagent.repl.commands import run_command
from sagent.repl.launch import launch_of
from sagent.repl.render import Settings
from sagent.repl.status_cmd import key_source
from sagent.tools import tools_by_name

SECRET = "sk-ant-status-secret-0123456789"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


def repl_on(agent: Agent, switched: list[tuple[str | None, str | None]] | None = None) -> Repl:
    def switch(current: Agent, provider: str | None, model: str | None) -> str:
        if switched is not None:
            switched.append((provider, model))
        return f"switched to {provider}/{model}"

    return Repl(agent, new_agent=lambda path=None: agent, settings=Settings(width=100, color=False), switch=switch)


@pytest.fixture
def repl(project: Path) -> Iterator[Repl]:
    agent = Agent(ScriptedModel([]), cwd=project)
    yield repl_on(agent)
    asyncio.run(agent.aclose())


def run(repl: Repl, text: str, capsys: pytest.CaptureFixture[str]) -> str:
    asyncio.run(run_command(repl, text))
    return capsys.readouterr().out


def sent_text(model: ScriptedModel) -> str:
    """Everything the user said in the model's first request."""
    return "\n".join(str(m) for m in model.requests[0].messages if type(m).__name__ == "UserMessage")


# -------------------------------------------------------------------------------------------- /status


def test_status_shows_what_the_repl_runs_on(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from sagent import __version__
    from sagent.agent.memory import memory_files, memory_prompt

    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")
    monkeypatch.chdir(project)
    (project / "AGENTS.md").write_text("Use tabs.\n")
    args = parse_with_settings(build_parser(), ["--cwd", str(project)], notice=False)
    assert args is not None
    model = ScriptedModel([], provider="anthropic", name="claude-sonnet-4-6")
    agent = Agent(model, cwd=project, system=memory_prompt(memory_files(project)))
    repl = repl_on(agent)
    repl.state.launch = launch_of(args)
    out = run(repl, "/status", capsys)
    asyncio.run(agent.aclose())
    assert SECRET not in out
    rows = {line.split("  ")[1].strip(): line for line in out.splitlines() if line.startswith("  ")}
    assert f"sagent {__version__}" in rows["version"]
    assert "anthropic" in rows["provider"] and "claude-sonnet-4-6" in rows["model"]
    assert "ANTHROPIC_API_KEY (set, from the environment)" in rows["key"]
    assert "workspace-write" in rows["sandbox"]
    assert agent.session_id in rows["session"]
    assert "none (ephemeral" in rows["session file"]
    assert rows["permission mode"].split()[-1] in ("none", "default") or "none" in rows["permission mode"]
    assert str(project) in rows["cwd"]
    assert rows["endpoint"].endswith("http://127.0.0.1:9/ (ANTHROPIC_BASE_URL)")
    assert rows["memory"].endswith(str(project / "AGENTS.md"))
    assert f"user     {Path(os.environ['XDG_CONFIG_HOME']) / 'sagent' / 'settings.json'}  (none)" in out
    assert f"project  {project / '.sagent' / 'settings.json'}  (none)" in out


def test_status_says_which_settings_file_set_the_key_and_which_files_were_skipped(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "placeholder")  # restored after the test; the file's env sets it
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "sagent" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"env": {"ANTHROPIC_API_KEY": SECRET}}))
    (project / ".sagent").mkdir()
    (project / ".sagent" / "settings.json").write_text('{"model": "claude-opus-4-8"}')  # folder not trusted
    args = parse_with_settings(build_parser(), ["--cwd", str(project)], notice=False)
    assert args is not None
    agent = Agent(ScriptedModel([], provider="anthropic"), cwd=project)
    repl = repl_on(agent)
    repl.state.launch = launch_of(args)
    out = run(repl, "/status", capsys)
    asyncio.run(agent.aclose())
    assert SECRET not in out
    assert f"ANTHROPIC_API_KEY (set, from env in {user})" in out
    assert f"user     {user}  (loaded)" in out
    assert f"project  {project / '.sagent' / 'settings.json'}  (skipped: folder not trusted" in out


def test_key_source_for_each_kind_of_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    from sagent.repl.launch import Launch

    assert key_source("anthropic", False, None) == "ANTHROPIC_API_KEY is not set"
    monkeypatch.setenv("GOOGLE_API_KEY", SECRET)
    assert key_source("google", False, None) == "GOOGLE_API_KEY (set, from the environment)"
    assert "claude CLI's own sign-in" in key_source("anthropic-cli", True, None)
    monkeypatch.setenv("SAGENT_CLAUDE_API_KEY", SECRET)
    assert "billed through the claude CLI" in key_source("anthropic-cli", True, None)
    assert key_source("local", False, None) == "none needed (a local model)"
    monkeypatch.setenv("MY_KEY", SECRET)
    assert key_source("openai-compat", False, Launch(api_key_env="MY_KEY")) == "MY_KEY (set, from the environment)"
    assert key_source("ollama", False, None) == "none needed"
    assert key_source("scripted", False, None) == "none (the scripted model takes no key)"


def test_status_without_a_launch_reads_the_settings_files(repl: Repl, capsys: pytest.CaptureFixture[str]) -> None:
    out = run(repl, "/status", capsys)
    assert "settings files" in out and "user " in out and "local " in out


# -------------------------------------------------------------------------------------------- /config


@pytest.fixture
def trusted(project: Path) -> Path:
    from sagent.cli.trust import trust

    trust(project)
    return project


def test_config_lists_every_key_with_its_origin(repl: Repl, capsys: pytest.CaptureFixture[str]) -> None:
    out = run(repl, "/config", capsys)
    assert "settings files" in out
    lines = out.splitlines()
    assert any(line.split()[:3] == ["maxDepth", "3", "default"] for line in lines if line.split())
    assert "/config set KEY VALUE" in lines[-1]


def test_config_set_writes_the_user_file_by_default_and_switches_the_model_now(
    trusted: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    switched: list[tuple[str | None, str | None]] = []
    agent = Agent(ScriptedModel([]), cwd=trusted)
    repl = repl_on(agent, switched)
    out = run(repl, "/config set model claude-opus-4-8", capsys)
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "sagent" / "settings.json"
    assert json.loads(user.read_text()) == {"model": "claude-opus-4-8"}
    assert not (trusted / ".sagent" / "settings.local.json").exists()
    assert switched == [(None, "claude-opus-4-8")]
    assert f"saved in {user} (user)" in out and "switched to" in out
    out = run(repl, "/config get model", capsys)
    assert out.strip() == f'model = "claude-opus-4-8"  (from {user})'
    out = run(repl, "/config set model claude-haiku-4-5 --scope local", capsys)
    local = trusted / ".sagent" / "settings.local.json"
    assert json.loads(local.read_text()) == {"model": "claude-haiku-4-5"}
    assert f"saved in {local} (local)" in out and switched[-1] == (None, "claude-haiku-4-5")

    out = run(repl, "/config set effort high", capsys)
    assert agent.settings.effort == "high" and "in this REPL now" in out
    out = run(repl, "/config set compactAt 0.6", capsys)
    assert "applies from the next start" in out
    asyncio.run(agent.aclose())


def test_config_set_takes_a_scope_and_typed_values(
    repl: Repl, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "sagent" / "settings.json"
    run(repl, "/config set maxTokens 4000 --scope user", capsys)
    run(repl, "/config set --scope=user tools Read,Grep", capsys)
    run(repl, "/config set env.MY_FLAG on --scope user", capsys)
    run(repl, "/config set appendSystemPrompt Answer in French. --scope user", capsys)
    assert json.loads(user.read_text()) == {
        "maxTokens": 4000,
        "tools": ["Read", "Grep"],
        "env": {"MY_FLAG": "on"},
        "appendSystemPrompt": "Answer in French.",
    }
    assert repl.agent.settings.max_tokens == 4000  # a key that can take effect now does
    out = run(repl, "/config unset maxTokens --scope user", capsys)
    assert "removed" in out and "maxTokens" not in json.loads(user.read_text())


def test_config_refuses_a_bad_value_and_leaves_the_file_as_it_was(
    trusted: Path, repl: Repl, capsys: pytest.CaptureFixture[str]
) -> None:
    local = trusted / ".sagent" / "settings.local.json"
    local.parent.mkdir()
    local.write_text('{\n    "maxTokens": 100\n}\n')
    before = local.read_bytes()
    for bad in ("/config set maxTokens lots", "/config set maxTokens 0", "/config set effort extreme"):
        out = run(repl, f"{bad} --scope local", capsys)
        assert out.startswith("/config: not saved:") and str(local) in out
        assert local.read_bytes() == before
    out = run(repl, "/config set maxTokens 0 --scope user", capsys)
    assert "not saved" in out and not (Path(os.environ["XDG_CONFIG_HOME"]) / "sagent" / "settings.json").exists()


def test_config_unknown_key_suggests_the_nearest(repl: Repl, capsys: pytest.CaptureFixture[str]) -> None:
    out = run(repl, "/config set modle claude-opus-4-8", capsys)
    assert out.strip() == '/config: unknown settings key "modle"; did you mean "model"? (the keys: docs/settings.md)'
    assert 'did you mean "model"?' in run(repl, "/config get modle", capsys)
    assert "usage: /config" in run(repl, "/config set model", capsys)
    assert "--scope takes one of user, project, local" in run(repl, "/config set model x --scope team", capsys)


def test_config_in_a_folder_not_trusted_says_the_file_does_not_apply(
    repl: Repl, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run(repl, "/config set model claude-opus-4-8 --scope local", capsys)
    assert "not trusted" in out and f"sagent trust {project}" in out


def test_config_says_when_a_flag_wins(trusted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = parse_with_settings(build_parser(), ["--cwd", str(trusted), "--model", "gpt-5.4"], notice=False)
    assert args is not None
    switched: list[tuple[str | None, str | None]] = []
    agent = Agent(ScriptedModel([]), cwd=trusted)
    repl = repl_on(agent, switched)
    repl.state.launch = launch_of(args)
    out = run(repl, "/config set model claude-opus-4-8", capsys)
    assert "--model on the command line wins" in out and switched == []
    assert run(repl, "/config get model", capsys).strip() == 'model = "gpt-5.4"  (from flag)'
    asyncio.run(agent.aclose())


# ---------------------------------------------------------------------------------------------- /init


def init_agent(project: Path, steps: list) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(steps)
    tools = tools_by_name(["List", "Read", "Glob", "Grep", "Write", "Edit"])
    return Agent(model, tools=tools, cwd=project), model


def run_init(repl: Repl, capsys: pytest.CaptureFixture[str], text: str = "/init") -> str:
    async def go() -> None:
        await run_command(repl, text)
        if repl.task is not None:
            await repl.task

    asyncio.run(go())
    return capsys.readouterr().out


def test_init_writes_agents_md_through_the_agents_tools(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    written = "# demo\n\nRun the tests with `pytest`.\n"
    agent, model = init_agent(
        project,
        [
            tool_turn(("Read", {"path": "pyproject.toml"})),
            tool_turn(("Write", {"path": "AGENTS.md", "content": written})),
            text_turn("Wrote AGENTS.md."),
        ],
    )
    repl = repl_on(agent)
    out = run_init(repl, capsys)
    assert (project / "AGENTS.md").read_text() == written
    prompt = sent_text(model)
    assert "Write AGENTS.md" in prompt and "Look at this repository" in prompt and "test" in prompt
    assert f"/init: writing {project / 'AGENTS.md'}" in out
    # The file is what sagent reads as project memory at the next session's start.
    from sagent.agent.memory import memory_files

    assert [f.path for f in memory_files(project)] == [project / "AGENTS.md"]
    asyncio.run(agent.aclose())


def test_init_improves_an_existing_file_rather_than_replacing_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "CLAUDE.md").write_text("Always run `make lint`.\n")
    agent, model = init_agent(project, [text_turn("It is fine.")])
    repl = repl_on(agent)
    out = run_init(repl, capsys)
    prompt = sent_text(model)
    assert "Improve CLAUDE.md" in prompt and "Read CLAUDE.md first" in prompt and "rather than replacing" in prompt
    assert "improving" in out and str(project / "CLAUDE.md") in out
    assert not (project / "AGENTS.md").exists()  # no second memory file that would say it all twice
    asyncio.run(agent.aclose())


def test_init_from_a_subfolder_writes_at_the_repository_root(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    agent, model = init_agent(sub, [text_turn("ok")])
    run_init(repl_on(agent), capsys)
    assert f"Write {project / 'AGENTS.md'}:" in sent_text(model)
    asyncio.run(agent.aclose())


def test_init_without_a_writing_tool_or_with_arguments_says_why(
    repl: Repl, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run_init(repl, capsys)
    assert out.startswith("/init: /init needs the Write or Edit tool") and "--tools" in out
    agent, model = init_agent(project, [])
    out = run_init(repl_on(agent), capsys, "/init now")
    assert out.startswith("/init: usage: /init") and model.requests == []
    asyncio.run(agent.aclose())


# ------------------------------------------------------------------------------------------ # notes


def submit(repl: Repl, *texts: str) -> None:
    """Each text as Enter takes it, one after the other's turn, in one event loop (the agent's)."""

    async def go() -> None:
        for text in texts:
            repl.submit(text)
            if repl.task is not None:
                await repl.task

    asyncio.run(go())


def test_a_hash_note_goes_to_the_project_memory_and_not_to_the_model(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "src").mkdir()
    model = ScriptedModel([])
    agent = Agent(model, cwd=project / "src")  # in a subfolder: the note goes to the repository root
    repl = repl_on(agent)
    submit(repl, "# use tabs, not spaces")
    submit(repl, "#  run make lint before committing ")
    assert (project / "AGENTS.md").read_text() == "- use tabs, not spaces\n- run make lint before committing\n"
    assert model.requests == []
    out = capsys.readouterr().out
    assert f"added to {project / 'AGENTS.md'}" in out
    from sagent.agent.memory import memory_files

    assert "use tabs" in memory_files(project / "src")[0].text
    asyncio.run(agent.aclose())


def test_a_hash_note_goes_to_the_nearest_memory_file_sagent_reads(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sub = project / "app"
    sub.mkdir()
    (project / "AGENTS.md").write_text("root rules")  # no final newline: the note starts on a line of its own
    (sub / "CLAUDE.md").write_text("app rules\n")
    agent = Agent(ScriptedModel([]), cwd=sub)
    submit(repl_on(agent), "# keep the API stable")
    assert (sub / "CLAUDE.md").read_text() == "app rules\n- keep the API stable\n"
    assert (project / "AGENTS.md").read_text() == "root rules"
    agent = Agent(ScriptedModel([]), cwd=project)
    submit(repl_on(agent), "#one more")
    assert (project / "AGENTS.md").read_text() == "root rules\n- one more\n"
    asyncio.run(agent.aclose())


def test_a_multiline_message_or_a_leading_space_is_sent_as_usual(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = ScriptedModel([text_turn("a heading"), text_turn("a tag")])
    agent = Agent(model, cwd=project)
    repl = repl_on(agent)
    submit(repl, "# Title\n\nexplain this", " #hashtag")
    assert len(model.requests) == 2 and not (project / "AGENTS.md").exists()
    asyncio.run(agent.aclose())


def test_an_empty_note_or_a_linked_memory_file_is_refused(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = ScriptedModel([])
    agent = Agent(model, cwd=project)
    repl = repl_on(agent)
    submit(repl, "#")
    assert "# NOTE adds NOTE" in capsys.readouterr().out
    outside = tmp_path / "elsewhere.md"
    outside.write_text("mine\n")
    (project / "AGENTS.md").symlink_to(outside)
    submit(repl, "# leak")
    assert "not saved" in capsys.readouterr().out and outside.read_text() == "mine\n"
    assert model.requests == []
    asyncio.run(agent.aclose())


# -------------------------------------------------------------------------------------------- /doctor


def test_doctor_prints_the_checks_beside_the_repl(
    repl: Repl, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)

    async def go() -> None:
        await run_command(repl, "/doctor")
        while repl._tasks:
            await asyncio.gather(*list(repl._tasks))

    asyncio.run(go())
    out = capsys.readouterr().out
    assert out.startswith("checking the install…")
    assert "API keys" in out and "OPENAI_API_KEY" in out and SECRET not in out
    assert "sandbox" in out and "ripgrep" in out and "NATS" in out and "local model" in out


def test_config_completes_its_verbs_and_the_settings_keys(repl: Repl) -> None:
    from prompt_toolkit.document import Document

    from sagent.repl.screen import SlashCompleter

    completions = [c.text for c in SlashCompleter(repl).get_completions(Document("/config set max"), None)]
    assert "set maxTokens" in completions and "set maxBudgetUsd" in completions
    assert all(c.startswith("set max") for c in completions)


def test_config_sets_a_member_of_a_merged_object(trusted: Path, repl: Repl, capsys: pytest.CaptureFixture[str]) -> None:
    local = Path(os.environ["XDG_CONFIG_HOME"]) / "sagent" / "settings.json"  # the user's file, by default
    out = run(repl, "/config set permissions.defaultMode plan", capsys)
    assert "saved in" in out and "next start" in out
    run(repl, '/config set permissions.allow ["Bash(ls:*)"]', capsys)
    run(repl, "/config set sandbox.network true", capsys)
    assert json.loads(local.read_text()) == {
        "permissions": {"defaultMode": "plan", "allow": ["Bash(ls:*)"]},
        "sandbox": {"network": True},
    }
    assert run(repl, "/config get permissions.defaultMode", capsys).strip() == (
        f'permissions.defaultMode = "plan"  (from {local})'
    )
    out = run(repl, "/config set permissions.allow Bash", capsys)  # not a list: refused, file unchanged
    assert out.startswith("/config: not saved:") and "permissions.allow" in out
    for refused in ("permissions.defaultMode planning", "sandbox.mode strict", 'permissions.deny ["Bash("]'):
        assert run(repl, f"/config set {refused}", capsys).startswith("/config: not saved:")
    assert json.loads(local.read_text())["permissions"]["defaultMode"] == "plan"
    run(repl, "/config unset permissions.defaultMode", capsys)
    assert json.loads(local.read_text())["permissions"] == {"allow": ["Bash(ls:*)"]}
    assert 'unknown settings key "model.name"' in run(repl, "/config set model.name x", capsys)


def test_config_never_prints_a_secret_it_keeps_in_env(
    trusted: Path, repl: Repl, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run(repl, f"/config set env.OPENAI_API_KEY {SECRET} --scope local", capsys)
    assert SECRET not in out and "hidden" in out
    assert json.loads((trusted / ".sagent" / "settings.local.json").read_text()) == {"env": {"OPENAI_API_KEY": SECRET}}
    for shown in ("/config get env.OPENAI_API_KEY", "/config"):
        out = run(repl, shown, capsys)
        assert SECRET not in out and "hidden" in out
    out = run(repl, "/config set env.LOG_LEVEL debug", capsys)
    assert 'env.LOG_LEVEL = "debug"' in out


def test_config_keeps_a_private_file_private(repl: Repl, capsys: pytest.CaptureFixture[str]) -> None:
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "sagent" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('{"env": {"ANTHROPIC_API_KEY": "sk-ant-kept"}}')
    user.chmod(0o600)
    run(repl, "/config set maxTokens 2000 --scope user", capsys)
    assert json.loads(user.read_text()) == {"env": {"ANTHROPIC_API_KEY": "sk-ant-kept"}, "maxTokens": 2000}
    assert user.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in user.parent.iterdir()] == ["settings.json"]  # no partial file left behind


def test_config_mends_a_file_with_two_bad_values_one_at_a_time(repl: Repl, capsys: pytest.CaptureFixture[str]) -> None:
    """A change that does not make the settings worse is kept even while another key is still refused (it
    says so), so a file with two bad keys is mended from /config as well as by hand."""
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "sagent" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"maxTokens": "lots", "effort": "ultra"}))
    out = run(repl, "/config set maxTokens 100", capsys)
    assert "saved in" in out and "a run still refuses the settings" in out and '"effort"' in out
    out = run(repl, "/config set effort high", capsys)
    assert "saved in" in out and "still refuses" not in out
    assert json.loads(user.read_text()) == {"maxTokens": 100, "effort": "high"}
    assert run(repl, "/config set maxTokens lots", capsys).startswith("/config: not saved:")


def test_config_and_sagent_config_set_write_the_same_file(
    repl: Repl, project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sagent.cli.config_cmd import config_command

    user = Path(os.environ["XDG_CONFIG_HOME"]) / "sagent" / "settings.json"
    run(repl, "/config set model claude-opus-4-8", capsys)
    monkeypatch.chdir(project)
    assert config_command(["set", "permissions.defaultMode", "plan"]) == 0
    assert json.loads(user.read_text()) == {"model": "claude-opus-4-8", "permissions": {"defaultMode": "plan"}}
