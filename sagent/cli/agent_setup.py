"""How the command line (flags and settings files) becomes an agent's settings: one builder that every
surface uses (the headless run, the REPL, `sagent serve`, `sagent-slack`), so a flag or a settings key
means the same everywhere.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from sagent.agent.checkpoints import FileCheckpoints
from sagent.agent.compaction import CompactionPolicy
from sagent.agent.fleet import ModelFactory
from sagent.agent.hooks import Approver, Hook
from sagent.agent.memory import memory_files, memory_prompt
from sagent.agent.prompt import coding_system_prompt
from sagent.agent.settings import AgentSettings
from sagent.cli.agent_files_setup import agent_file_tools
from sagent.encoding import scrub
from sagent.providers.base import Model
from sagent.providers.registry import build_model, choose, infer_provider
from sagent.tools import ON_DEMAND
from sagent.tools.base import Tool

if TYPE_CHECKING:
    from sagent.advisor import Advisor
    from sagent.agent.agent import Agent
    from sagent.mcp.setup import McpRun
    from sagent.permissions.policy import Permissions
    from sagent.sandbox.policy import SandboxPolicy


class UsageError(Exception):
    """Arguments that name something that does not exist (a tool, a session)."""


def agent_settings(
    args: argparse.Namespace,
    tools: list[Tool],
    cwd: Path,
    settings_from: Agent | None = None,
    system: str | None = None,
    model: Model | None = None,
) -> AgentSettings:
    """The agent settings the command line (and its settings files) describe: every surface builds its
    agents' settings here, so a flag or settings key holds the same everywhere. `system` replaces the
    system prompt (`--system`, else the coding prompt) before --append-system and the memory files;
    `model` is the agent's own, beside which an `--advisor` is built (none without it)."""
    system = system_prompt(args, cwd, system if system is not None else args.system, args.append_system)
    tools = agent_file_tools(args, cwd, tools)  # AgentSpawn learns the agents defined in files
    mcp = getattr(args, "mcp", None)  # the MCP servers' search and resource tools, and their hook
    tools = with_skills(tools, cwd)
    perms = _permission_settings(args, cwd, tools, settings_from)
    searches, offers = on_demand_parts(args, tools, mcp, perms.permissions)
    settings = AgentSettings(
        system=system,
        tools=(*perms.tools, *(t for t in searches if t not in perms.tools)),
        max_tool_rounds=args.max_tool_rounds,
        max_budget_usd=args.max_budget_usd,
        max_subscription_tokens=getattr(args, "max_subscription_tokens", None),
        max_tokens=args.max_tokens,
        thinking_budget=settings_from.thinking_budget if settings_from is not None else args.thinking_budget,
        effort=settings_from.effort if settings_from is not None else args.effort,
        cwd=cwd,
        background_after=args.background_after,
        input_preempts=getattr(args, "input_preempts", False),  # set by the REPL: typed input never waits
        compaction=compaction_policy(args.compact_at),
        history_turns=getattr(args, "history_turns", None),
        max_depth=args.max_depth,
        max_agents=args.max_agents,
        handoff_capsules=getattr(args, "handoff_capsules", 0),
        allow_providers=_allowed_providers(args),
        # The user's hooks first, so the permission check sees a call as a hook rewrote it; the file
        # checkpoints (for /rewind) last, so they keep the file the call writes as it finally runs.
        # The tools offered on demand before the permission hook, which takes away the tools it refuses.
        hooks=(*user_hooks(args, cwd), *offers, *perms.hooks, FileCheckpoints()),
        permissions=perms.permissions,
        approver=perms.approver,
        advisor=advisor_of(args, model) if model is not None else None,
        sandbox=_sandbox(args, perms.tools, settings_from),
    )
    return settings


def on_demand_parts(
    args: argparse.Namespace, tools: list[Tool], mcp: McpRun | None, permissions: Permissions | None
) -> tuple[tuple[Tool, ...], tuple[Hook, ...]]:
    """The tools and the hook that offer tools on demand: with the default tool set (no `--tools`), the
    rarely used built-in tools (`sagent.tools.ON_DEMAND`, less those `--offer-tools` names and those a deny
    rule refuses outright, which are never offered) are loaded by ToolSearch or by a call of their name, as
    the MCP servers' tools are; the agent still has every tool."""
    from sagent.mcp.search import ToolSearch, on_demand

    names = {cls.name for cls in ON_DEMAND} - _always_offered(args)
    if permissions is not None:
        names = {n for n in names if not any(rule.kind == "any" for rule in permissions.rules_for(n)[0])}
    deferred = [t for t in tools if t.name in names] if getattr(args, "tools", None) is None else []
    if mcp is not None:
        mcp.hook.catalog.defer(deferred)
        for tool in mcp.tools:
            if isinstance(tool, ToolSearch):
                tool.name_servers()
        return mcp.tools, (mcp.hook,)
    if not deferred:
        return (), ()
    made, hook = on_demand(deferred)
    return (made[-1],), (hook,)


def _always_offered(args: argparse.Namespace) -> set[str]:
    """The tool names `--offer-tools` (the settings' `offerTools`) names; a UsageError for an unknown one."""
    from sagent.tools import BUILTIN

    names = {n.strip() for n in (getattr(args, "offer_tools", None) or "").split(",") if n.strip()}
    unknown = sorted(names - {cls.name for cls in BUILTIN})
    if unknown:
        raise UsageError(
            f"--offer-tools: unknown tool(s) {', '.join(unknown)}; the tools are: "
            f"{', '.join(cls.name for cls in BUILTIN)}"
        )
    return names


def system_prompt(args: argparse.Namespace, cwd: Path, system: str | None, append: str | None) -> str:
    """`system` (None: the coding prompt), then `append`, then the memory files unless --no-memory."""
    if system is None:
        system = coding_system_prompt(cwd)
    if append:
        system = f"{system}\n\n{append}"
    memory = "" if args.no_memory else memory_prompt(memory_files(cwd))
    if memory:
        system = f"{system}\n\n{memory}"
    return scrub(system)[0]  # a working directory whose name is not UTF-8 must not break the request


def _sandbox(args: argparse.Namespace, tools: tuple[Tool, ...], settings_from: Agent | None) -> SandboxPolicy:
    """The sandbox policy (a running agent's carries over); at a run's start, a UsageError when it is
    required and cannot start, else one line on stderr when it cannot start."""
    from sagent.cli.sandbox_settings import SandboxSettingsError, check_at_start, sandbox_policy

    if settings_from is not None:
        return settings_from.settings.sandbox
    try:
        policy = sandbox_policy(args)
    except SandboxSettingsError as error:
        raise UsageError(str(error)) from None
    problem = check_at_start(policy, [t.name for t in tools])
    if problem is not None:
        raise UsageError(problem)
    return policy


def with_skills(tools: list[Tool], cwd: Path) -> list[Tool]:
    """`tools` with their Skill tool over the skills in reach from `cwd` (read again: a skill saved since
    counts), or without it when there are none. Tools without a Skill tool (`--tools` did not name it) stay
    as they are."""
    from sagent.tools.skill import Skill

    if not any(isinstance(t, Skill) for t in tools):
        return tools
    from sagent.resources.skills import load_skills

    skill = Skill.from_skills(load_skills(cwd))
    return [skill if isinstance(t, Skill) else t for t in tools if skill.offered or not isinstance(t, Skill)]


def skill_problems(tools: list[Tool], cwd: Path) -> list[str]:
    """One line for each skill that cannot be offered (a broken SKILL.md), when the run offers skills."""
    if not any(t.name == "Skill" for t in tools):
        return []
    from sagent.resources.skills import load_skills

    return [f"skill {name}: {problem}" for name, problem in load_skills(cwd).problems.items()]


def advisor_of(args: argparse.Namespace, model: Model) -> Advisor | None:
    """The advisor `--advisor` (or the settings' `advisor`) names, built like a sub-agent's model unless it
    has its own endpoint, with the policy the setting and the `--advisor-*` flags give."""
    from sagent.cli.advisor_settings import advisor_from_args

    try:
        return advisor_from_args(args, model, models_for(args, model))
    except ValueError as error:
        raise UsageError(str(error)) from None


def user_hooks(args: argparse.Namespace, cwd: Path) -> tuple[Hook, ...]:
    """The command hooks of the settings files (checked when the files were read), then those of the
    enabled plugins (sagent.resources.plugin_parts), run in the project."""
    from sagent.cli.settings_files import project_root
    from sagent.resources.plugin_parts import plugin_hooks
    from sagent.resources.plugins import enabled_plugins

    value = getattr(args, "hooks", None)
    root = project_root(cwd)
    found: tuple[Hook, ...] = ()
    if value:
        from sagent.userhooks.command_hooks import CommandHooks

        found = (CommandHooks.from_settings(value, project_dir=root),)
    return (*found, *plugin_hooks(enabled_plugins(cwd), root))


class _PermissionParts(NamedTuple):
    """What permissions add to an agent's settings."""

    permissions: Permissions | None
    hooks: tuple[Hook, ...]
    tools: tuple[Tool, ...]
    approver: Approver | None


def _permission_settings(
    args: argparse.Namespace, cwd: Path, tools: list[Tool], settings_from: Agent | None
) -> _PermissionParts:
    """The permission policy, its hook, ExitPlanMode, and the approver of a running REPL (see
    sagent/permissions); a running agent's policy (its mode, its session rules) carries over to the next."""
    from sagent.cli.permission_settings import PermissionsError, from_args
    from sagent.permissions.plan import ExitPlanMode
    from sagent.permissions.policy import PermissionHook

    if settings_from is not None:
        policy = settings_from.settings.permissions
    else:
        try:
            policy = from_args(args, cwd)
        except PermissionsError as error:
            raise UsageError(str(error)) from None
    offered = tuple(tools) + (() if any(t.name == "ExitPlanMode" for t in tools) else (ExitPlanMode(),))
    approver = settings_from.settings.approver if settings_from is not None else None
    return _PermissionParts(policy, (PermissionHook(),), offered, approver)


def models_for(args: argparse.Namespace, model: Model) -> ModelFactory:
    """How sub-agents' models are built: as the command line builds the main one (a sub-agent on the main
    model's provider gets the same --base-url and --api-key-env)."""

    def models(provider: str | None, name: str | None) -> Model:
        if provider is None and name is not None and infer_provider(name) is None:
            provider = model.provider  # an id the prefixes do not know: the main model's provider
        wanted = choose(provider, name)
        same = wanted.provider == model.provider
        return build_model(
            wanted,
            base_url=args.base_url if same else None,
            api_key_env=args.api_key_env if same else None,
            resume_mode=getattr(args, "resume_mode", "replay"),
        )

    return models


def _allowed_providers(args: argparse.Namespace) -> frozenset[str] | None:
    if not args.allow_providers:
        return None
    return frozenset(n.strip() for n in args.allow_providers.split(",") if n.strip())


def compaction_policy(values: list[str] | None) -> CompactionPolicy:
    """The policy --compact-at describes: `0.7`, `off`, `MODEL=0.6` or `MODEL=off`, the last word winning."""
    threshold: float | None = CompactionPolicy().threshold
    per_model: dict[str, float | None] = {}
    for value in values or []:
        model, _, fraction = value.rpartition("=")
        parsed = _fraction(fraction.strip())
        if model:
            per_model[model.strip()] = parsed
        else:
            threshold = parsed
    return CompactionPolicy(threshold=threshold, per_model=per_model)


def _fraction(text: str) -> float | None:
    if text.lower() in ("off", "none", "never"):
        return None
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise ValueError(f"{text!r} is not a fraction of the window (like 0.8 or 80%) or 'off'") from None
    if not 0 < value <= 1:
        raise ValueError(f"{text} is not a fraction of the window in (0, 1]")
    return value
