"""Paths as permissions see them: resolved as the kernel resolves them (`~`, then each symlink before the
`..` after it, `//` and `.` collapsed) before any rule or root is matched; `sagent.lib.realpaths` does it.

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
import sys
from dataclasses import dataclass

from sagent.lib.realpaths import real_path


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
    """`path` (relative to `cwd`, or absolute, or starting with `~`) resolved both ways. The real spelling
    is the kernel's (`sagent.lib.realpaths.real_path`): a symlink is followed before a `..` after it, and
    `//`, `/./` and trailing `/.` collapse, so no spelling of a file escapes a rule that names it."""
    expanded = os.path.expanduser(path) if path.startswith("~") else path
    lexical = os.path.normpath(os.path.join(cwd, expanded))
    if lexical.startswith("//"):  # POSIX lets normpath keep two leading slashes; the kernel does not
        lexical = "/" + lexical.lstrip("/")
    return ResolvedPath(lexical, real_path(expanded, cwd))


def inside(path: str, roots: tuple[str, ...]) -> bool:
    """Whether `path` (resolved) is one of `roots` or below one."""
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


class PathPattern:
    """A compiled path glob (see the module's text for the syntax)."""

    __slots__ = ("fixed", "pattern", "real_fixed", "real_regex", "regex", "whole")

    def __init__(self, pattern: str, project_root: str) -> None:
        self.pattern = pattern
        self.regex = _compile(pattern, project_root)
        # The pattern's fixed folders may be a symlink (`~/.ssh` linked to a dotfiles folder, macOS's /tmp):
        # the files it names are then reached by their real path too, which must match as well.
        glob = absolute_pattern(pattern, project_root)
        fixed = self.fixed = _fixed_part(glob)
        """The folders (or file) the pattern names before its first wildcard, absolute ("" for none)."""
        real = self.real_fixed = os.path.realpath(fixed) if fixed else fixed
        self.whole = glob[len(fixed) :] in ("", "/", "/**")
        """The pattern names its fixed part and all below it (`~/.ssh`, `~/.ssh/**`), nothing narrower."""
        self.real_regex = _compile(real + glob[len(fixed) :], "/") if real != fixed else None

    def matches(self, path: str) -> bool:
        """Whether the resolved path `path` is what the pattern names (or inside it)."""
        if self.regex.match(path) is not None:
            return True
        return self.real_regex is not None and self.real_regex.match(path) is not None


def _fixed_part(glob: str) -> str:
    """The folders of an absolute glob before its first wildcard (`/home/u/.ssh` of `/home/u/.ssh/**`)."""
    fixed: list[str] = []
    for part in glob.split("/"):
        if any(c in part for c in "*?["):
            break
        fixed.append(part)
    return "/".join(fixed).rstrip("/") if len(fixed) > 1 else ""


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
    return re.compile("".join(out) + tail + r"\Z", _FLAGS)


# Where the file system ignores case (macOS and Windows by default), `~/.SSH/ID_RSA` opens the key: a rule
# matches without regard to case there.
_FLAGS = re.DOTALL | (re.IGNORECASE if sys.platform in ("darwin", "win32") else 0)
