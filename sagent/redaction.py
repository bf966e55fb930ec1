"""The secrets sagent holds, so that nothing it writes (a session log, a spilled tool output) shows them.

A provider remembers the key it was given, whatever variable, flag or file it came from; values of
environment variables whose names look like secrets count too. `redact()` replaces every one of them.

A session log keeps its own list, worked out again only when `generation()` changes (a secret is
remembered, or a log is opened and calls `rescan()`), so redacting a record costs no scan of the environment.
"""

from __future__ import annotations

import os
import re

REDACTED = "[redacted]"
_SECRET_NAME = re.compile(r"(API_KEY|TOKEN|SECRET|PASSWORD)", re.I)
_MIN_LENGTH = 8  # shorter values ("none", "local") are not secrets worth hiding and would mangle text

_remembered: set[str] = set()
_generation = 0


def remember_secret(value: str | None) -> None:
    """Count `value` (an API key sagent uses) as a secret from now on, in this process."""
    if value and len(value) >= _MIN_LENGTH and value not in _remembered:
        _remembered.add(value)
        rescan()


def rescan() -> None:
    """Tell callers that keep derived forms of the secrets (see `generation()`) to work them out again:
    a secret was remembered, or the environment may hold a new one."""
    global _generation
    _generation += 1


def generation() -> int:
    """A number that changes whenever the known secrets may have changed, for callers that derive and
    keep their own forms of them rather than call `known_secrets()` every time."""
    return _generation


def known_secrets() -> list[str]:
    """Every secret known now, longest first (so a key that contains another is replaced whole)."""
    from_env = {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_LENGTH}
    return sorted(_remembered | from_env, key=len, reverse=True)


def redact(text: str, secrets: list[str] | None = None) -> str:
    """`text` with every secret replaced by `[redacted]`."""
    for secret in known_secrets() if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


class StreamRedactor:
    """Redacts text that arrives in pieces (a command's output, a server's answer), so that a secret cut
    between two pieces is still replaced: the last characters of each piece that could begin a secret
    wait for the next one. `feed` returns what is safe to pass on; `flush` the rest, at the end."""

    def __init__(self, secrets: list[str] | None = None) -> None:
        self.secrets = known_secrets() if secrets is None else secrets
        self._hold = max((len(s) for s in self.secrets), default=1) - 1
        self._pending = ""

    def feed(self, text: str) -> str:
        """The redacted text that can no longer be part of a secret, from what came so far."""
        if not self.secrets:
            return text
        redacted = redact(self._pending + text, self.secrets)
        if len(redacted) <= self._hold:
            self._pending = redacted
            return ""
        cut = len(redacted) - self._hold
        self._pending = redacted[cut:]
        return redacted[:cut]

    def flush(self) -> str:
        """What was held back, redacted; the stream is over."""
        rest, self._pending = redact(self._pending, self.secrets), ""
        return rest
