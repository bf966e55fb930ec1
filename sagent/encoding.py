"""Text every encoder accepts: lone UTF-16 surrogates replaced with U+FFFD.

Python keeps bytes it could not decode as lone surrogates (a file name or argument that is not UTF-8), and
JSON may escape one ("\\ud800"). UTF-8 cannot encode them, so the first encoder to meet one (an SDK's
request body, a file write) raises. Text from outside is passed through `scrub` where it enters sagent.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"

# A str can hold a surrogate code point only when it is unpaired: decoding pairs them into one character.
_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> tuple[str, int]:
    """`text` with every lone surrogate replaced by U+FFFD, and how many there were."""
    if text.isascii():
        return text, 0
    return _SURROGATE.subn(REPLACEMENT, text)
