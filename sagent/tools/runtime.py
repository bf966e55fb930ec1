"""What the agent tools (AgentSpawn, AgentSend, AgentSelf, Jobs) and the tools that need the agent's model
(Read for images, WebFetch for its small-model answers) may ask of the agent that runs them.

The agent puts an object with these methods in `ToolContext.runtime`; the tools only parse arguments and
call it, so tools never import the agent. Every method answers in text for the model and raises
`ToolError` when it refuses (a depth limit, an unknown peer, a switch the context does not fit).
"""

from __future__ import annotations

from typing import Protocol


class AgentRuntime(Protocol):
    def peers(self) -> list[str]:
        """One line per agent this one can message: label, model, status."""
        ...

    async def spawn(
        self,
        prompt: str,
        *,
        label: str | None,
        system: str | None,
        provider: str | None,
        model: str | None,
        tools: list[str] | None,
        max_tool_rounds: int | None,
        max_depth: int | None,
        persistent: bool,
    ) -> str: ...

    def send(
        self, to: str, text: str, control: str | None, provider: str | None, model: str | None, focus: str | None
    ) -> str: ...

    def status(self) -> str: ...

    async def switch(
        self, provider: str | None, model: str | None, effort: str | None, thinking: int | None
    ) -> str: ...

    def compact(self, focus: str | None) -> str: ...

    def clear_tool_results(self, ids: list[str] | None, keep_last: int | None) -> str: ...

    def jobs(self) -> str: ...

    def cancel_job(self, job_id: str) -> str: ...

    async def wait_job(self, job_id: str, timeout: float) -> str: ...

    def accepts_images(self) -> bool:
        """Whether the agent's current model can be shown images."""
        ...

    async def ask_small_model(self, tool: str, system: str, prompt: str) -> str:
        """The answer of a cheap model (of the agent's provider) to `prompt`, charged to the agent."""
        ...
