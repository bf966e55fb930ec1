"""The tool protocol, the context a tool runs in, and `@tool`, which makes a tool from a typed function."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import os
import re
import types
import typing
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from sagent.lib.words import quantity
from sagent.sandbox.policy import DEFAULT as DEFAULT_SANDBOX
from sagent.sandbox.policy import SandboxPolicy
from sagent.tools import workers
from sagent.types import ImagePart, TextPart, ToolCall, ToolSpec, UserContent

if TYPE_CHECKING:
    from sagent.tools.editor import Editor
    from sagent.tools.runtime import AgentRuntime


class ToolError(Exception):
    """A failure the model should read and can act on (missing file, no match, bad argument)."""


@dataclass(slots=True)
class FileStamp:
    mtime_ns: int
    size: int


class AccessGuard(Protocol):
    """What the permission policy binding an agent says about what a tool is about to open. The permission
    check runs before the call; a tool asks again right before it opens, on the real path it will open
    (`sagent.lib.realpaths`), so a symlink swapped in meanwhile cannot take it elsewhere."""

    def refuse_file(self, tool: str, real: str) -> str | None:
        """Why `tool` may not open the real path `real`, or None: a deny rule names it, or it is not the path
        the permission check looked at and the policy would not let the tool open it unasked."""
        ...

    def hides(self, tool: str, real: str, root: str) -> bool:
        """Whether a search (Grep, Glob, List) of the real folder `root` leaves out the entry at the real path
        `real`: a deny or ask rule names it, or it lies outside `root` where the policy would ask."""
        ...

    def skip_below(self, tool: str, root: str) -> list[str]:
        """Folders and files below the real folder `root`, relative to it, that a search by `tool` leaves out
        whole: a search program may be told to skip them (what it finds is still held to `hides`)."""
        ...

    def refuse_inode(self, tool: str, device: int, inode: int) -> str | None:
        """Why `tool` may not use the open file (`device`, `inode`) that has other names (hard links): one
        of them is a file a deny rule names. None: it may."""
        ...

    def refuse_url(self, tool: str, url: str) -> tuple[Literal["deny", "ask"], str] | None:
        """Whether `tool` may go on to `url` (a redirect's next hop): None, or ("deny", why) for a URL the
        rules forbid, or ("ask", why) for one that would need a question nobody is there to answer."""
        ...


@dataclass(slots=True)
class ToolContext:
    """What a running tool may use: the working directory, the session folder, what it has read."""

    cwd: Path
    # Where large outputs are spilled; None for ephemeral sessions (a temporary folder is used then).
    session_dir: Path | None = None
    # Files read in this session and how they looked on disk then, for Write's stale-file check.
    read_files: dict[Path, FileStamp] = field(default_factory=dict)
    # The agent running the tool, for the agent tools (spawn, send, self, jobs); None outside an agent.
    runtime: AgentRuntime | None = None
    # True when the session keeps no log (--ephemeral): tools that would save something (Memory, the
    # Recall index) write nothing.
    ephemeral: bool = False
    # The permission policy's answers for the files and URLs a tool is about to open (set by the permission
    # hook); None when no policy binds the agent.
    guard: AccessGuard | None = None
    # The sandbox Bash commands run in (workspace-write without network unless the agent says otherwise),
    # and the workspace it lets them write: the project's folders; () means the working directory as it
    # was when the context was made.
    sandbox: SandboxPolicy = DEFAULT_SANDBOX
    roots: tuple[Path, ...] = ()
    # Whether a Bash call may leave the sandbox (`dangerouslyDisableSandbox`): only where a permission policy
    # puts that call to its question (an agent with one). Elsewhere the argument is ignored.
    may_leave_sandbox: bool = False
    # The tools offered on demand that this agent has loaded (found with ToolSearch, or called by name), in
    # the order it loaded them: its requests carry them at the end of its tools.
    loaded: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.roots:
            self.roots = (self.cwd.resolve(),)

    def editor(self) -> Editor | None:
        """The editor lending its files and terminals to the agent (an ACP client), or None."""
        lend = getattr(self.runtime, "editor", None)  # a runtime of an older shape lends none
        return lend() if callable(lend) else None

    def agent(self) -> AgentRuntime:
        if self.runtime is None:
            raise ToolError("this tool needs a running agent")
        return self.runtime

    def resolve(self, path: str) -> Path:
        """An absolute path for `path`, relative to the working directory."""
        p = Path(path).expanduser()
        return p if p.is_absolute() else (self.cwd / p)

    def refuse_file(self, tool: str, real: str) -> None:
        """`ToolError` when the guard refuses `tool` the real path `real` (nothing when there is no guard)."""
        if self.guard is not None:
            reason = self.guard.refuse_file(tool, real)
            if reason is not None:
                raise ToolError(f"denied: {reason}")

    def link_check(self, tool: str) -> Callable[[os.stat_result], None] | None:
        """A check for a file once it is open: `ToolError` when it has another name (a hard link) that a deny
        rule names, as a hard link to a denied file is the same file under a name no rule mentions. None
        without a guard."""
        guard = self.guard
        if guard is None:
            return None

        def check(st: os.stat_result) -> None:
            if st.st_nlink > 1:
                reason = guard.refuse_inode(tool, st.st_dev, st.st_ino)
                if reason is not None:
                    raise ToolError(f"denied: {reason}")

        return check

    def spill_dir(self) -> Path:
        """A folder for full outputs too large for the context."""
        if self.session_dir is None:
            import tempfile

            self.session_dir = Path(tempfile.mkdtemp(prefix="sagent-"))
        from sagent.lib.private import private_dir

        return private_dir(self.session_dir / "outputs")

    def save_output(self, name: str, text: str) -> Path:
        """Write `text` to `name` in the spill folder, readable only by the user and with every secret
        sagent knows redacted (a tool's output can hold a key: `env`, a config file), and return its path."""
        from sagent.redaction import redact

        path = self.spill_dir() / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
            os.fchmod(f.fileno(), 0o600)  # a file that was already there keeps its mode otherwise
            f.write(redact(text))
        return path


ToolOutput = str | tuple[UserContent, ...]

_T = typing.TypeVar("_T")


async def off_loop(fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
    """`fn(*args, **kwargs)` run in a worker thread, awaited: blocking disk work never stalls the event
    loop, so signals, streams and other agents go on while it runs. Unlike `asyncio.to_thread` the thread
    is a daemon (an idle one is reused, see `sagent.tools.workers`): a read stuck for good (a hung network
    mount, a file that never ends) is abandoned when the awaiting task is cancelled and cannot keep sagent
    from exiting."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():  # cancelled meanwhile: the result is dropped
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def work() -> None:
        try:
            result, error = context.run(fn, *args, **kwargs), None
        except BaseException as exc:  # handed to the awaiting task, which re-raises it
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
            loop.call_soon_threadsafe(settle, result, error)

    workers.submit(work)
    return await future


MAX_OUTPUT = 30_000  # characters of one tool output that enter the context


def fit_output(text: str, ctx: ToolContext, tool_name: str) -> str:
    """`text` if it is short enough for the context; else its head and tail, with the whole of it saved to
    the session folder and its path given, so nothing is lost and the model can Read or Grep the rest.
    A text that is cut has every secret sagent knows redacted first: a cut through a secret would leave a
    part of it that no later redaction (the session log's) recognises."""
    if len(text) <= MAX_OUTPUT:
        return text
    from sagent.redaction import redact

    text = redact(text)
    spill = ctx.save_output(f"{tool_name.lower()}-{uuid.uuid4().hex[:12]}.txt", text)
    half = MAX_OUTPUT // 2
    cut = len(text) - 2 * half
    note = (
        f"[… {quantity(cut, 'character')} cut; the whole output is in {spill}: Read it by offset and limit, or Grep it]"
    )
    return f"{text[:half]}\n{note}\n{text[-half:]}"


@runtime_checkable
class Tool(Protocol):
    """A capability the model can call. `run` returns text (or content parts) or raises `ToolError`.

    A tool may also set `reproducible = True` when calling it again gives its output again (a file read, a
    search, a command's output): compaction then replaces its old outputs with a stub before it summarises.

    A tool whose call can leave something behind when sagent dies during it (processes) may have a
    `recover(call, ctx) -> str | None` method: a resumed session calls it for each call the dead run left
    unfinished, to clean up, and adds the note it returns to that call's "interrupted" result.

    A tool declares what the loop must know of it as capabilities, rather than the loop knowing tool names:
    `may_background` (False: its calls never move to the background, as waiting on jobs or messaging is not
    work to send there), `spawns_agents` (True: it starts sub-agents, so it is withheld from an agent at the
    depth limit) and `manages_jobs` (True: it waits on and cancels background calls; with such a tool
    present, every other tool takes `background`). A tool that leaves them out has the defaults, which
    `may_background(t)`, `spawns_agents(t)` and `manages_jobs(t)` supply. They stay out of the protocol's
    members: a structural protocol requires every member it lists, so a plain class with only the five
    members above (as the docs show) would no longer type-check as a `Tool`.
    """

    name: str
    description: str
    input_schema: dict[str, Any]

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput: ...

    def resource(self, arguments: dict[str, Any], ctx: ToolContext) -> str | None:
        """A key (a file path) that calls must not touch concurrently; None when any order is fine."""
        ...


class AnyOrder:
    """For a tool whose calls may run alongside any other call: it touches no file the agent edits."""

    def resource(self, arguments: dict[str, Any], ctx: ToolContext) -> str | None:
        return None


def may_background(t: Tool) -> bool:
    """`t.may_background`, with its default for a tool class that does not declare it (the protocol is
    structural: a user's tool need not inherit the default)."""
    return bool(getattr(t, "may_background", True))


def spawns_agents(t: Tool) -> bool:
    """`t.spawns_agents`, False for a tool that does not declare it."""
    return bool(getattr(t, "spawns_agents", False))


def manages_jobs(t: Tool) -> bool:
    """`t.manages_jobs`, False for a tool that does not declare it."""
    return bool(getattr(t, "manages_jobs", False))


def recover_note(t: Tool | None, call: ToolCall, ctx: ToolContext) -> str | None:
    """What `t.recover` did about a call a dead run left unfinished (see `Tool`); None when it has no such
    method or nothing to say. A failure becomes a note too: resuming must not fail on it."""
    # The optional members stay out of the `Tool` protocol: a tool written as a plain class (the docs show
    # one) would stop type-checking as a `Tool`, and a runtime protocol check costs tens of µs per tool.
    recover: Callable[[ToolCall, ToolContext], str | None] | None = getattr(t, "recover", None)
    if recover is None:
        return None
    try:
        return recover(call, ctx)
    except Exception as error:
        return f"Cleaning up after it failed: {type(error).__name__}: {error}"


def tool_spec(t: Tool, ctx: ToolContext | None = None) -> ToolSpec:
    """What the model is told about `t`. A tool whose description depends on its context has a
    `describe(ctx)` method; it should change rarely, as the tools open every request's cached prefix."""
    describe: Callable[[ToolContext], str] | None = getattr(t, "describe", None)
    description = describe(ctx) if describe is not None and ctx is not None else t.description
    return ToolSpec(t.name, description, t.input_schema)


def output_content(output: str | tuple[object, ...]) -> tuple[UserContent, ...]:
    """The content parts of a tool's output; anything else a tool written without types returns is dropped."""
    if isinstance(output, str):
        return (TextPart(output),)
    return tuple(p for p in output if isinstance(p, TextPart | ImagePart))


# --------------------------------------------------------------------------------------------- @tool


def _json_schema(annotation: Any) -> dict[str, Any]:
    """A JSON schema for a Python type annotation (the common cases a tool signature uses)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is str:
        return {"type": "string"}
    if annotation is bool:
        return {"type": "boolean"}
    if annotation is int:
        return {"type": "integer"}
    if annotation is float:
        return {"type": "number"}
    if annotation is Any or annotation is inspect.Parameter.empty:
        return {}
    if origin is Literal:
        return {"type": _json_type(args[0]), "enum": list(args)}
    if origin in (list, tuple, typing.Sequence) or annotation in (list, tuple):
        item = args[0] if args else Any
        return {"type": "array", "items": _json_schema(item)}
    if origin is dict or annotation is dict:
        return {"type": "object"}
    if origin in (typing.Union, types.UnionType):
        non_null = [a for a in args if a is not type(None)]
        if len(non_null) == 1:
            return _json_schema(non_null[0])
        return {"anyOf": [_json_schema(a) for a in non_null]}
    raise TypeError(f"@tool cannot describe the type {annotation!r} as JSON schema")


def _json_type(value: Any) -> str:
    return {str: "string", bool: "boolean", int: "integer", float: "number"}[type(value)]


_ARG_LINE = re.compile(r"^\s{2,}(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The description and the per-argument descriptions of a Google-style docstring."""
    doc = inspect.cleandoc(doc or "")
    head, _, rest = doc.partition("\nArgs:\n")
    params: dict[str, str] = {}
    current: str | None = None
    for line in rest.splitlines():
        if line and not line.startswith(" "):
            break  # the next section (Returns:, Raises:)
        m = _ARG_LINE.match(line)
        if m and len(line) - len(line.lstrip()) <= 4:
            current = m.group(1)
            params[current] = m.group(2).strip()
        elif current and line.strip():
            params[current] += " " + line.strip()
    return head.strip(), params


class FunctionTool:
    """A tool made from a function by `@tool`. The function may be sync or async and may take
    `ctx: ToolContext`, which is passed in and left out of the schema."""

    def __init__(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        description: str | None = None,
        resource_arg: str | None = None,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        doc_description, arg_docs = _parse_docstring(fn.__doc__ or "")
        self.description = description or doc_description or self.name
        hints = typing.get_type_hints(fn)
        self._takes_ctx = False
        properties: dict[str, Any] = {}
        required: list[str] = []
        for param in inspect.signature(fn).parameters.values():
            if param.name == "ctx" or hints.get(param.name) is ToolContext:
                self._takes_ctx = True
                self._ctx_name = param.name
                continue
            schema = _json_schema(hints.get(param.name, Any))
            if param.name in arg_docs:
                schema["description"] = arg_docs[param.name]
            if param.default is inspect.Parameter.empty:
                required.append(param.name)
            elif param.default is not None:
                schema["default"] = param.default
            properties[param.name] = schema
        self.input_schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            self.input_schema["required"] = required
        self._resource_arg = resource_arg

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        # The agent has checked `arguments` against `input_schema` before calling.
        kwargs = dict(arguments)
        if self._takes_ctx:
            kwargs[self._ctx_name] = ctx
        result = self.fn(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, tuple):
            return result
        return result if isinstance(result, str) else str(result)

    def resource(self, arguments: dict[str, Any], ctx: ToolContext) -> str | None:
        if self._resource_arg and isinstance(arguments.get(self._resource_arg), str):
            return str(ctx.resolve(arguments[self._resource_arg]).resolve())
        return None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<tool {self.name}>"


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    resource_arg: str | None = None,
) -> Any:
    """Make a tool from a typed function: the schema comes from its type hints, the description and the
    argument descriptions from its docstring (Google style, an `Args:` section).

        @tool
        def add(a: int, b: int) -> str:
            '''Add two numbers.

            Args:
                a: the first number
                b: the second number
            '''
            return str(a + b)
    """

    def wrap(f: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(f, name=name, description=description, resource_arg=resource_arg)

    return wrap(fn) if fn is not None else wrap


_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """Raise `ToolError` naming what is wrong when arguments miss a required field, add an unknown one,
    or give a top-level value of the wrong type. Models read the message and correct the call."""
    properties: dict[str, Any] = schema.get("properties", {})
    missing = [k for k in schema.get("required", []) if k not in arguments]
    if missing:
        raise ToolError(f"missing required argument(s): {', '.join(missing)}")
    # A schema without `properties` (an MCP server's open object) leaves the arguments to its tool.
    open_object = "properties" not in schema and schema.get("additionalProperties") is not False
    unknown = [] if open_object else [k for k in arguments if k not in properties]
    if unknown:
        raise ToolError(
            f"unknown argument(s): {', '.join(unknown)}; this tool takes: {', '.join(properties) or 'none'}"
        )
    for key, value in arguments.items():
        prop = properties.get(key, {})
        expected = prop.get("type")
        if value is None and key not in schema.get("required", []):
            continue
        if expected and not _TYPE_CHECKS.get(expected, lambda v: True)(value):
            raise ToolError(f"argument {key!r} must be of type {expected}, got {type(value).__name__}")
        if "enum" in prop and value not in prop["enum"]:
            raise ToolError(f"argument {key!r} must be one of {prop['enum']}, got {value!r}")
