"""`/status`: what this REPL runs on, in one screen: version, provider and model, where the key comes from
(never the key), the sandbox, the session, the settings files in effect, the permission mode, the folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from sagent.repl.commands import columns, command

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.cli.settings_files import Loaded
    from sagent.repl.host import ReplHost
    from sagent.repl.launch import Launch

SUBSCRIPTION_CLIS = {"anthropic-cli": "claude", "openai-subscription": "codex", "google-cli": "gemini"}
"""The model CLIs a subscription provider drives, by provider name."""


@command("status", "version, model, key source, sandbox, session and settings files in effect")
def _status(repl: ReplHost, arg: str) -> list[str]:
    from sagent import __version__
    from sagent.permissions.policy import mode_of

    agent = repl.agent
    launch = repl.state.launch
    model = agent.model
    mode = mode_of(agent)
    rows = [
        ("version", f"sagent {__version__}"),
        ("provider", model.provider),
        ("model", model.name),
        ("key", key_source(model.provider, model.subscription, launch)),
        *([("endpoint", endpoint)] if (endpoint := endpoint_of(model.provider, launch)) else []),
        ("sandbox", sandbox_text(agent)),
        ("session", agent.session_id),
        ("session file", str(agent.session.path) if agent.session.path else "none (ephemeral: nothing is saved)"),
        ("permission mode", mode or "none (every call runs)"),
        ("cwd", str(agent.context.cwd)),
        ("memory", memory_text(agent)),
        *([("fleet", repl.state.fleet.text())] if repl.state.fleet is not None else []),
        *_terminal_rows(repl),  # the statusLine command, the notifications
    ]
    lines = [repl.renderer.c("bold", "status"), *columns(rows)]
    lines.append(
        repl.renderer.c("bold", "settings files") + repl.renderer.c("dim", " (later wins; flags win over all)")
    )
    lines += settings_rows(agent.context.cwd, launch)
    return lines


def _terminal_rows(repl: ReplHost) -> list[tuple[str, str]]:
    from sagent.repl.notify import status_rows

    return status_rows(repl)


def key_source(provider: str, subscription: bool, launch: Launch | None) -> str:
    """Where `provider`'s key is read from, in words: a variable (and whether the environment or a settings
    file set it), a model CLI's own sign-in, or no key at all. The key itself is never shown."""
    from sagent.providers.registry import key_variable
    from sagent.providers.specs import find_spec

    spec = find_spec(provider)
    named = launch.api_key_env if launch is not None else None
    if spec is None and not named:
        return f"none (the {provider} model takes no key)"
    variable = key_variable(provider, named)
    is_set = bool(variable and os.environ.get(variable))
    cli = SUBSCRIPTION_CLIS.get(provider)
    if cli is not None and not is_set:
        return f"the {cli} CLI's own sign-in (a subscription; sagent holds no key)"
    if variable is None:
        return "none needed" + (" (a local model)" if provider in ("local", "selfhosted") else "")
    if not is_set:
        needed = spec is None or spec.key_required
        return f"{variable} is not set" + ("" if needed else " (this provider needs none)")
    origin = "the environment"
    if launch is not None and launch.sources is not None:
        found = launch.sources.origin(f"env.{variable}")
        origin = f"env in {found}" if found not in ("default", "flag") else origin
    through = f", billed through the {cli} CLI" if cli else ""
    return f"{variable} (set, from {origin}{through})"


BASE_URL_VARIABLES = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
    "google": "GOOGLE_GEMINI_BASE_URL",
}
"""The variable each native provider's SDK reads its endpoint from."""


def endpoint_of(provider: str, launch: Launch | None) -> str | None:
    """Where requests go when it is not the provider's own default: `--base-url`, the SDK's variable, or a
    preset's server (Ollama, vLLM, ...); None for the provider's usual endpoint."""
    from sagent.providers.specs import find_spec

    if launch is not None and launch.base_url:
        return f"{launch.base_url} (--base-url)"
    variable = BASE_URL_VARIABLES.get(provider)
    if variable and os.environ.get(variable):
        return f"{os.environ[variable]} ({variable})"
    spec = find_spec(provider)
    return spec.base_url if spec is not None and spec.base_url else None


def memory_text(agent: Agent) -> str:
    """The memory files in this session's system prompt, as /memory lists them."""
    from sagent.agent.memory import memory_files

    found = [str(f.path) for f in memory_files(agent.context.cwd) if str(f.path) in agent.base_system]
    return ", ".join(found) if found else "none (/init writes AGENTS.md)"


def sandbox_text(agent: Agent) -> str:
    """The sandbox's mode and whether it really runs here."""
    from sagent.sandbox.spawn import sandbox_state

    policy = agent.context.sandbox
    if not policy.confines:
        return f"{policy.mode}: off (commands run without a sandbox)"
    reason = sandbox_state(policy)
    network = "network on" if policy.network and not policy.allowed_domains else "network off"
    if policy.allowed_domains:
        network = "network: only " + ", ".join(policy.allowed_domains)
    if reason is not None:
        return f"{policy.mode}: NOT ACTIVE ({reason}); commands run without it"
    return f"{policy.mode}: active, {network}" + (" (required)" if policy.required else "")


def loaded_settings(cwd: Path, launch: Launch | None) -> Loaded:
    """The settings files as read at start, or read now when the REPL was built without a launch."""
    if launch is not None and launch.sources is not None:
        return launch.sources.loaded
    from sagent.cli.settings_files import load

    return load(cwd)


def settings_rows(cwd: Path, launch: Launch | None) -> list[str]:
    """One line per settings file: its scope, its path, and whether it was loaded, absent or skipped."""
    from sagent.cli.settings_files import SettingsError

    try:
        loaded = loaded_settings(cwd, launch)
    except SettingsError as error:
        return [f"  cannot be read: {error}"]
    rows = []
    for f in loaded.files:
        if f.path in loaded.skipped:
            state = "skipped: folder not trusted (only its deny and ask rules apply; `sagent trust`)"
        else:
            state = "loaded" if f.exists else "none"
        rows.append((f.scope, f"{f.path}  ({state})"))
    rows += [("not trusted", f"{p}  (skipped)") for p in loaded.skipped if p not in {f.path for f in loaded.files}]
    return columns(rows)
