"""How long a stream-json message waits before the model is sent it, while the agent is busy.

A real `sagent --input-format stream-json --output-format stream-json` process against the fake Anthropic
server. The first message starts a turn that is busy with one thing; once it is, a second message is
written on stdin, and the figure is the time from that write to the fake server receiving the model request
that carries it (the fakes stamp each request's `arrived` on the same clock). Median of REPEATS runs.

- a sub-agent (a one-shot AgentSpawn whose model answer is held until the message has reached the main
  agent's model), BUSY_S into its run: target < TARGET_MS; and written as it starts, the worst case (a
  round's calls get half a second before they move to the background): target < TARGET_MS;
- a Bash command that runs until the message has reached the model: target < TARGET_MS;
- a `Jobs wait` on a background sub-agent, held the same way: target < TARGET_MS;
- a model response still streaming (STREAM_S seconds of it left): the message joins at the end of the
  response, which is not cut; the figure is the time from the end of that response to the request carrying
  the message, target < TARGET_MS (the wait for the stream itself is printed beside it).

    uv run python benchmarks/stream_input.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.cli.stream_session import (  # noqa: E402
    PROVIDERS,
    Hold,
    Routes,
    StreamSession,
    carries,
    label_of,
    wait_until,
)
from tests.fakes.anthropic_server import Reply  # noqa: E402

TARGET_MS = 1000.0
REPEATS = 3
STREAM_S = 2.0
BUSY_S = 1.0  # how long the turn has been busy when the message is written
WAIT_FOR_GO = "for i in $(seq 800); do [ -f go ] && exit 0; sleep 0.05; done; exit 1"
MARKER = "MSG-TWO"
PROVIDER = PROVIDERS["anthropic"]


def report(name: str, value: float, unit: str, target: float) -> bool:
    ok = value < target
    print(f"{name:<62} {value:>9.2f} {unit:<3} target < {target:g} {unit:<3} {'ok' if ok else 'MISSED'}")
    return ok


def carrying(fake: Any) -> dict[str, Any] | None:
    return next((r for r in fake.requests if label_of(r) == "main" and carries(r, MARKER)), None)


def one_run(
    script: Callable[[list[Any]], Routes],
    busy: Callable[[Any, StreamSession], bool],
    after: Callable[[StreamSession], None],
    busy_s: float = BUSY_S,
) -> float:
    """Ms from writing the message to the request that carries it. `script` builds the fake's routes (given
    a box that will hold the fake), `busy(fake, session)` says the turn is busy, `after(session)` lets it end."""
    box: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp, PROVIDER.server(script(box).steps()) as fake:
        box.append(fake)
        with StreamSession(PROVIDER, fake, Path(tmp)) as session:
            session.write("start: MSG-ONE")
            if not wait_until(lambda: busy(fake, session)):
                raise RuntimeError(f"the turn never got busy: {session.records}")
            time.sleep(busy_s)
            written = time.perf_counter()
            session.write(f"and meanwhile: {MARKER}")
            if not wait_until(lambda: carrying(fake) is not None):
                raise RuntimeError("the message never reached the model")
            arrived = carrying(fake)["arrived"]  # type: ignore[index]
            after(session)
            wait_until(lambda: len(session.results()) >= 2)
            session.finish()
    return (arrived - written) * 1000


def sub_agent(box: list[Any]) -> Routes:
    held = Hold(PROVIDER.text("the helper is done"), lambda: carrying(box[0]) is not None)
    return Routes(
        main=[
            PROVIDER.tools([("AgentSpawn", {"prompt": "look around", "label": "helper"})]),
            PROVIDER.text(f"noted {MARKER}"),
            PROVIDER.text("all done"),
        ],
        helper=[held],
    )


def jobs_wait(box: list[Any]) -> Routes:
    held = Hold(PROVIDER.text("the helper is done"), lambda: carrying(box[0]) is not None)
    return Routes(
        main=[
            PROVIDER.tools([("AgentSpawn", {"prompt": "look around", "label": "helper", "background": True})]),
            PROVIDER.tools([("Jobs", {"action": "wait", "id": "job-1", "timeout": 300})]),
            PROVIDER.text(f"noted {MARKER}"),
            PROVIDER.text("all done"),
        ],
        helper=[held],
    )


def tool(box: list[Any]) -> Routes:
    return Routes(
        main=[
            PROVIDER.tools([("Bash", {"command": WAIT_FOR_GO})]),
            PROVIDER.text(f"noted {MARKER}"),
            PROVIDER.text("all done"),
        ]
    )


def stream(box: list[Any]) -> Routes:
    slow = PROVIDER.text("a long answer " * 8)
    assert isinstance(slow, Reply)
    slow.delay = STREAM_S / 20  # about twenty events: the response streams for STREAM_S seconds
    return Routes(main=[slow, PROVIDER.text("all done")])


def has_helper(fake: Any, session: StreamSession) -> bool:
    return any(label_of(r) == "helper" for r in fake.requests)


def two_main(fake: Any, session: StreamSession) -> bool:
    return sum(label_of(r) == "main" for r in fake.requests) >= 2


def tool_started(fake: Any, session: StreamSession) -> bool:
    return any(r.get("type") == "assistant" for r in session.records)


def go(session: StreamSession) -> None:
    (session.cwd / "go").write_text("")


def nothing(session: StreamSession) -> None:
    pass


def stream_figures() -> tuple[float, float]:
    """Median ms from the message to the request carrying it, and from the end of the streaming response
    it waited for to that request."""
    total, after_end = [], []
    for _ in range(REPEATS):
        box: list[Any] = []
        with (
            tempfile.TemporaryDirectory() as tmp,
            PROVIDER.server(stream(box).steps()) as fake,
            StreamSession(PROVIDER, fake, Path(tmp)) as session,
        ):
            session.write("start: MSG-ONE")
            wait_until(lambda: len(fake.requests) >= 1)
            time.sleep(STREAM_S / 4)
            written = time.perf_counter()
            session.write(f"and meanwhile: {MARKER}")
            if not wait_until(lambda: carrying(fake) is not None):
                raise RuntimeError("the message never reached the model")
            wait_until(lambda: len(session.results()) >= 2)
            session.finish()
            first, second = fake.requests[0], carrying(fake)
            assert second is not None
        total.append((second["arrived"] - written) * 1000)
        after_end.append((second["arrived"] - first["answered"]) * 1000)
    return statistics.median(total), statistics.median(after_end)


def stream_input_figures() -> list[bool]:
    rows = [
        ("stream-json message to model request, sub-agent running", sub_agent, has_helper, nothing, BUSY_S),
        ("stream-json message to model request, sub-agent just started", sub_agent, has_helper, nothing, 0.0),
        ("stream-json message to model request, Bash running", tool, tool_started, go, BUSY_S),
        ("stream-json message to model request, Jobs wait on sub-agent", jobs_wait, two_main, nothing, BUSY_S),
    ]
    oks = []
    for name, script, busy, after, busy_s in rows:
        figure = statistics.median(one_run(script, busy, after, busy_s) for _ in range(REPEATS))
        oks.append(report(name, figure, "ms", TARGET_MS))
    total, after_end = stream_figures()
    print(f"{'  (model response streaming: message to request, not cut)':<62} {total:>9.2f} ms")
    oks.append(report("stream-json message to model request, after the response", after_end, "ms", TARGET_MS))
    return oks


if __name__ == "__main__":
    sys.exit(0 if all(stream_input_figures()) else 1)
