"""Glob on a large tree, with fd and with the pure-Python walker, and fd run alone.

    uv run python benchmarks/glob.py [FILES]

Builds a git-like project of FILES files (default 100,000: 100 packages of 10 folders of FILES/1000 files,
10 files a folder, a tenth of them `.py` and one in a thousand `*_test.py`, with a `.gitignore` that drops
a build folder of another FILES/10 files) in a temporary folder, then times `Glob **/*.py` and
`Glob **/*_test.py` (median of 5 runs) with fd when installed, with fd taken off the
PATH, and `fd` itself listing the same tree, and checks that both Globs answered the same. No target: the
figures say what fd saves on this machine.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sagent.tools import Glob, search  # noqa: E402
from sagent.tools.base import ToolContext  # noqa: E402
from sagent.tools.fdglob import fd_command  # noqa: E402

RUNS = 5


def build(root: Path, files: int) -> None:
    for n in range(files):  # 10 files a folder, 100 folders a package
        here = root / f"pkg{n // 1000}" / f"mod{n // 10 % 100}"
        if n % 10 == 0:
            here.mkdir(parents=True)
        (here / f"f{n}_{'test' if n % 1000 == 7 else 'x'}.{'py' if n % 10 == 0 or n % 1000 == 7 else 'txt'}").touch()
    (root / "build").mkdir()
    for n in range(files // 10):
        (root / "build" / f"gen{n}.py").write_bytes(b"")
    (root / ".gitignore").write_text("build/\n")
    (root / ".git").mkdir()


def timed(run: object) -> tuple[float, object]:
    times, answer = [], None
    for _ in range(RUNS):
        start = time.perf_counter()
        answer = run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times), answer


def main() -> None:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    os.environ.setdefault("SAGENT_FD", "on")  # timed with fd asked for, against the walker
    command = fd_command()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(os.path.realpath(folder))
        build(root, files)
        ctx = ToolContext(cwd=root)

        print(f"a tree of {files:,} files in {files // 10:,} folders (+{files // 10:,} ignored), median of {RUNS}")
        if command is None:
            print("fd is not installed (Debian's fd-find): only the Python walker is timed")
        else:
            alone, _ = timed(lambda: subprocess.run([*command, "--", "", str(root)], capture_output=True))
            print(f"  fd alone, listing everything (sagent's flags): {alone * 1000:6.0f} ms")
        for pattern in ("**/*.py", "**/*_test.py"):

            def glob(pattern: str = pattern) -> str:
                return asyncio.run(Glob().run({"pattern": pattern}, ctx))

            if command is not None:
                seconds, fast = timed(glob)
                print(f"  Glob {pattern:<14} with fd:        {seconds * 1000:6.0f} ms")
            which = shutil.which
            search.shutil.which = lambda name, *a, **k: None  # type: ignore[assignment]
            try:
                seconds, slow = timed(glob)
            finally:
                search.shutil.which = which
            same = "" if command is None else f"  (same answer: {'yes' if fast == slow else 'NO'})"
            print(f"  Glob {pattern:<14} Python walker: {seconds * 1000:6.0f} ms{same}")


if __name__ == "__main__":
    main()
