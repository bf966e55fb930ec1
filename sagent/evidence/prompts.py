"""Whether two runs sent the same prompts, turn by turn: the `prompt_sha256` of each of the agent's own
requests in the run manifest (`sagent.evidence.manifest`), side by side.

Each request of a run is a turn here (a user turn that calls tools makes several). For each turn the
verdict is `same` (the same system prompt, tool set and messages, byte for byte in canonical JSON),
`same but tool call ids` (only the ids models give their calls differ, as they do from run to run),
`differ` with what differs (`system`, `tools`, `messages`), `not recorded` when a log was written before
prompt hashes were (or holds no manifest), or `only in A` / `only in B` when one run made more requests.
The sampling settings (model, max tokens, effort, thinking budget, temperature) are not part of the prompt:
a difference there is named beside the verdict.
"""

from __future__ import annotations

from typing import Any

SETTINGS = ("model", "max_tokens", "effort", "thinking_budget", "temperature")
NOT_RECORDED = "not recorded"
SAME_BUT_IDS = "same but tool call ids"


def _verdict(a: dict[str, Any] | None, b: dict[str, Any] | None) -> tuple[str, list[str]]:
    if a is None or b is None:
        return ("only in A" if b is None else "only in B"), []
    if not a.get("prompt_sha256") or not b.get("prompt_sha256"):
        return NOT_RECORDED, []
    if a["prompt_sha256"] == b["prompt_sha256"]:
        return "same", []
    unnumbered = a.get("prompt_unnumbered_sha256")
    if unnumbered and unnumbered == b.get("prompt_unnumbered_sha256"):
        return SAME_BUT_IDS, []
    parts = [p for p in ("system", "tools") if a.get(f"{p}_sha256") != b.get(f"{p}_sha256")]
    if a.get("messages") != b.get("messages") or not parts:
        parts.append("messages")
    return "differ", parts


def prompt_rows(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row a turn: `turn` (1-based), `verdict`, what `differs`, the sampling `settings` that differ, and
    each side's hash (None where not recorded or absent)."""
    rows = []
    for index in range(max(len(a), len(b))):
        left = a[index] if index < len(a) else None
        right = b[index] if index < len(b) else None
        verdict, differs = _verdict(left, right)
        settings = [
            key for key in SETTINGS if left is not None and right is not None and left.get(key) != right.get(key)
        ]
        rows.append(
            {
                "turn": index + 1,
                "verdict": verdict,
                "differs": differs,
                "settings": settings,
                "a": (left or {}).get("prompt_sha256"),
                "b": (right or {}).get("prompt_sha256"),
            }
        )
    return rows


def summary(rows: list[dict[str, Any]]) -> str:
    """One line: the same prompts at every turn, where they first differ, or not recorded."""
    if not rows:
        return "prompts: not recorded (neither log holds a run manifest)"
    if all(r["verdict"] == NOT_RECORDED for r in rows):
        return "prompts: not recorded (a log written before prompt hashes)"
    if all(r["verdict"] == "same" for r in rows):
        return f"prompts: the same at every turn ({len(rows)})"
    if all(r["verdict"] in ("same", SAME_BUT_IDS) for r in rows):
        return f"prompts: the same at every turn but for tool call ids ({len(rows)})"
    first = next(r for r in rows if r["verdict"] not in ("same", SAME_BUT_IDS, NOT_RECORDED))
    same = sum(r["verdict"] in ("same", SAME_BUT_IDS) for r in rows)
    return f"prompts: differ from turn {first['turn']} ({same} of {len(rows)} the same)"


def row_text(row: dict[str, Any]) -> str:
    """A turn's line: `turn 3  differ (messages); settings differ: effort`."""
    text = f"turn {row['turn']}  {row['verdict']}"
    if row["differs"]:
        text += f" ({', '.join(row['differs'])})"
    if row["settings"]:
        text += f"; settings differ: {', '.join(row['settings'])}"
    if row["verdict"] == "same" and row["a"]:
        text += f"  {row['a'][:12]}"
    return text
