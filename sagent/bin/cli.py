#!/usr/bin/env python3
"""`sagent/bin/cli.py ARGS`: the `sagent` command run straight from a clone, with nothing installed by hand.

    git clone … sagent && cd sagent
    sagent/bin/cli.py --help
    sagent/bin/cli.py --allow-providers AnthropicCLI --provider AnthropicCLI --auth credentials

Run by an interpreter that already has sagent and its dependencies (the project's own `.venv`), it is the
`sagent` command itself. Run by any other Python, it hands over to `uv run --project CLONE sagent ARGS`,
which creates the clone's environment from `uv.lock` on first use and then runs the same command; without
uv it says how to get it and exits 127. Only the standard library is imported before that choice.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
"""The clone: the folder holding `pyproject.toml` and the `sagent` package."""
HANDED_OVER = "SAGENT_CLONE_HANDOVER"
"""Set on the hand-over to uv, so an environment that still cannot import sagent fails instead of looping."""


def _runs_here() -> bool:
    """Whether this interpreter has this clone's sagent installed (the project's `.venv`, or an editable
    install of the clone), so its dependencies are there too; a sagent found only because the clone's
    folder is on the path would run without them."""
    import importlib.util

    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]  # the script's own folder
    spec = importlib.util.find_spec("sagent")
    return spec is not None and spec.origin is not None and Path(spec.origin).resolve().parent == ROOT / "sagent"


def main() -> None:
    if _runs_here():
        from sagent.cli.main import entry

        entry()
    if os.environ.get(HANDED_OVER):
        sys.exit(f"sagent: the environment uv made in {ROOT / '.venv'} cannot import sagent; run `uv sync` there")
    uv = shutil.which("uv")
    if uv is None:
        sys.stderr.write(
            "sagent: running from a clone needs uv to set up its environment: `python3 -m pip install uv` "
            "(or see https://docs.astral.sh/uv/), then run this again\n"
        )
        sys.exit(127)
    os.environ[HANDED_OVER] = "1"
    os.execv(uv, [uv, "run", "--quiet", "--project", str(ROOT), "sagent", *sys.argv[1:]])


if __name__ == "__main__":
    main()
