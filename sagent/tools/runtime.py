"""What the agent tools (AgentSpawn, AgentSend, AgentSelf, Jobs) and the tools that need the agent's model
(Read for images, WebFetch for its small-model answers) may ask of the agent that runs them.

The agent puts an object with these methods in `ToolContext.runtime`; the tools only parse arguments and
call it, so tools never import the agent. Every method answers in text for the model and raises
`ToolError` when it refuses (a depth limit, an unknown peer, a switch the context does not fit).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sagent.tasks import TaskList
    from sagent.tools.choose import Choice
    from sagent.tools.editor import Editor


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """A sub-agent defined in a file (Claude Code's shape: `.claude/agents/NAME.md`, `.sagent/agents/`):
    what AgentSpawn's `agent` field starts. Loaded by `sagent.resources.agent_files`; the fleet applies it."""

    name: str
    """What AgentSpawn's `agent` names it by (a plugin's are `plugin:name`)."""
    description: str
    """When to use it: the parent model reads this in AgentSpawn's description."""
    system: str
    """Its system prompt (the file's body), used exactly; the fleet adds only its note on the sub-agent's place."""
    tools: tuple[str, ...] | None = None
    """The tools it may use, as the file names them (Claude Code's names are mapped when it spawns, names its
    parent lacks are left out with a note); None: all of its parent's."""
    disallowed_tools: tuple[str, ...] = ()
    """Tools taken out of what it would get (Claude Code's `disallowedTools`)."""
    model: str | None = None
    """A model id, `provider:model`, or an alias (`inherit`, `sonnet`, `opus`, `haiku`); None: the parent's."""
    permission_mode: str | None = None
    """A permission mode; applied only when it is as strict as the parent's or stricter."""
    isolation: str | None = None
    """`worktree`: it works in its own git worktree, on its own branch."""
    origin: str = ""
    """Where the file was found, for lists (`.claude`, `~/.claude`, `plugin NAME`)."""
    path: str = ""
    """The file it was read from."""


@dataclass(frozen=True, slots=True)
class SpawnRequest:
    """A request to start a sub-agent, as it travels from the AgentSpawn tool (or `Agent.spawn`) to the
    fleet. Every field but `prompt` is optional: what is not given is inherited from the parent."""

    prompt: str
    """The task, complete and self-contained: the sub-agent does not see its parent's conversation."""
    label: str | None = None
    """A unique one-word name on the fleet's bus; None: the next free `agent-N`."""
    system: str | None = None
    """A system prompt instead of the parent's."""
    provider: str | None = None
    """A provider for the sub-agent's own model (the parent's model is shared when neither this nor
    `model` is given)."""
    model: str | None = None
    """A model id for the sub-agent's own model (its provider is inferred from the id when not given)."""
    tools: Sequence[str] | None = None
    """The names of the tools it may use, a subset of the parent's; None: all of them."""
    max_tool_rounds: int | None = None
    """Stop it after this many tool rounds; None: the parent's limit."""
    max_depth: int | None = None
    """How many levels of sub-agents it may start below it (never deeper than the parent may go)."""
    persistent: bool = False
    """Keep it running after its answer: it reports each time it goes idle and wakes on a message."""
    advisor: str | None = None
    """A model id (or `provider:model`) for its advisor, or `none` for no advisor; None: the parent's."""
    on: str | None = None
    """Run it on another process of a fleet on NATS: a `sagent serve` label, or "any" for whichever
    serve process takes it first (a queue group); None: in this process. One-shot only."""
    agent: AgentDefinition | None = None
    """A sub-agent defined in a file: its system prompt, tools, model, permission mode and isolation apply
    (a field given here as well wins over the file's, except the permission mode and the isolation)."""
    choice: Choice | None = None
    """A choice the sub-agent makes with a tool call (`sagent.tools.choose`), which an orchestration pattern
    (`sagent.patterns`) reads when it has answered: it gets that tool beside the ones it is given."""
    capsules: int | None = None
    """Carry the last N capsules of the parent's handoffs (tasks, answers, messages) ahead of the prompt;
    0: the prompt alone; None: the parent's `handoff_capsules` setting."""

    def __post_init__(self) -> None:
        if self.tools is not None:
            object.__setattr__(self, "tools", tuple(self.tools))


class AgentRuntime(Protocol):
    def tool_names(self) -> Collection[str]:
        """The names of the tools this agent has (offered or on demand)."""
        ...

    def peers(self) -> list[str]:
        """One line per agent this one can message: label, model, status."""
        ...

    async def spawn(self, request: SpawnRequest) -> str:
        """Start a sub-agent; a one-shot one's answer, or where to reach a persistent one."""
        ...

    def send(self, to: str, text: str, control: str | None, **fields: Any) -> str:
        """Send `text` to the agent `to`, or the control `control` with its `fields` (provider, model, focus,
        effort, thinking, tools, keep_last; see `sagent.agent.controls`)."""
        ...

    def status(self) -> str: ...

    async def switch(
        self, provider: str | None, model: str | None, effort: str | None, thinking: int | None
    ) -> str: ...

    def compact(self, focus: str | None) -> str: ...

    def clear_tool_results(self, ids: list[str] | None, keep_last: int | None) -> str: ...

    def detach(self, name: str) -> str:
        """Move the running call `name` picks (the label of the sub-agent an AgentSpawn call started, a
        tool's name, or a call id) to the background: the round stops waiting for it, and its result
        arrives later as a message. ToolError naming what runs when `name` picks no running call."""
        ...

    def jobs(self) -> str: ...

    def cancel_job(self, job_id: str) -> str: ...

    async def wait_job(self, job_id: str, timeout: float) -> str: ...

    def accepts_images(self) -> bool:
        """Whether the agent's current model can be shown images."""
        ...

    async def ask_small_model(self, tool: str, system: str, prompt: str) -> str:
        """The answer of a cheap model (of the agent's provider) to `prompt`, charged to the agent."""
        ...

    def editor(self) -> Editor | None:
        """The editor lending the agent its files and terminals (`sagent.tools.editor`), or None."""
        ...

    def set_task_list(self, tasks: TaskList) -> None:
        """Make `tasks` the agent's task list, whole (TodoWrite), and tell the surfaces."""
        ...
