"""How sagent starts the Gemini CLI (`gemini`) for `GoogleCLI`: its binary, a private workspace holding the
settings that switch its own tools off and name the MCP bridge as its one tool server, its environment,
its command line, and the typed error for what it says when it fails.

Everything goes through the CLI's documented interfaces: a project settings file (`.gemini/settings.json`
in a workspace folder sagent makes for the agent, trusted with `GEMINI_CLI_TRUST_WORKSPACE`), the
`GEMINI_SYSTEM_MD` system prompt file, `--output-format stream-json`, `--allowed-mcp-server-names`,
`--resume`, and `GEMINI_API_KEY` with `GOOGLE_GEMINI_BASE_URL` when a key is given on purpose. The user's
own `~/.gemini` (their sign-in, their settings) is left where it is and never read by sagent.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from sagent.providers.base import (
    AuthenticationError,
    BadRequestError,
    ContextTooLongError,
    OverloadedError,
    ProviderError,
    RateLimitError,
    ServerError,
)
from sagent.providers.cli_backends.bridge import SERVER_NAME
from sagent.types import ToolSpec

PROVIDER = "google-cli"
BINARY_VARIABLE = "SAGENT_GEMINI_BIN"
"""Names the `gemini` binary to run, when it is not the one on PATH."""
PREFIX = f"mcp_{SERVER_NAME}_"
"""How the Gemini CLI names an MCP tool: `mcp_<server>_<tool>`."""
TOOL_TIMEOUT_MS = 24 * 3600 * 1000
"""How long the CLI waits for one bridged tool call (a tool may wait for the user's approval)."""
AUTH_EXIT_CODE = 41
"""The CLI's exit status when it has no usable sign-in or key."""

KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI")
"""Variables that would make the CLI bill a key (or a Vertex project) instead of the user's own sign-in."""


def find_binary(explicit: str | None = None) -> str:
    """The `gemini` executable: `explicit`, else $SAGENT_GEMINI_BIN, else `gemini` on PATH; a clear
    `BadRequestError` when there is none."""
    wanted = explicit or os.environ.get(BINARY_VARIABLE) or "gemini"
    found = shutil.which(wanted)
    if found is None:
        raise BadRequestError(
            f"the Gemini CLI ({wanted!r}) is not installed or not on PATH: install it with "
            f"`npm install -g @google/gemini-cli` and sign in by running `gemini` once, "
            f"or name the binary with {BINARY_VARIABLE}",
            provider=PROVIDER,
        )
    return found


def settings(bridge_url: str, tools: tuple[ToolSpec, ...], *, keyed: bool) -> dict[str, object]:
    """The project settings of the agent's private workspace: the bridge as the one MCP server (trusted,
    so the CLI asks no confirmation: sagent's own permissions decide), only its tools allowed (`tools.core`
    is an allowlist over every tool, built-in or not), and the CLI's other machinery off."""
    value: dict[str, object] = {
        "mcpServers": {SERVER_NAME: {"httpUrl": bridge_url, "trust": True, "timeout": TOOL_TIMEOUT_MS}},
        "mcp": {"allowed": [SERVER_NAME]},
        "tools": {"core": [PREFIX + t.name for t in tools] or [PREFIX + "none"]},
        "hooksConfig": {"enabled": False},
        "skills": {"enabled": False},
        "experimental": {"enableAgents": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "checkpointing": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "model": {"skipNextSpeakerCheck": True, "disableLoopDetection": True},  # sagent bounds its own rounds
        "useWriteTodos": False,
    }
    if keyed:
        value["security"] = {"auth": {"selectedType": "gemini-api-key"}}
    return value


class Workspace:
    """The folder the CLI runs in: empty but for its settings, so nothing of the user's project is in the
    CLI's own reach (an `@path` in a prompt resolves here), with the system prompt file beside it."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="sagent-gemini-"))
        (self.root / ".gemini").mkdir()
        self.system_file = self.root / ".gemini" / "sagent-system.md"

    def write(self, config: dict[str, object], system: str) -> None:
        """Write the settings and the system prompt the next CLI run reads."""
        (self.root / ".gemini" / "settings.json").write_text(json.dumps(config, indent=2))
        self.system_file.write_text(system)

    def remove(self) -> None:
        """Delete the folder."""
        shutil.rmtree(self.root, ignore_errors=True)


def environment(workspace: Workspace, *, api_key: str | None, base_url: str | None) -> dict[str, str]:
    """The CLI's environment: the user's own, less any key (their sign-in pays unless a key is given on
    purpose), with sagent's system prompt, the workspace trusted, and no telemetry or browser."""
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
    if api_key:  # a key given on purpose is billed, at the endpoint named (GOOGLE_GEMINI_BASE_URL honoured)
        env["GEMINI_API_KEY"] = api_key
        url = base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL")
        if url:
            env["GOOGLE_GEMINI_BASE_URL"] = url
    env["GEMINI_SYSTEM_MD"] = str(workspace.system_file)
    env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
    env["GEMINI_TELEMETRY_ENABLED"] = "false"
    env["NO_BROWSER"] = "true"  # a sign-in never opens a browser from a headless run
    return env


def command(binary: str, model: str, resume: str | None) -> list[str]:
    """The command line of one headless run; the prompt goes on stdin."""
    argv = [binary, "--output-format", "stream-json", "--allowed-mcp-server-names", SERVER_NAME, "--prompt", ""]
    if model and model != "auto":
        argv += ["--model", model]
    if resume:
        argv += ["--resume", resume]
    return argv


def safe_prompt(text: str) -> str:
    """`text` as a prompt the CLI takes literally: one starting with `/` would run the CLI's own slash
    command, so it is set off by a line break."""
    return "\n" + text if text.startswith("/") else text


def error_from(text: str, exit_code: int | None = None) -> ProviderError:
    """The typed error for a failed CLI run, from what the CLI said and its exit status."""
    said = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text).strip()[-400:]  # without the terminal's colours
    lowered = said.lower()
    if exit_code == AUTH_EXIT_CODE or any(
        w in lowered
        for w in ("auth method", "api key not valid", "unauthenticated", "401", "log in", "login", "authorization")
    ):
        return AuthenticationError(
            f"the Gemini CLI is not signed in or its key was refused ({said[:300]}); run `gemini` once to "
            "sign in with Google",
            provider=PROVIDER,
        )
    if "429" in lowered or "resource_exhausted" in lowered or "quota" in lowered or "rate limit" in lowered:
        return RateLimitError(said[:300], provider=PROVIDER)
    if "503" in lowered or "overloaded" in lowered or "unavailable" in lowered:
        return OverloadedError(said[:300], provider=PROVIDER)
    if "token count" in lowered and "exceeds" in lowered:
        return ContextTooLongError(said[:300], provider=PROVIDER)
    return ServerError(f"the Gemini CLI failed: {said[:300]}", provider=PROVIDER)
