"""`sagent skills [--json] [--cwd DIR]`: the skills a run in DIR offers, as the REPL's /skills lists them."""

from __future__ import annotations

import json
import sys
from typing import Any

USAGE = """usage: sagent skills [--json] [--cwd DIR]

The skills a run in DIR (default: here) offers: each skill's name (what /NAME loads), where it comes from
and its description; then the SKILL.md files that cannot be used, each with what is wrong, and the skills of
a project folder not trusted (`sagent trust DIR` to use them). --json prints the same as one JSON object.
Exit 0, or 2 for bad usage. See docs/skills.md.
"""


def skills_command(argv: list[str]) -> int:
    from sagent.cli.json_cwd_args import json_cwd_args

    parsed = json_cwd_args(argv, "skills", USAGE)
    if isinstance(parsed, int):
        return parsed
    as_json, cwd = parsed
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
