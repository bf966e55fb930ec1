"""`PolicyGuard`: the permission policy, asked again by a tool right before it opens a file or follows a
redirect (the `AccessGuard` a `ToolContext` carries).

The permission hook decides on the real path a call names; between that and the tool's open, a symlink may
be swapped in, and a search opens many files the call never named. So a tool resolves the path it is about
to open and asks here: a deny rule always refuses; a path the hook judged for a call of that tool still in
flight is what was checked; any other path must be one the policy lets the tool open without a question.
Every policy binding the agent (its own and its ancestors') is asked, as the hook asks them.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Literal

from sagent.agent.hooks import Ask, Deny
from sagent.permissions.paths import ResolvedPath, inside
from sagent.permissions.rules import Rule, Subject, subject_of

if TYPE_CHECKING:
    from sagent.permissions.policy import Permissions

Verdict = Literal["allow", "ask", "deny"]


class PolicyGuard:
    """The `AccessGuard` of one agent. `policies` gives the policies binding the agent now (they change when
    the mode does); `project` is its project folder (where its session started)."""

    def __init__(self, policies: Callable[[], list[Permissions]], project: str) -> None:
        self.policies = policies
        self.project = project
        self._checked: Counter[tuple[str, str]] = Counter()  # (tool, real path) of calls in flight
        self._calls: dict[str, list[tuple[str, str]]] = {}

    # ------------------------------------------------------------------ the hook's side

    def checking(self, call_id: str, subject: Subject) -> None:
        """The hook judged `subject`'s paths for the call `call_id`, about to run."""
        keys = [(subject.tool, path.real) for path in subject.paths]
        self.done(call_id)  # the same call judged again (a later hook rewrote it): the last judgement holds
        self._calls[call_id] = keys
        self._checked.update(keys)

    def done(self, call_id: str) -> None:
        """The call is over: its paths are no longer what a running call was checked for."""
        for key in self._calls.pop(call_id, ()):
            self._checked[key] -= 1
            if self._checked[key] <= 0:
                del self._checked[key]

    # ------------------------------------------------------------------ the tools' side

    def refuse_file(self, tool: str, real: str) -> str | None:
        subject = Subject(tool, paths=(ResolvedPath(real, real),))
        verdict, reason = self._verdict(subject)
        if verdict == "deny":
            return reason
        if verdict == "allow" or self._checked[(tool, real)] > 0:
            return None
        return (
            f"{real} is not the file the permission check saw for this call (a symlink changed meanwhile?) "
            f"and {reason}; nothing was opened"
        )

    def hides(self, tool: str, real: str, root: str) -> bool:
        subject = Subject(tool, paths=(ResolvedPath(real, real),))
        for policy in self._distinct():
            deny, ask, _ = policy.rules_for(tool)
            if any(rule.matches(subject) for rule in deny):
                return True
            if policy.mode != "bypassPermissions" and any(rule.matches(subject) for rule in ask):
                return True
        return not inside(real, (root,)) and self._verdict(subject)[0] != "allow"

    def skip_below(self, tool: str, root: str) -> list[str]:
        found: list[str] = []
        for policy in self._distinct():
            deny, ask, _ = policy.rules_for(tool)
            for rule in (*deny, *(ask if policy.mode != "bypassPermissions" else ())):
                pattern = rule.path_pattern
                if pattern is None or not pattern.whole:
                    continue
                for fixed in {pattern.fixed, pattern.real_fixed}:
                    if fixed and fixed != root and inside(fixed, (root,)):
                        relative = os.path.relpath(fixed, root)
                        if not any(c in relative for c in "*?[]{}\\!") and relative not in found:
                            found.append(relative)
        return found

    def refuse_inode(self, tool: str, device: int, inode: int) -> str | None:
        for policy in self._distinct():
            deny, _, _ = policy.rules_for(tool)
            for rule in deny:
                for name in _named_files(rule):
                    try:
                        other = os.stat(name)
                    except OSError:
                        continue
                    if (other.st_dev, other.st_ino) != (device, inode):
                        continue
                    if rule.matches(Subject(tool, paths=(ResolvedPath(name, name),))):
                        return f"the file is also {name} (a hard link), and a deny rule forbids it: {rule.text}"
        return None

    def refuse_url(self, tool: str, url: str) -> tuple[Literal["deny", "ask"], str] | None:
        verdict, reason = self._verdict(subject_of(tool, {"url": url}, self.project))
        return None if verdict == "allow" else (verdict, reason)

    # ------------------------------------------------------------------

    def _distinct(self) -> list[Permissions]:
        seen: list[Permissions] = []
        for policy in self.policies():
            if not any(policy is s for s in seen):
                seen.append(policy)
        return seen

    def _verdict(self, subject: Subject) -> tuple[Verdict, str]:
        """The strictest answer of the policies, as the hook would give it (without an approver)."""
        answer: tuple[Verdict, str] = ("allow", "")
        for policy in self._distinct():
            found = policy.judge(subject, self.project)
            if isinstance(found, Deny):
                return "deny", found.reason
            if isinstance(found, Ask) and answer[0] == "allow":
                answer = ("ask", found.reason or "the policy asks about it")
        return answer


HARD_LINK_SCAN = 256
"""Files of a denied folder compared with a file that has other names; a larger folder is compared in part."""


def _named_files(rule: Rule) -> Iterator[str]:
    """The files a deny path rule names that exist now: its fixed file, or up to HARD_LINK_SCAN files
    below its fixed folder (links not followed), for finding a hard link to one under another name."""
    pattern = rule.path_pattern
    fixed = pattern.fixed if pattern is not None else ""
    if not fixed:
        return iter(())
    if os.path.isfile(fixed):
        return iter((fixed,))
    found = (os.path.join(folder, name) for folder, _, names in os.walk(fixed) for name in names)
    return itertools.islice(found, HARD_LINK_SCAN)
