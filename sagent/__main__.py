"""`python -m sagent`: the `sagent` command, with the same arguments and exit codes."""

from __future__ import annotations

import sys

from sagent.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
