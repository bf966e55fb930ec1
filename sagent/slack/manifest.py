"""A Slack session on disk: a timestamped directory under the session dir, with `manifest.json` (the
agents, their personas, systems and logs, the threads they own) and each agent's session log in `agents/`.

The manifest is rewritten whole (to a temporary file, then renamed) whenever it changes, so a process
killed at any moment leaves the previous or the next manifest, never half of one.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"


@dataclass
class AgentRecord:
    """One agent of the session: its name, persona, system prompt and log (relative to the session)."""

    name: str
    persona: str
    system: str
    log: str
    active: bool = True


@dataclass
class Manifest:
    """What `--continue` restores: the agents, and which Slack threads and messages belong to whom."""

    agents: list[AgentRecord] = field(default_factory=list)
    threads: dict[str, str] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)


class SlackSession:
    """The directory of one Slack session and its manifest."""

    def __init__(self, directory: Path, manifest: Manifest | None = None) -> None:
        self.directory = directory
        self.manifest = manifest or Manifest()

    @classmethod
    def new(cls, session_dir: Path) -> SlackSession:
        """A new session directory, named by the time it starts (sortable), private to the user."""
        name = time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]
        directory = session_dir / name
        (directory / "agents").mkdir(parents=True, mode=0o700)
        session = cls(directory)
        session.save()
        return session

    @classmethod
    def newest(cls, session_dir: Path) -> SlackSession | None:
        """The newest session under `session_dir` with a readable manifest, or None."""
        try:
            names = sorted((p for p in session_dir.iterdir() if (p / MANIFEST).is_file()), reverse=True)
        except OSError:
            return None
        for directory in names:
            manifest = _read(directory / MANIFEST)
            if manifest is not None:
                return cls(directory, manifest)
        return None

    @property
    def agents_dir(self) -> Path:
        return self.directory / "agents"

    def record(self, name: str) -> AgentRecord | None:
        return next((r for r in self.manifest.agents if r.name == name and r.active), None)

    def save(self) -> None:
        data: dict[str, Any] = asdict(self.manifest)
        data["version"] = 1
        temporary = self.directory / f".{MANIFEST}.{os.getpid()}"
        with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1)
        os.replace(temporary, self.directory / MANIFEST)


def _read(path: Path) -> Manifest | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        agents = [
            AgentRecord(**{k: r[k] for k in ("name", "persona", "system", "log", "active")}) for r in data["agents"]
        ]
        return Manifest(agents, dict(data.get("threads", {})), dict(data.get("messages", {})))
    except (OSError, ValueError, KeyError, TypeError):
        return None
