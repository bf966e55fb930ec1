"""The README's offline quick start, ten times: does the embedded model look at the files and then answer?

Each run is the quick start as a user types it, with no API key set: a real
`sagent -p "List the files in this directory and say what the project is." --output-format stream-json`
process in this repository, on the embedded SmolLM2-135M model (llama.cpp started and stopped by the run).
A run counts when the model called a file tool (List, Read, Glob, Grep, or Bash running ls/find/cat...) and
then ended with an answer in plain words: at least five words, not a call written as text
(`functions.NAME:`, `<tool_call>`, a JSON object) and no HTML escapes (`&#34;`). Printed: that count next to
its target, and the median time from spawn to the answer (server start included) next to its target.

    uv run --extra local python benchmarks/local_model.py        # ten runs
    uv run --extra local python benchmarks/local_model.py 3      # three
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROMPT = "List the files in this directory and say what the project is."
RUNS = 10
TARGET_GOOD = 9  # of RUNS
TARGET_MEDIAN_S = 30.0  # on an idle 2-core machine
FILE_TOOLS = {"List", "Read", "Glob", "Grep"}
LISTING = re.compile(r"^\s*(ls|find|cat|tree|head)\b")
NOT_WORDS = re.compile(r"functions\.[A-Za-z]+\s*:|<tool_call>|&#\d+;|&quot;|^\s*[{\[]")


@dataclass(frozen=True)
class Run:
    tools: tuple[str, ...]
    answer: str
    seconds: float
    exit_code: int

    @property
    def looked(self) -> bool:
        return bool(self.tools)

    @property
    def answered(self) -> bool:
        return len(re.findall(r"[A-Za-z]{2,}", self.answer)) >= 5 and not NOT_WORDS.search(self.answer)

    @property
    def good(self) -> bool:
        return self.exit_code == 0 and self.looked and self.answered


def file_tool(use: dict[str, object]) -> bool:
    name = use.get("name")
    if name in FILE_TOOLS:
        return True
    command = (use.get("input") or {}).get("command", "") if isinstance(use.get("input"), dict) else ""
    return name == "Bash" and bool(LISTING.match(str(command)))


def run_once(data: Path) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["XDG_DATA_HOME"] = str(data)  # sessions go there, not into the user's own
    command = [sys.executable, "-m", "sagent", "-p", PROMPT, "--output-format", "stream-json"]
    start = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    seconds = time.monotonic() - start
    tools: list[str] = []
    answer = ""
    for line in done.stdout.splitlines():
        record = json.loads(line)
        if record.get("type") == "assistant":
            for part in record["message"]["content"]:
                if part.get("type") == "tool_use" and file_tool(part):
                    tools.append(part["name"])
        if record.get("type") == "result":
            answer = record.get("result") or ""
    return Run(tuple(tools), answer, seconds, done.returncode)


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else RUNS
    results: list[Run] = []
    with tempfile.TemporaryDirectory() as data:
        for number in range(1, runs + 1):
            run = run_once(Path(data))
            results.append(run)
            verdict = "ok " if run.good else "MISS"
            said = " ".join(run.answer.split())[:110]
            print(f"{verdict} run {number:>2}: {run.seconds:5.1f} s, tools {list(run.tools)}: {said}", flush=True)
    good = sum(r.good for r in results)
    median = statistics.median(r.seconds for r in results)
    target_good = round(TARGET_GOOD * runs / RUNS)
    print(f"looked at the files, then answered in words: {good}/{runs}   (target {target_good}/{runs})")
    print(f"median time to the answer: {median:.1f} s   (target {TARGET_MEDIAN_S:.0f} s on an idle 2-core machine)")
    return 0 if good >= target_good else 1


if __name__ == "__main__":
    sys.exit(main())
