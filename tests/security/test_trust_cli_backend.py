"""The Claude Code CLI, run by sagent as a model (AnthropicCLI), is started reading only the user's own Claude
settings: a repository's `.claude/settings.json` (hooks, `env` moving ANTHROPIC_BASE_URL, an apiKeyHelper)
would otherwise run with the user's login in whatever folder sagent works in. A stand-in `claude` records
the command line it was started with."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from sagent.providers.cli_backends.claude import ClaudeCLIModel
from sagent.types import ModelRequest, UserMessage


def test_the_claude_cli_is_started_with_the_users_settings_only(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    marker = tmp_path / "hook-ran"
    hook = {"hooks": [{"type": "command", "command": f"touch {marker}"}]}
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [hook]}}))
    argv_file = tmp_path / "argv.json"
    claude = tmp_path / "claude"
    claude.write_text(
        "#!/usr/bin/env python3\nimport json, sys\n"
        f"json.dump(sys.argv[1:], open({str(argv_file)!r}, 'w'))\nsys.exit(3)\n"
    )
    claude.chmod(0o755)
    model = ClaudeCLIModel("claude-sonnet-4-6", api_key="test", binary=str(claude), cwd=repo)

    async def ask() -> None:
        async for _ in model.stream(ModelRequest("sys", (UserMessage.of("hi"),))):
            pass

    with pytest.raises(Exception):  # noqa: B017 (the stand-in exits at once: any error will do)
        asyncio.run(ask())
    argv = json.loads(argv_file.read_text())
    assert argv[argv.index("--setting-sources") + 1] == "user", argv
    assert "--strict-mcp-config" in argv
