"""What a policy says about a Bash line beyond its Bash rules: the files it writes and reads, and what in
it the rules cannot see.

- **Writes are edits.** A file a line writes through a redirection (`> f`, `>> f`, `1<> f`, `&> f`,
  `>& f`) or `tee f` is judged as an Edit of that path: an `Edit` deny rule refuses the line, an `Edit`
  ask rule asks, and an allow rule for the command lets the line run only if the policy would let an Edit
  of each file run too (inside the project in `acceptEdits`, or an `Edit(...)` allow rule). A file read
  through `<` is held against `Read` deny and ask rules.
- **Unseen means ask.** When a deny rule for Bash exists and the line holds something a denied program
  could hide behind (a command name that is not static, shell code that is not static, a wrapper option
  not understood, `PATH=` …, a word that is not static where the rule's words are), the line asks, in
  every mode, and is refused when nobody can be asked (a headless run), whatever `headlessDefault` says.
  The same holds for a write to a path that is not static while an `Edit` deny rule exists.
- **Allow rules need to see everything.** A line is allowed by allow rules only when every command it
  runs directly is allowed (a wrapper like `timeout` or `nice` needs no rule when what it wraps is
  allowed; `sudo`, `env`, `find -exec` and the rest need both), and it runs no shell code given as a
  string, and nothing in it is unseen. A `Bash` rule (every command) still allows anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from sagent.agent.hooks import Allow, Ask, Deny
from sagent.permissions.bash import Command
from sagent.permissions.bash_wrappers import is_wrapper, program_name
from sagent.permissions.rules import Rule, Subject

if TYPE_CHECKING:
    from sagent.permissions.policy import Permissions


def might_match(rule: Rule, command: Command) -> bool:
    """Whether a word that is not static could make `command` match `rule` at run time (`git $x` and
    `Bash(git push:*)`)."""
    if rule.kind not in ("prefix", "exact", "glob") or all(command.static):
        return False
    if not command.static[0]:
        return True
    if rule.kind == "glob":
        head = rule.spec.split(" ", 1)[0]
        return "*" in head or program_name(command.words[0]) == head
    for i, want in enumerate(rule.words):
        if i >= len(command.words):
            return False  # shorter, and every word so far static and equal (a deny rule covers any arguments)
        word = command.words[i] if i else program_name(command.words[0])
        if not command.static[i]:
            return True
        if word != want:
            return False
    return False


_SHOWS_NAMES = frozenset(
    {"echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "man", "info", "help", "which", "whereis", "type"}
    | {"apropos", "whatis", "cat", "less", "more", "head", "tail", "ls", "test", "[", "true", "false", ":"}
    | {"hash", "whence", "where", "pgrep", "pkill", "killall", "pidof", "dpkg", "rpm", "file", "stat", "wc"}
)
"""Programs whose first argument is often a program's name that they only show, look up or signal."""


def might_wrap(rule: Rule, command: Command) -> bool:
    """Whether `command` is a program sagent does not know as a wrapper whose first argument is the
    program `rule` denies (`fakeroot rm x`, `firejail rm x`): it may run it."""
    if rule.kind not in ("prefix", "exact") or not command.static or not command.static[0]:
        return False
    name = program_name(command.words[0])
    if name in _SHOWS_NAMES or is_wrapper(name) or name == rule.words[0]:
        return False
    for word, static in zip(command.words[1:], command.static[1:], strict=True):
        if static and word.startswith("-"):
            continue
        return static and program_name(word) == rule.words[0]
    return False


INTERPRETERS = frozenset(
    {"python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "node", "nodejs", "deno", "bun", "php"}
    | {"lua", "luajit", "Rscript", "osascript", "tclsh", "awk", "gawk", "mawk", "nawk", "busybox", "sed", "gsed"}
)
"""Programs that run code given on their command line (`python -c`, `perl -e`, awk's `system()`, sed's `e`)."""


def might_run(rule: Rule, command: Command) -> bool:
    """Whether `command` is an interpreter whose arguments name the program `rule` denies as a word
    (`python -c 'os.system("rm x")'`): the code may run it."""
    if rule.kind not in ("prefix", "exact") or not command.static or not command.static[0]:
        return False
    name = program_name(command.words[0])
    if name.rstrip("0123456789.") not in INTERPRETERS and name not in INTERPRETERS:
        return False
    word = re.compile(rf"(?<![\w.-]){re.escape(rule.words[0])}(?![\w.-])")
    return any(static and word.search(arg) for arg, static in zip(command.words[1:], command.static[1:], strict=True))


def _edit_subject(target: str, cwd: str) -> Subject:
    from sagent.permissions.paths import resolve

    return Subject("Edit", paths=(resolve(target, cwd),))


def _read_subject(target: str, cwd: str) -> Subject:
    from sagent.permissions.paths import resolve

    return Subject("Read", paths=(resolve(target, cwd),))


def denied(policy: Permissions, subject: Subject, cwd: str) -> Deny | Ask | None:
    """The deny rules' part beyond the Bash rules themselves (checked after them): a Deny for a write or
    read a path rule forbids, an Ask (refused when nobody can be asked) for what a deny rule cannot see."""
    parsed = subject.bash
    if parsed is None:
        return None
    edit_deny = policy.rules_for("Edit")[0]
    for target in parsed.writes:
        rule = _first(edit_deny, _edit_subject(target, cwd))
        if rule is not None:
            return Deny(f"it writes {target}, and a deny rule forbids it: {rule.text}" + _origin(rule))
    read_deny = policy.rules_for("Read")[0]
    for target in parsed.reads:
        rule = _first(read_deny, _read_subject(target, cwd))
        if rule is not None:
            return Deny(f"it reads {target}, and a deny rule forbids it: {rule.text}" + _origin(rule))
    bash_deny = policy.rules_for("Bash")[0]
    if bash_deny:
        if parsed.hidden:
            return _unseen(parsed.hidden[0], bash_deny[0])
        for rule in bash_deny:
            if any(might_match(rule, c) for c in parsed.commands):
                return _unseen("a word that is not static could make it match", rule)
            wrapper = next((c for c in parsed.commands if might_wrap(rule, c) or might_run(rule, c)), None)
            if wrapper is not None:
                return _unseen(f"{wrapper.program} may run {rule.words[0]}", rule)
    if edit_deny and parsed.hidden_writes:
        return _unseen(parsed.hidden_writes[0], edit_deny[0])
    return None


def asked(policy: Permissions, subject: Subject, cwd: str) -> Ask | None:
    """The ask rules' part beyond the Bash rules: a file written that an `Edit` ask rule names, a file read
    that a `Read` ask rule names, or something unseen while a Bash ask rule exists."""
    parsed = subject.bash
    if parsed is None:
        return None
    for target in parsed.writes:
        rule = _first(policy.rules_for("Edit")[1], _edit_subject(target, cwd))
        if rule is not None:
            return Ask(f"it writes {target}: an ask rule: {rule.text}")
    for target in parsed.reads:
        rule = _first(policy.rules_for("Read")[1], _read_subject(target, cwd))
        if rule is not None:
            return Ask(f"it reads {target}: an ask rule: {rule.text}")
    bash_ask = policy.rules_for("Bash")[1]
    if bash_ask and parsed.hidden:
        return Ask(f"{parsed.hidden[0]}, so the ask rule {bash_ask[0].text} cannot be checked")
    for rule in bash_ask:
        for command in parsed.commands:
            if might_match(rule, command) or might_wrap(rule, command) or might_run(rule, command):
                return Ask(f"{command.program or command.words[0]} may run what the ask rule {rule.text} names")
    return None


def allowed(rules: Iterable[Rule], subject: Subject, policy: Permissions | None, cwd: str) -> bool:
    """Whether the allow rules `rules` let the line run: each command it runs directly has a rule (one rule
    each, not necessarily the same one), nothing in it is unseen or run from a string, and each file it
    writes is an edit `policy` allows (with no policy, a line that writes a file is not allowed)."""
    parsed = subject.bash
    bash_rules = [r for r in rules if r.names("Bash")]
    if parsed is None or not bash_rules:
        return False
    if any(r.kind == "any" for r in bash_rules):
        return True
    if parsed.opaque:
        return False
    runs = [c for c in parsed.direct if c.role == "run"]
    if not runs or not all(any(r.allows_command(c) for r in bash_rules) for c in runs):
        return False
    if not parsed.writes:
        return True
    if policy is None:
        return False
    return all(isinstance(policy.judge(_edit_subject(t, cwd), cwd), Allow) for t in parsed.writes)


def _first(rules: Iterable[Rule], subject: Subject) -> Rule | None:
    return next((r for r in rules if r.matches(subject)), None)


def _origin(rule: Rule) -> str:
    return f" (from {rule.origin})" if rule.origin else ""


def _unseen(reason: str, rule: Rule) -> Ask:
    return Ask(
        f"{reason}, so the deny rule {rule.text} cannot be checked",
        refuse_unattended=True,
    )
