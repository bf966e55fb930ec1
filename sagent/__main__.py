"""`python -m sagent`: the `sagent` command, with the same arguments and exit codes."""

from __future__ import annotations

from sagent.cli.main import entry

if __name__ == "__main__":
    entry()
