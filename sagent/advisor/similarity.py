"""How alike the executor's responses are, for the stagnation trigger: Jaccard similarity over word
shingles (pairs of neighbouring words).

Why this measure: an agent that is stuck repeats itself with small changes (another line number, the same
sentences in another order, a word swapped). Over word pairs, a changed word costs only the two pairs it is
in, and reordered sentences only the pairs at their seams, so such near-repeats stay high; yet a pair still
carries local word order, so two different answers that share common words ("I will ... the file") stay low.
difflib's ratio, the other candidate, follows the order of the whole text: the same two sentences swapped
score about 0.5 with it (0.53 for the example in tests/advisor/test_stagnation.py, 0.89 here). Shingle
sets are also linear in the text's length, where difflib is quadratic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import combinations

SHINGLE = 2
"""Words per shingle."""
_WORD = re.compile(r"[^\W_]+(?:[./:_-][^\W_]+)*")  # a word, a number, or a path like src/app.py kept whole


def shingles(text: str, size: int = SHINGLE) -> frozenset[tuple[str, ...]]:
    """The runs of `size` neighbouring words in `text` (lowercased); a shorter text is one shingle."""
    words = _WORD.findall(text.lower())
    if len(words) < size:
        return frozenset({tuple(words)}) if words else frozenset()
    return frozenset(tuple(words[i : i + size]) for i in range(len(words) - size + 1))


def similarity(a: str, b: str) -> float:
    """From 0 (no word pair in common) to 1 (the same word pairs): |A ∩ B| / |A ∪ B| of their shingles.
    Two texts without words are alike."""
    first, second = shingles(a), shingles(b)
    union = first | second
    return len(first & second) / len(union) if union else 1.0


def stagnating(recent: Sequence[str], window: int, threshold: float) -> bool:
    """Whether the last `window` responses are all alike: every pair of them at least `threshold` similar
    (so a slow drift, each close to the one before, is not stagnation)."""
    if len(recent) < window:
        return False
    last = recent[-window:]
    return all(similarity(a, b) >= threshold for a, b in combinations(last, 2))
