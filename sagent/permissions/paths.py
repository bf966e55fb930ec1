"""Paths as permissions see them: resolved (`~`, `..` and symlinks) before any rule or root is matched.

A path rule's pattern is a glob: `~/` starts at the home folder, `/` at the file system's root (`//` too,
as Claude Code writes absolute paths), anything else at the project root (the working directory). `*`
matches within one folder name, `**` across folders, `?` one character; a pattern without a `/` (`.env`,
`*.pem`) matches that name in any folder below the project root. A pattern names a folder's contents as
well as the folder: `Read(~/.ssh)` and `Read(~/.ssh/**)` both cover every file under `~/.ssh`.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    """A path a tool was given: `lexical` is absolute with `~` and `..` resolved; `real` also follows
    symlinks (they differ when a link inside the project points out of it)."""

    lexical: str
    real: str

    def candidates(self) -> tuple[str, ...]:
        """Both spellings, once each: a deny or ask rule matching either holds."""
        return (self.lexical,) if self.lexical == self.real else (self.lexical, self.real)


def resolve(path: str, cwd: str) -> ResolvedPath:
    """`path` (relative to `cwd`, or absolute, or starting with `~`) resolved both ways."""
    expanded = os.path.expanduser(path) if path.startswith("~") else path
    lexical = os.path.normpath(os.path.join(cwd, expanded))
    return ResolvedPath(lexical, real_path(lexical))


def real_path(lexical: str) -> str:
    """`os.path.realpath` of a normalised absolute path, quicker in the usual case: one `lstat` per
    folder on the way, and the lexical path itself when none of them is a symlink (below the first part
    that does not exist, nothing can be one)."""
    current = ""
    for part in lexical.split(os.sep)[1:]:
        if not part:
            continue
        current = f"{current}{os.sep}{part}"
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return lexical
        except OSError:
            return os.path.realpath(lexical)
        if stat.S_ISLNK(mode):
            return os.path.realpath(lexical)
    return lexical


def inside(path: str, roots: tuple[str, ...]) -> bool:
    """Whether `path` (resolved) is one of `roots` or below one."""
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


class PathPattern:
    """A compiled path glob (see the module's text for the syntax)."""

    __slots__ = ("pattern", "regex")

    def __init__(self, pattern: str, project_root: str) -> None:
        self.pattern = pattern
        self.regex = _compile(pattern, project_root)

    def matches(self, path: str) -> bool:
        """Whether the resolved path `path` is what the pattern names (or inside it)."""
        return self.regex.match(path) is not None


def absolute_pattern(pattern: str, project_root: str) -> str:
    """The pattern as an absolute glob."""
    if pattern == "~" or pattern.startswith("~/"):
        return os.path.expanduser("~") + pattern[1:]
    if pattern.startswith("/"):
        return "/" + pattern.lstrip("/")
    body = pattern[2:] if pattern.startswith("./") else pattern
    if "/" not in body.rstrip("/"):
        body = "**/" + body  # a bare name: at any depth below the project root
    return project_root.rstrip("/") + "/" + body


@functools.lru_cache(maxsize=256)
def _compile(pattern: str, project_root: str) -> re.Pattern[str]:
    glob = absolute_pattern(pattern, project_root)
    if glob.endswith("/**"):
        glob = glob[:-3]
    glob = glob.rstrip("/") or "/"
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    tail = "(?:/.*)?" if glob != "/" else ".*"
    return re.compile("".join(out) + tail + r"\Z", re.DOTALL)
