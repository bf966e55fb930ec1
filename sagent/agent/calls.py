"""One tool call: how the model sees the tools, how a call runs, and the notes a backgrounded call gets.

`execute` never raises: an unknown tool, bad arguments, a `ToolError` or a crash all become an error
result the model can read and act on. An output too long for the context keeps its head and tail; the
whole of it is saved in the session folder.
"""

from __future__ import annotations

from collections.abc import Mapping

from sagent.agent.jobs import Job
from sagent.encoding import scrub
from sagent.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    check_arguments,
    fit_output,
    manages_jobs,
    may_background,
    output_content,
    tool_spec,
)
from sagent.types import TextPart, ToolCall, ToolResult, ToolSpec

_BACKGROUND_PROPERTY = {
    "type": "boolean",
    "description": "run in the background: returns a job id at once, the result arrives later as a message",
}


def tool_specs(tools: Mapping[str, Tool], ctx: ToolContext) -> list[ToolSpec]:
    """The tools as the model sees them. With a tool that manages jobs among them (Jobs), every tool that may
    run in the background takes `background`."""
    if not offers_background(tools):
        return [tool_spec(t, ctx) for t in tools.values()]
    return [_with_background(tool_spec(t, ctx)) if may_background(t) else tool_spec(t, ctx) for t in tools.values()]


def offers_background(tools: Mapping[str, Tool]) -> bool:
    """True when a tool among `tools` manages background calls (waits on them, cancels them)."""
    return any(manages_jobs(t) for t in tools.values())


def backgroundable(tools: Mapping[str, Tool], name: str) -> bool:
    """Whether a running call of `name` may move to the background: as its tool declares (a name no tool
    has is already an error result, moving it changes nothing)."""
    tool = tools.get(name)
    return tool is None or may_background(tool)


def wants_background(tools: Mapping[str, Tool], call: ToolCall) -> bool:
    return (
        call.arguments.get("background") is True
        and call.name in tools
        and may_background(tools[call.name])
        and offers_background(tools)
        and call.invalid_arguments is None
    )


SPAWN_TOOL = "AgentSpawn"


def is_named(call: ToolCall, name: str) -> bool:
    """Whether `name` picks out `call` (to move it alone to the background): its id, the label of the
    sub-agent it spawns, or its tool's name (every call of that tool)."""
    name = name.strip()
    return name in (call.id, call.name) or (call.name == SPAWN_TOOL and call.arguments.get("label") == name)


async def execute(tools: Mapping[str, Tool], call: ToolCall, ctx: ToolContext) -> ToolResult:
    """Run one tool call; every failure becomes an error result."""
    tool = tools.get(call.name)
    if tool is None:
        names = ", ".join(tools) or "none"
        if call.name == SPAWN_TOOL:  # withheld from an agent at the depth limit: say why, not "unknown"
            why = (
                f"cannot spawn: {SPAWN_TOOL} is not among your tools (you are at the fleet's depth limit, "
                f"max_depth, or were not given it); do the work yourself with: {names}"
            )
            return ToolResult.of(call, why, is_error=True)
        return ToolResult.of(call, f"unknown tool {call.name!r}; the tools are: {names}", is_error=True)
    if call.invalid_arguments is not None:
        return ToolResult.of(
            call,
            f"the arguments were not a valid JSON object: {call.invalid_arguments[:500]!r}; "
            "call the tool again with a JSON object matching its schema",
            is_error=True,
        )
    arguments = call.arguments
    if "background" in arguments and may_background(tool) and offers_background(tools):
        arguments = {k: v for k, v in arguments.items() if k != "background"}
    try:
        check_arguments(tool.input_schema, arguments)
        output = await tool.run(arguments, ctx)
        content = tuple(
            TextPart(fit_output(scrub(p.text)[0], ctx, call.name)) if isinstance(p, TextPart) else p
            for p in output_content(output)
        )
        return ToolResult(call.id, call.name, content)
    except ToolError as error:
        return ToolResult.of(call, str(error), is_error=True)
    except Exception as error:
        return ToolResult.of(call, f"{call.name} failed: {type(error).__name__}: {error}", is_error=True)


def resource_of(tools: Mapping[str, Tool], call: ToolCall, ctx: ToolContext) -> object:
    """What the call must not touch at the same time as another call (a file), or its own id."""
    tool = tools.get(call.name)
    try:
        key = tool.resource(call.arguments, ctx) if tool and not call.invalid_arguments else None
    except Exception:
        key = None
    return key if key is not None else call.id


def started_note(job: Job) -> str:
    return (
        f"started in the background as {job.id}; its result will arrive as a message when it finishes. "
        "Jobs (wait, cancel, list) manages it."
    )


def moved_note(job: Job, seconds: float) -> str:
    return (
        f"still running after {seconds:.0f} s, so it was moved to the background as {job.id}; its result will "
        "arrive as a message when it finishes. Jobs (wait, cancel, list) manages it."
    )


def unstarted_note(job: Job) -> str:
    return (
        f"not started yet (its permission question, or a call before it on the same file, still waits), so it "
        f"was moved to the background as {job.id}: it runs once it may, and its result will arrive as a message. "
        "Jobs (wait, cancel, list) manages it."
    )


# Specs with `background` added, by the spec they were made from: every request (three a round, with the
# budget gate and the context estimate) asks for them, and the tools rarely change.
_BACKGROUND_SPECS: dict[tuple[str, str, int], tuple[ToolSpec, ToolSpec]] = {}


def _with_background(spec: ToolSpec) -> ToolSpec:
    key = (spec.name, spec.description, id(spec.input_schema))
    cached = _BACKGROUND_SPECS.get(key)
    if cached is not None and cached[0].input_schema is spec.input_schema:
        return cached[1]
    if len(_BACKGROUND_SPECS) > 512:  # tools made and dropped by the thousand (tests): start over
        _BACKGROUND_SPECS.clear()
    made = _add_background(spec)
    _BACKGROUND_SPECS[key] = (spec, made)  # holding `spec` keeps its schema's id from being reused
    return made


def _add_background(spec: ToolSpec) -> ToolSpec:
    schema = dict(spec.input_schema)
    properties = dict(schema.get("properties", {}))
    properties.setdefault("background", _BACKGROUND_PROPERTY)
    schema["properties"] = properties
    return ToolSpec(spec.name, spec.description, schema)
