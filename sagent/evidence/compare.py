"""`sagent compare A B`: two runs side by side (turns, tool calls, files changed, tests, tokens, cache
reads, cost, wall time, whether their final answers agree, and whether they sent the same prompts turn by turn
(`sagent.evidence.prompts`)), as text, JSON or a self-contained HTML page."""

from __future__ import annotations

import html
import json
from typing import Any

from sagent.evidence.prompts import prompt_rows, row_text, summary
from sagent.evidence.runstats import RunStats, answers_agree

ROWS: tuple[tuple[str, str], ...] = (
    ("model", "model"),
    ("user turns", "user_turns"),
    ("responses", "responses"),
    ("tool calls", "tool_calls"),
    ("tool errors", "tool_errors"),
    ("files changed", "files"),
    ("diffstat", "diffstat"),
    ("tests run", "tests"),
    ("tests passed", "tests_passed"),
    ("input tokens", "input_tokens"),
    ("output tokens", "output_tokens"),
    ("cache reads", "cache_read_tokens"),
    ("cache writes", "cache_write_tokens"),
    ("cost (USD)", "cost"),
    ("wall time (s)", "wall_s"),
    ("sub-agents", "sub_agents"),
)


def comparison(a: RunStats, b: RunStats) -> dict[str, Any]:
    """The comparison as plain JSON values: each run's figures, and whether the answers agree."""
    same, similarity = answers_agree(a.final_answer, b.final_answer)
    files_a, files_b = set(a.files), set(b.files)
    return {
        "a": a.as_dict(),
        "b": b.as_dict(),
        "answers_agree": same,
        "answer_similarity": similarity,
        "files_only_in_a": sorted(files_a - files_b),
        "files_only_in_b": sorted(files_b - files_a),
        "prompts": prompt_rows(a.prompts, b.prompts),
    }


def _cell(stats: dict[str, Any], key: str) -> str:
    if key == "files":
        return str(len(stats["files_changed"]))
    if key == "diffstat":
        return f"+{stats['lines_added']} -{stats['lines_removed']}"
    if key == "tests":
        return str(len(stats["tests"]))
    if key == "tests_passed":
        tests = stats["tests"]
        return f"{sum(t['passed'] for t in tests)}/{len(tests)}" if tests else "-"
    if key == "cost":
        return f"{stats['cost_usd']:.4f}"
    if key == "wall_s":
        return f"{stats['wall_s']:.1f}"
    value = stats[key]
    return f"{value:,}" if isinstance(value, int) else str(value)


def table(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The rows of the comparison: (what, run A, run B)."""
    return [(label, _cell(data["a"], key), _cell(data["b"], key)) for label, key in ROWS]


def as_text(data: dict[str, Any]) -> str:
    rows = [("", data["a"]["session"], data["b"]["session"]), *table(data)]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [
        "  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(r)) for r in rows
    ]
    lines.append(_verdict(data))
    lines.append(summary(data["prompts"]))
    lines += [f"  {row_text(row)}" for row in data["prompts"]]
    for side in ("a", "b"):
        for path, change in data[side]["files_changed"].items():
            lines.append(f"  {side.upper()} {path} +{change['added']} -{change['removed']}")
    return "\n".join(line.rstrip() for line in lines)


def _verdict(data: dict[str, Any]) -> str:
    if data["answers_agree"]:
        return "final answers: the same"
    return f"final answers: differ (similarity {data['answer_similarity']:.2f})"


def as_json(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)


def as_html(data: dict[str, Any]) -> str:
    """A page that needs nothing else: no script, no style sheet or font from elsewhere."""
    a, b = data["a"], data["b"]
    esc = html.escape
    rows = "".join(f"<tr><th>{esc(label)}</th><td>{esc(x)}</td><td>{esc(y)}</td></tr>" for label, x, y in table(data))
    answers = (
        f"<h2>Final answers — {esc(_verdict(data).split(': ', 1)[1])}</h2>"
        f"<div class=answers><pre>{esc(a['final_answer'])}</pre><pre>{esc(b['final_answer'])}</pre></div>"
    )
    prompts = "".join(f"<li>{esc(row_text(row))}</li>" for row in data["prompts"])
    answers += f"<h2>{esc(summary(data['prompts']))}</h2><ul>{prompts}</ul>"
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>sagent compare</title><style>"
        "body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
        "th,td{border:1px solid #ccc;padding:4px 10px;text-align:right}th{text-align:left;background:#f4f4f4}"
        ".answers{display:grid;grid-template-columns:1fr 1fr;gap:1em}pre{white-space:pre-wrap;background:#f8f8f8;"
        "padding:8px}</style></head><body>"
        f"<h1>Run A <code>{esc(a['session'])}</code> vs run B <code>{esc(b['session'])}</code></h1>"
        f"<table><tr><th></th><th>A</th><th>B</th></tr>{rows}</table>{answers}</body></html>\n"
    )
