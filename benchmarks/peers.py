"""sagent and its peer CLIs side by side, each headless against the same fake provider server on 127.0.0.1.

Each CLI (sagent with its defaults, the OS sandbox on; pi, Claude Code, Codex and Gemini CLI at the versions
pinned in `benchmarks/peer_clis.py`, installed with npm into ~/.cache/sagent-bench/npm) runs one task of
ROUNDS tool rounds, one shell `echo` through its own shell tool per round, then a final answer. The fake
answers each request at once (about 1 ms), in the CLI's wire format: Anthropic Messages for sagent, pi and
Claude Code, OpenAI Responses for Codex, Gemini for Gemini CLI. Figures are medians of REPEATS runs, after
one warm-up run; the runs go round the CLIs in turn, so a change in the machine's load falls on all alike, and
every CLI keeps one private HOME across its runs. A run counts only when the CLI exits 0 after ROUNDS + 1
requests and each command's output is in the request after it.

Then a SESSION-round session with Anthropic's prompt cache simulated (`tests/fakes/anthropic_cache.py`),
for the CLIs that speak Anthropic: its cost at sagent's catalog prices (Sonnet), the share of input read
from the cache, and the mean request size.

Nothing leaves 127.0.0.1: run as root where `unshare` and `ip` exist, the measurement re-runs itself in a new
network namespace holding only the loopback device (after npm installed what was missing); telemetry and
update checks are switched off as each CLI documents. `--trace-network` runs each CLI once under strace
and lists every address it tried to reach other than the loopback.

Targets: sagent's round gap and its session's cost below pi's in the same run (exit 1 when one is missed).

    uv run python benchmarks/peers.py                     # everything
    uv run python benchmarks/peers.py --only sagent,pi    # some: sagent, pi, "claude code", codex, "gemini cli"
    uv run python benchmarks/peers.py --trace-network     # which addresses each CLI tries to reach
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.peer_clis import (  # noqa: E402
    PEERS,
    RUNS,
    Peer,
    Script,
    Setup,
    environment,
    fake_server,
    install,
    shell_output,
)
from sagent.providers.catalog import cost_of  # noqa: E402
from sagent.types import Usage  # noqa: E402
from tests.fakes.anthropic_cache import PromptCache  # noqa: E402

ROUNDS = 20
REPEATS = 3
SESSION = 30
TIMEOUT = 300  # seconds one run may take before it counts as failed
NETNS = "SAGENT_BENCH_NETNS"
ADDRESS = r"sa_family=(AF_INET6?), .*?inet_(?:addr|pton)\([^\"]*\"([^\"]+)\""  # in strace's connect/sendto
SAMPLER = r"""
import os, sys, time
root, every = int(sys.argv[1]), float(sys.argv[2])
peak = single = 0
def tree():
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found
while os.path.exists(f"/proc/{root}"):
    total = 0
    for pid in tree():
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                fields = dict(line.split()[:2] for line in f.read().splitlines()[1:])
        except (OSError, ValueError):
            continue
        total += int(fields.get(b"Pss:", 0)) * 1024
        single = max(single, int(fields.get(b"Rss:", 0)) * 1024)
    peak = max(peak, total)
    time.sleep(every)
print(peak, single)
"""


class RunFailed(Exception):
    pass


@dataclass
class Run:
    first_request: float  # s, spawn to the first request of the agent loop
    exit_tail: float  # s, last loop response fully sent to the process's exit
    gaps: list[float]  # s, each loop response's end to the next loop request's arrival
    loop_sizes: list[int]  # bytes of each loop request's body
    side: list[str]  # the other requests: paths
    gets: list[str]
    usages: list[tuple[str, dict[str, int]]] = field(default_factory=list)  # (model, usage) per request
    sizes: list[int] = field(default_factory=list)  # every request's body, bytes
    peak_rss: tuple[int, int] = (0, 0)  # bytes: the process tree's sum, the largest process
    answers: list[float] = field(default_factory=list)  # s, the fake's time from each request in to its reply out


def run_once(
    peer: Peer, home: Path, rounds: int, *, memory: bool = False, cache: bool = False, wrap: list[str] | None = None
) -> Run:
    """One headless task of `rounds` shell rounds against a fresh fake; checks that it finished and that
    every command ran (its output is in the next request)."""
    cwd = home.parent / "work"
    cwd.mkdir(parents=True, exist_ok=True)
    script = Script(peer.wire, rounds)
    with fake_server(peer.wire, script, cache=PromptCache() if cache else None) as fake:
        setup = Setup(home, cwd, fake.root)
        peer.prepare(setup)
        argv = [*(wrap or []), *peer.command(str(peer.executable()), setup)]
        start = time.perf_counter()
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=environment(peer, setup),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        sampler = None
        if memory:
            sampler = subprocess.Popen(
                [sys.executable, "-c", SAMPLER, str(process.pid), "0.02"], stdout=subprocess.PIPE, text=True
            )
        try:
            out, err = process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            raise RunFailed(f"{peer.label}: no exit in {TIMEOUT} s") from None
        ended = time.perf_counter()
        peak = (0, 0)
        if sampler:
            tree, single = sampler.communicate()[0].split()
            peak = (int(tree), int(single))
        requests = list(fake.requests)
        gets = [g["path"] for g in fake.gets]
    loop = [r for r in requests if r.get("loop")]
    said = (out + err).decode(errors="replace")[-1500:]
    if process.returncode != 0 or len(loop) != rounds + 1:
        raise RunFailed(f"{peer.label}: exit {process.returncode}, {len(loop)} loop requests of {rounds + 1}: {said}")
    for n, request in enumerate(loop[1:]):
        if shell_output(n) not in _text(request["body"]):
            raise RunFailed(f"{peer.label}: round {n}'s command output is not in the next request: {said}")
    return Run(
        first_request=loop[0]["arrived"] - start,
        exit_tail=ended - loop[-1]["answered"],
        gaps=[b["arrived"] - a["answered"] for a, b in itertools.pairwise(loop)],
        loop_sizes=[r["size"] for r in loop],
        side=[r["path"] for r in requests if not r.get("loop")],
        gets=gets,
        usages=[(r["body"].get("model", ""), r["usage"]) for r in requests if "usage" in r],
        sizes=[r["size"] for r in requests],
        peak_rss=peak,
        answers=[r["answered"] - r["arrived"] for r in loop],
    )


def _text(value: Any) -> str:
    return json.dumps(value)


@dataclass
class Figures:
    gap_ms: float
    first_s: float
    tail_ms: float
    peak_mb: float
    largest_mb: float
    request_kb: float
    side: str
    answer_ms: float
    cost: str = ""
    cost_usd: float | None = None


def home_of(peer: Peer) -> Path:
    return RUNS / re.sub(r"\W+", "-", peer.name.lower()) / "home"


def measure(peers: list[Peer], rounds: int, repeats: int) -> dict[str, Figures | RunFailed]:
    """Each CLI's figures (or why it failed). After a warm-up run of each (the file cache, bytecode, the CLI's
    first-run files), the repeats go round the CLIs in turn, a timed run and a sampled one each, each repeat
    from another CLI, so that a change in the machine's load falls on all of them alike."""
    timed: dict[str, list[Run]] = {}
    sampled: dict[str, list[Run]] = {}
    failed: dict[str, RunFailed] = {}
    for peer in peers:
        shutil.rmtree(home_of(peer).parent, ignore_errors=True)
        home_of(peer).mkdir(parents=True)
        try:
            run_once(peer, home_of(peer), rounds)
        except RunFailed as why:
            failed[peer.name] = why
    for repeat in range(repeats):
        # Each repeat starts with another CLI, so none always runs right after the same one (after the
        # largest, the kernel may still be reclaiming its memory).
        for peer in peers[repeat % len(peers) :] + peers[: repeat % len(peers)]:
            if peer.name in failed:
                continue
            try:
                timed.setdefault(peer.name, []).append(run_once(peer, home_of(peer), rounds))
                sampled.setdefault(peer.name, []).append(run_once(peer, home_of(peer), rounds, memory=True))
            except RunFailed as why:
                failed[peer.name] = why
    return {p.name: failed.get(p.name) or figures(timed[p.name], sampled[p.name]) for p in peers}


def figures(timed: list[Run], sampled: list[Run]) -> Figures:
    side = sorted({re.sub(r"\?.*", "", p) for r in timed for p in r.side} | {f"GET {g}" for r in timed for g in r.gets})
    per_run = statistics.median(len(r.side) + len(r.gets) for r in timed)
    return Figures(
        gap_ms=statistics.median(statistics.median(r.gaps) for r in timed) * 1000,
        first_s=statistics.median(r.first_request for r in timed),
        tail_ms=statistics.median(r.exit_tail for r in timed) * 1000,
        peak_mb=statistics.median(r.peak_rss[0] for r in sampled) / 1e6,
        largest_mb=statistics.median(r.peak_rss[1] for r in sampled) / 1e6,
        request_kb=statistics.median(statistics.mean(r.loop_sizes) for r in timed) / 1000,
        side=f"{per_run:g} a run ({', '.join(side)})" if side else "none",
        answer_ms=statistics.median(a for r in timed for a in r.answers) * 1000,
    )


def session_cost(peer: Peer, rounds: int) -> tuple[str, float]:
    """Cost, cache share and KB a request of one `rounds`-round session with the prompt cache simulated, and
    the cost alone."""
    run = run_once(peer, home_of(peer), rounds, cache=True)
    cost = sum(cost_of(model, _usage(u)).total for model, u in run.usages)
    read = sum(u["cache_read_input_tokens"] for _, u in run.usages)
    total = sum(
        _usage(u).input_tokens + _usage(u).cache_read_tokens + _usage(u).cache_write_tokens for _, u in run.usages
    )
    kb = statistics.mean(run.sizes) / 1000
    share = f"{read / total:.1%} of input read from cache"
    return f"${cost:.3f} ({share}, {kb:.1f} KB a request, {len(run.sizes)} requests)", float(cost)


def _usage(u: dict[str, int]) -> Usage:
    return Usage(u["input_tokens"], u["output_tokens"], u["cache_read_input_tokens"], u["cache_creation_input_tokens"])


ROWS: list[tuple[str, Callable[[Figures], str], str]] = [
    (
        "gap between model requests, per tool round",
        lambda f: f"{f.gap_ms:.1f} ms",
        "from the end of a loop response to the arrival of the next loop request (all its bytes in), median "
        "over the rounds of a run, then over the runs",
    ),
    (
        "start to first request",
        lambda f: f"{f.first_s:.2f} s",
        "from spawning the CLI to the arrival of its first loop request",
    ),
    (
        "last response to exit",
        lambda f: f"{f.tail_ms:.0f} ms",
        "from the last loop response fully sent to the process's exit",
    ),
    (
        "peak memory",
        lambda f: f"{f.peak_mb:.0f} MB ({f.largest_mb:.0f})",
        "the largest sum of PSS (resident memory, each shared page divided among the processes sharing "
        "it) over the CLI's whole process tree (wrappers, relaunched children, shells), sampled from "
        "/proc/PID/smaps_rollup every 20 ms by a separate process in runs of their own (MB = 10^6 bytes); "
        "in brackets, the RSS of the largest single process",
    ),
    (
        "request size per round",
        lambda f: f"{f.request_kb:.1f} KB",
        "mean body of the loop's requests as sent, bytes (KB = 1,000 bytes); side requests not counted",
    ),
    (
        "side requests",
        lambda f: f.side,
        "requests other than the loop's (token counts, titles, routing, checks), and GETs, in a run",
    ),
]


def settings_files(peer: Peer) -> list[str]:
    """The files `peer` is given in its private HOME, each on one line."""
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        peer.prepare(Setup(home, home, "http://127.0.0.1:PORT"))
        files = sorted(p for p in home.rglob("*") if p.is_file())
        shown = [" ".join(p.read_text().split()) for p in files]
        return [f"  - `$HOME/{p.relative_to(home)}`: `{text}`" for p, text in zip(files, shown, strict=True)]


def table(labels: list[str], figures: list[Figures]) -> str:
    lines = ["| | " + " | ".join(labels) + " |", "|---" * (len(labels) + 1) + "|"]
    for name, show, _ in ROWS:
        lines.append(f"| {name} | " + " | ".join(show(f) for f in figures) + " |")
    return "\n".join(lines)


def trace_network(peers: list[Peer]) -> None:
    """Run each CLI once (3 rounds) under strace and print the non-loopback addresses it tried."""
    strace = shutil.which("strace")
    if strace is None:
        raise SystemExit("--trace-network needs strace")
    for peer in peers:
        home = home_of(peer)
        home.mkdir(parents=True, exist_ok=True)
        log = Path(tempfile.mkstemp(prefix="peers-strace-")[1])
        try:
            run_once(peer, home, 3, wrap=[strace, "-f", "-qq", "-e", "trace=connect,sendto", "-o", str(log)])
        except RunFailed as failed:
            print(f"{peer.label}: the traced run failed: {failed}")
        found = set()
        for line in log.read_text(errors="replace").splitlines():
            for family, address in re.findall(ADDRESS, line):
                if not address.startswith(("127.", "::1", "::ffff:127.")):
                    found.add(f"{family} {address}")
        if os.environ.get("PEERS_KEEP_TRACE"):
            print(f"  trace kept in {log}")
        else:
            log.unlink()
        print(f"{peer.label}: {', '.join(sorted(found)) or 'only 127.0.0.1'}")


def in_network_namespace(argv: list[str]) -> None:
    """Run the rest of the benchmark again in a new network namespace that has only the loopback device, when
    this is root and `unshare` and `ip` exist; else say that the run is not isolated."""
    if os.environ.get(NETNS):
        print("network: a namespace of its own, only loopback (nothing can leave 127.0.0.1)")
        return
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    works = (
        os.geteuid() == 0
        and unshare is not None
        and ip is not None
        and subprocess.run([unshare, "--net", "--", ip, "link", "set", "lo", "up"], capture_output=True).returncode == 0
    )
    if not works or unshare is None or ip is None:
        print("network: not isolated (needs root, unshare and ip); telemetry is off by each CLI's own settings")
        return
    sys.stdout.flush()
    command = [unshare, "--net", "--", "sh", "-c", f'{ip} link set lo up && exec "$@"', "sh", sys.executable, *argv]
    done = subprocess.run(command, env=os.environ | {NETNS: "1"})
    sys.exit(done.returncode)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated CLI names (sagent, pi, claude code, codex, gemini cli)")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--session", type=int, default=SESSION, help="rounds of the prompt-cache session")
    parser.add_argument("--no-netns", action="store_true", help="do not isolate the network")
    parser.add_argument("--trace-network", action="store_true", help="list the addresses each CLI tries")
    args = parser.parse_args()
    wanted = {n.strip().lower() for n in args.only.split(",")} if args.only else None
    peers = [p for p in PEERS if wanted is None or p.name.lower() in wanted]
    unknown = (wanted or set()) - {p.name.lower() for p in PEERS}
    if unknown:
        parser.error(f"no CLI named {', '.join(sorted(unknown))}; the names: {', '.join(p.name for p in PEERS)}")
    ready: list[Peer] = []
    for peer in peers:
        why = install(peer)
        if why:
            print(f"skipped: {peer.label}: {why}")
        else:
            ready.append(peer)
    if not args.no_netns and not args.trace_network:
        in_network_namespace([str(Path(__file__).resolve()), *sys.argv[1:]])
    if args.trace_network:
        trace_network(ready)
        return 0
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} cores, load {load:.2f}; {args.rounds} rounds, medians of {args.repeats}")
    labels, figures, commands, measured = [], [], [], {}
    results = measure(ready, args.rounds, args.repeats)
    for peer in ready:
        f = results[peer.name]
        try:
            if isinstance(f, RunFailed):
                raise f
            if peer.wire == "anthropic":
                f.cost, f.cost_usd = session_cost(peer, args.session)
        except RunFailed as failed:
            print(f"skipped: {failed}")
            continue
        labels.append(peer.label)
        figures.append(f)
        measured[peer.name] = f
        example = Setup(Path("$HOME"), Path("."), "http://127.0.0.1:PORT")
        env = " ".join(f"{k}={v}" for k, v in peer.environment(example).items())
        commands.append(f"- {peer.label}: `{env} {shlex.join(peer.command(peer.binary, example))}`")
        commands += settings_files(peer)
    print()
    print(table(labels, figures))
    print()
    for name, _, meaning in ROWS:
        print(f"- {name}: {meaning}.")
    print()
    print(
        f"A {args.session}-round session against the fake Anthropic server with its prompt cache simulated (a fresh "
        "cache): the cost of every request at sagent's catalog prices for the model it names (Sonnet; output "
        "20 tokens a reply, as the fake reports for all), the share of all input tokens read from the cache, "
        "and the mean request body:"
    )
    for label, f in zip(labels, figures, strict=True):
        if f.cost:
            print(f"- {label}: {f.cost}")
    print()
    answer = statistics.median(f.answer_ms for f in figures) if figures else 0.0
    print(
        "Conditions: each CLI at its defaults but for what the fake needs (its base URL, a fake key, a pinned "
        "model, approval of the shell tool) and with telemetry and update checks off; sagent's OS sandbox is "
        "on (its default, bubblewrap), Codex runs in its default read-only sandbox, pi, Claude Code and Gemini "
        f"CLI have none by default. The fake answered a loop request in a median {answer:.1f} ms. Load average "
        f"at the end: {os.getloadavg()[0]:.2f}."
    )
    print()
    print("Commands (each with a private HOME; the fake answers on PORT):")
    print("\n".join(commands))
    print()
    if "sagent" in measured and "pi" in measured:
        sagent, pi = measured["sagent"], measured["pi"]
        gap_ok = sagent.gap_ms < pi.gap_ms
        print(f"sagent's round gap {sagent.gap_ms:.1f} ms, target below pi's {pi.gap_ms:.1f} ms: {_verdict(gap_ok)}")
        cost_ok = True
        if sagent.cost_usd is not None and pi.cost_usd is not None:
            cost_ok = sagent.cost_usd < pi.cost_usd
            print(
                f"sagent's {args.session}-round session ${sagent.cost_usd:.4f}, target below pi's "
                f"${pi.cost_usd:.4f}: {_verdict(cost_ok)}"
            )
        return 0 if gap_ok and cost_ok else 1
    print("sagent against pi: not checked (both must run)")
    return 0


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


if __name__ == "__main__":
    sys.exit(main())
