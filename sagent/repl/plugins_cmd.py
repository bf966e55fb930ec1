"""`/plugins`: the plugins enabled for this project, what each holds, and those enabled but not usable."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagent.repl.commands import command

if TYPE_CHECKING:
    from sagent.repl.host import ReplHost


@command("plugins", "the enabled plugins and what each holds (sagent plugin install|list|remove)")
def _plugins(repl: ReplHost, arg: str) -> list[str]:
    from sagent.cli.plugin_cmd import holdings
    from sagent.resources.plugins import find_enabled

    c = repl.renderer.c
    plugins, problems = find_enabled(repl.agent.context.cwd)
    lines = []
    for plugin in plugins:
        version = f" {plugin.version}" if plugin.version else ""
        lines.append(f"  {c('bold', plugin.name)}{version}  {c('dim', plugin.description)}".rstrip())
        lines.append(c("dim", f"    {holdings(plugin)}; /{plugin.name}:COMMAND runs its commands"))
    lines += [c("yellow", f"  {line}") for line in problems]
    if not lines:
        return [c("dim", "no plugins enabled here; `sagent plugin install PATH|GIT_URL` adds one (docs/plugins.md)")]
    return lines
