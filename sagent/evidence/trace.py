"""`sagent trace SESSION`: the agent tree of a session as a timeline: each agent's model responses and tool
calls (how long, what they cost), its advisor's consultations (why, which model, the cost, the advice) and
the handoffs between agents, in the terminal or as a self-contained HTML page whose chart is inline SVG (no
script, nothing fetched)."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sagent.evidence.runstats import read_records
from sagent.evidence.verify import session_tree
from sagent.lib.words import quantity


@dataclass(frozen=True, slots=True)
class Span:
    """Something an agent spent time on: a model response or a tool call (seconds from the trace's start)."""

    agent: str
    kind: str  # "model" or "tool"
    name: str
    start: float
    end: float
    cost_usd: float = 0.0
    error: bool = False


@dataclass(frozen=True, slots=True)
class Handoff:
    """A capsule sent from one agent to another, when it was sent."""

    at: float
    kind: str
    sender: str
    receiver: str
    note: str = ""  # what a bounded handoff carried and saved


@dataclass(frozen=True, slots=True)
class Consulted:
    """One consultation of an agent's advisor: when, why (its trigger), which model, what it cost, whether
    the provider ran it on its side, and the advice (empty when the provider keeps it encrypted)."""

    agent: str
    at: float
    trigger: str
    model: str
    cost_usd: float
    native: bool
    advice: str

    def first_line(self, width: int = 100) -> str:
        """The advice's first line that holds words, cut to `width` characters."""
        line = next((x.strip() for x in self.advice.splitlines() if x.strip()), "")
        return line if len(line) <= width else line[: width - 1] + "…"


@dataclass(slots=True)
class Trace:
    """The timeline of a session's tree of agents."""

    session: str
    agents: list[tuple[str, int]] = field(default_factory=list)  # label and depth, parents first
    spans: list[Span] = field(default_factory=list)
    handoffs: list[Handoff] = field(default_factory=list)
    consultations: list[Consulted] = field(default_factory=list)

    @property
    def duration(self) -> float:
        ends = [s.end for s in self.spans] + [h.at for h in self.handoffs] + [c.at for c in self.consultations]
        return max(ends, default=0.0)

    @property
    def cost_usd(self) -> float:
        """The responses' cost and the advisor's."""
        return sum(s.cost_usd for s in self.spans) + sum(c.cost_usd for c in self.consultations)


def _usd(cost: Any) -> float:
    cost = cost if isinstance(cost, dict) else {}
    return sum(float(cost.get(k, 0) or 0) for k in ("input", "output", "cache_read", "cache_write"))


def _time(ts: Any) -> float:
    try:
        return datetime.fromisoformat(str(ts)).timestamp()
    except ValueError:
        return 0.0


def build_trace(path: Path) -> Trace:
    """The timeline of the session at `path` and every sub-agent session below it."""
    logs = session_tree(path)
    loaded = [(log, read_records(log)) for log in logs]
    origin = min((_time(records[0].get("ts")) for _, records in loaded), default=0.0)
    trace = Trace(str(loaded[0][1][0].get("session_id", path.stem)))
    depth_of: dict[Path, int] = {}
    for log, records in loaded:
        header = records[0]
        parent = log.parent.parent.with_suffix(".jsonl") if log.parent.name == "agents" else None
        depth = depth_of.get(parent, -1) + 1 if parent is not None else 0
        depth_of[log] = depth
        label = str(header.get("label") or "main")
        trace.agents.append((label, depth))
        _read_agent(trace, label, records, origin)
    trace.spans.sort(key=lambda s: (s.start, s.agent))
    trace.handoffs.sort(key=lambda h: h.at)
    trace.consultations.sort(key=lambda c: c.at)
    return trace


def _read_agent(trace: Trace, label: str, records: list[dict[str, Any]], origin: float) -> None:
    started: dict[str, tuple[float, str]] = {}
    for record in records[1:]:
        at = _time(record.get("ts")) - origin
        event = record.get("event") or {}
        kind = event.get("type")
        if kind == "turn_finished":
            duration = float(event.get("duration_ms", 0)) / 1000
            usd = _usd(event.get("cost"))
            model = str((event.get("message") or {}).get("model") or "model")
            trace.spans.append(Span(label, "model", model, max(at - duration, 0.0), at, usd))
        elif kind == "advisor_consulted":
            trigger, model, advice = (str(event.get(k) or "") for k in ("trigger", "model", "advice"))
            usd, native = _usd(event.get("cost")), bool(event.get("native"))
            trace.consultations.append(Consulted(label, at, trigger, model, usd, native, advice))
        elif kind == "tool_started":
            call = event.get("call") or {}
            started[str(call.get("id"))] = (at, str(call.get("name")))
        elif kind == "tool_finished":
            result = event.get("result") or {}
            start, name = started.pop(str(result.get("call_id")), (at, str(result.get("name"))))
            trace.spans.append(Span(label, "tool", name, start, at, error=bool(result.get("is_error"))))
        elif record.get("kind") == "capsule" and record.get("role") == "sent":
            body = record.get("capsule") or {}
            receiver = str((body.get("receiver") or {}).get("label"))
            note = carried_note(body.get("context"))
            trace.handoffs.append(Handoff(at, str(body.get("type")), label, receiver, note))


def carried_note(context: Any) -> str:
    """`carried 4 of 9 handoffs, 61 tokens; 109 saved` for a bounded handoff's `context` ("" for none)."""
    if not isinstance(context, dict):
        return ""
    return (
        f"carried {context.get('carried')} of {context.get('of')} handoffs, {context.get('tokens')} tokens; "
        f"{context.get('saved')} saved"
    )


def as_text(trace: Trace) -> str:
    """One line per response, tool call and handoff, in time order, indented by the agent's depth."""
    depth = dict(trace.agents)
    agents = len(trace.agents)
    lines = [
        f"trace of {trace.session}: {agents} agent{'s' if agents != 1 else ''}, {trace.duration:.2f} s, "
        f"${trace.cost_usd:.4f}"
    ]
    rows: list[tuple[float, str]] = []
    for s in trace.spans:
        what = f"{s.kind:<5} {s.name}" + (" (error)" if s.error else "")
        cost = f"  ${s.cost_usd:.4f}" if s.kind == "model" else ""
        rows.append((s.start, f"{'  ' * depth.get(s.agent, 0)}{s.agent}: {what}  {s.end - s.start:.2f} s{cost}"))
    for h in trace.handoffs:
        note = f" ({h.note})" if h.note else ""
        rows.append((h.at, f"{'  ' * depth.get(h.sender, 0)}{h.sender} → {h.receiver}: {h.kind}{note}"))
    for c in trace.consultations:
        rows.append((c.at, f"{'  ' * depth.get(c.agent, 0)}{c.agent}: {_consulted(c)}"))
    for at, text in sorted(rows, key=lambda r: r[0]):
        lines.append(f"{f'+{at:.2f}s':>9}  {text}")
    return "\n".join(lines)


def _consulted(c: Consulted) -> str:
    how = ", on the provider's side" if c.native else ""
    advice = c.first_line() or "(advice not readable)"
    return f"advisor {c.model} (trigger: {c.trigger}{how})  ${c.cost_usd:.4f}  {advice}"


ROW, LEFT, WIDTH = 28, 140, 900


def as_svg(trace: Trace) -> str:
    """The chart: a row per agent, a bar per response (blue) and tool call (green, red when it failed), a
    dot per consultation of the advisor (purple), an arrow per handoff from the sender's row to the
    receiver's."""
    scale = WIDTH / (trace.duration or 1.0)
    row = {label: i for i, (label, _) in enumerate(trace.agents)}
    height = ROW * len(trace.agents) + 30
    esc = html.escape
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + 20}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        '<defs><marker id="arrow" markerWidth="8" markerHeight="8" refX="6" refY="3" orient="auto">'
        '<path d="M0,0 L6,3 L0,6 z" fill="#a33"/></marker></defs>',
    ]
    for label, depth in trace.agents:
        y = row[label] * ROW + 18
        parts.append(f'<text x="{4 + 10 * depth}" y="{y}">{esc(label)}</text>')
        parts.append(f'<line x1="{LEFT}" y1="{y + 4}" x2="{LEFT + WIDTH}" y2="{y + 4}" stroke="#eee"/>')
    for s in trace.spans:
        y = row.get(s.agent, 0) * ROW + 6 + (0 if s.kind == "model" else 8)
        colour = "#4a7bd0" if s.kind == "model" else ("#c44" if s.error else "#3a9d5d")
        x, w = LEFT + s.start * scale, max((s.end - s.start) * scale, 1.5)
        title = f"{s.agent}: {s.kind} {s.name}, {s.end - s.start:.2f} s" + (
            f", ${s.cost_usd:.4f}" if s.kind == "model" else ""
        )
        parts.append(
            f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="8" fill="{colour}"><title>{esc(title)}</title></rect>'
        )
    for h in trace.handoffs:
        if h.receiver not in row:
            continue
        x = LEFT + h.at * scale
        y1, y2 = row.get(h.sender, 0) * ROW + 14, row[h.receiver] * ROW + 14
        parts.append(
            f'<line x1="{x:.1f}" y1="{y1}" x2="{x:.1f}" y2="{y2}" stroke="#a33" marker-end="url(#arrow)">'
            f"<title>{esc(h.sender)} → {esc(h.receiver)}: {esc(h.kind)}</title></line>"
        )
    for c in trace.consultations:
        x, y = LEFT + c.at * scale, row.get(c.agent, 0) * ROW + 10
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y}" r="5" fill="#8a4fd0"><title>{esc(c.agent)}: {esc(_consulted(c))}'
            "</title></circle>"
        )
    axis = height - 8
    for i in range(6):
        t = trace.duration * i / 5
        parts.append(f'<text x="{LEFT + t * scale:.1f}" y="{axis}" fill="#777">{t:.1f}s</text>')
    parts.append("</svg>")
    return "".join(parts)


def as_html(trace: Trace) -> str:
    """A self-contained page: the chart, then the timeline as text."""
    esc = html.escape
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>sagent trace</title>"
        "<style>body{font:14px system-ui,sans-serif;margin:2em}pre{background:#f8f8f8;padding:8px}</style>"
        f"</head><body><h1>Trace of <code>{esc(trace.session)}</code></h1>"
        f"<p>{quantity(len(trace.agents), 'agent')}, {trace.duration:.2f} s, ${trace.cost_usd:.4f}. "
        "Blue: model responses; "
        "green: tool calls (red: failed); purple dots: the advisor consulted; red arrows: handoffs between "
        "agents. Hover for details.</p>"
        f"{as_svg(trace)}<pre>{esc(as_text(trace))}</pre></body></html>\n"
    )
