"""`AgentSettings`: everything an agent is configured with, in one frozen value.

    agent = Agent(model, AgentSettings(system="You are terse.", tools=builtin_tools(), max_budget_usd=1))
    agent = Agent(model, system="You are terse.", tools=builtin_tools())   # the same, by keyword

The keyword form builds the settings through `AgentSettings.build`, the one place where options become
settings. A sub-agent's settings are its parent's with a few fields replaced (`dataclasses.replace`), so a
setting added here reaches sub-agents without another edit. What an agent *is* rather than how it is
configured (its model, session log, history, fleet, parent) is not a setting.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from sagent.advisor import Advisor

    # Only for annotations: the command line reads the defaults below before anything heavy is imported.
    from sagent.agent.compaction import CompactionPolicy
    from sagent.agent.hooks import Approver, Hook
    from sagent.permissions.policy import Permissions
    from sagent.providers.base import RetryPolicy
    from sagent.sandbox.policy import SandboxPolicy
    from sagent.tools.base import Tool
    from sagent.tools.editor import Editor
    from sagent.types import Effort

DEFAULT_MAX_DEPTH = 3
"""How many levels of sub-agents may exist below the main agent, unless told otherwise."""
DEFAULT_MAX_AGENTS = 16
"""How many agents of one tree may run at once (the main one included), unless told otherwise."""


def _retry_policy() -> RetryPolicy:
    from sagent.providers.base import RetryPolicy

    return RetryPolicy()


def _sandbox_policy() -> SandboxPolicy:
    from sagent.sandbox.policy import DEFAULT

    return DEFAULT


def _compaction_policy() -> CompactionPolicy:
    from sagent.agent.compaction import CompactionPolicy

    return CompactionPolicy()


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """How an agent works. Every field has a default; sub-agents inherit every field they are not given."""

    system: str = ""
    """The system prompt. A sub-agent is told its place in the fleet after it (see `role`)."""

    tools: tuple[Tool, ...] = ()
    """The tools the model may call (any sequence is accepted and kept as a tuple)."""

    max_tool_rounds: int | None = None
    """Stop a run after this many tool rounds (result `error_max_turns`); None: no limit."""

    max_budget_usd: float | None = None
    """Stop when this agent's tree of agents has spent this many dollars; None: no budget."""

    max_subscription_tokens: int | None = None
    """Stop when this agent's tree has used this many tokens on subscription models (a model CLI on the
    user's plan, which no USD budget counts); None: no limit."""

    max_tokens: int | None = None
    """The longest response the model may write, in tokens; None: the provider's default."""

    thinking_budget: int | None = None
    """Tokens the model may spend thinking before it answers; None: thinking off."""

    effort: Effort | None = None
    """Reasoning effort for models that take one; None: the provider's default."""

    cwd: Path | None = None
    """The working directory of the tools; None: the process's (resolved when the agent is built)."""

    retry: RetryPolicy = field(default_factory=_retry_policy)
    """How transient provider errors are retried."""

    background_after: float | None = None
    """Move a tool call that runs longer than this many seconds to the background; None: never."""

    input_preempts: bool = False
    """Input given to `send()` (a person's message, typed while the agent works) does not wait on long tool
    calls: those still running 0.5 s into the round go on in the background and it is read at once, as
    another agent's message always is. The REPL and `sagent serve` turn it on; off, it waits for the round
    to end."""

    preempt_questions: bool = False
    """With `input_preempts`: a call whose permission question (or a call before it on the same file) still
    waits moves to the background too when a message must be read; the question stays open, the call runs
    as a job once it may. Headless stream-json input turns it on; the REPL leaves it off (its question is on
    the screen, answered before anything else)."""

    compaction: CompactionPolicy = field(default_factory=_compaction_policy)
    """When the context is compacted (by default at 80% of the model's window)."""

    history_turns: int | None = None
    """Send only the last N turns of the conversation (`sagent.agent.history_window`); the earlier ones stay
    in the session log, where the Recall tool searches them. None: the whole history (compacted as needed)."""

    max_depth: int = DEFAULT_MAX_DEPTH
    """The deepest level agents below this one may reach (the main agent is at depth 0)."""

    max_agents: int = DEFAULT_MAX_AGENTS
    """How many agents of the tree may run at once, the main one included."""

    allow_providers: frozenset[str] | None = None
    """The providers sub-agents and switches may use; None: any provider with a key."""

    handoff_capsules: int = 0
    """Bounded handoffs: a sub-agent's task (and a message to another agent) carries the last N capsules of
    this agent's handoff history (the tasks, answers and messages it sent and received) ahead of it, and
    its capsule records the tokens that saved against carrying them all (`sagent.evidence.handoffs`; 4 is
    the usual N). 0: the text goes alone. A spawn's `SpawnRequest.capsules` overrides it."""

    label: str = "main"
    """The agent's name on the fleet's bus (unique in its tree)."""

    role: str = ""
    """A note after the system prompt for this agent only: a sub-agent's place in the fleet. Spawning
    always replaces it, so a sub-agent never carries its parent's note."""

    agent_type: str = ""
    """The name of the agent definition (an agent file, an SDK program's agent) this sub-agent was started
    from; empty for any other agent. Hooks are told it as `agent_type`. Spawning always replaces it."""

    hooks: tuple[Hook, ...] = ()
    """Called by the loop at fixed points (see `sagent.agent.hooks`); sub-agents run the same hooks."""

    approver: Approver | None = None
    """Answers a hook's `Ask` for a tool call (the REPL prompts its user); sub-agents ask the same one.
    None: nobody is there to ask, and a call a hook asks about runs."""

    permissions: Permissions | None = None
    """The permission policy (`sagent.permissions.Permissions`: mode, allow/ask/deny rules, project roots)
    that `PermissionHook` applies; sub-agents inherit it, and the hook holds a sub-agent to its parents'
    policies too, so a child can never do more than they allow. None: no policy (every call runs)."""

    sandbox: SandboxPolicy = field(default_factory=_sandbox_policy)
    """The OS sandbox every Bash command runs in (`sagent.sandbox.SandboxPolicy`): by default
    workspace-write without network, where the sandbox can start (else commands run without it, said once
    on stderr, unless the policy is `required`); `SandboxPolicy(mode="danger-full-access")` turns it off.
    Sub-agents inherit it."""

    advisor: Advisor | None = None
    """A stronger model the agent consults when it needs help (see `sagent.advisor`): its hook joins
    `hooks` and, unless its policy says otherwise, its `Advisor` tool joins `tools`. Sub-agents share it."""

    editor: Editor | None = None
    """The editor lending its files and terminals (`sagent.tools.editor`, an ACP client): Read, Write and
    Edit go through its buffers, Bash through its terminals where the sandbox does not confine it. None:
    the disk and sagent's own processes. Sub-agents share it."""

    def __post_init__(self) -> None:
        # Accept the everyday spellings (a list of tools, a str path, a set) and keep the value frozen.
        object.__setattr__(self, "tools", tuple(self.tools))
        object.__setattr__(self, "hooks", tuple(self.hooks))
        if self.advisor is not None:
            if self.advisor.hook not in self.hooks:
                object.__setattr__(self, "hooks", (*self.hooks, self.advisor.hook))
            wants_tool = self.advisor.policy.tool and not any(t.name == self.advisor.tool.name for t in self.tools)
            if wants_tool:
                object.__setattr__(self, "tools", (*self.tools, self.advisor.tool))
        # Read as `object`: the declared types are what the fields hold after this, not what callers pass.
        cwd: object = self.cwd
        if cwd is not None and not isinstance(cwd, Path):
            object.__setattr__(self, "cwd", Path(cast("str | os.PathLike[str]", cwd)))
        allowed: object = self.allow_providers
        if allowed is not None and not isinstance(allowed, frozenset):
            object.__setattr__(self, "allow_providers", frozenset(cast("Iterable[str]", allowed)))
        if self.max_depth < 0:
            raise ValueError(f"max_depth must be 0 or more, not {self.max_depth}")
        if self.max_agents < 1:
            raise ValueError(f"max_agents must be at least 1, not {self.max_agents}")
        if self.handoff_capsules < 0:
            raise ValueError(f"handoff_capsules must be 0 or more, not {self.handoff_capsules}")

    @property
    def prompt(self) -> str:
        """The system prompt the model is sent: `system`, then `role` when there is one."""
        return f"{self.system}\n\n{self.role}".lstrip() if self.role else self.system

    def workspace(self) -> tuple[Path, ...]:
        """The folders the sandbox lets commands write in workspace-write: the working directory and the
        project's other roots (`--add-dir`, `additionalDirectories`)."""
        roots = getattr(self.permissions, "roots", ())
        return tuple(dict.fromkeys(Path(r) for r in (self.cwd or Path.cwd(), *roots)))

    def sandboxing(self) -> tuple[SandboxPolicy, tuple[Path, ...], bool]:
        """What the tools' context holds of the sandbox: the policy, the workspace, and whether a Bash call
        may ask to leave it (only where a permission policy puts that to its question)."""
        return self.sandbox, self.workspace(), self.permissions is not None

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The names of every setting."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def build(cls, base: AgentSettings | None = None, **options: Any) -> AgentSettings:
        """`base` (the defaults when None) with `options` replacing its fields: how `Agent(model, system=...,
        tools=...)` becomes settings. None for a field whose default is not None means "the default", as
        callers that pass every option through (`retry=None`, `compaction=None`) expect. An unknown name is
        a TypeError that lists the settings."""
        unknown = sorted(set(options) - set(cls.names()))
        if unknown:
            raise TypeError(f"unknown setting(s) {', '.join(unknown)}; the settings are: {', '.join(cls.names())}")
        settings = base or cls()
        given = {k: v for k, v in options.items() if v is not None or _none_allowed(k)}
        if isinstance(given.get("tools"), Sequence):
            given["tools"] = tuple(given["tools"])
        return dataclasses.replace(settings, **given) if given else settings


def _none_allowed(name: str) -> bool:
    default = next(f for f in dataclasses.fields(AgentSettings) if f.name == name)
    return default.default is None
