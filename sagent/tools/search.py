"""Finding things: Glob, Grep and List. All three skip `.git` and what `.gitignore` files exclude, and
every file or folder they touch is held against the permission rules (`ToolContext.guard`): what a deny or
ask rule names, or what lies outside the searched folder where the policy would ask (a symlink out of
it), is left out and counted, never read or listed.

Grep uses ripgrep when it is installed and a pure-Python search otherwise; both give the same lines in
the same order (sorted by path, then line), so results never depend on the machine. Glob uses fd
(`fdfind` on Debian) the same way for `**/name` patterns (`sagent.tools.fdglob`): fd only lists, and
each entry still goes through the checks here, so it finds the same files in the same order.
"""

from __future__ import annotations

import asyncio
import fnmatch
import functools
import os
import re
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sagent.lib.realpaths import real_path
from sagent.tools.base import AnyOrder, ToolContext, ToolError, off_loop
from sagent.tools.fdglob import fd_select
from sagent.tools.files import SNIFF, checked_path, line_chunks, open_regular, strip_break

MAX_RESULTS = 200


class Ignore:
    """`.gitignore` rules from a root folder down; nested files apply to their own subtree."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._top = str(root)
        self._below = self._top.rstrip("/") + "/"  # what starts a path strictly below the root
        self._specs: dict[str, Any] = {}

    def _spec(self, folder: str) -> Any:
        if folder not in self._specs:
            import pathspec

            file = os.path.join(folder, ".gitignore")
            try:  # an unreadable .gitignore adds no rules rather than failing the search
                lines = Path(file).read_text(errors="replace").splitlines() if os.path.isfile(file) else []
            except OSError:
                lines = []
            self._specs[folder] = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        return self._specs[folder]

    def ignored(self, path: Path | str, is_dir: bool) -> bool:
        """Whether `path` (an absolute path below the root) is `.git` or excluded by a `.gitignore` in
        any folder from its own up to the root. Plain string work: it runs for every entry a search weighs."""
        path = str(path)
        folder, name = os.path.split(path)
        if name == ".git":
            return True
        while True:
            spec = self._spec(folder)
            if spec is not None:
                rel = path[len(folder) :].lstrip("/") + ("/" if is_dir else "")
                if spec.match_file(rel):
                    return True
            if folder == self._top or not folder.startswith(self._below):
                return False
            folder = os.path.dirname(folder)

    def walk(
        self, root: Path, skipped: list[OSError] | None = None, hidden: Callable[[str], bool] | None = None
    ) -> list[Path]:
        """Every file below `root` that is not ignored, sorted; the folders that could not be read are
        appended to `skipped`. Folders (links are not followed) for which `hidden` says True are not
        entered; it is given their path."""
        found: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(root, onerror=skipped.append if skipped is not None else None):
            here = Path(dirpath)
            dirnames[:] = sorted(
                d
                for d in dirnames
                if not self.ignored(here / d, True) and not (hidden is not None and hidden(os.path.join(dirpath, d)))
            )
            found += [here / f for f in filenames if not self.ignored(here / f, False)]
        return sorted(found)


def _root(arguments: dict[str, Any], ctx: ToolContext, tool: str) -> Path:
    """The real path of the folder (or file) a search starts from, once the policy lets `tool` read it."""
    root = checked_path(ctx, arguments.get("path") or ".", tool)
    if not root.exists():
        raise ToolError(f"no such path: {ctx.resolve(arguments.get('path') or '.')}")
    return root


class Screen:
    """The guard's view of one search: which entries it leaves out, and how many it did."""

    def __init__(self, ctx: ToolContext, tool: str, root: Path) -> None:
        self.guard, self.tool, self.root = ctx.guard, tool, str(root)
        self.hidden = 0
        self.link_check = ctx.link_check(tool)

    def hides(self, real: str) -> bool:
        """Whether the entry at the real path `real` is left out (and counted)."""
        if self.guard is None or not self.guard.hides(self.tool, real, self.root):
            return False
        self.hidden += 1
        return True

    def hides_links(self, real: str) -> bool:
        """Whether the file at `real` is left out (and counted) as a hard link to a file a deny rule names."""
        if self.link_check is None:
            return False
        try:
            self.link_check(os.stat(real))
        except ToolError:
            self.hidden += 1
            return True
        except OSError:
            pass
        return False

    def hides_path(self, path: str, linked: bool = True) -> bool:
        """`hides` for an entry found at `path`, resolved when it or a folder on the way may be a link."""
        if self.guard is None:
            return False
        return self.hides(os.path.realpath(path) if linked or os.path.islink(path) else path)


def _cap(lines: list[str], what: str, total: int | None = None, skipped: int = 0, hidden: int = 0) -> str:
    """At most MAX_RESULTS lines of `total` (all of `lines` when not given), then what was left out."""
    total = len(lines) if total is None else total
    out = "\n".join(lines[:MAX_RESULTS]) if lines else f"no {what}"
    if total > MAX_RESULTS:
        out += f"\n[{total - MAX_RESULTS} more {what} not shown]"
    if hidden:
        out += (
            f"\n[{hidden} {'entry' if hidden == 1 else 'entries'} left out: the permission rules do not let this "
            "search read there]"
        )
    if skipped:
        out += (
            f"\n[{skipped} {'entry' if skipped == 1 else 'entries'} could not be read and "
            f"{'was' if skipped == 1 else 'were'} skipped (no permission, gone, or a broken or looping link)]"
        )
    return out


class Glob(AnyOrder):
    name = "Glob"
    reproducible = True  # its output can be had again: compaction may prune it
    description = (
        f"Find files by glob (`**/*.py`), newest first, skipping .git and .gitignored files; at most {MAX_RESULTS}."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "path": {"type": "string", "description": "a folder"},
        },
        "required": ["pattern"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        pattern: str = arguments["pattern"]
        absolute = pattern.startswith(("/", "~"))  # from the root (or home): its paths are shown whole
        start, parts = glob_start(pattern, arguments.get("path") or ".")

        def find() -> str:
            base = None if absolute else real_path(arguments.get("path") or ".", str(ctx.cwd))
            missing = start != (arguments.get("path") or ".") and not os.path.isdir(real_path(start, str(ctx.cwd)))
            if missing and (base is None or os.path.exists(base)):  # the pattern's own folders are not there
                return _cap([], "files")
            root = _root({"path": start}, ctx, "Glob")
            walk = _GlobWalk(root, Screen(ctx, "Glob", root))
            name = (parts[1:] or ["*"])[0]
            fast = len(parts) <= 2 and parts[0] == "**" and name != "**" and root.is_dir()
            if not (fast and fd_select(walk, root, name)):  # fd lists, sagent's rules judge; or all in Python
                walk.select(root, parts, linked=False)
            best = walk.best()
            shown = [p if base is None else os.path.relpath(p, base) for _, p in best]
            return _cap(shown, "files", walk.found, walk.skipped, walk.screen.hidden)

        return await off_loop(find)


def glob_start(pattern: str, path: str) -> tuple[str, list[str]]:
    """Where Glob's search for `pattern` from the folder `path` starts (the pattern's folders before its
    first wildcard: `/etc/**/*.conf` reads under /etc, `../lib/*.py` under ../lib) and the pattern's parts
    left to match from there. `ToolError` for a `..` after a wildcard: it could climb out of any folder."""
    if pattern.startswith("~"):
        pattern = os.path.expanduser(pattern)
    parts = [p for p in pattern.split("/") if p not in ("", ".")] or ["*"]
    fixed: list[str] = []
    while len(parts) > 1 and not _MAGIC.search(parts[0]):
        fixed.append(parts.pop(0))
    if ".." in parts:
        raise ToolError("a Glob pattern cannot go up with .. after a wildcard; give the folder as `path` instead")
    head = "/" if pattern.startswith("/") else path
    return os.path.join(head, *fixed), parts


class _GlobWalk:
    """Glob's search, a pattern segment at a time: an entry that cannot be read (no permission, gone
    meanwhile, a broken or looping link) is counted and skipped, never the end of the search. `**` does
    not follow links to folders, so a link loop cannot make it endless. Only the newest MAX_RESULTS
    files are kept, so a search of the whole disk costs bounded memory."""

    def __init__(self, root: Path, screen: Screen) -> None:
        self.ignore = Ignore(root)
        self.screen = screen
        self.skipped = 0
        self.found = 0
        self._hits: list[tuple[float, str]] = []  # (-mtime, path): the best sort first

    def best(self) -> list[tuple[float, str]]:
        self._hits.sort()
        return self._hits[:MAX_RESULTS]

    def _hit(self, mtime: float, path: str) -> None:
        self.found += 1
        self._hits.append((-mtime, path))
        if len(self._hits) > 4 * MAX_RESULTS:
            self.best()
            del self._hits[MAX_RESULTS:]

    def _scan(self, folder: Path) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(folder) as entries:
                return list(entries)
        except OSError:
            self.skipped += 1
            return []

    def _stat(self, entry: os.DirEntry[str] | Path) -> os.stat_result | None:
        """The status of what an entry names (links followed); None, counted, when that cannot be had."""
        try:
            return entry.stat()
        except OSError:
            self.skipped += 1
            return None

    def select(
        self, folder: Path, parts: list[str], entries: list[os.DirEntry[str]] | None = None, *, linked: bool
    ) -> None:
        """Match `parts` below `folder`; `linked`: a symlink was followed on the way to it."""
        part, rest = parts[0], parts[1:]
        if part == "**":
            rest = rest or ["*"]  # a trailing ** means every file below
            entries = self._scan(folder)
            self.select(folder, rest, entries, linked=linked)
            for entry in entries:
                if (
                    entry.is_dir(follow_symlinks=False)
                    and not self.ignore.ignored(entry.path, True)
                    and not self.screen.hides_path(entry.path, linked)
                ):
                    self.select(Path(entry.path), parts, linked=linked)
            return
        if not _MAGIC.search(part):  # a plain name: no need to list the folder
            self._plain(folder / part, rest, linked)
            return
        match = _segment(part)
        for entry in self._scan(folder) if entries is None else entries:
            if not match(entry.name):
                continue
            is_dir = entry.is_dir(follow_symlinks=False) or (entry.is_symlink() and _links_to_dir(entry))
            if self.ignore.ignored(entry.path, is_dir):
                continue
            st = self._stat(entry) if entry.is_symlink() or not rest else None
            if rest:
                if entry.is_symlink() and st is None:
                    continue
                if is_dir and not self.screen.hides_path(entry.path, linked):
                    self.select(Path(entry.path), rest, linked=linked or entry.is_symlink())
            elif st is not None and stat.S_ISREG(st.st_mode) and not self.screen.hides_path(entry.path, linked):
                self._hit(st.st_mtime, entry.path)

    def _plain(self, path: Path, rest: list[str], linked: bool) -> None:
        try:
            st = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            return  # simply not there: no match, nothing unreadable
        except OSError:
            self.skipped += 1
            return
        if self.ignore.ignored(path, stat.S_ISDIR(st.st_mode)) or self.screen.hides_path(str(path), linked):
            return
        if rest:
            if stat.S_ISDIR(st.st_mode):
                self.select(path, rest, linked=linked or path.is_symlink())
        elif stat.S_ISREG(st.st_mode):
            self._hit(st.st_mtime, str(path))


_MAGIC = re.compile(r"[*?[]")


@functools.lru_cache(maxsize=64)
def _segment(part: str) -> Callable[[str], re.Match[str] | None]:
    return re.compile(fnmatch.translate(part)).match


def _links_to_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


class Grep(AnyOrder):
    name = "Grep"
    reproducible = True  # its output can be had again: compaction may prune it
    description = (
        "Search file contents by regex (Python's and ripgrep's common syntax), skipping .git, .gitignored and "
        "binary files. output_mode: files_with_matches (default), content (path:line:text, `context` lines "
        "around), count."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "path": {"type": "string", "description": "a folder or file"},
            "glob": {"type": "string", "description": "file names, e.g. *.py"},
            "output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"]},
            "case_insensitive": {"type": "boolean", "default": False},
        },
        "required": ["pattern"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        root = await off_loop(_root, arguments, ctx, "Grep")
        screen = Screen(ctx, "Grep", root)
        try:
            regex = re.compile(arguments["pattern"], re.I if arguments.get("case_insensitive") else 0)
        except re.error as error:
            raise ToolError(f"invalid regular expression: {error}") from None
        mode = arguments.get("output_mode") or "files_with_matches"
        glob = arguments.get("glob")
        if shutil.which("rg"):
            nocase = bool(arguments.get("case_insensitive"))
            matches, skipped = await _ripgrep(arguments["pattern"], root, glob, nocase, screen)
        else:
            matches, skipped = await off_loop(_python_grep, regex, root, glob, screen)
        return _format(matches, mode, skipped, screen.hidden)


Match = tuple[str, int, str]  # (relative path, line number, line)


def _format(matches: list[Match], mode: str, skipped: int = 0, hidden: int = 0) -> str:
    matches.sort(key=lambda m: (m[0], m[1]))
    if mode == "content":
        return _cap([f"{p}:{n}:{t}" for p, n, t in matches], "matches", skipped=skipped, hidden=hidden)
    counts: dict[str, int] = {}
    for path, _, _ in matches:
        counts[path] = counts.get(path, 0) + 1
    if mode == "count":
        return _cap([f"{p}:{c}" for p, c in counts.items()], "matches", skipped=skipped, hidden=hidden)
    return _cap(list(counts), "files", skipped=skipped, hidden=hidden)


GREP_LINE = 2**16  # characters of a line searched; a longer line is searched in its first part only


def _python_grep(regex: re.Pattern[str], root: Path, glob: str | None, screen: Screen) -> tuple[list[Match], int]:
    """The matches, and how many entries could not be read. Files are read a chunk at a time and only
    regular ones are opened: a pipe or a device in the tree is passed over, never waited on. The walk
    follows no link to a folder, so below the (real) root a path is real unless it is a link itself."""
    unreadable: list[OSError] = []
    files = [root] if root.is_file() else Ignore(root).walk(root, unreadable, lambda d: screen.hides_path(d, False))
    skipped = len(unreadable)
    base = root.parent if root.is_file() else root
    out: list[Match] = []
    for file in files:
        if glob and not file.match(glob):
            continue
        real = os.path.realpath(file) if os.path.islink(file) else str(file)
        if screen.hides(real) or screen.hides_links(real):
            continue
        try:
            if not stat.S_ISREG(os.stat(real).st_mode):
                continue
            f, _ = open_regular(Path(real), "Grep", file, screen.link_check)
        except (OSError, ToolError):
            skipped += 1
            continue
        with f:
            if b"\0" in f.read(SNIFF):
                continue
            f.seek(0)
            n = 0
            for parts, _ in line_chunks(f, keep=GREP_LINE):
                for part in parts:
                    n += 1
                    line = strip_break(part)
                    if regex.search(line):
                        out.append((file.relative_to(base).as_posix(), n, line))
    return out, skipped


async def _ripgrep(pattern: str, root: Path, glob: str | None, nocase: bool, screen: Screen) -> tuple[list[Match], int]:
    """ripgrep's matches (it follows no symlink below the root), each file's held against the rules: rg
    reads the files, but a line of one the rules deny never leaves this function."""
    args = ["rg", "--line-number", "--no-heading", "--color", "never", "--with-filename", "--hidden"]
    args += ["--glob", "!.git", "--no-require-git"]
    if nocase:
        args.append("-i")
    if glob:
        args += ["--glob", glob]
    if screen.guard is not None and not root.is_file():  # what the rules deny whole, rg need not even open
        args += [f"--glob=!/{relative}" for relative in screen.guard.skip_below("Grep", str(root))]
    cwd = root.parent if root.is_file() else root
    args += ["-e", pattern, "--", root.name if root.is_file() else "."]
    proc = await asyncio.create_subprocess_exec(
        *args, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await proc.communicate()
    # Exit 2 with only "os error" lines: some entries could not be read, and the rest was searched.
    errors = err.decode(errors="replace").strip().splitlines()
    unreadable = [e for e in errors if "(os error" in e]
    if proc.returncode not in (0, 1) and (not errors or len(unreadable) < len(errors)):
        raise ToolError(f"search failed: {chr(10).join(errors).strip()}")
    matches: list[Match] = []
    verdicts: dict[str, bool] = {}
    for line in out.decode("utf-8", errors="replace").splitlines():
        path, n, text = line.split(":", 2)
        hidden = verdicts.get(path)
        if hidden is None:
            real = os.path.realpath(os.path.join(cwd, path))
            hidden = verdicts[path] = screen.hides(real) or screen.hides_links(real)
        if not hidden:
            matches.append((path.removeprefix("./"), int(n), text))
    return matches, len(unreadable)


class List(AnyOrder):
    name = "List"
    reproducible = True  # its output can be had again: compaction may prune it
    description = "List a folder (folders end with /, files show their size), skipping .gitignored entries."
    input_schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}},
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        return await off_loop(_list, arguments, ctx)


def _list(arguments: dict[str, Any], ctx: ToolContext) -> str:
    root = _root(arguments, ctx, "List")
    screen = Screen(ctx, "List", root)
    if not root.is_dir():
        raise ToolError(f"{root} is a file; use Read to see it")
    ignore = Ignore(root)
    rows: list[tuple[bool, str, str]] = []
    skipped = 0
    try:
        with os.scandir(root) as scan:
            entries = list(scan)
    except OSError as error:
        raise ToolError(f"cannot list {root}: {error.strerror}") from None
    for entry in entries:
        try:
            st = entry.stat()
        except OSError:  # gone meanwhile, or a broken or looping link
            skipped += 1
            continue
        is_dir = stat.S_ISDIR(st.st_mode)
        if ignore.ignored(Path(entry.path), is_dir) or screen.hides_path(entry.path, entry.is_symlink()):
            continue
        rows.append((not is_dir, entry.name, f"{entry.name}/" if is_dir else f"{entry.name}  ({st.st_size:,} bytes)"))
    return _cap([row for _, _, row in sorted(rows)], "entries", skipped=skipped, hidden=screen.hidden)
