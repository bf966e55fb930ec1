"""The shape of the package, checked: no import circle, no module over 600 lines, dependencies one way.

The import graph is read from the source (ast), not by importing: a test must see the lazy imports inside
functions too. They count like module-level ones: a function-level import is there to keep start-up fast
(an SDK loaded on first use), not to excuse a layer reaching back up; `A -> B` inside a function and
`B -> A` at module level is still a circle a reader has to hold in their head, and one move of the lazy
import to the top of the file turns it into an import-time failure. Imports under `if TYPE_CHECKING:`
are left out: they exist only for annotations and never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "sagent"
MAX_LINES = 600

# Modules allowed over MAX_LINES for a while, each with its ceiling, until it is split. Empty since the
# Agent's loop left agent.py (issue 16); a module may only leave this list, never join it for good.
OVER_THE_LIMIT: dict[str, int] = {}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, except those under `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _imports(node)


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of sagent that `name` imports (a `from package import module` names the module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _imports(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            # `import a.b.c` depends on a.b.c; `from a.b import c` on a.b.c when it is a module, else a.b.
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imported_modules(name, path, known) for name, path in found.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle, as the list of modules around it (first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt.startswith("sagent") and _is_package_of(nxt, node):
                continue  # a module importing its own package's __init__ for a sibling is not a circle
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if state.get(nxt) is None and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if state.get(node) is None and (cycle := visit(node)):
            return cycle
    return None


def _is_package_of(package: str, module: str) -> bool:
    return module.startswith(package + ".")


def test_no_import_circle_in_sagent() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_walker_finds_a_circle_through_a_lazy_import() -> None:
    graph = {"sagent.a": {"sagent.b"}, "sagent.b": {"sagent.c"}, "sagent.c": {"sagent.a"}, "sagent.d": set()}
    assert find_cycle(graph) == ["sagent.a", "sagent.b", "sagent.c", "sagent.a"]
    assert find_cycle({"sagent.a": {"sagent.b"}, "sagent.b": set()}) is None


def test_function_level_imports_count_and_type_checking_ones_do_not(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import sagent.events\n"
        "if TYPE_CHECKING:\n    from sagent.agent.agent import Agent\n"
        "else:\n    from sagent import types\n"
        "def f():\n    from sagent.repl import app\n"
    )
    found = imported_modules("sagent.m", source, set(modules()))
    assert found == {"sagent.events", "sagent.types", "sagent.repl.app"}


def test_no_module_over_600_lines() -> None:
    over = {}
    for path in modules().values():
        lines = len(path.read_text().splitlines())
        relative = path.relative_to(ROOT).as_posix()
        if lines > OVER_THE_LIMIT.get(relative, MAX_LINES):
            over[relative] = lines
    assert not over, f"modules over {MAX_LINES} lines (split them): {over}"


def test_the_allow_list_only_names_modules_still_over_the_limit() -> None:
    """So the list shrinks as modules are split, instead of keeping room for them to grow back."""
    for relative in OVER_THE_LIMIT:
        lines = len((ROOT / relative).read_text().splitlines())
        assert lines > MAX_LINES, f"{relative} has {lines} lines now: take it off OVER_THE_LIMIT"


# Which layer may not import which: the design's arrows (cli -> agent -> tools; providers -> types and
# events) read backwards. `sagent.repl` is a surface like the cli.
FORBIDDEN = {
    "sagent.providers": ("sagent.tools", "sagent.cli", "sagent.repl", "sagent.agent", "sagent.slack"),
    "sagent.tools": ("sagent.providers", "sagent.cli", "sagent.repl", "sagent.mcp", "sagent.slack"),
    "sagent.agent": ("sagent.cli", "sagent.repl", "sagent.mcp", "sagent.slack"),
    "sagent.mcp": ("sagent.cli", "sagent.repl", "sagent.slack"),
    "sagent.sandbox": ("sagent.agent", "sagent.providers", "sagent.cli", "sagent.repl", "sagent.mcp", "sagent.slack"),
    "sagent.events": ("sagent.agent", "sagent.tools", "sagent.providers", "sagent.cli", "sagent.repl", "sagent.slack"),
    "sagent.types": ("sagent.agent", "sagent.tools", "sagent.providers", "sagent.cli", "sagent.repl", "sagent.slack"),
}


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_dependencies_point_one_way() -> None:
    wrong = []
    for module, targets in sorted(import_graph().items()):
        for layer, banned in FORBIDDEN.items():
            if _within(module, layer):
                wrong += [f"{module} imports {t}" for t in sorted(targets) if any(_within(t, b) for b in banned)]
    assert not wrong, "imports against the layering:\n" + "\n".join(wrong)


# ------------------------------------------------------------------ extending sagent (CONTRIBUTING.md)

TOOL_MODULE = '''
from sagent.tools.base import AnyOrder, ToolContext


class Shout(AnyOrder):
    """A whole tool in one file: name, description, schema and what it does (the `Tool` protocol)."""

    name = "Shout"
    description = "Repeat the text in capitals."
    input_schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    async def run(self, arguments: dict, ctx: ToolContext) -> str:
        return arguments["text"].upper()
'''


def test_a_tool_in_one_file_is_offered_to_the_model_and_runs(tmp_path: Path, monkeypatch) -> None:
    import asyncio
    import importlib

    from sagent.agent.agent import Agent
    from sagent.events import ToolFinished
    from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn

    (tmp_path / "shout_tool.py").write_text(TOOL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    shout = importlib.import_module("shout_tool").Shout()
    model = ScriptedModel([tool_turn(("Shout", {"text": "hello"})), text_turn("done")])

    async def run() -> list[ToolFinished]:
        agent = Agent(model, tools=[shout], cwd=tmp_path)
        try:
            return [e async for e in agent.run("shout hello") if isinstance(e, ToolFinished)]
        finally:
            await agent.aclose()

    (finished,) = asyncio.run(run())
    assert finished.result.text == "HELLO" and not finished.result.is_error
    offered = [spec.name for spec in model.requests[0].tools]
    assert offered == ["Shout"]


def test_a_builtin_tool_is_one_entry_in_builtin_and_the_docs_check_asks_for_its_section(
    tmp_path: Path, monkeypatch
) -> None:
    """Added to BUILTIN, a tool is reachable by name (the CLI's --tools), and the docs test fails until
    docs/tools.md has its section."""
    import importlib

    import pytest

    import sagent.tools
    import tests.test_docs

    (tmp_path / "shout_tool.py").write_text(TOOL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    shout_class = importlib.import_module("shout_tool").Shout
    monkeypatch.setattr(sagent.tools, "BUILTIN", (*sagent.tools.BUILTIN, shout_class))
    monkeypatch.setattr(tests.test_docs, "BUILTIN", sagent.tools.BUILTIN)
    assert [type(t) for t in sagent.tools.tools_by_name(["Shout"])] == [shout_class]
    with pytest.raises(AssertionError, match="Shout"):
        tests.test_docs.test_every_builtin_tool_is_in_docs_tools()


def test_the_docs_check_catches_an_undocumented_flag(monkeypatch) -> None:
    """A flag is one `add_argument` in sagent/cli/flags.py and its line in docs/cli.md; without the line,
    tests/test_docs.py fails and names the flag."""
    import argparse

    import pytest

    import tests.test_docs
    from sagent.cli.main import build_parser

    def parser_with_a_new_flag() -> argparse.ArgumentParser:
        parser = build_parser()
        parser.add_argument("--shout", action="store_true", help="answer in capitals")
        return parser

    tests.test_docs.test_every_flag_in_help_is_in_docs_cli()  # today every flag is documented
    monkeypatch.setattr(tests.test_docs, "build_parser", parser_with_a_new_flag)
    with pytest.raises(AssertionError, match="--shout"):
        tests.test_docs.test_every_flag_in_help_is_in_docs_cli()
