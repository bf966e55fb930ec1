"""The docs stay true to the code: every flag and every built-in tool is documented, every Python sample
in docs/ runs, and every relative link points at a file that exists."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from sagent.cli.main import build_parser
from sagent.tools import BUILTIN, BY_CATALOG

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
# A sample after this line talks to a provider: tests/test_library_surface.py runs it against the fake server.
SERVER_SAMPLE = "<!-- runs against the fake Anthropic server in tests/test_library_surface.py -->\n"


def samples() -> list[tuple[str, int, str]]:
    found = []
    for page in PAGES:
        text = page.read_text()
        for match in FENCE.finditer(text):
            if text.endswith(SERVER_SAMPLE, 0, match.start()):
                continue
            line = text.count("\n", 0, match.start()) + 2
            found.append((page.name, line, match.group(1)))
    return found


def test_every_flag_in_help_is_in_docs_cli() -> None:
    cli = (DOCS / "cli.md").read_text()
    flags = [o for action in build_parser()._actions for o in action.option_strings]
    assert "--allow-host" in flags and "-p" in flags
    missing = [flag for flag in flags if f"`{flag}" not in cli]
    assert missing == []


def test_every_builtin_tool_is_in_docs_tools() -> None:
    tools = (DOCS / "tools.md").read_text()
    missing = [cls.name for cls in (*BUILTIN, *BY_CATALOG) if f"### {cls.name}\n" not in tools]
    assert missing == []


def test_there_are_samples_to_run() -> None:
    assert len(samples()) >= 10
    assert {name for name, _, _ in samples()} >= {"library.md", "tutorial.md", "fleets.md", "concepts.md"}


@pytest.mark.parametrize(("page", "line", "code"), samples(), ids=[f"{p}:{n}" for p, n, _ in samples()])
def test_sample_runs(page: str, line: int, code: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    for key in [k for k in os.environ if k.endswith("_API_KEY")]:
        monkeypatch.delenv(key)
    exec(compile(code, f"{DOCS / page}:{line}", "exec"), {"__name__": "__main__"})


def test_relative_links_point_at_files() -> None:
    broken = []
    for page in [*PAGES, ROOT / "README.md"]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" not in target and not (page.parent / target).exists():
                broken.append(f"{page.name}: {target}")
    assert broken == []


def test_every_repl_command_and_event_is_documented() -> None:
    import typing

    from sagent.events import Event
    from sagent.repl.commands import COMMANDS

    repl = (DOCS / "repl.md").read_text()
    assert [name for name in COMMANDS if f"`/{name}" not in repl] == []
    concepts = (DOCS / "concepts.md").read_text()
    assert [e.__name__ for e in typing.get_args(Event) if f"`{e.__name__}`" not in concepts] == []
