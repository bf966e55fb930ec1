"""Bash lines as a coding agent writes them, for the permission check's benchmark: 300 different lines
(git, tests, search, builds, pipes, redirections, here-documents, substitutions, quotes), none repeated,
so the per-line cache never answers.

    uv run python benchmarks/bash_lines.py    # prints what the parse and the whole check cost per line
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHAPES = [
    "git status --short",
    "git diff HEAD~{i} -- src/module_{i}.py",
    "git log --oneline -n {i} | head -20",
    "git add src/module_{i}.py && git commit -m 'Fix the parser for case {i}'",
    "uv run pytest -q tests/test_module_{i}.py -x 2>&1 | tail -20",
    "python -m pytest -k 'test_{i} and not slow' --maxfail=1",
    "ls -la src/ | grep module_{i}",
    'grep -rn "def handler_{i}" src/ --include=*.py',
    "rg -n 'TODO|FIXME' src/pkg_{i} | wc -l",
    "find . -name '*.py' -path './src/*' -newer build/stamp_{i} | head",
    "cat src/module_{i}.py | sed -n '10,40p'",
    "sed -i 's/old_name_{i}/new_name_{i}/g' src/module_{i}.py",
    "mkdir -p build/out_{i} && cp dist/*.whl build/out_{i}/",
    "npm run build -- --env=prod_{i} > build/log_{i}.txt 2>&1",
    "make -j2 target_{i} && ./bin/run_{i} --check",
    'echo "step {i}: $(date +%s)" >> build/progress.log',
    "cat <<'EOF' > notes/n_{i}.md\n# Note {i}\nNothing to expand: $HOME stays.\nEOF",
    'for f in src/*.py; do wc -l "$f"; done | sort -n | tail -{i}',
    "if [ -f build/stamp_{i} ]; then echo built; else echo missing; fi",
    "cd src && python -c 'import module_{i}; print(module_{i}.__doc__)'",
    "curl -sS http://127.0.0.1:8{i:03d}/health | python -m json.tool",
    "docker compose logs --tail={i} api 2>/dev/null | grep -i error",
    "timeout 30 uv run python scripts/check_{i}.py --fast",
    "diff <(sort a_{i}.txt) <(sort b_{i}.txt) | head",
    "export PYTHONPATH=src:$PYTHONPATH; python -m pkg.tool_{i}",
    "tar -czf build/archive_{i}.tgz src/ && ls -lh build/archive_{i}.tgz",
    "head -c {i}00 /dev/urandom | sha256sum",
    "awk -F, '{{print $2}}' data/file_{i}.csv | sort | uniq -c | sort -rn | head",
    "xargs -n1 echo < lists/items_{i}.txt",
    "pytest tests/ -q --co | grep -c 'test_{i}'",
]
LINES = [SHAPES[k % len(SHAPES)].format(i=k) for k in range(300)]


def parse_costs() -> tuple[float, float, float]:
    """(ms to load the parser once, median µs to parse a new line, median µs for the whole check)."""
    from sagent.permissions.bash import _parser, parse_line
    from sagent.permissions.policy import Permissions

    start = time.perf_counter()
    _parser()
    load = (time.perf_counter() - start) * 1000
    parse_line.cache_clear()
    parse: list[float] = []
    for line in LINES:
        start = time.process_time()
        parse_line(line)
        parse.append((time.process_time() - start) * 1e6)
    with tempfile.TemporaryDirectory() as tmp:
        from benchmarks.permissions import ALLOW, ASK, DENY

        policy = Permissions.build(allow=ALLOW, ask=ASK, deny=DENY, cwd=tmp)
        parse_line.cache_clear()
        whole: list[float] = []
        for line in LINES:
            start = time.process_time()
            policy.decide("Bash", {"command": line}, tmp)
            whole.append((time.process_time() - start) * 1e6)
    return load, statistics.median(parse), statistics.median(whole)


if __name__ == "__main__":
    load, parse, whole = parse_costs()
    print(f"loading tree-sitter and its Bash grammar (once)      {load:9.2f} ms")
    print(f"parse a new line ({len(LINES)} typical lines, median)        {parse:9.1f} µs")
    print(f"whole permission check of a new line (median)        {whole:9.1f} µs")
