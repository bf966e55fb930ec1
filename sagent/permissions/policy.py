"""`Permissions`: one frozen value saying what runs, what asks and what is refused; `PermissionHook` applies it.

    from sagent.permissions import Permissions, PermissionHook
    policy = Permissions.build(mode="default", allow=["Bash(git diff:*)"], deny=["Read(~/.ssh/**)"], cwd=".")
    agent = Agent(model, tools=builtin_tools(), permissions=policy, hooks=[PermissionHook()], approver=ask_me)

The policy lives in `AgentSettings.permissions`, so sub-agents inherit it; the hook reads it from the agent
it runs in and from every agent above it, and the strictest answer wins (deny beats ask beats allow), so a
sub-agent never does what its parent's policy would not let it do, whatever its own says. An `Ask` goes to
the agent's approver (the REPL's prompt); with none (a headless run) the call runs, or is refused when the
policy's `headless` is "deny".
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sagent.agent.hooks import ALLOW, Allow, Ask, Deny, Hook, ToolDecision
from sagent.lib.realpaths import real_path
from sagent.permissions import bash_policy
from sagent.permissions.guard import PolicyGuard
from sagent.permissions.modes import PLAN_TOOL, PLAN_TOOLS, SAFE_TOOLS, HeadlessDefault, Mode, parse_mode
from sagent.permissions.paths import inside
from sagent.permissions.rules import EDITING_TOOLS, READING_TOOLS, Rule, Subject, parse_rule, subject_of
from sagent.sandbox.policy import SandboxPolicy
from sagent.sandbox.spawn import confines

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.types import ModelRequest, ToolCall, ToolResult

RuleList = Literal["allow", "ask", "deny"]

PLAN_NOTE = (
    "You are in plan mode: the user wants a plan before anything changes. Explore with the reading tools "
    "only (no edits, no commands). When you know what to do, call ExitPlanMode with the plan (Markdown: the "
    "steps, the files, how you will check it); the user approves it or tells you what to change."
)


@dataclass(frozen=True, slots=True)
class Permissions:
    """A permission policy: the mode, the rules with where each came from, and the project's extra roots."""

    mode: Mode = "default"
    """What runs unasked when no rule decides (see `sagent.permissions.modes`)."""
    allow: tuple[Rule, ...] = ()
    """Calls that run without asking (unless a deny or ask rule matches)."""
    ask: tuple[Rule, ...] = ()
    """Calls that ask even when the mode or an allow rule would let them run."""
    deny: tuple[Rule, ...] = ()
    """Calls that never run, in any mode."""
    roots: tuple[str, ...] = ()
    """Folders besides the agent's working directory that count as the project (`--add-dir`), resolved."""
    headless: HeadlessDefault = "allow"
    """What a call that would ask does when there is no approver: "allow" runs it, "deny" refuses it."""
    mode_origin: str = "default"
    """Where the mode came from (a flag, a settings file, Shift+Tab), for /permissions."""
    started_in_bypass: bool = False
    """The session began in bypassPermissions, so Shift+Tab's cycle includes it."""
    inherited: tuple[Permissions, ...] = ()
    """The policies of the agents above this one in another process (a sub-agent on a fleet worker carries
    its parent tree's, see `sagent.fleet_nats.policy`): they bind as an ancestor's own policy does."""

    @classmethod
    def build(
        cls,
        mode: str = "default",
        allow: Iterable[str] = (),
        ask: Iterable[str] = (),
        deny: Iterable[str] = (),
        add_dirs: Iterable[str | Path] = (),
        headless: HeadlessDefault = "allow",
        cwd: str | Path = ".",
        origin: str = "",
    ) -> Permissions:
        """A policy from rule texts (RuleError / ValueError for one that cannot be read); relative rule
        paths and `add_dirs` are anchored at `cwd`."""
        root = str(Path(cwd).resolve())
        parsed = {
            k: tuple(parse_rule(r, origin, root) for r in rules)
            for k, rules in (("allow", allow), ("ask", ask), ("deny", deny))
        }
        roots = tuple(str((Path(root) / Path(d).expanduser()).resolve()) for d in add_dirs)
        chosen = parse_mode(mode)
        return cls(
            chosen,
            parsed["allow"],
            parsed["ask"],
            parsed["deny"],
            roots,
            headless,
            origin or "default",
            chosen == "bypassPermissions",
        )

    def with_mode(self, mode: Mode, origin: str) -> Permissions:
        """This policy in another mode."""
        return dataclasses.replace(self, mode=mode, mode_origin=origin)

    def with_rule(self, which: RuleList, rule: Rule) -> Permissions:
        """This policy with one more rule in the list `which`."""
        if which == "allow":
            return dataclasses.replace(self, allow=(*self.allow, rule))
        if which == "ask":
            return dataclasses.replace(self, ask=(*self.ask, rule))
        return dataclasses.replace(self, deny=(*self.deny, rule))

    _index: dict[str, tuple[tuple[Rule, ...], tuple[Rule, ...], tuple[Rule, ...]]] = dataclasses.field(
        default_factory=dict, init=False, compare=False, hash=False, repr=False
    )  # a cache per value: `dataclasses.replace` makes a new, empty one

    def rules_for(self, tool: str) -> tuple[tuple[Rule, ...], tuple[Rule, ...], tuple[Rule, ...]]:
        """The deny, ask and allow rules about `tool` (worked out once per tool: this runs every call)."""
        found = self._index.get(tool)
        if found is None:
            found = tuple(tuple(r for r in rules if r.names(tool)) for rules in (self.deny, self.ask, self.allow))  # type: ignore[assignment]
            self._index[tool] = found  # type: ignore[assignment]
        return found  # type: ignore[return-value]

    def decide(self, tool: str, arguments: dict[str, object], cwd: str, sandboxed: bool = False) -> Allow | Ask | Deny:
        """What this policy says about one call of `tool` made from `cwd` (`sandboxed`: see `judge`)."""
        return self.judge(subject_of(tool, arguments, cwd), cwd, sandboxed)

    def judge(self, subject: Subject, cwd: str, sandboxed: bool = False, leaving: bool = False) -> Allow | Ask | Deny:
        """What this policy says about a call the rules see as `subject`. `sandboxed`: the call is a Bash
        command that will run in the OS sandbox, which lets it run unasked once no deny or ask rule stops it.
        `leaving`: the call asks to run outside a sandbox that works here, which no allow rule answers for."""
        tool = subject.tool
        deny, ask, allow = self.rules_for(tool)
        for rule in deny:
            if rule.matches(subject):
                return Deny(f"a deny rule forbids it: {rule.text}" + (f" (from {rule.origin})" if rule.origin else ""))
        if tool == "Bash":
            unseen = bash_policy.denied(self, subject, cwd)
            if unseen is not None:
                return unseen
        if self.mode == "plan" and tool not in PLAN_TOOLS:
            return Deny(
                f"plan mode: {tool} does not run until the user approves a plan; explore with the reading "
                "tools and call ExitPlanMode with your plan"
            )
        if tool == PLAN_TOOL:
            return Ask("approve this plan") if self.mode == "plan" else Deny("not in plan mode: just go on")
        if self.mode == "bypassPermissions":
            return ALLOW
        for rule in ask:
            if rule.matches(subject):
                return Ask(f"an ask rule: {rule.text}")
        if tool == "Bash":
            asked = bash_policy.asked(self, subject, cwd)
            if asked is not None:
                return asked
        if tool in EDITING_TOOLS:
            guarded = self._configuring(subject, cwd)
            if guarded is not None:  # no mode but bypassPermissions, and no allow rule, edits these unasked
                return Ask(
                    f"{guarded} configures git, a shell or sagent itself, and what it says runs outside the sandbox"
                )
        if leaving:  # an allow rule was written for commands the sandbox holds: leaving it is asked each time
            return Ask("the command asks to run outside the OS sandbox")
        if allow and allowed_by(allow, subject, self, cwd):
            return ALLOW
        return self._by_mode(subject, cwd, sandboxed)

    def _configuring(self, subject: Subject, cwd: str) -> str | None:
        """The first path of `subject` that is one of the project's files the sandbox keeps read-only (its git
        hooks and config, `.sagent/`, `.mcp.json`, shell start-up files: see `sagent.sandbox.policy`), or None."""
        from sagent.sandbox.policy import PROTECTED_NAMES

        for path in subject.paths:
            for root in (_project_root(cwd), *self.roots):
                if not inside(path.real, (root,)):
                    continue
                relative = path.real[len(root.rstrip(os.sep)) + 1 :]
                if any(relative == name or relative.startswith(name + "/") for name in PROTECTED_NAMES):
                    return path.real
        return None

    def _by_mode(self, subject: Subject, cwd: str, sandboxed: bool = False) -> Allow | Ask | Deny:
        tool = subject.tool
        if tool in READING_TOOLS or tool in EDITING_TOOLS:
            roots = (_project_root(cwd), *self.roots)
            outside = [p.real for p in subject.paths if not inside(p.real, roots)]
            if outside:
                return Ask(f"{outside[0]} is outside the project")
            if tool in READING_TOOLS or self.mode == "acceptEdits":
                return ALLOW
            return Ask(f"{self.mode} mode asks before editing files")
        if tool == "Bash":
            if sandboxed:  # the sandbox is the boundary: deny and ask rules were applied above
                return ALLOW
            if subject.bash is not None and subject.bash.opaque:
                return Ask(f"no rule can vouch for this line: {subject.bash.opaque[0]}")
            return Ask(f"{self.mode} mode asks before running commands")
        if tool == "WebFetch":
            return Ask(f"fetching {subject.url or 'a URL'}")
        if tool in SAFE_TOOLS:
            return ALLOW
        return Ask(f"{self.mode} mode asks before {tool}")

    def describe(self) -> list[str]:
        """The mode and every rule with where it came from, one line each (for /permissions and docs)."""
        lines = [f"mode: {self.mode} (from {self.mode_origin})"]
        if self.roots:
            lines.append("extra project roots: " + ", ".join(self.roots))
        lines.append(f"headless default: {self.headless}")
        for which in ("deny", "ask", "allow"):
            rules: tuple[Rule, ...] = getattr(self, which)
            for rule in rules:
                lines.append(f"{which:5} {rule.text}" + (f"   ({rule.origin})" if rule.origin else ""))
        for above in self.inherited:
            lines += [f"parent's {line}" for line in above.describe()]
        return lines


@functools.lru_cache(maxsize=64)
def _project_root(cwd: str) -> str:
    """The real path of a project folder (it may be given through a symlink), resolved once, as an `Agent`
    resolves its working directory once."""
    return real_path(cwd, "/")


def allowed_by(allow: Iterable[Rule], subject: Subject, policy: Permissions | None = None, cwd: str = "") -> bool:
    """Whether the allow rules `allow` let the call run: a Bash line when each command it runs has a rule
    (one rule each, not necessarily the same one), nothing in it is unseen, and each file it writes is an
    edit `policy` allows (see `bash_policy.allowed`); another call when one rule matches it."""
    if subject.tool == "Bash":
        return bash_policy.allowed(allow, subject, policy, cwd)
    return any(rule.matches(subject, strict=True) for rule in allow)


_RANK = {Allow: 0, Ask: 1, Deny: 2}


def denied_tools(agent: Agent, names: Iterable[str]) -> set[str]:
    """Those of `names` that a deny rule for the whole tool (`Grep`, `mcp__server__*`) refuses outright."""
    bound = policies(agent)
    return {n for n in names if any(r.kind == "any" for p in bound for r in p.rules_for(n)[0])}


def policies(agent: Agent) -> list[Permissions]:
    """The policies that bind `agent`: its own and every ancestor's."""
    found: list[Permissions] = []
    current: Agent | None = agent
    while current is not None:
        policy = current.settings.permissions
        if isinstance(policy, Permissions):
            found.append(policy)
            found.extend(policy.inherited)
        current = current.parent
    return found


def decide(agent: Agent, call: ToolCall, subject: Subject | None = None) -> Allow | Ask | Deny:
    """The strictest answer of the policies that bind `agent` for `call` (ALLOW when none does); `subject`
    is the call as the rules see it, when already worked out."""
    found = policies(agent)
    if not found:
        return ALLOW
    cwd = str(agent.context.cwd)
    project = project_of(agent)
    subject = subject or subject_of(call.name, call.arguments, cwd)
    sandboxed = call.name == "Bash" and in_sandbox(agent.context.sandbox, call.arguments)
    leaving = call.name == "Bash" and not sandboxed and confines(agent.context.sandbox)
    answer: Allow | Ask | Deny = ALLOW
    seen: list[Permissions] = []
    for policy in found:
        if any(policy is s for s in seen):  # a sub-agent's inherited policy: the same answer again
            continue
        seen.append(policy)
        verdict = policy.judge(subject, project, sandboxed, leaving)
        stricter_ask = isinstance(verdict, Ask) and isinstance(answer, Ask) and verdict.refuse_unattended
        if _RANK[type(verdict)] > _RANK[type(answer)] or stricter_ask:
            answer = verdict
            if isinstance(answer, Deny):
                break
    return answer


def in_sandbox(sandbox: SandboxPolicy, arguments: dict[str, object]) -> bool:
    """Whether a Bash call with `arguments` runs in the OS sandbox: one works here, and the call does not ask
    to leave it (`dangerouslyDisableSandbox`), which always goes through the permission question."""
    return arguments.get("dangerouslyDisableSandbox") is not True and confines(sandbox)


def mode_of(agent: Agent) -> Mode | None:
    """The agent's own mode (None without a policy)."""
    policy = agent.settings.permissions
    return policy.mode if isinstance(policy, Permissions) else None


def set_mode(agent: Agent, mode: Mode, origin: str) -> None:
    """Put `agent` (and the sub-agents it spawns from now on) in `mode`."""
    policy = agent.settings.permissions
    if isinstance(policy, Permissions):
        agent.settings = dataclasses.replace(agent.settings, permissions=policy.with_mode(mode, origin))


def project_of(agent: Agent) -> str:
    """The folder the agent's project is: where its session started. Relative paths go from where its tools
    are now (Bash's `cd` moves that); the project's edge does not move with them."""
    return str(agent.settings.cwd or agent.context.cwd)


def guard_of(agent: Agent) -> PolicyGuard:
    """The agent's `PolicyGuard`, put in its tools' context the first time it is needed."""
    guard = agent.context.guard
    if not isinstance(guard, PolicyGuard):
        guard = agent.context.guard = PolicyGuard(lambda: policies(agent), project_of(agent))
    return guard


class PermissionHook(Hook):
    """Applies the `Permissions` of the agent (and of its ancestors) to every tool call; in plan mode adds
    plan mode's note to the request and offers ExitPlanMode, which it withholds in the other modes."""

    async def before_tool(self, agent: Agent, call: ToolCall) -> ToolDecision:
        subject = None
        if policies(agent):
            # The tools ask the policy again right before they open a file or follow a redirect.
            subject = subject_of(call.name, call.arguments, str(agent.context.cwd))
            guard_of(agent).checking(call.id, subject)
        answer = decide(agent, call, subject)
        if isinstance(answer, Ask) and agent.settings.approver is None:
            if answer.refuse_unattended:
                return Deny(f"{answer.reason}; nobody is here to approve it")
            if call.name == PLAN_TOOL:
                return Deny("nobody is here to approve a plan: give the plan as your final answer and stop")
            if any(p.headless == "deny" for p in policies(agent)):
                return Deny(f"{answer.reason}; nobody is here to approve it (permissions.headlessDefault is deny)")
        return answer

    async def recheck(self, agent: Agent, call: ToolCall) -> Deny | None:
        """The approver allowed `call` with changed arguments: its deny rules and protected paths still hold
        for the call as it will run (the question it answered was about other arguments), and the files the
        tools may open are the changed call's."""
        answer = await self.before_tool(agent, call)
        return answer if isinstance(answer, Deny) else None

    async def after_tool(self, agent: Agent, call: ToolCall, result: ToolResult) -> None:
        if isinstance(agent.context.guard, PolicyGuard):
            agent.context.guard.done(call.id)
        if call.name == PLAN_TOOL and not result.is_error and mode_of(agent) == "plan":
            set_mode(agent, "default", "the approved plan")

    async def before_request(self, agent: Agent, request: ModelRequest) -> ModelRequest:
        return self.shape_request(agent, request)

    def shape_request(self, agent: Agent, request: ModelRequest) -> ModelRequest:
        denied = denied_tools(agent, [t.name for t in request.tools])
        if denied:  # a tool every call of which is refused is not offered: the model does not try it
            request = dataclasses.replace(request, tools=tuple(t for t in request.tools if t.name not in denied))
        if any(p.mode == "plan" for p in policies(agent)):
            return dataclasses.replace(request, system=f"{request.system}\n\n{PLAN_NOTE}".lstrip())
        if any(t.name == PLAN_TOOL for t in request.tools):
            return dataclasses.replace(request, tools=tuple(t for t in request.tools if t.name != PLAN_TOOL))
        return request
