"""Drive the real REPL in a real terminal: tmux runs `sagent` in a pane; tests type keys and read the screen.

Each harness gets its own tmux server (`-L`), so tests never touch a user's tmux sessions.
"""

from __future__ import annotations

import itertools
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

HAVE_TMUX = shutil.which("tmux") is not None
_names = itertools.count()


class Tmux:
    def __init__(self, args: list[str], env: dict[str, str], cwd: Path, width: int = 100, height: int = 30) -> None:
        self.socket = f"sagent-test-{os.getpid()}-{next(_names)}"
        command = shlex.join([sys.executable, "-m", "sagent.cli.main", *args])
        # Keep the pane after sagent exits so the test can read its last screen and exit code.
        script = f'{command}; echo "[sagent exited $?]"; sleep 600'
        self._tmux(
            "new-session", "-d", "-s", "main", "-x", str(width), "-y", str(height), "-c", str(cwd), script, env=env
        )

    def _tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        result = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=env, timeout=20, check=True
        )
        return result.stdout

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "main", "-l", text)

    def press(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "main", *keys)

    def screen(self) -> str:
        """The visible pane and its scrollback, wrapped lines joined."""
        return self._tmux("capture-pane", "-t", "main", "-p", "-J", "-S", "-500")

    def wait_for(self, text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} did not appear within {timeout}s; the screen was:\n{screen}")
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=20)

    def __enter__(self) -> Tmux:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
