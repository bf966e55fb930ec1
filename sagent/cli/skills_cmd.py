"""`sagent skills [--json] [--cwd DIR]`: the skills a run in DIR offers, as the REPL's /skills lists them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

USAGE = """usage: sagent skills [--json] [--cwd DIR]

The skills a run in DIR (default: here) offers: each skill's name (what /NAME loads), where it comes from
and its description; then the SKILL.md files that cannot be used, each with what is wrong, and the skills of
a project folder not trusted (`sagent trust DIR` to use them). --json prints the same as one JSON object.
Exit 0, or 2 for bad usage. See docs/skills.md.
"""


def skills_command(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        sys.stdout.write(USAGE)
        return 0
    as_json = "--json" in argv
    rest = [a for a in argv if a != "--json"]
    cwd = Path(".")
    if rest[:1] == ["--cwd"] and len(rest) == 2:
        cwd, rest = Path(rest[1]), []
    elif len(rest) == 1 and rest[0].startswith("--cwd="):
        cwd, rest = Path(rest[0].partition("=")[2]), []
    if rest:
        sys.stderr.write(f"sagent skills: unknown argument {rest[0]!r}\n{USAGE}")
        return 2
    if not cwd.is_dir():
        sys.stderr.write(f"sagent skills: --cwd {cwd}: not a folder\n")
        return 2
    from sagent.resources.skills import load_skills

    skills = load_skills(cwd.resolve())
    report: dict[str, Any] = {
        "skills": [
            {
                "name": s.name,
                "description": s.description,
                "scope": s.scope,
                "origin": s.origin,
                "path": str(s.path),
                "allowedTools": list(s.allowed_tools) if s.allowed_tools is not None else None,
                "modelInvocable": s.model_invocable,
                "userInvocable": s.user_invocable,
            }
            for s in skills.found.values()
        ],
        "problems": skills.problems,
        "untrusted": {name: str(path) for name, path in skills.untrusted.items()},
        "untrustedNote": skills.untrusted_note,
    }
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return 0
    lines = [
        f"{s['name']}  [{s['scope']}, {s['origin']}]  {' '.join(s['description'].split())}" for s in report["skills"]
    ]
    lines += [f"{name}  cannot be used: {problem}" for name, problem in skills.problems.items()]
    lines += [f"{name}  not read: {path}" for name, path in report["untrusted"].items()]
    if skills.untrusted_note:
        lines.append(skills.untrusted_note)
    sys.stdout.write("\n".join(lines or ["no skills (docs/skills.md says where to put them)"]) + "\n")
    return 0
