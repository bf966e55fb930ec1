"""The value of one shell word from its parse tree, when the word is static (the same whatever runs before).

A word is static when it is made only of plain text, quotes ('…', "…" without expansions, $'…' decoded)
and backslash escapes. Anything else (`$var`, `${…}`, `$(…)`, backticks, arithmetic, process substitution)
makes it dynamic: `static_word` gives None. Brace expansion (`{rm,x}`, `r{m,}`) is static but one word
becomes several: `expand_word` gives them all. Globs stay as written (`*.py`); `has_glob` says whether a
word holds an unquoted one (a command name that globs is not static).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from tree_sitter import Node

_QUOTED = "\x00"  # stands for a quoted or escaped character in a word's skeleton (it cannot be a glob or brace)
_MAX_EXPANSIONS = 64
_EXPANDS = re.compile(r"[A-Za-z0-9_{(\[@*#?$!-]")  # what may follow a `$` that Bash expands


class Word(NamedTuple):
    """A static word: its text after quote removal, and its skeleton (the same text with every quoted or
    escaped character replaced by NUL), which says where globs and braces act."""

    text: str
    skeleton: str


def text_of(node: Node) -> str:
    """The source text of `node`."""
    return (node.text or b"").decode("utf-8", "surrogateescape")


def static_word(node: Node) -> Word | None:
    """The word `node` stands for, or None when it is not static."""
    kind = node.type
    if kind in ("word", "number", "command_name"):
        if kind == "command_name":
            if node.named_child_count != 1 or node.child_count != 1:
                return None
            child = node.named_children[0]
            return static_word(child)
        return _unescape_plain(text_of(node))
    if kind == "raw_string":
        inner = text_of(node)[1:-1]
        return Word(inner, _QUOTED * len(inner))
    if kind == "string":
        if any(c.is_named and c.type != "string_content" for c in node.children):
            return None
        source = text_of(node)
        if not (source.startswith('"') and source.endswith('"')):
            return None
        unquoted = _unescape_double(source[1:-1])
        if unquoted is None:
            return None
        return Word(unquoted, _QUOTED * len(unquoted))
    if kind == "ansi_c_string":
        decoded = decode_ansi_c(text_of(node)[2:-1])
        return Word(decoded, _QUOTED * len(decoded))
    if kind == "translated_string":  # $"…": translated by the locale, which here is the text itself
        strings = [c for c in node.named_children if c.type == "string"]
        return static_word(strings[0]) if len(strings) == 1 else None
    if kind == "concatenation":
        parts: list[Word] = []
        children = node.children
        for index, child in enumerate(children):
            if child.type == "$" and index + 1 < len(children) and children[index + 1].type == "string":
                continue  # the `$` of a translated string the grammar left loose
            if not child.is_named:
                return None
            part = static_word(child)
            if part is None:
                return None
            parts.append(part)
        return Word("".join(p.text for p in parts), "".join(p.skeleton for p in parts))
    return None


def has_glob(word: Word) -> bool:
    """Whether the word holds an unquoted glob character (`*`, `?`, `[`)."""
    return any(c in word.skeleton for c in "*?[")


def expand_word(word: Word) -> tuple[str, ...] | None:
    """The words brace expansion makes of `word` (itself alone when it has no braces to expand); None when
    there are too many to follow."""
    if "{" not in word.skeleton:
        return (word.text,)
    out: list[Word] = []
    if not _expand(word, out):
        return None
    return tuple(w.text for w in out)


def _expand(word: Word, out: list[Word]) -> bool:
    found = _first_brace(word)
    if found is None:
        out.append(word)
        return len(out) <= _MAX_EXPANSIONS
    start, end, pieces = found
    for piece in pieces:
        rebuilt = Word(
            word.text[:start] + piece.text + word.text[end + 1 :],
            word.skeleton[:start] + piece.skeleton + word.skeleton[end + 1 :],
        )
        if not _expand(rebuilt, out):
            return False
    return True


_SEQUENCE = re.compile(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?\Z")


def _first_brace(word: Word) -> tuple[int, int, list[Word]] | None:
    """The first `{…}` that expands: its start, its end, and the words it stands for."""
    skeleton = word.skeleton
    for start, ch in enumerate(skeleton):
        if ch != "{" or (start > 0 and skeleton[start - 1] == "$"):
            continue
        depth, commas = 0, list[int]()
        for end in range(start, len(skeleton)):
            c = skeleton[end]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    body = skeleton[start + 1 : end]
                    if commas:
                        bounds = [start + 1, *[k + 1 for k in commas], end + 1]
                        pieces = [_slice(word, bounds[i], bounds[i + 1] - 1) for i in range(len(commas) + 1)]
                        return start, end, pieces
                    seq = _SEQUENCE.match(body)
                    if seq:
                        return start, end, [Word(t, t) for t in _sequence(seq)]
                    break
            elif c == "," and depth == 1:
                commas.append(end)
    return None


def _slice(word: Word, start: int, end: int) -> Word:
    return Word(word.text[start:end], word.skeleton[start:end])


def _sequence(match: re.Match[str]) -> list[str]:
    first, last, step_text = match.group(1), match.group(2), match.group(3)
    step = abs(int(step_text)) if step_text and int(step_text) else 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        a, b = int(first), int(last)
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [str(v) for v in list(values)[: _MAX_EXPANSIONS + 1]]
    if first.isalpha() and last.isalpha():
        a, b = ord(first), ord(last)
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [chr(v) for v in list(values)[: _MAX_EXPANSIONS + 1]]
    return [match.group(0)]


def _unescape_plain(source: str) -> Word | None:
    if "\\" not in source and "$" not in source and "`" not in source:
        return Word(source, source)  # the usual word: nothing to take out
    text: list[str] = []
    skeleton: list[str] = []
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\\" and i + 1 < len(source):
            if source[i + 1] != "\n":  # a backslash-newline joins lines
                text.append(source[i + 1])
                skeleton.append(_QUOTED)
            i += 2
            continue
        if ch == "`" or (ch == "$" and i + 1 < len(source) and _EXPANDS.match(source, i + 1)):
            return None  # an expansion the grammar left inside a plain word: not static
        text.append(ch)
        skeleton.append(ch)
        i += 1
    return Word("".join(text), "".join(skeleton))


def _unescape_double(inner: str) -> str | None:
    out: list[str] = []
    i = 0
    while i < len(inner):
        ch = inner[i]
        if ch == "\\" and i + 1 < len(inner) and inner[i + 1] in '"\\$`\n':
            if inner[i + 1] != "\n":
                out.append(inner[i + 1])
            i += 2
            continue
        if ch in "$`":
            return None  # an expansion the tree did not show as one: not static
        out.append(ch)
        i += 1
    return "".join(out)


_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def decode_ansi_c(body: str) -> str:
    """The text of `$'body'` as Bash decodes it (`\\x72\\155` -> `rm`)."""
    out: list[str] = []
    i = 0
    n = len(body)
    while i < n:
        ch = body[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        esc = body[i + 1]
        i += 2
        if esc in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[esc])
        elif esc in "01234567":
            digits = esc
            while i < n and len(digits) < 3 and body[i] in "01234567":
                digits += body[i]
                i += 1
            out.append(chr(int(digits, 8) & 0xFF))
        elif esc in "xuU":
            limit = {"x": 2, "u": 4, "U": 8}[esc]
            digits = ""
            while i < n and len(digits) < limit and body[i] in "0123456789abcdefABCDEF":
                digits += body[i]
                i += 1
            if digits:
                value = int(digits, 16)
                out.append(chr(value) if value < 0x110000 else "\ufffd")
            else:
                out.append("\\" + esc)
        elif esc == "c" and i < n:
            out.append(chr(ord(body[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + esc)
    text = "".join(out)
    return text.split("\x00", 1)[0]  # Bash stops a word at a NUL
