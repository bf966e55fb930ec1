"""sagent: a coding agent for the terminal and a typed Python library.

    from sagent import Agent, tool
    from sagent.providers.anthropic import AnthropicModel  # noqa: F401

    agent = Agent(AnthropicModel(), tools=builtin_tools())
    answer = await agent.ask("what does this repository do?")

Names are imported lazily, so `import sagent` (and `sagent --version`) stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sagent.lib.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "Agent": "sagent.agent.agent",
    "AgentError": "sagent.agent.handle",
    "Reply": "sagent.agent.handle",
    "RunHandle": "sagent.agent.handle",
    "SessionLog": "sagent.agent.session",
    "CostTracker": "sagent.agent.cost",
    "Fleet": "sagent.agent.fleet",
    "FleetError": "sagent.agent.fleet",
    "Child": "sagent.agent.fleet",
    "Receipt": "sagent.agent.fleet",
    "CompactionPolicy": "sagent.agent.compaction",
    "AgentSettings": "sagent.agent.settings",
    "SandboxPolicy": "sagent.sandbox.policy",
    "SpawnRequest": "sagent.tools.runtime",
    "AgentDefinition": "sagent.tools.runtime",
    "AgentFiles": "sagent.resources.agent_files",
    "load_agent_files": "sagent.resources.agent_files",
    "AgentSnapshot": "sagent.snapshot",
    "Hook": "sagent.agent.hooks",
    "Allow": "sagent.agent.hooks",
    "Deny": "sagent.agent.hooks",
    "Rewrite": "sagent.agent.hooks",
    "Ask": "sagent.agent.hooks",
    "Approver": "sagent.agent.hooks",
    "ToolDecision": "sagent.agent.hooks",
    "ALLOW": "sagent.agent.hooks",
    "PromptDecision": "sagent.agent.hooks",
    "PROCEED": "sagent.agent.hooks",
    "ContextSize": "sagent.agent.tokens",
    "tool": "sagent.tools.base",
    "Tool": "sagent.tools.base",
    "ToolContext": "sagent.tools.base",
    "ToolError": "sagent.tools.base",
    "builtin_tools": "sagent.tools",
    "Model": "sagent.providers.base",
    "RetryPolicy": "sagent.providers.base",
    "ProviderError": "sagent.providers.base",
    "ScriptedModel": "sagent.providers.scripted",
    "RoutedModel": "sagent.providers.scripted",
    "TaskList": "sagent.tasks",
    "TodoItem": "sagent.tasks",
    "resolve_model": "sagent.providers.registry",
    "Sequential": "sagent.patterns",
    "Parallel": "sagent.patterns",
    "Triage": "sagent.patterns",
    "Handoff": "sagent.patterns",
    "Step": "sagent.patterns",
    "StepResult": "sagent.patterns",
    "PatternResult": "sagent.patterns",
}
_TYPES = (
    "TextPart",
    "ImagePart",
    "ThinkingPart",
    "ToolCall",
    "ServerToolPart",
    "ServerAdvisor",
    "ResponseSchema",
    "Usage",
    "Cost",
    "UserMessage",
    "AssistantMessage",
    "ToolResult",
    "PeerMessage",
    "Message",
    "ToolSpec",
    "ModelRequest",
)
_EVENTS = (
    "Event",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "Retrying",
    "SessionStarted",
    "ModelSwitched",
    "Compacted",
    "ContextPruned",
    "ToolResultsCleared",
    "Rewound",
    "TaskListChanged",
    "MessageAdded",
    "ToolStarted",
    "ToolFinished",
    "TurnFinished",
    "ErrorEvent",
    "HookNotice",
    "AdvisorConsulted",
    "Result",
)
_EXPORTS.update({name: "sagent.types" for name in _TYPES})
_EXPORTS.update({name: "sagent.events" for name in _EVENTS})

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:  # for type checkers and editors; at run time names load on first use.
    # `name as name` marks each as re-exported: mypy --strict and pyright read no names from the computed
    # __all__ above, and report `from sagent import Agent` otherwise.
    from sagent.agent.agent import Agent as Agent
    from sagent.agent.compaction import CompactionPolicy as CompactionPolicy
    from sagent.agent.cost import CostTracker as CostTracker
    from sagent.agent.fleet import Child as Child
    from sagent.agent.fleet import Fleet as Fleet
    from sagent.agent.fleet import FleetError as FleetError
    from sagent.agent.fleet import Receipt as Receipt
    from sagent.agent.handle import AgentError as AgentError
    from sagent.agent.handle import Reply as Reply
    from sagent.agent.handle import RunHandle as RunHandle
    from sagent.agent.hooks import ALLOW as ALLOW
    from sagent.agent.hooks import PROCEED as PROCEED
    from sagent.agent.hooks import Allow as Allow
    from sagent.agent.hooks import Approver as Approver
    from sagent.agent.hooks import Ask as Ask
    from sagent.agent.hooks import Deny as Deny
    from sagent.agent.hooks import Hook as Hook
    from sagent.agent.hooks import PromptDecision as PromptDecision
    from sagent.agent.hooks import Rewrite as Rewrite
    from sagent.agent.hooks import ToolDecision as ToolDecision
    from sagent.agent.session import SessionLog as SessionLog
    from sagent.agent.settings import AgentSettings as AgentSettings
    from sagent.agent.tokens import ContextSize as ContextSize
    from sagent.events import *  # noqa: F403
    from sagent.patterns import Handoff as Handoff
    from sagent.patterns import Parallel as Parallel
    from sagent.patterns import PatternResult as PatternResult
    from sagent.patterns import Sequential as Sequential
    from sagent.patterns import Step as Step
    from sagent.patterns import StepResult as StepResult
    from sagent.patterns import Triage as Triage
    from sagent.providers.base import Model as Model
    from sagent.providers.base import ProviderError as ProviderError
    from sagent.providers.base import RetryPolicy as RetryPolicy
    from sagent.providers.registry import resolve_model as resolve_model
    from sagent.providers.scripted import RoutedModel as RoutedModel
    from sagent.providers.scripted import ScriptedModel as ScriptedModel
    from sagent.resources.agent_files import AgentFiles as AgentFiles
    from sagent.resources.agent_files import load_agent_files as load_agent_files
    from sagent.snapshot import AgentSnapshot as AgentSnapshot
    from sagent.tasks import TaskList as TaskList
    from sagent.tasks import TodoItem as TodoItem
    from sagent.tools import builtin_tools as builtin_tools
    from sagent.tools.base import Tool as Tool
    from sagent.tools.base import ToolContext as ToolContext
    from sagent.tools.base import ToolError as ToolError
    from sagent.tools.base import tool as tool
    from sagent.tools.runtime import AgentDefinition as AgentDefinition
    from sagent.tools.runtime import SpawnRequest as SpawnRequest
    from sagent.types import *  # noqa: F403


_load = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _load(name)
