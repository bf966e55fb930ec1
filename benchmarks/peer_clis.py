"""The coding-agent CLIs `benchmarks/peers.py` runs side by side: how each is installed (pinned, with npm, into
the benchmark's own cache folder), started headless, pointed at a fake provider server on 127.0.0.1 with a
fake key, kept off the network (telemetry, update checks), and what a round's model reply looks like in its
wire format (one shell `echo` through the CLI's own shell tool).

Each CLI gets a private HOME (and config folders) in RUNS, so nothing of the user's own settings or sign-in is
read or written.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.fakes import anthropic_server as anth  # noqa: E402
from tests.fakes import gemini_server as gem  # noqa: E402
from tests.fakes import openai_responses_server as resp  # noqa: E402
from tests.fakes.sse_server import FakeServer, JSONReply  # noqa: E402

CACHE = Path(os.environ.get("SAGENT_BENCH_CACHE", Path.home() / ".cache" / "sagent-bench"))
NPM = CACHE / "npm"
RUNS = CACHE / "run"  # not under /tmp: Codex refuses to set up its sandbox helper below a temporary folder
ANTHROPIC_MODEL = "claude-sonnet-4-6"  # sagent's default Anthropic model: Sonnet, priced from its catalog
OPENAI_MODEL = "gpt-5.4"  # a model Codex offers its shell tool to directly (its default nests it in JS)
GEMINI_MODEL = "gemini-3-flash-preview"
TASK = "Run each shell command I ask for, one at a time, until I say stop."


def shell_command(n: int) -> str:
    """Round n's command: one `echo`, whose output (`ok-100n`) is not in its own text (the quotes go), so the
    next request shows that the command ran."""
    return f'echo ok-"{1000 + n}"'


def shell_output(n: int) -> str:
    return f"ok-{1000 + n}"


@dataclass
class Setup:
    """One run's folders and the fake's address."""

    home: Path
    cwd: Path
    url: str  # the fake's root, http://127.0.0.1:PORT


@dataclass(frozen=True)
class Peer:
    name: str
    package: str | None  # the npm spec, pinned; None for sagent itself
    binary: str  # the executable under node_modules/.bin (or sagent's path)
    wire: str  # "anthropic" | "responses" | "gemini"
    command: Callable[[str, Setup], list[str]]  # (binary, setup) -> argv
    environment: Callable[[Setup], dict[str, str]]  # what the run adds to the base environment
    prepare: Callable[[Setup], None] = lambda setup: None  # settings files in the private home

    @property
    def label(self) -> str:
        if self.package is None:
            return self.name
        return f"{self.name} {self.package.rsplit('@', 1)[1]}"

    def install_dir(self) -> Path:
        assert self.package is not None
        return NPM / self.package.replace("/", "_").replace("@", "_")

    def executable(self) -> Path:
        if self.package is None:
            return Path(self.binary)
        return self.install_dir() / "node_modules" / ".bin" / self.binary


def install(peer: Peer) -> str | None:
    """Install `peer`'s pinned package into the benchmark's npm cache if it is not there; None when it is
    ready, else why it cannot run."""
    if peer.executable().exists():
        return None
    if peer.package is None:
        return f"{peer.executable()} is missing (run `uv sync`)"
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed"
    folder = peer.install_dir()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder), peer.package],
            capture_output=True,
            text=True,
            timeout=900,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return f"npm install {peer.package} took over 15 minutes"
    if done.returncode != 0 or not peer.executable().exists():
        said = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return f"npm install {peer.package} failed: {said[0][:200]}"
    return None


# ------------------------------------------------------------------------------------------ the CLIs


def _sagent_binary() -> str:
    found = shutil.which("sagent", path=str(Path(sys.executable).parent)) or shutil.which("sagent")
    return found or str(Path(sys.executable).parent / "sagent")


def _sagent_env(s: Setup) -> dict[str, str]:
    # Bytecode compiled once into a folder of the benchmark's own, as an installed package keeps it, even
    # where PYTHONDONTWRITEBYTECODE is set (the base environment leaves that out).
    return {
        "ANTHROPIC_API_KEY": "test",
        "XDG_DATA_HOME": str(s.home / "data"),
        "XDG_CONFIG_HOME": str(s.home / "config"),
        "PYTHONPYCACHEPREFIX": str(CACHE / "bytecode"),
    }


def _pi_prepare(s: Setup) -> None:
    folder = s.home / "pi"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": s.url}}}))
    (folder / "settings.json").write_text(json.dumps({"enableInstallTelemetry": False}))


def _claude_env(s: Setup) -> dict[str, str]:
    return {
        "ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_BASE_URL": s.url,
        # Telemetry, error reports, the update check and the feedback survey off; the rest are one each.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def _codex_prepare(s: Setup) -> None:
    folder = s.home / ".codex"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(
        f'model = "{OPENAI_MODEL}"\n'
        'model_provider = "fake"\n'
        "check_for_update_on_startup = false\n"
        "[analytics]\nenabled = false\n"
        "[feedback]\nenabled = false\n"
        # ChatGPT's connectors (apps) and the plugin catalogue: looked up on chatgpt.com and GitHub at start.
        "[features]\napps = false\nplugins = false\n"
        "[model_providers.fake]\n"
        'name = "fake"\n'
        f'base_url = "{s.url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "FAKE_OPENAI_API_KEY"\n'
    )


def _gemini_prepare(s: Setup) -> None:
    folder = s.home / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    (folder / "settings.json").write_text(json.dumps(settings))


SAGENT_FLAGS = ("--model", ANTHROPIC_MODEL, "--output-format", "json")

PEERS = [
    Peer(
        "sagent",
        None,
        _sagent_binary(),
        "anthropic",
        lambda b, s: [b, "-p", TASK, "--provider", "anthropic", "--base-url", s.url, *SAGENT_FLAGS],
        _sagent_env,
    ),
    Peer(
        "pi",
        "@mariozechner/pi-coding-agent@0.73.1",
        "pi",
        "anthropic",
        lambda b, s: [b, "-p", TASK, "--provider", "anthropic", "--model", ANTHROPIC_MODEL],
        lambda s: {"ANTHROPIC_API_KEY": "test", "PI_CODING_AGENT_DIR": str(s.home / "pi"), "PI_OFFLINE": "1"},
        _pi_prepare,
    ),
    Peer(
        "Claude Code",
        "@anthropic-ai/claude-code@2.1.332",
        "claude",
        "anthropic",
        lambda b, s: [b, "-p", TASK, "--model", ANTHROPIC_MODEL, "--allowedTools", "Bash", "--output-format", "json"],
        _claude_env,
    ),
    Peer(
        "Codex",
        "@openai/codex@0.169.0",
        "codex",
        "responses",
        lambda b, s: [b, "exec", "--skip-git-repo-check", "-m", OPENAI_MODEL, TASK],
        lambda s: {"CODEX_HOME": str(s.home / ".codex"), "FAKE_OPENAI_API_KEY": "test"},
        _codex_prepare,
    ),
    Peer(
        "Gemini CLI",
        "@google/gemini-cli@0.61.0",
        "gemini",
        "gemini",
        lambda b, s: [b, "-p", TASK, "--model", GEMINI_MODEL, "--yolo", "--output-format", "json"],
        lambda s: {
            "GEMINI_API_KEY": "test",
            "GOOGLE_GEMINI_BASE_URL": s.url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_TELEMETRY_ENABLED": "false",
            "NO_BROWSER": "true",
        },
        _gemini_prepare,
    ),
]


def environment(peer: Peer, setup: Setup) -> dict[str, str]:
    """The run's whole environment: PATH, a private HOME and the CLI's own settings; no key or setting of the
    user's leaks in."""
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(setup.home), "TERM": "dumb"}
    base["LANG"] = os.environ.get("LANG", "C.UTF-8")
    return base | peer.environment(setup)


# ------------------------------------------------------------------------------- the fake's replies


SHELL_TOOLS = ("bash", "exec_command", "shell_command", "shell", "run_shell_command")


def _tool_names(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    tools: dict[str, dict[str, Any]] = {}
    for tool in body.get("tools") or []:
        for declared in tool.get("functionDeclarations") or [tool]:
            if declared.get("name"):
                tools[declared["name"]] = declared
    return tools


def _shell_tool(body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    for name, tool in _tool_names(body).items():
        if name.lower() in SHELL_TOOLS:
            return name, tool
    return None


def _json_for(schema: dict[str, Any]) -> Any:
    """A small value that fits `schema` (for a CLI's structured side request)."""
    kind = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return schema["enum"][-1]
    if kind == "object":
        return {k: _json_for(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    return {"integer": 10, "number": 10, "boolean": False}.get(kind, "user")


class Script:
    """Answers every request a CLI sends: the agent loop's requests (those offering the shell tool) with a
    shell call per round for `rounds` rounds, then a final text; side requests (token counts, titles, routing,
    checks) with a short answer of the shape they ask for. `main` records which requests were the loop's."""

    def __init__(self, wire: str, rounds: int) -> None:
        self.wire, self.rounds = wire, rounds
        self.main: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any]) -> Any:
        body, path = request["body"], request["path"]
        shell = _shell_tool(body)
        loop = shell is not None and not path.split("?")[0].endswith("/count_tokens")
        if self.wire == "gemini":
            loop = loop and ":streamGenerateContent" in path
        request["loop"] = loop
        if not loop:
            return self._side(request)
        assert shell is not None
        n = len(self.main)
        self.main.append(request)
        if n >= self.rounds:
            return self._text("done")
        name, tool = shell
        command = shell_command(n)
        if self.wire == "anthropic":
            block = {"type": "tool_use", "id": f"toolu_{n:04d}", "name": name, "input": {"command": command}}
            return anth.Reply([block], "tool_use")
        if self.wire == "gemini":
            return gem.gemini_tools([(name, {"command": command})])
        props = (tool.get("parameters") or {}).get("properties") or {}
        if "cmd" in props:
            args: dict[str, Any] = {"cmd": command}
        elif (props.get("command") or {}).get("type") == "array":
            args = {"command": ["bash", "-lc", command]}
        else:
            args = {"command": command}
        return resp.responses_tools([(name, args)])

    def _text(self, text: str) -> Any:
        if self.wire == "anthropic":
            return anth.text_response(text)
        if self.wire == "gemini":
            return gem.gemini_text(text)
        return resp.responses_text(text)

    def _side(self, request: dict[str, Any]) -> Any:
        body, path = request["body"], request["path"]
        if path.split("?")[0].endswith("/count_tokens"):
            return JSONReply(200, {"input_tokens": request["size"] // 4})
        schema = (body.get("generationConfig") or {}).get("responseJsonSchema")
        if schema:
            return gem.gemini_text(json.dumps(_json_for(schema)))
        return self._text("ok")


def fake_server(wire: str, script: Script, *, cache: Any = None) -> FakeServer:
    """The fake for `wire`, every request answered by `script`."""
    steps: list[Any] = [script] * 10_000  # a step may be a function of the request
    server: FakeServer
    if wire == "anthropic":
        server = anth.FakeAnthropic(steps, cache=cache)
    elif wire == "gemini":
        server = gem.FakeGemini(steps)
    else:
        server = resp.FakeResponses(steps)
    server.keep_alive = True  # the APIs keep the connection: a round must not pay for a new one
    return server
