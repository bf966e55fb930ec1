"""Settings files: the user's, the project's and the local one, merged and turned into the CLI's arguments.

    $XDG_CONFIG_HOME/sagent/settings.json     user (default ~/.config/sagent/settings.json)
    <project>/.sagent/settings.json           project, committed with the code
    <project>/.sagent/settings.local.json     local, this machine only (git-ignored)

Later files win; objects (`env`, `permissions`, `hooks`, `mcpServers`) are merged key by key, except that
the hooks of an event add up: every file's entries run. A file's
values become the argument parser's defaults, so a flag on the command line wins over every file and the
same checks run on a value whichever place it came from. The project's and the local file apply only in
a folder the user trusted (`sagent trust`, see sagent/cli/trust.py): elsewhere only what tightens (their
`permissions.deny` and `ask` rules, `headlessDefault: "deny"`) is kept, and `Loaded.skipped` names the
project files left out, `.mcp.json` and `.sagent/commands/` included. Nothing here builds the agent: the result is the
`argparse.Namespace` the CLI already understands, with `settings_files` (a `Sources`) saying where each
value came from.

Only the standard library is imported here: `sagent config` must stay fast. A check that needs more (is a
provider or a tool name known?) imports it only when a file sets that key.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from sagent.cli.settings_read import MAX_BYTES as MAX_BYTES
from sagent.cli.settings_read import SettingsError as SettingsError
from sagent.cli.settings_read import read_file as read_file
from sagent.cli.trust import config_dir, trusted_by, trusted_folders
from sagent.cli.untrusted_files import untrusted_extras
from sagent.lib.json import json_kind

SCOPES = ("user", "project", "local")


class Key(NamedTuple):
    """One settings key: its JSON shape, and the argparse destination it stands for (one no flag has, like
    `permissions`, is set on the arguments as it is)."""

    name: str
    shape: str  # string, text (may be empty), integer, number, boolean, names, compact, env, permissions, hooks,
    # advisor, plugins, object
    dest: str
    help: str


KEYS: dict[str, Key] = {
    k.name: k
    for k in (
        Key("model", "string", "model", "the model id (--model)"),
        Key("provider", "string", "provider", "the provider (--provider)"),
        Key("baseUrl", "string", "base_url", "the provider's API base URL (--base-url)"),
        Key("apiKeyEnv", "string", "api_key_env", "the variable holding the API key (--api-key-env)"),
        Key("maxTokens", "integer", "max_tokens", "the most output tokens per response (--max-tokens)"),
        Key("thinkingBudget", "integer", "thinking_budget", "extended thinking tokens (--thinking-budget)"),
        Key("effort", "string", "effort", "reasoning effort (--effort)"),
        Key("tools", "names", "tools", "the tool names; [] for none (--tools)"),
        Key("offerTools", "names", "offer_tools", "tools offered in every request, not on demand (--offer-tools)"),
        Key("compactAt", "compact", "compact_at", "a fraction, 'off', or a list like the repeated --compact-at"),
        Key("resumeMode", "string", "resume_mode", "auto, resume or replay (--resume-mode)"),
        Key("history", "integer", "history_turns", "send only the last N turns to the model (--history)"),
        Key("maxBudgetUsd", "number", "max_budget_usd", "the budget in dollars (--max-budget-usd)"),
        Key(
            "maxSubscriptionTokens",
            "integer",
            "max_subscription_tokens",
            "tokens subscription models may use (--max-subscription-tokens)",
        ),
        Key("maxToolRounds", "integer", "max_tool_rounds", "rounds of tool calls (--max-tool-rounds)"),
        Key(
            "advisor",
            "advisor",
            "advisor",
            "a model consulted when the agent is stuck (--advisor), or {model, maxCalls, ...} (docs/advisor.md)",
        ),
        Key("maxDepth", "integer", "max_depth", "levels of sub-agents (--max-depth)"),
        Key("maxAgents", "integer", "max_agents", "agents at once (--max-agents)"),
        Key(
            "handoffCapsules", "integer", "handoff_capsules", "handoffs a spawn or message carries (--handoff-capsules)"
        ),
        Key("allowProviders", "names", "allow_providers", "providers sub-agents may use (--allow-providers)"),
        Key("allowHosts", "names", "allow_host", "hosts the web tools may reach (--allow-host)"),
        Key("backgroundAfter", "number", "background_after", "seconds before a call moves to the background"),
        Key("systemPrompt", "text", "system", "replaces the system prompt (--system)"),
        Key("appendSystemPrompt", "text", "append_system", "appended to the system prompt (--append-system)"),
        Key("noMemory", "boolean", "no_memory", "true: do not read AGENTS.md / CLAUDE.md (--no-memory)"),
        Key("env", "env", "env", "environment variables set for the run"),
        Key(
            "permissions",
            "permissions",
            "permissions",
            "{allow, ask, deny, defaultMode, ...} (docs/security.md)",
        ),
        Key("hooks", "hooks", "hooks", "commands run at events: PreToolUse, PostToolUse, Stop, ..."),
        Key("mcpServers", "object", "mcp_servers", "MCP servers, as in .mcp.json (docs/mcp.md)"),
        Key("modelPrices", "object", "model_prices", "USD per million tokens per model: {MODEL: {input, output, ...}}"),
        Key("sandbox", "object", "sandbox_settings", "the OS sandbox: {mode, network, allowedDomains, ...}"),
        Key("enabledPlugins", "plugins", "enabled_plugins", "installed plugins turned on: {NAME: true}"),
        Key("statusLine", "terminal", "status_line", 'the REPL\'s status line command: {"type": "command", "command"}'),
        Key("notifications", "terminal", "notifications", "auto, osc9, osc777, osc99, bell or off"),
        Key("preferredNotifChannel", "terminal", "preferred_notif_channel", "Claude Code's name for notifications"),
    )
}
IGNORED_KEYS = frozenset({"$schema"})  # editors' schema hint: allowed, not a setting
PERMISSION_LISTS = ("allow", "deny", "ask")
# objects merged key by key across files
MERGED = frozenset({"env", "permissions", "hooks", "mcpServers", "sandbox", "enabledPlugins"})
TIGHTENING = ("deny", "ask")  # the permission lists an untrusted project's files may still add to


class SettingsFile(NamedTuple):
    """Where one scope's file is, and whether it was there."""

    scope: str
    path: Path
    exists: bool


class Loaded:
    """The files' values merged, with the file each came from (`env.NAME` and the like for the members of
    merged objects), and the warnings to print once. (Plain classes here, not dataclasses: importing
    `dataclasses` costs `sagent config` more than all of its own work.)"""

    __slots__ = ("files", "origins", "permissions", "root", "skipped", "trusted", "values", "warnings")

    def __init__(self) -> None:
        self.files: list[SettingsFile] = []
        self.values: dict[str, Any] = {}
        self.origins: dict[str, Path] = {}
        self.warnings: list[str] = []
        self.permissions: list[tuple[Path, dict[str, Any]]] = []  # each file's `permissions`, as applied
        self.root: Path = Path()  # the project root
        self.trusted = True  # whether the project's own files apply (see sagent/cli/trust.py)
        self.skipped: list[Path] = []  # project files (or folders) left out because the folder is not trusted

    def skipped_notice(self) -> str | None:
        """One line saying which project files were skipped and how to trust the folder; None when none was."""
        if not self.skipped:
            return None
        root = self.root
        names = ", ".join(str(p.relative_to(root)) if p.is_relative_to(root) else str(p) for p in self.skipped)
        return (
            f"this folder is not trusted, so its {names} did not apply (deny and ask rules still do); "
            f"to use them, run `sagent trust {self.root}`"
        )


class Sources(NamedTuple):
    """Where the parsed arguments came from: the files read, and the destinations given as flags."""

    loaded: Loaded
    flags: frozenset[str]
    environ_before: Mapping[str, str]  # the environment before a file's `env` was applied

    def origin(self, key: str) -> str:
        """'flag', a file's path, or 'default' for a settings key (or `env.NAME`)."""
        spec = KEYS.get(key)
        if spec is not None and spec.dest in self.flags:
            return "flag"
        path = self.loaded.origins.get(key)
        return str(path) if path is not None else "default"


def user_settings_file() -> Path:
    """The user's settings file, beside the user's AGENTS.md (a relative XDG_CONFIG_HOME is ignored, as
    the XDG spec says: it would put the user's settings inside whatever folder sagent runs in)."""
    return config_dir() / "settings.json"


def project_root(cwd: Path) -> Path:
    """The nearest folder at or above `cwd` holding `.sagent/` or `.git`; `cwd` itself when none does."""
    cwd = cwd.resolve()
    for folder in (cwd, *cwd.parents):
        if (folder / ".sagent").is_dir() or (folder / ".git").exists():
            return folder
    return cwd


def settings_files(cwd: Path) -> list[tuple[str, Path]]:
    """The three files, in the order they are merged."""
    root = project_root(cwd)
    return [
        ("user", user_settings_file()),
        ("project", root / ".sagent" / "settings.json"),
        ("local", root / ".sagent" / "settings.local.json"),
    ]


def load(
    cwd: Path,
    trusted: bool | None = None,
    pending: Mapping[Path, dict[str, Any]] | None = None,
    sources: frozenset[str] | None = None,
    flag: tuple[Path, dict[str, Any]] | None = None,
) -> Loaded:
    """Read and check the settings files for `cwd` and merge them; SettingsError for the first bad one.
    `trusted` says whether the project's own files apply; None asks the user's trust store. `pending`
    gives a file's content as it would be written, read instead of the file (a change checked unwritten).
    `sources` names the scopes read (`--setting-sources`; None: all); `flag` is `--settings`' object,
    merged last (see sagent.cli.flag_settings)."""
    files = [(scope, path) for scope, path in settings_files(cwd) if sources is None or scope in sources]
    if flag is not None:
        files.append(("flag", flag[0]))
        pending = {**(pending or {}), flag[0]: flag[1]}
    loaded = Loaded()
    loaded.root = project_root(cwd)
    if trusted is None:
        problems: list[str] = []  # a trust file that cannot be believed is said, on every run
        trusted = trusted_by(loaded.root, trusted_folders(problems)) is not None
        loaded.warnings += problems
    loaded.trusted = trusted
    seen: set[Path] = set()
    for scope, path in files:
        data = None if path in seen else pending[path] if pending and path in pending else read_file(path)
        seen.add(path)
        loaded.files.append(SettingsFile(scope, path, data is not None))
        if data is None:
            continue
        if scope not in ("user", "flag") and not loaded.trusted:  # the program's --settings is the user's word
            data, dropped = _tightening(path, data)
            if dropped:
                loaded.skipped.append(path)
        if isinstance(data.get("permissions"), dict):
            loaded.permissions.append((path, data["permissions"]))
        for name, value in data.items():
            spec = KEYS.get(name)
            if spec is None:
                if name not in IGNORED_KEYS:
                    loaded.warnings.append(unknown_key(path, name, KEYS))
                continue
            value = _shaped(path, spec, value, loaded.warnings)
            if name in MERGED:
                merged = loaded.values.setdefault(name, {})
                for member, inner in value.items():
                    merged[member] = _merged_member(name, merged.get(member), inner)
                    loaded.origins[f"{name}.{member}"] = path
            else:
                loaded.values[name] = value
            loaded.origins[name] = path
        if scope == "local" and loaded.trusted:  # git is not run in a folder not trusted
            _warn_unignored(path, loaded.warnings)
    if not loaded.trusted:
        loaded.skipped += untrusted_extras(loaded.root)
    return loaded


def _tightening(path: Path, data: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """What an untrusted folder's file may still say: its deny and ask rules, and `headlessDefault` when
    it is "deny"; and whether anything else was left out. The rules are checked like any file's."""
    section = data.get("permissions")
    if section is not None:
        _check_permissions(path, section, [])
    section = section if isinstance(section, dict) else {}
    kept = {k: section[k] for k in TIGHTENING if k in section}
    if section.get("headlessDefault") == "deny":
        kept["headlessDefault"] = "deny"
    dropped = set(data) - {"permissions", *IGNORED_KEYS} or set(section) - set(kept)
    return ({"permissions": kept} if kept else {}), bool(dropped)


def _merged_member(key: str, before: Any, value: Any) -> Any:
    """A merged object's member as a later file gives it: it replaces the earlier one, except an event's
    hooks, which add up (every file's entries run)."""
    if key in ("hooks", "sandbox") and isinstance(before, list) and isinstance(value, list):
        return before + value  # the sandbox's lists add up too: a later file cannot drop a denied path
    return value


def check_value(
    path: Path, name: str, value: Any, warnings: list[str], parser: argparse.ArgumentParser | None = None
) -> Any:
    """`value` for the key `name` (one of KEYS) as it would be read from the file at `path`: returned when
    it has the key's shape (and, given the run's `parser`, passes its flag's type and choices), else
    SettingsError naming the file and the key (`sagent config set`)."""
    spec = KEYS[name]
    value = _shaped(path, spec, value, warnings)
    action = {a.dest: a for a in parser._actions}.get(spec.dest) if parser is not None else None
    if action is not None and spec.shape not in ("names", "compact"):
        _through_flag(action, value, f'{path}: key "{name}"')
    return value


def _shaped(path: Path, spec: Key, value: Any, warnings: list[str]) -> Any:
    """`value` when it has the key's shape; SettingsError naming the file and the key otherwise."""

    def bad(expected: str) -> SettingsError:
        return SettingsError(f'{path}: key "{spec.name}": must be {expected}, not {json_kind(value)}')

    shape = spec.shape
    if shape == "string":
        if not isinstance(value, str) or not value.strip():
            raise bad("a non-empty string")
    elif shape == "text":
        if not isinstance(value, str):
            raise bad("a string")
    elif shape == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad("a whole number")
    elif shape == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad("a number")
    elif shape == "boolean":
        if not isinstance(value, bool):
            raise bad("true or false")
    elif shape == "names":
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise bad("a list of names")
    elif shape == "compact":
        items = value if isinstance(value, list) else [value]
        if not items or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in items):
            raise bad("a fraction, 'off', or a list of them (MODEL=FRACTION for one model)")
    elif shape == "env":
        if not isinstance(value, dict):
            raise bad("an object of variable names to string values")
        for name, inner in value.items():
            if not name or "=" in name or "\0" in name:
                raise SettingsError(f'{path}: key "env": {json.dumps(name)} is not an environment variable name')
            if not isinstance(inner, str) or "\0" in inner:
                raise SettingsError(f'{path}: key "env.{name}": must be a string, not {json_kind(inner)}')
    elif shape == "plugins":  # Claude Code's {"name@marketplace": true}, or a list of names
        if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
            return {v.strip(): True for v in value}
        if not isinstance(value, dict):
            raise bad("an object of plugin names to true or false")
        for name, on in value.items():
            if not isinstance(on, bool):
                raise SettingsError(f'{path}: key "enabledPlugins.{name}": must be true or false, not {json_kind(on)}')
    elif shape == "permissions":
        _check_permissions(path, value, warnings)
    elif shape == "advisor":
        from sagent.cli.advisor_settings import MEMBERS, advisor_problem

        problem, unknown = advisor_problem(value)
        if problem is not None:
            raise SettingsError(f"{path}: {problem}")
        warnings += [unknown_key(path, name, MEMBERS, within="advisor.") for name in unknown]
    elif shape == "hooks":
        from sagent.userhooks.config import HookConfigError, parse_hooks

        try:
            warnings += parse_hooks(value, where=f"{path}: ")[1]
        except HookConfigError as error:
            raise SettingsError(str(error)) from None
    elif shape == "terminal":  # the REPL's statusLine command and notifications
        from sagent.repl.terminal_settings import check_terminal_key

        check_terminal_key(spec.name, value, lambda problem: SettingsError(f'{path}: key "{spec.name}": {problem}'))
    elif not isinstance(value, dict):
        raise bad("an object")
    return value


def _check_permissions(path: Path, value: Any, warnings: list[str]) -> None:
    if not isinstance(value, dict):
        raise SettingsError(f'{path}: key "permissions": must be an object, not {json_kind(value)}')
    for member, inner in value.items():
        if member in PERMISSION_LISTS:
            if not isinstance(inner, list) or not all(isinstance(r, str) for r in inner):
                expected = f"must be a list of strings, not {json_kind(inner)}"
                raise SettingsError(f'{path}: key "permissions.{member}": {expected}')
        elif member in ("additionalDirectories", "headlessDefault"):
            pass  # checked where the permissions are built (sagent/cli/permission_settings.py)
        elif member == "defaultMode":
            if not isinstance(inner, str):
                raise SettingsError(f'{path}: key "permissions.defaultMode": must be a string, not {json_kind(inner)}')
        else:
            known = (*PERMISSION_LISTS, "additionalDirectories", "headlessDefault", "defaultMode")
            warnings.append(unknown_key(path, member, known, within="permissions."))


def unknown_key(path: Path | str, name: str, known: Iterable[str], within: str = "") -> str:
    """The warning for a key no setting has, with the nearest known name when one is close (`modle`:
    did you mean "model"?)."""
    near = nearest_key(name, known)
    hint = f'; did you mean "{within}{near}"?' if near else ""
    return f'{path}: unknown key "{within}{name}" is ignored{hint} (see docs/settings.md)'


def nearest_key(name: str, known: Iterable[str]) -> str | None:
    """The known key closest to `name` (a typo, another case), or None when none is close."""
    import difflib

    names = {key.lower(): key for key in known}
    found = difflib.get_close_matches(name.lower(), list(names), n=1, cutoff=0.75)
    return names[found[0]] if found else None


def _warn_unignored(path: Path, warnings: list[str]) -> None:
    """A local settings file in a git repository that git would commit: say so (it may hold secrets in
    `env`). Asked of git only when the file exists; no git, or no repository, is no warning."""
    from sagent.cli.git_exclude import unignored

    if unignored(path):
        warnings.append(f"{path} is not git-ignored: add .sagent/settings.local.json to .gitignore")


def defaults(loaded: Loaded, parser: argparse.ArgumentParser) -> dict[str, Any]:
    """The files' values as argparse destinations and values, in the form a flag would give them, passed
    through the flag's own `type` and `choices`; SettingsError naming the file and key for a bad one."""
    actions = {a.dest: a for a in parser._actions}
    out: dict[str, Any] = {}
    for name, value in loaded.values.items():
        spec = KEYS[name]
        action = actions.get(spec.dest)
        if action is None:  # a key for a later feature: kept as it is
            out[spec.dest] = value
            continue
        path = loaded.origins[name]
        if spec.shape == "names":
            names = [v.strip() for v in value]
            converted: Any = names if isinstance(action, argparse._AppendAction) else ",".join(names) or "none"
        elif spec.shape == "compact":
            converted = [str(v) for v in (value if isinstance(value, list) else [value])]
        else:
            converted = _through_flag(action, value, f'{path}: key "{name}"')
        out[spec.dest] = converted
    return out


def _through_flag(action: argparse.Action, value: Any, where: str) -> Any:
    """`value` as the flag's `type` would parse it (the same refusals: nan, a negative budget), within
    its `choices`."""
    convert: Callable[[str], Any] | None = action.type if callable(action.type) else None
    if convert is not None and convert is not int and not isinstance(value, bool):
        try:
            value = convert(str(value))
        except (argparse.ArgumentTypeError, ValueError, TypeError) as error:
            raise SettingsError(f"{where}: {error}") from None
    if action.choices is not None and value not in action.choices:
        choices = ", ".join(map(str, action.choices))
        raise SettingsError(f"{where}: {json_kind(value)} is not one of {choices}")
    return value


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse `argv` with the settings files for its --cwd as defaults: flags win over the local file,
    which wins over the project's, which wins over the user's. A file's `env` is set in this process.
    SettingsError for a file that cannot be used; argparse exits for a bad flag as it always has."""
    given = _given(parser, argv)
    cwd = Path(given.get("cwd") or ".")
    from sagent.cli.flag_settings import FlagSettingsError, flag_settings, setting_sources

    try:
        loaded = load(
            cwd,
            sources=setting_sources(given.get("setting_sources")),
            flag=flag_settings(given.get("settings"), cwd, read_file),
        )
    except FlagSettingsError as error:
        raise SettingsError(str(error)) from None
    values = defaults(loaded, parser)
    values.setdefault("env", {})
    values.setdefault("permissions", {})
    values.setdefault("hooks", {})
    values.setdefault("mcp_servers", {})
    values.setdefault("sandbox_settings", {})
    environ_before = dict(os.environ)
    os.environ.update(values["env"])
    parser.set_defaults(**values)
    args = parser.parse_args(argv)
    args.settings_files = Sources(loaded, frozenset(given), environ_before)
    return args


class _Unset:
    """Marks a destination no flag set, in the first pass over the arguments."""


def _given(parser: argparse.ArgumentParser, argv: list[str]) -> dict[str, Any]:
    """The destinations the command line sets, with their values. A namespace that already holds a
    destination keeps argparse from filling its default, so what is still unset was not given."""
    unset = _Unset()
    blank = argparse.Namespace()
    for action in parser._actions:
        if action.dest != argparse.SUPPRESS:
            setattr(blank, action.dest, None if isinstance(action, argparse._AppendAction) else unset)
    parsed = vars(parser.parse_args(argv, namespace=blank))
    return {dest: value for dest, value in parsed.items() if value is not unset and value is not None}


def blame(problem: str | None, args: argparse.Namespace) -> str | None:
    """The CLI's own complaint about a value (`--max-tokens must be at least 1`), told as the settings
    file and key it came from when no flag gave it; and the checks of values that need more than the
    standard library (a provider or tool name), made only for values a file set."""
    sources: Sources | None = getattr(args, "settings_files", None)
    if sources is None:
        return problem
    if problem is not None:
        for name, spec in KEYS.items():
            flag = "--" + spec.dest.replace("_", "-")
            origin = sources.origin(name)
            rest = problem[len(flag) :] if problem.startswith(flag) else None
            if rest is not None and rest[:1] in ("", " ", ":") and origin not in ("flag", "default"):
                return f'{origin}: key "{name}"{rest}'
        return problem
    return _known_names(sources, args)


def _known_names(sources: Sources, args: argparse.Namespace) -> str | None:
    origin = sources.origin("provider")
    if args.provider is not None and origin not in ("flag", "default"):
        from sagent.providers.base import ProviderError
        from sagent.providers.registry import choose

        try:
            choose(args.provider, None)
        except ProviderError as error:
            return f'{origin}: key "provider": {getattr(error, "message", error)}'
    origin = sources.origin("tools")
    if args.tools is not None and args.tools != "none" and origin not in ("flag", "default"):
        from sagent.tools import BUILTIN

        known = [cls.name for cls in BUILTIN]
        unknown = [n for n in args.tools.split(",") if n not in known]
        if unknown:
            return f'{origin}: key "tools": unknown tool(s) {", ".join(unknown)}; the tools are: {", ".join(known)}'
    return None
