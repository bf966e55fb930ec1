"""The secrets sagent holds, so that nothing it writes (a session log, a spilled tool output) shows them.

A provider remembers the key it was given, whatever variable, flag or file it came from; values of
environment variables whose names look like secrets count too. `redact()` replaces every one of them.

The list is worked out again only when a secret is remembered or `rescan()` is called (a session log
rescans the environment when it is opened), so redacting each record costs no scan of the environment.
"""

from __future__ import annotations

import os
import re

REDACTED = "[redacted]"
_SECRET_NAME = re.compile(r"(API_KEY|TOKEN|SECRET|PASSWORD)", re.I)
_MIN_LENGTH = 8  # shorter values ("none", "local") are not secrets worth hiding and would mangle text

_remembered: set[str] = set()
_known: list[str] | None = None  # the answer of known_secrets(), until a secret is added or a rescan
_generation = 0


def remember_secret(value: str | None) -> None:
    """Count `value` (an API key sagent uses) as a secret from now on, in this process."""
    if value and len(value) >= _MIN_LENGTH and value not in _remembered:
        _remembered.add(value)
        rescan()


def rescan() -> None:
    """Read the environment again at the next `known_secrets()` (a variable may have been set since)."""
    global _known, _generation
    _known = None
    _generation += 1


def generation() -> int:
    """A number that changes whenever the known secrets may have changed, for callers that derive and
    keep their own forms of them."""
    return _generation


def known_secrets() -> list[str]:
    """Every secret known now, longest first (so a key that contains another is replaced whole)."""
    global _known
    if _known is None:
        from_env = {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_LENGTH}
        _known = sorted(_remembered | from_env, key=len, reverse=True)
    return _known


def redact(text: str, secrets: list[str] | None = None) -> str:
    """`text` with every secret replaced by `[redacted]`."""
    for secret in known_secrets() if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text
