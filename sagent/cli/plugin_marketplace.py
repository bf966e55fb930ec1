"""A Claude Code plugin marketplace as a source of `sagent plugin install`: a folder (or git repository)
whose `.claude-plugin/marketplace.json` lists plugins kept in its subfolders, so
`sagent plugin install URL --plugin NAME` installs one of them.

    {"name": "team-tools", "metadata": {"pluginRoot": "./plugins"},
     "plugins": [{"name": "formatter", "source": "./formatter", "description": "..."}]}

A plugin whose `source` is a path inside the marketplace is installed from there; one kept elsewhere (a
`github` or `url` source) is named with the URL to install it from. An entry whose folder has no
plugin.json (Claude Code's `"strict": false`) gets one made of the entry's own fields.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sagent.resources.plugins import MANIFEST, PluginError, inside, read_json_object

MARKETPLACE = Path(".claude-plugin") / "marketplace.json"
MANIFEST_FIELDS = ("name", "version", "description", "author", "homepage", "repository", "license", "keywords")
COMPONENT_FIELDS = ("commands", "agents", "skills", "hooks", "mcpServers")


def plugin_folder(origin: Path, pick: str | None, source: str) -> tuple[Path, dict[str, Any] | None]:
    """The folder to install from `origin` (what `source` gave): `origin` itself when it is a plugin,
    else the marketplace entry `pick` names (with the entry). PluginError saying what to do otherwise:
    a marketplace with no `pick` lists its plugins."""
    if (origin / MANIFEST).is_file() and not (pick and (origin / MARKETPLACE).is_file()):
        return origin, None
    if not (origin / MARKETPLACE).is_file():
        raise PluginError(f"{source}: no {MANIFEST} (a plugin's folder holds its manifest there)")
    market = read_json_object(origin / MARKETPLACE)
    entries = [e for e in market.get("plugins", []) if isinstance(e, dict) and isinstance(e.get("name"), str)]
    names = ", ".join(e["name"] for e in entries) or "none"
    if pick is None:
        raise PluginError(
            f"{source} is a plugin marketplace ({names}); pick one: `sagent plugin install {source} --plugin NAME`"
        )
    entry = next((e for e in entries if e["name"] == pick), None)
    if entry is None:
        raise PluginError(f"{source}: the marketplace has no plugin {pick!r}; it has: {names}")
    where = entry.get("source")
    if isinstance(where, dict):
        url = where.get("url") or (f"https://github.com/{where['repo']}.git" if where.get("repo") else None)
        raise PluginError(f"{pick} is kept outside the marketplace: `sagent plugin install {url or where}`")
    if not isinstance(where, str) or not where.strip():
        raise PluginError(f'{origin / MARKETPLACE}: plugin {pick!r} has no "source" path')
    base = (market.get("metadata") or {}).get("pluginRoot", "") if isinstance(market.get("metadata"), dict) else ""
    folder = origin / (base if isinstance(base, str) and not where.startswith("./") else "") / where
    if where.startswith("/") or not inside(origin, folder) or not folder.is_dir():
        raise PluginError(f'{origin / MARKETPLACE}: the "source" of {pick!r} ({where}) is not a folder inside it')
    return folder, entry


def write_manifest(folder: Path, entry: dict[str, Any]) -> None:
    """Give a plugin folder that has none the plugin.json its marketplace entry describes."""
    manifest = {k: entry[k] for k in (*MANIFEST_FIELDS, *COMPONENT_FIELDS) if k in entry}
    (folder / MANIFEST.parent).mkdir(exist_ok=True)
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
