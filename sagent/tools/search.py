"""Finding things: Glob, Grep and List. All three skip `.git` and what `.gitignore` files exclude.

Grep uses ripgrep when it is installed and a pure-Python search otherwise; both give the same lines in
the same order (sorted by path, then line), so results never depend on the machine.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from pathlib import Path
from typing import Any

from sagent.tools.base import AnyOrder, ToolContext, ToolError

MAX_RESULTS = 200


class Ignore:
    """`.gitignore` rules from a root folder down; nested files apply to their own subtree."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[Path, Any] = {}

    def _spec(self, folder: Path) -> Any:
        if folder not in self._specs:
            import pathspec

            file = folder / ".gitignore"
            lines = file.read_text(errors="replace").splitlines() if file.is_file() else []
            self._specs[folder] = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        return self._specs[folder]

    def ignored(self, path: Path, is_dir: bool) -> bool:
        if path.name == ".git":
            return True
        folder = path.parent
        while True:
            spec = self._spec(folder)
            if spec is not None:
                rel = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
                if spec.match_file(rel):
                    return True
            if folder == self.root or self.root not in folder.parents:
                return False
            folder = folder.parent

    def walk(self, root: Path) -> list[Path]:
        """Every file below `root` that is not ignored, sorted."""
        found: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(root):
            here = Path(dirpath)
            dirnames[:] = sorted(d for d in dirnames if not self.ignored(here / d, True))
            found += [here / f for f in filenames if not self.ignored(here / f, False)]
        return sorted(found)


def _root(arguments: dict[str, Any], ctx: ToolContext) -> Path:
    root = ctx.resolve(arguments.get("path") or ".")
    if not root.exists():
        raise ToolError(f"no such path: {root}")
    return root


def _cap(lines: list[str], what: str) -> str:
    if not lines:
        return f"no {what}"
    if len(lines) > MAX_RESULTS:
        return "\n".join(lines[:MAX_RESULTS]) + f"\n[{len(lines) - MAX_RESULTS} more {what} not shown]"
    return "\n".join(lines)


class Glob(AnyOrder):
    name = "Glob"
    reproducible = True  # its output can be had again: compaction may prune it
    description = (
        "Find files by glob pattern (`**/*.py`, `src/*.ts`), newest first, skipping .git and .gitignored "
        f"files. At most {MAX_RESULTS} paths."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "a glob; ** matches any folders"},
            "path": {"type": "string", "description": "the folder to search (default: working directory)"},
        },
        "required": ["pattern"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        root = _root(arguments, ctx)
        pattern = arguments["pattern"]

        def find() -> list[str]:
            ignore = Ignore(root)
            hits = [p for p in root.glob(pattern) if p.is_file()]
            hits = [p for p in hits if not any(ignore.ignored(a, True) for a in _between(root, p.parent))]
            hits = [p for p in hits if not ignore.ignored(p, False)]
            hits.sort(key=lambda p: (-p.stat().st_mtime, str(p)))
            return [str(p.relative_to(root)) for p in hits]

        return _cap(await asyncio.to_thread(find), "files")


def _between(root: Path, folder: Path) -> list[Path]:
    """The folders from just below `root` down to `folder`."""
    if folder == root:
        return []
    return [*reversed([p for p in folder.parents if root in p.parents]), folder]


class Grep(AnyOrder):
    name = "Grep"
    reproducible = True  # its output can be had again: compaction may prune it
    description = (
        "Search file contents with a regular expression (the common subset of Python and ripgrep syntax). "
        "output_mode: files_with_matches (default), content (path:line:text, with `context` lines), or "
        "count. Skips .git, .gitignored and binary files."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "the regular expression"},
            "path": {"type": "string", "description": "a folder or file (default: working directory)"},
            "glob": {"type": "string", "description": "only files whose name matches, e.g. *.py"},
            "output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"]},
            "case_insensitive": {"type": "boolean", "default": False},
        },
        "required": ["pattern"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        root = _root(arguments, ctx)
        try:
            regex = re.compile(arguments["pattern"], re.I if arguments.get("case_insensitive") else 0)
        except re.error as error:
            raise ToolError(f"invalid regular expression: {error}") from None
        mode = arguments.get("output_mode") or "files_with_matches"
        glob = arguments.get("glob")
        if shutil.which("rg"):
            matches = await _ripgrep(arguments["pattern"], root, glob, bool(arguments.get("case_insensitive")))
        else:
            matches = await asyncio.to_thread(_python_grep, regex, root, glob)
        return _format(matches, mode)


Match = tuple[str, int, str]  # (relative path, line number, line)


def _format(matches: list[Match], mode: str) -> str:
    matches.sort(key=lambda m: (m[0], m[1]))
    if mode == "content":
        return _cap([f"{p}:{n}:{t}" for p, n, t in matches], "matches")
    counts: dict[str, int] = {}
    for path, _, _ in matches:
        counts[path] = counts.get(path, 0) + 1
    if mode == "count":
        return _cap([f"{p}:{c}" for p, c in counts.items()], "matches")
    return _cap(list(counts), "files")


def _python_grep(regex: re.Pattern[str], root: Path, glob: str | None) -> list[Match]:
    files = [root] if root.is_file() else Ignore(root).walk(root)
    base = root.parent if root.is_file() else root
    out: list[Match] = []
    for file in files:
        if glob and not file.match(glob):
            continue
        try:
            data = file.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                out.append((file.relative_to(base).as_posix(), n, line))
    return out


async def _ripgrep(pattern: str, root: Path, glob: str | None, nocase: bool) -> list[Match]:
    args = ["rg", "--line-number", "--no-heading", "--color", "never", "--with-filename", "--hidden"]
    args += ["--glob", "!.git", "--no-require-git"]
    if nocase:
        args.append("-i")
    if glob:
        args += ["--glob", glob]
    cwd = root.parent if root.is_file() else root
    args += ["-e", pattern, "--", root.name if root.is_file() else "."]
    proc = await asyncio.create_subprocess_exec(
        *args, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await proc.communicate()
    if proc.returncode not in (0, 1):
        raise ToolError(f"search failed: {err.decode(errors='replace').strip()}")
    matches: list[Match] = []
    for line in out.decode("utf-8", errors="replace").splitlines():
        path, n, text = line.split(":", 2)
        matches.append((path.removeprefix("./"), int(n), text))
    return matches


class List(AnyOrder):
    name = "List"
    reproducible = True  # its output can be had again: compaction may prune it
    description = "List a folder's entries (folders end with /, files show their size), skipping .gitignored ones."
    input_schema = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "the folder (default: working directory)"}},
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        root = _root(arguments, ctx)
        if not root.is_dir():
            raise ToolError(f"{root} is a file; use Read to see it")
        ignore = Ignore(root)
        lines = []
        for entry in sorted(root.iterdir(), key=lambda p: (not p.is_dir(), p.name)):
            if ignore.ignored(entry, entry.is_dir()):
                continue
            lines.append(f"{entry.name}/" if entry.is_dir() else f"{entry.name}  ({entry.stat().st_size:,} bytes)")
        return _cap(lines, "entries")
