"""Putting a plugin in place: copied from a folder or cloned from a git URL into sagent's config folder
(`plugins/NAME`), checked before it goes there, whole or not at all.

Nothing of the plugin runs while it is installed: its folder is read (plugin.json, its hooks and servers
checked as a run reads them), never executed. A folder holding a FIFO, a device or a symbolic link that
leads out of it is refused (a link out would let the plugin read the user's files into a prompt), as is a
plugin.json path outside the folder. The copy is made under a temporary name beside the others and
renamed once it is sound, so a failure leaves nothing behind.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from sagent.resources.plugins import MANIFEST, NAME, Plugin, PluginError, plugins_dir, read_plugin

GIT_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)
"""A source that is a git URL: `https://...`, `ssh://...`, `file:///...`, or scp-like `git@host:path`."""
GIT_PROTOCOLS = "file:git:http:https:ssh"
"""The transports a clone may use (no `ext::`, which runs a command)."""
CLONE_TIMEOUT = 300.0


def is_git_url(source: str) -> bool:
    """Whether `source` names a git repository by URL rather than a folder."""
    return bool(GIT_URL.match(source)) and not os.path.isdir(source)


def install(
    source: str, *, force: bool = False, pick: str | None = None, before: Callable[[Plugin], object] | None = None
) -> tuple[Plugin, bool]:
    """Install the plugin at `source` (a folder or a git URL; with `pick`, the plugin of that name in the
    Claude Code marketplace there) as `plugins_dir()/NAME`; the plugin as installed and whether it
    replaced one of that name (only with `force`). PluginError saying why when the source is not a sound
    plugin or a plugin of that name is there already. `before` is called with the checked plugin just
    before it is put in place (to enable it): when it raises, nothing is installed or replaced."""
    from sagent.cli.plugin_marketplace import plugin_folder, write_manifest

    folder = plugins_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    staging = Path(tempfile.mkdtemp(prefix=".installing-", dir=folder))
    try:
        staged = staging / "plugin"
        if is_git_url(source):
            origin = staging / "fetched"
            _clone(source, origin)
        else:
            origin = Path(source).expanduser()
            if not origin.is_dir():
                raise PluginError(
                    f"{source}: not a folder, and not a git URL (https://..., git@host:repo, file:///...)"
                )
        root, entry = plugin_folder(origin, pick, source)
        _copy(root, staged)
        if entry is not None and not (staged / MANIFEST).exists():
            write_manifest(staged, entry)  # Claude Code's "strict": false: the entry is the manifest
        plugin = read_plugin(staged)
        if pick is not None and plugin.name != pick:
            raise PluginError(f"{source} holds the plugin {plugin.name!r}, not {pick!r}")
        target = folder / plugin.name
        replaced = target.exists() or target.is_symlink()
        if replaced and not force:
            raise PluginError(
                f"a plugin named {plugin.name!r} is installed already ({target}); "
                f"`sagent plugin remove {plugin.name}` first, or install with --force"
            )
        if before is not None:
            before(plugin)
        try:
            if replaced:  # the old copy goes with the staging folder
                os.replace(target, staging / "old")
            os.replace(staged, target)
        except OSError as error:  # another install of the same name won the race, or the folder is read-only
            raise PluginError(f"{target}: cannot put the plugin there ({error.strerror or error})") from None
        return read_plugin(target), replaced
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _copy(source: Path, staged: Path) -> None:
    check_tree(source)
    try:
        shutil.copytree(source, staged, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    except (OSError, shutil.Error) as error:
        raise PluginError(f"{source}: cannot copy it: {error}") from None


def _clone(url: str, staged: Path) -> None:
    """`git clone --depth 1` of `url` into `staged`, without its `.git` folder; PluginError when it fails."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ALLOW_PROTOCOL": GIT_PROTOCOLS}
    command = ["git", "clone", "--depth", "1", "--quiet", "--no-recurse-submodules", "--", url, str(staged)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=CLONE_TIMEOUT
        )
    except FileNotFoundError:
        raise PluginError("git is not installed; install it, or give the plugin's folder instead") from None
    except subprocess.TimeoutExpired:
        raise PluginError(f"{url}: git clone took longer than {CLONE_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise PluginError(f"{url}: git clone failed: {said}")
    shutil.rmtree(staged / ".git", ignore_errors=True)


def check_tree(root: Path) -> None:
    """PluginError naming the first entry under `root` that a plugin may not hold: a FIFO, a socket or a
    device, or a symbolic link that is absolute or leads out of `root`."""
    root = Path(os.path.abspath(root))
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*dirs, *files]:
            path = Path(folder) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                target = os.readlink(path)
                resolved = os.path.normpath(os.path.join(folder, target))
                if os.path.isabs(target) or not (resolved + os.sep).startswith(str(root).rstrip(os.sep) + os.sep):
                    raise PluginError(f"{path}: a symbolic link out of the plugin's folder ({target}); refused")
            elif not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise PluginError(f"{path}: not a regular file or folder; refused")


def uninstall(name: str) -> bool:
    """Delete the installed plugin `name`; False when there was none (or `name` is no plugin name, such as
    `../x`, which would lead out of the plugins folder)."""
    if not NAME.match(name):
        return False
    target = plugins_dir() / name
    if target.is_symlink():
        target.unlink()
        return True
    if not target.is_dir():
        return False
    shutil.rmtree(target)
    return True
