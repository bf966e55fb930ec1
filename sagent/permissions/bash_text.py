"""Scans of a Bash line's text where the grammar's tree is not enough: the substitutions in a here-document
body (which tree-sitter's Bash grammar reads unreliably), the words of a line it could not parse (for deny
rules to look through), which arguments of a builtin are variable names, and what a static `echo` piped
into a shell gives it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sagent.permissions.bash_words import Word, expand_word, static_word
from sagent.permissions.bash_wrappers import program_name

if TYPE_CHECKING:
    from tree_sitter import Node

_LOOSE = re.compile(r"[\s;&|()`'\"$<>\\]+")


def name_arguments(name: str, args: list[str | None]) -> list[str | None]:
    """The arguments of a builtin that it takes as variable names (`printf -v NAME`, `read NAME`, …)."""
    if name in ("printf", "wait"):
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-v", "-p")]
    if name in ("test", "["):
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-v"]
    if name in ("read", "mapfile", "readarray", "unset", "getopts", "declare", "typeset", "export", "local"):
        valued = {"read": "pdtnNui", "mapfile": "dnOsuC", "readarray": "dnOsuC"}.get(name, "")
        out: list[str | None] = []
        skip = False
        for arg in args:
            if skip:
                skip = False
            elif arg is not None and arg.startswith("-"):
                skip = len(arg) == 2 and arg[1] in valued
            else:
                out.append(arg)
        return out
    return []


def heredoc_substitutions(body: str) -> tuple[list[str], bool] | None:
    """The code of each `$(…)` and backtick in an expanded here-document body, and whether it holds
    arithmetic on a variable; None when a substitution does not close."""
    codes: list[str] = []
    arithmetic = False
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch == "\\":
            i += 2
        elif body.startswith(("$((", "$["), i):
            close = "]" if body[i + 1] == "[" else "))"
            end = body.find(close, i)
            if end < 0:
                return None
            inner = body[i + 2 : end] if close == "]" else body[i + 3 : end]
            arithmetic = arithmetic or bool(re.search(r"[A-Za-z_]", inner))
            more = heredoc_substitutions(inner)
            if more is None:
                return None
            codes += more[0]
            i = end + len(close)
        elif body.startswith("$(", i):
            end = closing(body, i + 2)
            if end < 0:
                return None
            codes.append(body[i + 2 : end])
            i = end + 1
        elif ch == "`":
            end = i + 1
            while end < n and body[end] != "`":
                end += 2 if body[end] == "\\" else 1
            if end >= n:
                return None
            codes.append(re.sub(r"\\([`$\\])", r"\1", body[i + 1 : end]))
            i = end + 1
        else:
            i += 1
    return codes, arithmetic


def closing(text: str, start: int) -> int:
    """The index of the `)` closing a `$(` whose code starts at `start` (quotes skipped); -1 if none."""
    depth, i = 1, start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "'":
            i = text.find("'", i + 1)
            if i < 0:
                return -1
        elif ch == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def loose_words(line: str) -> tuple[str, ...]:
    """The words of a line the parser could not read, split at every operator and quote, with braces
    expanded (`{r,}m` gives `rm` and `m`): deny rules look for theirs anywhere among them."""
    words: list[str] = []
    for token in _LOOSE.split(line):
        if not token:
            continue
        if "{" in token:
            words.extend(expand_word(Word(token, token)) or ())
        words.extend(w for w in re.split(r"[{},]+", token) if w)
    return tuple(words)


def echoed(node: Node | None) -> str | None:
    """The text a pipeline's previous command prints when it is a static `echo` or `printf` (so deny rules
    can read what is piped into a shell); None otherwise."""
    if node is None or node.type != "command":
        return None
    words: list[str] = []
    for index, child in enumerate(node.children):
        field = node.field_name_for_child(index)
        if field not in ("name", "argument"):
            if child.type == "variable_assignment" or child.type.endswith("_redirect"):
                return None
            continue
        word = static_word(child)
        if word is None:
            return None
        words.append(word.text)
    if not words or program_name(words[0]) not in ("echo", "printf"):
        return None
    args = [w for w in words[1:] if not (w.startswith("-") and len(w) <= 3)]
    return "\n".join(a.replace("\\n", "\n") for a in args)
