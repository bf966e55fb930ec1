"""`sagent config`: the effective settings, and where each came from (a flag, a settings file, the default).

It parses the same flags as a run, through the same settings files and checks, so what it prints is what
a run with those flags would use; it imports nothing beyond the standard library unless a file names a
provider or tools (whose names are then checked).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from sagent.cli.settings_files import KEYS, Sources

USAGE = """\
usage: sagent config [--json] [FLAGS]
       sagent config set KEY VALUE [--scope user|project|local]   (see sagent config set --help)
       sagent config unset KEY [--scope user|project|local]

The settings a run would use, each with where it came from: `flag`, the path of the settings file that
set it, or `default`. FLAGS are any of sagent's own (`sagent config --model gpt-5.4 --cwd DIR`).

Settings files, merged in this order (later wins; env, permissions, hooks and mcpServers key by key):
  user     $XDG_CONFIG_HOME/sagent/settings.json (default ~/.config/sagent/settings.json)
  project  .sagent/settings.json at the project root (the nearest folder up holding .sagent/ or .git)
  local    .sagent/settings.local.json there (keep it out of git)
Flags win over all of them. Keys and an example: docs/settings.md. The project and local files apply
only in a folder you trusted (`sagent trust`); elsewhere only their deny and ask rules do, and the
report lists the project files it skipped.

  --json     one JSON object: files, settings {key: {value, from}}, env {NAME: {value, from}}, warnings,
             trust {root, trusted, skipped}
  -h, --help this text

A file that cannot be used (not JSON, a value of the wrong type or out of range) is an error naming the
file and the key, exit 2; an unknown key is a warning.
"""

TEXT_WIDTH = 60  # characters of a long value (a system prompt) shown in the text form


def config_command(argv: list[str]) -> int:
    """`sagent config [--json] [FLAGS]`: 0 after printing, 2 when a flag or settings file is bad."""
    from sagent.cli.flags import build_parser, checked, parse_with_settings

    if argv[:1] in (["set"], ["unset"]):
        from sagent.cli.config_set import set_command

        return set_command(argv[1:], unset=argv[0] == "unset")
    if "-h" in argv or "--help" in argv:
        sys.stdout.write(USAGE)
        return 0
    as_json = "--json" in argv
    argv = [a for a in argv if a != "--json"]
    args = parse_with_settings(build_parser(), argv, notice=False)  # the report says what was skipped
    if args is None:
        return 2
    problem = checked(args)
    if problem:
        sys.stderr.write(f"sagent: error: {problem}\n")
        return 2
    report = effective(args)
    text = json.dumps(report, indent=2, ensure_ascii=False) + "\n" if as_json else as_text(report)
    sys.stdout.write(text)  # `sagent config | head -1`: a closed pipe ends it quietly (sagent.cli.closed_pipe)
    return 0


def effective(args: argparse.Namespace) -> dict[str, Any]:
    """The report: the files, every key's effective value and origin, the `env` variables (values that
    look like secrets redacted), and the warnings."""
    from sagent.redaction import redact

    sources: Sources = args.settings_files
    settings = {
        name: {"value": _value(name, getattr(args, spec.dest, None)), "from": sources.origin(name)}
        for name, spec in KEYS.items()
        if name != "env"
    }
    env = {
        name: {
            "value": redact(value),
            "from": sources.origin(f"env.{name}"),
            "overrides": name in sources.environ_before and sources.environ_before[name] != value,
        }
        for name, value in sorted(args.env.items())
    }
    loaded = sources.loaded
    files = [
        {"scope": f.scope, "path": str(f.path), "exists": f.exists, "skipped": f.path in loaded.skipped}
        for f in loaded.files
    ]
    trust = {"root": str(loaded.root), "trusted": loaded.trusted, "skipped": [str(p) for p in loaded.skipped]}
    return {"files": files, "settings": settings, "env": env, "warnings": loaded.warnings, "trust": trust}


def _value(name: str, value: Any) -> Any:
    """A parsed argument in the form its settings key takes (`tools` and `allowProviders` as lists)."""
    if name in ("tools", "allowProviders") and isinstance(value, str):
        return [] if value.strip().lower() == "none" else [n.strip() for n in value.split(",") if n.strip()]
    return value


def as_text(report: dict[str, Any]) -> str:
    """The report for a person: the files, then one aligned line per key (warnings went to stderr)."""
    lines = ["settings files (merged in this order; flags win over all):"]
    for f in report["files"]:
        state = "  (skipped: folder not trusted; only its deny and ask rules apply)" if f["skipped"] else ""
        lines.append(f"  {f['scope']:<8} {f['path']}{'' if f['exists'] else '  (none)'}{state}")
    trust = report["trust"]
    if trust["skipped"]:
        lines.append("")
        lines.append(f"{trust['root']} is not trusted, so these project files were skipped:")
        lines.extend(f"  {path}" for path in trust["skipped"])
        lines.append(f"run `sagent trust {trust['root']}` to use them (docs/settings.md#folder-trust)")
    rows = [(name, _shown(item["value"]), item["from"]) for name, item in report["settings"].items()]
    for name, item in report["env"].items():
        note = "  (overrides the environment)" if item["overrides"] else ""
        rows.append((f"env.{name}", _shown(item["value"]), item["from"] + note))
    key_width = max(len(r[0]) for r in rows)
    value_width = min(max(len(r[1]) for r in rows), TEXT_WIDTH)
    lines.append("")
    lines.append(f"{'key':<{key_width}}  {'value':<{value_width}}  from")
    lines.extend(f"{k:<{key_width}}  {v:<{value_width}}  {origin}" for k, v, origin in rows)
    return "\n".join(lines) + "\n"


def _shown(value: Any) -> str:
    if value is None:
        return "-"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= TEXT_WIDTH else text[: TEXT_WIDTH - 1] + "…"
