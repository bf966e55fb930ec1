"""The cost of `@` completion in a large project: ranking `MAX_FILES` (20,000) paths for each keystroke of
a mention, as the completer does in its thread while the user types.

    uv run python benchmarks/mentions.py
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sagent.repl.file_index import MAX_FILES, prepare, rank

TARGET_MS = 16.0
QUERIES = ("a", "ag", "agp", "agpy", "repl/mo", "zzz")
_WORDS = ("src", "lib", "tests", "core", "util", "agent", "repl", "parser", "model", "view", "api", "docs", "data")


def mention_rank_ms(rounds: int = 5) -> float:
    """The median time to rank the paths for one keystroke, over every prefix a user types."""
    rng = random.Random(1)
    paths = [
        "/".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 5))) + f"/{rng.choice(_WORDS)}_{n}.py"
        for n in range(MAX_FILES)
    ]
    entries = prepare(paths)
    times = []
    for _ in range(rounds):
        for query in QUERIES:
            start = time.perf_counter()
            rank(query, entries, 40)
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


if __name__ == "__main__":
    print(
        f"@ completion: rank {MAX_FILES:,} paths per keystroke: {mention_rank_ms():.2f} ms (target < {TARGET_MS:g} ms)"
    )
