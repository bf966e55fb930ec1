"""Split a Bash command line into the simple commands it runs, so a rule can judge each one.

    split_commands("git diff && rm -rf / | tee x")  ->  (Command(("git", "diff")), Command(("rm", "-rf", "/")),
                                                        Command(("tee", "x")))

Every command of the line counts: those joined by `;`, `&&`, `||`, `|`, `&` and newlines, those in
subshells `( … )` and braces, and those inside command substitutions `$( … )`, backticks and process
substitutions `<( … )` (inside double quotes too). Quotes and backslashes are honoured, so `echo "a; b"`
is one command. Redirections are taken out of a command's words (`git log > out` is `git log`, marked as
writing a file). A line this tokenizer cannot read with certainty (an unterminated quote, a here-document)
gives None: the caller then asks rather than allows.

Standard library only, and small: it runs for every Bash call (results are cached per line).
"""

from __future__ import annotations

import functools
import os
import re
from typing import NamedTuple

_OPERATORS = ";&|\n"
_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time"})
_ENDINGS = frozenset({"fi", "done", "}", "esac"})
_WRAPPERS = frozenset({"sudo", "command", "builtin", "exec", "nohup", "nice", "time", "env", "timeout", "stdbuf"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_PLAIN = re.compile(r"(?:[^\s\\'\"`$<>&;|()]|\$(?!\())+")
_MAX_DEPTH = 20  # nesting of substitutions deeper than this is not a command line, it is an attack


class Command(NamedTuple):
    """One simple command: its words (quotes removed, redirections taken out), and whether it writes a file
    through a redirection (`> file`, `>> file`; not `> /dev/null` or `2>&1`)."""

    words: tuple[str, ...]
    writes_file: bool = False

    @property
    def text(self) -> str:
        """The words joined by spaces (for showing and for `*` patterns)."""
        return " ".join(self.words)


class _Unreadable(Exception):
    """The line cannot be split with certainty."""


@functools.lru_cache(maxsize=512)
def split_commands(line: str) -> tuple[Command, ...] | None:
    """The simple commands `line` runs, in order (commands inside substitutions come after the one holding
    them); None when the line cannot be read with certainty."""
    try:
        out: list[Command] = []
        _Splitter(line, out, 0).run()
        return tuple(out)
    except _Unreadable:
        return None


@functools.lru_cache(maxsize=512)
def command_variants(command: Command) -> tuple[tuple[str, ...], ...]:
    """The words of `command` as written, then with wrappers peeled off (`sudo rm` → `rm`, `env X=1 rm`,
    `timeout 5 rm`, `/bin/rm` → `rm`), so a deny or ask rule for `rm` also catches those. (An allow rule
    matches only the words as written: a wrapper is never a way in.)"""
    variants = [command.words]
    words = list(command.words)
    for _ in range(8):
        while words and _is_assignment(words[0]):
            words.pop(0)
        if not words:
            break
        head = os.path.basename(words[0]) if "/" in words[0] else words[0]
        if head != words[0]:
            words[0] = head
            variants.append(tuple(words))
            continue
        if head not in _WRAPPERS:
            break
        words.pop(0)
        while words and (words[0].startswith("-") or _is_assignment(words[0])):
            takes_value = words[0] in ("-n", "-u", "-g", "-s", "-k", "-o", "-i", "-e") and len(words) > 1
            words = words[2:] if takes_value else words[1:]
        if head == "timeout" and words and words[0][:1].isdigit():
            words.pop(0)
        if head == "nice" and words and words[0].lstrip("-").isdigit():
            words.pop(0)
        if words:
            variants.append(tuple(words))
    last = variants[-1]
    if last and last[0] in _SHELLS and "-c" in last[1:]:  # `bash -c "rm -rf x"`: what the inner line runs
        inner = last[last.index("-c") + 1 :]
        for c in (split_commands(inner[0]) if inner else None) or ():
            variants.extend(command_variants(c))
    elif last and last[0] == "eval":
        for c in split_commands(" ".join(last[1:])) or ():
            variants.extend(command_variants(c))
    return tuple(variants)


def _is_assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq) and name.replace("_", "a").isalnum() and not name[:1].isdigit()


class _Splitter:
    """One pass over a line (or the inside of a substitution), appending the commands found to `out`."""

    def __init__(self, text: str, out: list[Command], depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise _Unreadable
        self.text = text
        self.i = 0
        self.out = out
        self.depth = depth
        self.words: list[str] = []
        self.word: list[str] | None = None  # None: between words
        self.nested: list[str] = []  # substitutions met in the current command, split after it
        self.redirect: str | None = None  # a redirection waiting for its target word
        self.writes = False

    # ------------------------------------------------------------------------------------------ words

    def _add(self, text: str) -> None:
        if self.word is None:
            self.word = []
        self.word.append(text)

    def _end_word(self) -> None:
        if self.word is None:
            return
        word = "".join(self.word)
        self.word = None
        if self.redirect is not None:
            to_file = word != "/dev/null" and not ((self.redirect.endswith("&") and word.isdigit()) or word == "-")
            if self.redirect.startswith((">", "&>")) and to_file:
                self.writes = True
            self.redirect = None
            return
        self.words.append(word)

    def _end_command(self) -> None:
        self._end_word()
        if self.redirect is not None:
            raise _Unreadable  # `ls >` with no target
        words = list(self.words)
        while words and words[0] in _KEYWORDS:
            words.pop(0)
        if words and not (len(words) == 1 and words[0] in _ENDINGS):
            self.out.append(Command(tuple(words), self.writes))
        for inner in self.nested:
            _Splitter(inner, self.out, self.depth + 1).run()
        self.words, self.nested, self.writes = [], [], False

    # ------------------------------------------------------------------------------------------- scan

    def run(self) -> None:
        text = self.text
        n = len(text)
        while self.i < n:
            ch = text[self.i]
            if ch in " \t\r":
                self._end_word()
                self.i += 1
            elif ch == "\\":
                if self.i + 1 >= n:
                    raise _Unreadable
                if text[self.i + 1] != "\n":  # a backslash-newline joins lines
                    self._add(text[self.i + 1])
                self.i += 2
            elif ch == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    raise _Unreadable
                self._add(text[self.i + 1 : end])
                self.i = end + 1
            elif ch == '"':
                self._double_quoted()
            elif ch == "`":
                self._add("`…`")
                self.nested.append(self._backticks())
            elif ch == "$" and text.startswith("$(", self.i):
                self._add("$(…)")
                self.nested.append(self._balanced(self.i + 2))
            elif ch in "<>" and text.startswith("(", self.i + 1):
                self._add(f"{ch}(…)")
                self.nested.append(self._balanced(self.i + 2))
            elif ch in "<>" or (ch == "&" and text.startswith("&>", self.i)):
                self._redirection()
            elif ch == "#" and self.word is None:
                end = text.find("\n", self.i)
                self.i = n if end < 0 else end
            elif ch in _OPERATORS or ch in "()":
                self._end_command()
                self.i += 1
            else:  # a run of ordinary characters at once (a character at a time is slow in Python)
                plain = _PLAIN.match(text, self.i)
                end = plain.end() if plain else self.i + 1
                self._add(text[self.i : end])
                self.i = end
        self._end_command()

    def _double_quoted(self) -> None:
        text, n = self.text, len(self.text)
        self.i += 1
        part: list[str] = []
        while True:
            if self.i >= n:
                raise _Unreadable
            ch = text[self.i]
            if ch == '"':
                self.i += 1
                break
            if ch == "\\" and self.i + 1 < n and text[self.i + 1] in '"\\$`\n':
                if text[self.i + 1] != "\n":
                    part.append(text[self.i + 1])
                self.i += 2
            elif ch == "`":
                part.append("`…`")
                self.nested.append(self._backticks())
            elif ch == "$" and text.startswith("$(", self.i):
                part.append("$(…)")
                self.nested.append(self._balanced(self.i + 2))
            else:
                part.append(ch)
                self.i += 1
        self._add("".join(part))

    def _backticks(self) -> str:
        text = self.text
        j = self.i + 1
        inner: list[str] = []
        while j < len(text):
            if text[j] == "\\" and j + 1 < len(text):
                inner.append(text[j + 1] if text[j + 1] in "`\\$" else text[j : j + 2])
                j += 2
                continue
            if text[j] == "`":
                self.i = j + 1
                return "".join(inner)
            inner.append(text[j])
            j += 1
        raise _Unreadable

    def _balanced(self, start: int) -> str:
        """The text from `start` to its closing `)`, skipping quoted parts; the cursor moves past it."""
        text, depth, j = self.text, 1, start
        while j < len(text):
            ch = text[j]
            if ch == "\\":
                j += 2
                continue
            if ch == "'":
                end = text.find("'", j + 1)
                if end < 0:
                    raise _Unreadable
                j = end + 1
                continue
            if ch == '"':
                j += 1
                while j < len(text) and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                if j >= len(text):
                    raise _Unreadable
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    self.i = j + 1
                    return text[start:j]
            j += 1
        raise _Unreadable

    def _redirection(self) -> None:
        text = self.text
        # A word of digits just before it is a file descriptor number, not a word of the command.
        if self.word is not None and "".join(self.word).isdigit():
            self.word = None
        start = self.i
        if text.startswith("<<<", start):
            self.i += 3
            self.redirect = "<<<"
            return
        if text.startswith("<<", start):
            raise _Unreadable  # a here-document: its body spans lines this splitter does not follow
        j = start
        while j < len(text) and text[j] in "<>&|":
            j += 1
            if j - start >= 3:
                break
        op = text[start:j]
        self._end_word()
        self.i = j
        self.redirect = op
        if op.endswith("&") and self.i < len(text) and (text[self.i].isdigit() or text[self.i] == "-"):
            k = self.i
            while k < len(text) and (text[k].isdigit() or text[k] == "-"):
                k += 1
            self.i = k
            self.redirect = None  # `2>&1`: a descriptor, not a file
