"""Custom slash commands: Markdown files that become `/name` prompts, in the REPL and headless alike.

    .sagent/commands/review.md               /review        (project: committed with the code)
    .sagent/commands/frontend/component.md   /frontend:component
    .claude/commands/*.md                    the project's, in Claude Code's folder
    $XDG_CONFIG_HOME/sagent/commands/*.md    the user's own, in every project (and ~/.claude/commands/)
    <plugin>/commands/*.md                   /plugin-name:cmd, from an enabled plugin (docs/plugins.md)

A file's body is the prompt. `/name some words` sends it with `$ARGUMENTS` replaced by `some words` and
`$1`, `$2`, ... by the words one by one (quotes group words, as in a shell); a body that uses neither gets
the words appended on a line of their own. An optional front matter between two `---` lines holds
`key: value` lines:

    ---
    description: review the staged change
    argument-hint: [focus]
    allowed-tools: Read, Grep, Bash(git diff:*)
    model: claude-haiku-4-5
    ---

`allowed-tools` limits the tools of the command's run (a `Hook` denies the others; `Tool(prefix:*)` allows
a call whose command, path or URL starts with `prefix`, every part of a chained shell line included);
`model` runs the command on that model. A project command hides a user command of the same name (and
`.sagent/` hides `.claude/`); a built-in command hides both (the REPL's /help says so). This module reads
files and builds values only: the REPL (`sagent.repl`) and the headless run (`sagent.cli.headless`) both
expand through it.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sagent.agent.hooks import ALLOW, Deny, Hook, ToolDecision
from sagent.types import ToolCall

if TYPE_CHECKING:
    from sagent.agent.agent import Agent

Scope = Literal["plugin", "project", "user"]
MAX_COMMAND_BYTES = 256_000  # a prompt file larger than this is a mistake, not a prompt
FRONT_MATTER_KEYS = ("description", "argument-hint", "allowed-tools", "model")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_POSITIONAL = re.compile(r"\$(\d+)")
_CHAIN = re.compile(r"&&|\|\||[;|\n]")
_SUBJECT_KEYS = ("command", "file_path", "path", "url", "pattern")


class CustomCommandError(ValueError):
    """A command file that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True, slots=True)
class CustomCommand:
    """One Markdown command file, read."""

    name: str
    """What follows the slash: `review`, or `frontend:component` for a file in a subfolder."""
    path: Path
    scope: Scope
    """`project` (.sagent/ or .claude/commands/), `user` ($XDG_CONFIG_HOME/sagent/commands/, ~/.claude/commands/)
    or `plugin` (an enabled plugin's)."""
    body: str
    """The prompt, after the front matter."""
    description: str = ""
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] | None = None
    """The tools its run may use (None: the agent's usual tools)."""
    model: str | None = None
    """The model its run uses (None: the agent's)."""

    def expand(self, arguments: str) -> str:
        """The prompt with the arguments put in: `$ARGUMENTS` all of them, `$1`, `$2`, ... one each (an
        argument not given is empty); appended on their own line when the body names none."""
        arguments = arguments.strip()
        try:
            words = shlex.split(arguments)
        except ValueError:  # an unclosed quote: plain words
            words = arguments.split()
        uses = "$ARGUMENTS" in self.body or _POSITIONAL.search(self.body) is not None
        text = self.body.replace("$ARGUMENTS", arguments)
        text = _POSITIONAL.sub(lambda m: words[int(m.group(1)) - 1] if 0 < int(m.group(1)) <= len(words) else "", text)
        if arguments and not uses:
            text = f"{text.rstrip()}\n\n{arguments}"
        return text.strip()

    def summary(self) -> str:
        """One line for /help and completion: the description (or the file), and where it comes from."""
        return f"{self.description or self.path.name} ({self.scope})"

    def usage(self) -> str:
        return f"/{self.name}" + (f" {self.argument_hint}" if self.argument_hint else "")


@dataclass(frozen=True, slots=True)
class Expansion:
    """What `/name arguments` turns into: the prompt to send and the command it came from."""

    command: CustomCommand
    prompt: str

    def hooks(self) -> tuple[Hook, ...]:
        """The hooks the command's run adds: its `allowed-tools`, when it has them."""
        allowed = self.command.allowed_tools
        return (AllowedTools(allowed, self.command.name),) if allowed is not None else ()


class AllowedTools(Hook):
    """While a command with `allowed-tools` runs: every other tool call is denied, naming the command."""

    def __init__(self, patterns: Iterable[str], command: str) -> None:
        self.patterns = tuple(patterns)
        self.command = command

    async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
        if any(allows(p, call) for p in self.patterns):
            return ALLOW
        listed = ", ".join(self.patterns) or "none"
        return Deny(f"/{self.command} allows only these tools: {listed}")


def allows(pattern: str, call: ToolCall) -> bool:
    """Whether one `allowed-tools` entry lets `call` run: `Name` any call of the tool; `Name(spec)` a call
    whose command (or path, URL, pattern) matches `spec`, where `prefix:*` means starts with `prefix` and
    a shell line must match in each of its chained parts; `mcp__server__*` style globs match tool names."""
    name, paren, spec = pattern.strip().partition("(")
    if not fnmatch.fnmatchcase(call.name, name.strip()):
        return False
    if not paren:
        return True
    spec = spec.rstrip(")").strip()
    subject = next((call.arguments[k] for k in _SUBJECT_KEYS if isinstance(call.arguments.get(k), str)), None)
    if not isinstance(subject, str):
        return False
    shell = call.arguments.get("command") == subject
    parts = [p.strip() for p in _CHAIN.split(subject) if p.strip()] if shell else [subject]
    if not parts or (shell and ("$(" in subject or "`" in subject)):
        return False  # a command substitution hides what runs
    if spec.endswith(":*"):
        prefix = spec[:-2]
        if shell:  # whole words: `git diff:*` allows `git diff --cached`, not `git diffx`
            return all(p == prefix or p.startswith(prefix + " ") for p in parts)
        return subject.startswith(prefix)
    return all(fnmatch.fnmatchcase(p, spec) for p in parts)


# ---------------------------------------------------------------------------------------------- files


def user_commands_dir() -> Path:
    """The user's commands, beside the user's settings file."""
    from sagent.cli.trust import config_dir

    return config_dir() / "commands"


def project_commands_dir(cwd: Path) -> Path:
    """The project's commands: `.sagent/commands/` at the project root (the nearest folder holding
    `.sagent/` or `.git`, as for the project's settings file)."""
    from sagent.cli.settings_files import project_root

    return project_root(cwd) / ".sagent" / "commands"


def load_commands(cwd: Path, *, home: Path | None = None) -> tuple[dict[str, CustomCommand], dict[str, str]]:
    """The commands in reach from `cwd` by name, and by name the files that could not be read, each with a
    line saying why (a broken command is reported, never silently dropped). They come from every place
    `sagent.resources.places("commands", cwd)` finds, a later one hiding an earlier one of the same name:
    the enabled plugins' (`/plugin-name:cmd`), the user's (`~/.claude/commands/`, then sagent's config
    folder), the project's (`.claude/commands/`, then `.sagent/commands/`). `home` stands in for the
    user's home folder (tests).

    A project's commands are offered only in a folder the user trusted (`sagent trust`): a command's text
    is a prompt its author wrote for the model, so in a folder not trusted each one is reported instead,
    with how to trust the folder (a user's command of the same name still runs)."""
    from sagent.resources import places

    found: dict[str, CustomCommand] = {}
    problems: dict[str, str] = {}
    where = places("commands", cwd, home=home)
    for place in where.found:
        commands, broken = folder_commands(place.folder, place.namespace, place.scope)
        for name in commands.keys() | broken.keys():
            found.pop(name, None)
            problems.pop(name, None)
        found.update(commands)
        problems.update(broken)
    for folder in where.untrusted:
        for name, path in _command_files(folder):
            if name not in found:
                problems[name] = f"{path}: this folder is not trusted; `sagent trust {where.root}` to use its commands"
    return dict(sorted(found.items())), problems


def folder_commands(
    folder: Path, namespace: str = "", scope: Scope = "user"
) -> tuple[dict[str, CustomCommand], dict[str, str]]:
    """The commands of one folder (or one command file), named `namespace` + their name (`my-plugin:` for
    a plugin's `commands/` folder: `sagent.resources.plugins.Plugin.folders("commands")`), and the files
    that could not be read, by name."""
    found: dict[str, CustomCommand] = {}
    problems: dict[str, str] = {}
    for name, path in _command_files(folder):
        name = namespace + name
        try:
            found[name] = read_command(name, path, scope)
        except CustomCommandError as error:
            problems[name] = str(error)
    return found, problems


def _command_files(folder: Path) -> list[tuple[str, Path]]:
    if folder.is_file():  # one command file a plugin's manifest names
        return [(folder.stem, folder)] if folder.suffix == ".md" and _NAME.match(folder.stem) else []
    if not folder.is_dir():
        return []
    files = []
    for path in sorted(folder.rglob("*.md")):
        parts = path.relative_to(folder).with_suffix("").parts
        if all(_NAME.match(p) for p in parts) and path.is_file():
            files.append((":".join(parts), path))
    return files


def read_command(name: str, path: Path, scope: Scope) -> CustomCommand:
    """Read one command file; CustomCommandError naming the file when it cannot be used."""
    try:
        raw = path.read_bytes()[: MAX_COMMAND_BYTES + 1]
    except OSError as error:
        raise CustomCommandError(f"{path}: cannot be read: {error.strerror or error}") from None
    if len(raw) > MAX_COMMAND_BYTES:
        raise CustomCommandError(f"{path}: larger than {MAX_COMMAND_BYTES:,} bytes")
    try:
        text = raw.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError:
        raise CustomCommandError(f"{path}: not UTF-8 text") from None
    try:
        meta, body = parse_front_matter(text, path)
    except CustomCommandError as error:  # a YAML front matter (a list over several lines) reads as YAML
        meta, body = _yaml_front_matter(text, path, error)
    if not body.strip():
        raise CustomCommandError(f"{path}: the prompt (after the front matter) is empty")
    tools = meta.get("allowed-tools")
    return CustomCommand(
        name,
        path,
        scope,
        body.strip(),
        description=meta.get("description", ""),
        argument_hint=meta.get("argument-hint", ""),
        allowed_tools=split_tools(tools) if tools is not None else None,
        model=meta.get("model") or None,
    )


def parse_front_matter(text: str, path: Path) -> tuple[dict[str, str], str]:
    """The `key: value` lines between a first line `---` and the next `---`, and the text after them.
    Values may be quoted; a `[a, b]` list stays text (split_tools reads it). Unknown keys are kept (and
    ignored); a line that is not `key: value` is an error naming the file and the line."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise CustomCommandError(f"{path}: the front matter opened by '---' on line 1 is never closed") from None
    meta: dict[str, str] = {}
    for number, line in enumerate(lines[1:end], 2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, colon, value = line.partition(":")
        if not colon or not key.strip() or key != key.rstrip() or key.startswith(" "):
            raise CustomCommandError(f"{path}: line {number} of the front matter is not 'key: value': {line.strip()!r}")
        meta[key.strip()] = _unquote(value.strip())
    return meta, "\n".join(lines[end + 1 :])


def _yaml_front_matter(text: str, path: Path, error: CustomCommandError) -> tuple[dict[str, str], str]:
    """The front matter read as YAML, its values as the line-by-line reader gives them (a list of tools
    as `A, B`); `error` (the line-by-line reader's) when YAML cannot read it either."""
    from sagent.resources.front_matter import ResourceError, split_front_matter

    try:
        meta, body = split_front_matter(text, path)
    except ResourceError:
        raise error from None
    flat = {k: ", ".join(map(str, v)) if isinstance(v, list) else "" if v is None else str(v) for k, v in meta.items()}
    return flat, body


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def split_tools(value: str) -> tuple[str, ...]:
    """`Read, Grep, Bash(git diff:*)` or `[Read, Grep]` as entries; commas inside parentheses stay."""
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    entries, depth, current = [], 0, ""
    for char in value:
        if char == "," and depth == 0:
            entries.append(current)
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current += char
    entries.append(current)
    return tuple(_unquote(e.strip()) for e in entries if e.strip())


def expand_input(text: str, commands: Mapping[str, CustomCommand], builtins: Iterable[str] = ()) -> Expansion | None:
    """`/name arguments` as the prompt of the custom command `name`; None when `text` is not a slash
    command, names no custom command, or names a built-in one (which wins)."""
    if not text.startswith("/"):
        return None
    head, _, arguments = text[1:].partition(" ")
    name, newline, rest = head.partition("\n")
    if newline:
        arguments = f"{rest} {arguments}".strip() if arguments else rest
    found = commands.get(name)
    if found is None or name in set(builtins):
        return None
    return Expansion(found, found.expand(arguments))


def apply_command(agent: Agent, expansion: Expansion) -> Callable[[], None]:
    """Give `agent` what the command's run needs (its `allowed-tools` hook, its model); returns what undoes
    both once the run is over. A model that cannot be built raises (FleetError, ProviderError) before
    anything changed."""
    command = expansion.command
    previous = None
    if command.model:
        model = agent.fleet.model(None, command.model)
        previous = agent.model
        agent.switch_model(model)
    added = expansion.hooks()
    if added:
        agent.configure(hooks=(*agent.settings.hooks, *added))

    def undo() -> None:
        if added:
            agent.configure(hooks=tuple(h for h in agent.settings.hooks if h not in added))
        if previous is not None and not agent.closed:
            agent.switch_model(previous)

    return undo
