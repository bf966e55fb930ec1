"""`sagent doctor` (and the REPL's `/doctor`): is this install ready to work, and how to fix what is not.

Each check says what it found and, when something is wrong, the command or setting that fixes it. A check
is `fail` when sagent cannot work as configured (no model to run on, a settings file it refuses, a required
sandbox that cannot start, a configured NATS server it cannot reach), `warn` when something useful is missing
(a sandbox, ripgrep, the command on PATH), `info` for what is optional and absent (a subscription CLI). The
command exits 1 when a check failed, else 0. Keys are named, never shown.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

USAGE = """\
usage: sagent doctor [--json] [--cwd DIR]

Checks the install and says how to fix each problem: sagent and Python, the `sagent` command on PATH, the
settings files, the API keys (named, never shown), the subscription CLIs (claude, codex, gemini), the OS
sandbox (bubblewrap), ripgrep, the NATS server SAGENT_NATS_URL names, the local model (llama.cpp and the
embedded SmolLM2), and that some model can run.

  --json     one JSON object: {"ok": bool, "checks": [{name, status, detail, fix}]}
  --cwd DIR  the project whose settings files are checked (default: the current folder)
  -h, --help this text

Exit 0 when every required check passes (warnings allowed), 1 when one fails, 2 for bad usage.
"""

CLI_TIMEOUT_S = 5.0
"""How long a subscription CLI (or ripgrep) may take to print its version."""
NATS_TIMEOUT_S = 2.0
"""How long the NATS server may take to accept a connection and greet."""
MARKS = {"ok": "✓", "warn": "!", "fail": "✗", "info": "·"}


@dataclass(frozen=True)
class Check:
    """One finding: its name, `ok`, `warn`, `fail` or `info`, what was found, and how to fix it."""

    name: str
    status: str
    detail: str
    fix: str = ""


def run_checks(cwd: Path) -> list[Check]:
    """Every check, in the order they are shown."""
    found = [
        _install(),
        _on_path(),
        _settings(cwd),
        _keys(_environment(cwd)),
        *[_cli(name) for name in ("claude", "codex", "gemini")],
        _sandbox(cwd),
        _ripgrep(),
        _nats(),
        _local_model(),
    ]
    return [*found, _runnable(found, cwd)]


def passed(checks: list[Check]) -> bool:
    """True when no required check failed."""
    return all(c.status != "fail" for c in checks)


def lines_of(checks: list[Check], mark: Callable[[str, str], str] = lambda status, text: text) -> list[str]:
    """The checks as lines for a person: a mark, the name, what was found, and `fix:` under a problem.
    `mark(status, text)` may colour the mark."""
    width = max(len(c.name) for c in checks)
    lines = []
    for c in checks:
        lines.append(f"{mark(c.status, MARKS[c.status])} {c.name:<{width}}  {c.detail}")
        if c.fix and c.status in ("warn", "fail"):
            lines.append(f"  {'':<{width}}  fix: {c.fix}")
    failed = sum(c.status == "fail" for c in checks)
    warned = sum(c.status == "warn" for c in checks)
    verdict = "ready" if not failed else f"{failed} problem{'s' if failed > 1 else ''} to fix"
    lines.append(verdict + (f", {warned} warning{'s' if warned > 1 else ''}" if warned else ""))
    return lines


def doctor_command(argv: list[str]) -> int:
    """`sagent doctor [--json] [--cwd DIR]`: 0 when every required check passes, 1 when one fails."""
    from sagent.cli.json_cwd_args import json_cwd_args

    parsed = json_cwd_args(argv, "doctor", USAGE)
    if isinstance(parsed, int):
        return parsed
    as_json, cwd = parsed
    checks = run_checks(cwd)
    if as_json:
        text = json.dumps({"ok": passed(checks), "checks": [asdict(c) for c in checks]}, indent=2) + "\n"
    else:
        text = "\n".join(lines_of(checks)) + "\n"
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `sagent doctor | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0 if passed(checks) else 1


# -------------------------------------------------------------------------------------------- checks


def _checkout() -> Path | None:
    """The source checkout this sagent runs from (an editable install), or None."""
    root = Path(__file__).resolve().parents[2]
    project = root / "pyproject.toml"
    try:
        return root if project.is_file() and 'name = "sagent"' in project.read_text(encoding="utf-8") else None
    except OSError:
        return None


def _install_command(force: bool = False) -> str:
    """How to put this sagent on PATH, from its checkout (PyPI's `sagent` is someone else's project)."""
    checkout = _checkout()
    where = str(checkout) if checkout else "/path/to/your/sagent/checkout"
    flag = "--force " if force else ""
    return f"uv tool install {flag}{where} (or pipx install {flag}{where}); PyPI's `sagent` is another project"


def _install() -> Check:
    from sagent import __version__

    python = ".".join(map(str, sys.version_info[:3]))
    package = Path(__file__).resolve().parents[1]
    detail = f"sagent {__version__} on Python {python} ({sys.executable}), from {package}"
    return Check("install", "ok", detail)


def _on_path() -> Check:
    from sagent import __version__

    found = shutil.which("sagent")
    if not found:
        return Check("command", "warn", "`sagent` is not on PATH", f"put it there: {_install_command()}")
    said = _version_of("sagent")[1]
    if said == f"sagent {__version__}":
        return Check("command", "ok", f"`sagent` on PATH: {found}")
    if said.startswith("sagent ") and said[7:8].isdigit():
        detail = f"`sagent` on PATH ({found}) is another install of it: {said}, not {__version__}"
    else:
        detail = f"`sagent` on PATH ({found}) is not this program (its --version said: {said[:80]})"
    return Check("command", "warn", detail, f"put this one there: {_install_command(force=True)}")


def _settings(cwd: Path) -> Check:
    from sagent.cli.settings_files import SettingsError, load

    try:
        loaded = load(cwd)
    except SettingsError as error:
        return Check("settings", "fail", str(error), "fix that file (docs/settings.md lists the keys)")
    used = [f"{f.scope} {f.path}" for f in loaded.files if f.exists and f.path not in loaded.skipped]
    detail = "loaded: " + ("; ".join(used) if used else "none (every setting at its default)")
    if loaded.skipped:
        skipped = ", ".join(str(p) for p in loaded.skipped)
        return Check(
            "settings", "warn", f"{detail}; skipped (folder not trusted): {skipped}", f"sagent trust {loaded.root}"
        )
    if loaded.warnings:
        return Check("settings", "warn", f"{detail}; {'; '.join(loaded.warnings)}", "see docs/settings.md")
    return Check("settings", "ok", detail)


def _key_variables() -> list[str]:
    """The API key variables of the providers that bill a key (not the model CLIs' optional ones)."""
    from sagent.providers.specs import SPECS

    names = [v for s in SPECS if s.key_required for v in s.key_variables]
    return list(dict.fromkeys(names))


def _settings_values(cwd: Path) -> dict[str, Any]:
    """The merged settings files' values for `cwd`; empty when a file cannot be used (its own check says so)."""
    from sagent.cli.settings_files import SettingsError, load

    try:
        return load(cwd).values
    except SettingsError:
        return {}


def _environment(cwd: Path) -> dict[str, str]:
    """The environment a run in `cwd` gets: this one, with the settings files' `env` over it."""
    env = _settings_values(cwd).get("env") or {}
    return {**os.environ, **env}


def _keys(environment: dict[str, str]) -> Check:
    names = _key_variables()
    present = [n for n in names if environment.get(n)]
    from_files = [n for n in present if not os.environ.get(n) or os.environ[n] != environment[n]]
    if present:
        shown = ", ".join(n + (" (a settings file's env)" if n in from_files else "") for n in present)
        return Check("API keys", "ok", f"set: {shown}; {len(names) - len(present)} other provider variables not set")
    return Check(
        "API keys",
        "warn",
        f"none set ({', '.join(names[:3])}, ...)",
        "export ANTHROPIC_API_KEY=... (or another; `sagent providers` lists each provider's variable)",
    )


def _version_of(program: str) -> tuple[str | None, str]:
    """The path of `program` and the first line its `--version` prints (or why it printed none)."""
    path = shutil.which(program)
    if path is None:
        return None, "not installed"
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=CLI_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError) as error:
        return path, f"`{program} --version` failed: {error}"
    said = (done.stdout.strip() or done.stderr.strip()).splitlines()
    if done.returncode != 0:
        return path, f"`{program} --version` exited {done.returncode}" + (f": {said[0]}" if said else "")
    return path, said[0] if said else "(printed no version)"


CLI_PROVIDERS = {"claude": "anthropic-cli", "codex": "openai-subscription", "gemini": "google-cli"}
CLI_PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "gemini": "@google/gemini-cli"}


def _cli(program: str) -> Check:
    path, version = _version_of(program)
    provider = CLI_PROVIDERS[program]
    name = f"{program} CLI"
    if path is None:
        fix = f"for a {program} subscription: npm install -g {CLI_PACKAGES[program]}, sign in, --provider {provider}"
        return Check(name, "info", "not installed (optional: --provider " + provider + ")", fix)
    if version.startswith(f"`{program} --version`"):
        return Check(name, "warn", f"{path}: {version}", f"reinstall it: npm install -g {CLI_PACKAGES[program]}")
    return Check(name, "ok", f"{version} at {path} (--provider {provider})")


def _sandbox_required(cwd: Path) -> bool:
    from sagent.cli.settings_files import SettingsError, load

    try:
        sandbox = load(cwd).values.get("sandbox") or {}
    except SettingsError:
        return False
    return bool(sandbox.get("required")) and sandbox.get("mode") != "danger-full-access"


def _sandbox(cwd: Path) -> Check:
    from sagent.sandbox.bwrap import bwrap_path, unavailable

    reason = unavailable()
    if reason is None:
        return Check("sandbox", "ok", f"bubblewrap works ({bwrap_path()}): Bash commands run in the OS sandbox")
    if not sys.platform.startswith("linux"):
        fix = "none yet on this system; start with --sandbox danger-full-access to silence the notice"
    elif bwrap_path() is None:
        fix = "install bubblewrap: sudo apt install bubblewrap (Debian, Ubuntu) or sudo dnf install bubblewrap"
    else:
        fix = (
            "allow unprivileged user namespaces (Ubuntu 24.04+: an AppArmor profile for bwrap, or "
            "sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0); in a container, run it with them allowed"
        )
    status = "fail" if _sandbox_required(cwd) else "warn"
    return Check("sandbox", status, f"{reason}; Bash commands run without a sandbox", fix)


def _ripgrep() -> Check:
    path, version = _version_of("rg")
    if path is None:
        fix = "install ripgrep (sudo apt install ripgrep, brew install ripgrep): Grep and @ completion use it"
        return Check("ripgrep", "warn", "not installed: Grep and @ completion fall back to slower walks", fix)
    return Check("ripgrep", "ok", f"{version} at {path}")


def _nats() -> Check:
    url = os.environ.get("SAGENT_NATS_URL")
    if not url:
        return Check("NATS", "info", "not configured (SAGENT_NATS_URL is not set; only fleets across machines need it)")
    first = url.split(",")[0].strip()
    parts = urlsplit(first if "://" in first else f"nats://{first}")
    host, port = parts.hostname or "127.0.0.1", parts.port or 4222
    fix = f"start the server (nats-server -p {port}) or correct SAGENT_NATS_URL"
    try:
        with socket.create_connection((host, port), timeout=NATS_TIMEOUT_S) as conn:
            conn.settimeout(NATS_TIMEOUT_S)
            greeting = conn.recv(4096)
    except OSError as error:
        return Check("NATS", "fail", f"{host}:{port} (SAGENT_NATS_URL) cannot be reached: {error}", fix)
    if not greeting.startswith(b"INFO "):
        return Check("NATS", "fail", f"{host}:{port} answered, but not as a NATS server", fix)
    return Check("NATS", "ok", f"a NATS server answers at {host}:{port}")


def _local_model() -> Check:
    import importlib.util

    from sagent.providers.llamacpp import find_embedded_model, install_hint, local_model_missing, server_binary

    missing = local_model_missing()
    if missing:
        return Check("local model", "warn", f"cannot run: {missing}", install_hint())
    model = os.environ.get("LLAMA_CPP_MODEL") or find_embedded_model()
    if server_binary() is None and importlib.util.find_spec("llama_cpp") is not None:
        try:  # a real import, in a process of its own: a broken build fails here, not on the first question
            done = subprocess.run([sys.executable, "-c", "import llama_cpp"], capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as error:
            return Check("local model", "warn", f"llama_cpp cannot be imported: {error}", install_hint())
        if done.returncode != 0:
            said = done.stderr.decode(errors="replace").strip().splitlines()
            why = said[-1] if said else f"exit {done.returncode}"
            return Check("local model", "warn", f"llama_cpp cannot be imported: {why}", install_hint())
    return Check("local model", "ok", f"llama.cpp ready, model {model}")


def _runnable(found: list[Check], cwd: Path) -> Check:
    """Whether `sagent` started in `cwd` with no flags has a model to answer: the provider and model its
    settings name (or the first provider whose key is set, or the local model), and what that one needs."""
    from sagent.providers.base import ProviderError
    from sagent.providers.llamacpp import install_hint
    from sagent.providers.registry import choose
    from sagent.providers.specs import SPECS, find_spec

    values = _settings_values(cwd)
    environment = _environment(cwd)
    by_name = {c.name: c for c in found}
    clis = [n for n in CLI_PROVIDERS if by_name[f"{n} CLI"].status == "ok"]
    provider, model = values.get("provider"), values.get("model")
    try:
        if provider is None and model is None:
            keyed = next((s for s in SPECS if any(environment.get(v) for v in s.key_variables)), None)
            chosen = keyed.name if keyed is not None else "local"  # as `choose` picks with nothing named
        else:
            chosen = choose(provider, model).provider
    except ProviderError as error:
        return Check("a model", "fail", error.message, "correct provider or model in the settings (sagent config)")
    spec = find_spec(chosen)
    if chosen == "local":
        if by_name["local model"].status == "ok":
            return Check("a model", "ok", "offline on the local model (no key set)")
        if clis:
            other = CLI_PROVIDERS[clis[0]]
            return Check(
                "a model",
                "warn",
                f"with no flags sagent has no model (no key, no local model); --provider {other} runs on {clis[0]}",
                f'make it the default: "provider": "{other}" in a settings file, or set a key',
            )
        return Check(
            "a model",
            "fail",
            "no API key, no subscription CLI and no local model: sagent has nothing to run on",
            f"set a key (export ANTHROPIC_API_KEY=...), or {install_hint()}",
        )
    cli = next((name for name, p in CLI_PROVIDERS.items() if p == chosen), None)
    if cli is not None and cli not in clis:
        return Check(
            "a model", "fail", f"the settings choose {chosen}, but the {cli} CLI cannot run", by_name[f"{cli} CLI"].fix
        )
    needed = spec.key_variables if spec is not None and spec.key_required else ()
    if needed and not any(environment.get(v) for v in needed):
        return Check(
            "a model", "fail", f"{chosen} needs {' or '.join(needed)}, which is not set", f"export {needed[0]}=..."
        )
    return Check("a model", "ok", f"sagent starts on {chosen}" + (f" ({model})" if model else ""))
