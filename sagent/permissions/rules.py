"""Permission rules: `Bash(git diff:*)`, `Edit(src/**)`, `WebFetch(domain:docs.python.org)`, `mcp__github__*`.

    rule = parse_rule("Bash(npm test)", origin="--allowedTools")
    rule.matches(subject)          # a `Subject`: one tool call as the rules see it

The forms, as Claude Code writes them:

- a tool name (`Bash`, `WebSearch`, `mcp__github__create_issue`), or `Tool(*)`: every call of that tool; a `*`
  in the name is a wildcard (`mcp__github__*`), and `mcp__server` names every tool of that server;
- `Bash(git diff:*)`: commands that start with these words; `Bash(npm test)`: exactly this command (in a
  deny or ask rule, with any arguments too);
  `Bash(npm run *)`: a `*` pattern over the command's text. The rule is held against *each* command the
  parsed line runs (see `bash.parse_line`): a deny or ask rule against every one, wrapped and nested ones
  too, by the program's name (`/bin/rm` is `rm`); an allow rule only as the command is written, and never
  for a line with something it cannot see (`bash_policy` holds the rest);
- `Read(PATH)`, `Edit(PATH)` (also `Write`, `Glob`, `Grep`, `List`): a path glob (see `paths`), held against
  the real path the tool will open (symlinks followed, `//` and `..` collapsed as the kernel does). `Read`
  rules cover every tool that reads (Read, Glob, Grep, List, and each file a search touches); `Edit` rules
  every tool that edits (Edit, Write, and Memory's file); `Write` rules Write and Memory;
- `WebFetch(domain:HOST)`: URLs on HOST or its subdomains.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from sagent.permissions.bash import Command, ParsedLine
from sagent.permissions.paths import PathPattern, ResolvedPath

READING_TOOLS = frozenset({"Read", "Glob", "Grep", "List"})
EDITING_TOOLS = frozenset({"Edit", "Write"})
PATH_TOOLS = READING_TOOLS | EDITING_TOOLS
MEMORY_TOOL = "Memory"
COVERS = {"Read": READING_TOOLS, "Edit": EDITING_TOOLS | {MEMORY_TOOL}, "Write": frozenset({"Write", MEMORY_TOOL})}
"""The tools a path rule names, when it names more than its own (Memory writes a file: the project's
AGENTS.md or the user's memory file, so Edit and Write rules hold for it)."""

_NAME = re.compile(r"[A-Za-z0-9_.*-]+\Z")
RuleKind = Literal["any", "prefix", "exact", "glob", "path", "domain"]


class RuleError(ValueError):
    """A rule that cannot be read; the message names it and says what is wrong."""


@dataclass(frozen=True, slots=True)
class Subject:
    """One tool call as the rules see it: its tool, and what its rule specifier is held against."""

    tool: str
    commands: tuple[Command, ...] | None = None  # Bash: the commands allow rules must cover (None: unseen parts)
    command_line: str = ""
    bash: ParsedLine | None = None  # Bash: the parsed line
    paths: tuple[ResolvedPath, ...] = ()  # the file tools: the path(s) the call touches
    host: str | None = None  # WebFetch: the URL's host
    url: str = ""


@dataclass(frozen=True, slots=True)
class Rule:
    """One parsed rule, with where it came from (a settings file, a flag, `session`)."""

    text: str
    tool: str
    kind: RuleKind
    words: tuple[str, ...] = ()  # prefix / exact
    spec: str = ""  # glob / domain / path pattern as written
    origin: str = ""
    project_root: str = ""
    _path: PathPattern | None = field(default=None, compare=False, repr=False)

    @property
    def path_pattern(self) -> PathPattern | None:
        """The compiled glob of a path rule (None for the other kinds)."""
        return self._path

    def names(self, tool: str) -> bool:
        """Whether the rule is about calls of `tool`."""
        if self.kind == "path" and self.tool in COVERS:
            return tool in COVERS[self.tool]
        if self.tool == tool:
            return True
        if "*" in self.tool:
            return fnmatch.fnmatchcase(tool, self.tool)
        return self.tool.startswith("mcp__") and self.tool.count("__") == 1 and tool.startswith(self.tool + "__")

    def matches(self, subject: Subject, strict: bool = False) -> bool:
        """Whether the rule holds for the call. `strict` (allow rules) requires every command of a Bash
        line to match and a path rule to match the path with its symlinks resolved; otherwise (deny and
        ask) one command, or either spelling of the path, is enough."""
        if not self.names(subject.tool):
            return False
        if self.kind == "any":
            return True
        if self.kind == "domain":
            host = subject.host
            return host is not None and (host == self.spec or host.endswith("." + self.spec))
        if self.kind == "path":
            assert self._path is not None
            if not subject.paths:
                return False
            if strict:
                return all(self._path.matches(p.real) for p in subject.paths)
            return any(self._path.matches(c) for p in subject.paths for c in p.candidates())
        return self._matches_bash(subject, strict)

    def _matches_bash(self, subject: Subject, strict: bool) -> bool:
        parsed = subject.bash
        if parsed is None:
            return False
        if strict:  # an allow rule alone: every command, and nothing unseen
            runs = [c for c in parsed.direct if c.role == "run"]
            return not parsed.opaque and bool(runs) and all(self.allows_command(c) for c in runs)
        # A deny or ask rule names a command with any arguments: `Bash(git push)` covers `git push origin`.
        if any(self._matches_words(v, loose=False, denying=True) for c in parsed.commands for v in c.variants()):
            return True
        # A line that did not parse cleanly: its words anywhere (never allowed; deny and ask look further).
        return bool(parsed.loose_words) and self._matches_words(parsed.loose_words, loose=True)

    def allows_command(self, command: Command) -> bool:
        """Whether this (allow) rule lets one command of a Bash line run as it is written (its assignments
        included): the words the rule names must be static; an exact rule needs every word static and no
        arguments added at run time (`xargs`)."""
        if self.kind == "any":
            return True
        if not command.static or not command.static[0]:
            return False
        words, static = command.words, command.static
        if command.assignments:
            # `IFS=… read` is `read`: IFS changes how expansions split, not what runs; others count.
            assignments = tuple(a for a in command.assignments if not a.startswith("IFS="))
            words = (*assignments, *words)
            static = (True,) * len(assignments) + static
        if self.kind == "exact":
            return all(static) and not command.open_ended and words == self.words
        if self.kind == "prefix":
            n = len(self.words)
            return all(static[:n]) and words[:n] == self.words
        return fnmatch.fnmatchcase(" ".join(words), self.spec)

    def _matches_words(self, words: tuple[str, ...], loose: bool = False, denying: bool = False) -> bool:
        if self.kind == "exact" and not (loose or denying):
            return words == self.words
        if self.kind in ("prefix", "exact"):
            n = len(self.words)
            if loose:  # anywhere in the line (used only to deny or ask about a line that cannot be read)
                return any(words[i : i + n] == self.words for i in range(len(words) - n + 1))
            return words[:n] == self.words
        return fnmatch.fnmatchcase(" ".join(words), self.spec)


def parse_rule(text: str, origin: str = "", project_root: str = "") -> Rule:
    """The rule `text` says; RuleError when it cannot be read. `project_root` anchors relative paths."""
    raw = text.strip()
    if not raw:
        raise RuleError("an empty permission rule")
    name, paren, rest = raw.partition("(")
    name = name.strip()
    if not _NAME.match(name):
        raise RuleError(f"{text!r}: {name!r} is not a tool name")
    if not paren:
        return Rule(raw, name, "any", origin=origin, project_root=project_root)
    if not rest.endswith(")"):
        raise RuleError(f"{text!r}: the ( is not closed")
    spec = rest[:-1].strip()
    if spec in ("", "*"):
        return Rule(raw, name, "any", origin=origin, project_root=project_root)
    if name == "Bash":
        return _bash_rule(raw, spec, origin, project_root)
    if name in PATH_TOOLS:
        pattern = PathPattern(spec, project_root)
        return Rule(raw, name, "path", spec=spec, origin=origin, project_root=project_root, _path=pattern)
    if name == "WebFetch":
        if not spec.startswith("domain:") or not spec[7:].strip():
            raise RuleError(f"{text!r}: WebFetch rules name a domain: WebFetch(domain:example.com)")
        domain = spec[7:].strip().lower().removeprefix("*.")
        return Rule(raw, name, "domain", spec=domain, origin=origin, project_root=project_root)
    raise RuleError(f"{text!r}: {name} takes no specifier in a rule; write {name} alone")


def _bash_rule(raw: str, spec: str, origin: str, project_root: str) -> Rule:
    try:
        if spec.endswith(":*"):
            words = tuple(shlex.split(spec[:-2]))
            if not words:
                raise RuleError(f"{raw!r}: the prefix before :* is empty")
            return Rule(raw, "Bash", "prefix", words=words, spec=spec, origin=origin, project_root=project_root)
        if "*" in spec:
            return Rule(raw, "Bash", "glob", spec=spec, origin=origin, project_root=project_root)
        return Rule(raw, "Bash", "exact", words=tuple(shlex.split(spec)), spec=spec, origin=origin)
    except ValueError as error:  # shlex: an unterminated quote
        raise RuleError(f"{raw!r}: {error}") from None


def subject_of(tool: str, arguments: dict[str, object], cwd: str) -> Subject:
    """What the rules look at in a call of `tool` with `arguments` (the built-in tools' argument names)."""
    from sagent.permissions.paths import resolve

    if tool == "Bash":
        from sagent.permissions.bash import parse_line

        line = arguments.get("command")
        line = line if isinstance(line, str) else ""
        parsed = parse_line(line)
        direct = None if parsed.opaque else tuple(c for c in parsed.direct if c.role == "run")
        return Subject(tool, commands=direct, command_line=line, bash=parsed)
    if tool in PATH_TOOLS:
        return Subject(tool, paths=(resolve(_path_argument(tool, arguments), cwd),))
    if tool == MEMORY_TOOL:
        from pathlib import Path

        from sagent.tools.memory_tools import memory_file

        scope = "user" if arguments.get("scope") == "user" else "project"
        return Subject(tool, paths=(resolve(str(memory_file(scope, Path(cwd))), cwd),))
    if tool == "WebFetch":
        url = arguments.get("url")
        url = url.strip() if isinstance(url, str) else ""
        return Subject(tool, host=_host(url), url=url)
    return Subject(tool)


def _path_argument(tool: str, arguments: dict[str, object]) -> str:
    path = arguments.get("path")
    path = path if isinstance(path, str) and path else "."
    if tool == "Glob":
        pattern = arguments.get("pattern")
        if isinstance(pattern, str):
            # A pattern searches from its fixed part: `/etc/**/*.conf` reads under /etc, `../x/*` under ../x.
            from sagent.tools.base import ToolError
            from sagent.tools.search import glob_start

            try:
                return glob_start(pattern, path)[0]
            except ToolError:  # the tool refuses the pattern
                return path
    return path


def _host(url: str) -> str | None:
    if "://" not in url:
        url = "https://" + url  # as WebFetch reads it
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.lower().rstrip(".") if host else None
