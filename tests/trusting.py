"""Trust a folder for a test as the user does with `sagent trust`: in the user's trust file under the
XDG_CONFIG_HOME the test's sagent runs with (never through a variable or a project file)."""

from __future__ import annotations

import json
import os
from pathlib import Path


def trust_in(config_home: Path, *folders: Path) -> Path:
    """Write `folders` (by real path) as the trusted folders of the user whose XDG_CONFIG_HOME is
    `config_home`; the trust file's path."""
    path = config_home / "sagent" / "trusted-folders.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"folders": [os.path.realpath(f) for f in folders]}))
    path.chmod(0o600)
    return path
