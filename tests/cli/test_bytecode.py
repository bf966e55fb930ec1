"""Where Python writes no bytecode, the command keeps the bytecode of sagent's own modules in the user's
cache (`sagent.lib.bytecode`): the next run compiles none of them, nothing is written beside the sources,
and a file that cannot be trusted is ignored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A command's start-up that imports part of sagent, then reports which of its sources it compiled.
PROBE = """
    import builtins, json, sys
    compiled = []
    real_compile = builtins.compile
    def counting(source, filename, *args, **kwargs):
        if isinstance(filename, str) and ("/sagent/" in filename or "/libraries/" in filename):
            compiled.append(filename)
        return real_compile(source, filename, *args, **kwargs)
    builtins.compile = counting

    from sagent.lib import codecache, startup
    startup.pause()
    if sys.argv[1] == "ephemeral":
        codecache.save_nothing()
    import sagent.agent.compaction, sagent.tools.search
    if len(sys.argv) > 2:  # a library the command imports, from a folder without bytecode beside it
        sys.path.insert(0, sys.argv[2])
        import probe_library.part
    startup.done("main")
    print(json.dumps(compiled))
"""


def probe(cache: Path, mode: str = "run", libraries: Path | None = None) -> list[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(cache)}
    env.pop("PYTHONPYCACHEPREFIX", None)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROBE), mode, *([str(libraries)] if libraries else [])],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [name for name in json.loads(done.stdout) if not name.endswith("/sagent/__init__.py")]


def kept(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.pyc"))


def test_the_next_run_compiles_none_of_the_modules_the_first_compiled(tmp_path: Path) -> None:
    first = probe(tmp_path)
    compaction = str(ROOT / "sagent" / "agent" / "compaction.py")
    if compaction not in first:  # this checkout has its bytecode beside the sources: nothing to keep
        assert not kept(tmp_path)
        return
    assert any(path.name == "compaction.pyc" for path in kept(tmp_path))
    assert not (ROOT / "sagent" / "agent" / "__pycache__").exists() or not list(
        (ROOT / "sagent" / "agent" / "__pycache__").glob("compaction.*.pyc")
    )  # nothing beside the sources
    # Those imported before the command's start-up begins (sagent.lib's few) are compiled in every run.
    assert [name for name in probe(tmp_path) if "/sagent/lib/" not in name] == []


def test_a_file_others_may_write_is_compiled_again_and_an_ephemeral_run_keeps_nothing(tmp_path: Path) -> None:
    if str(ROOT / "sagent" / "agent" / "compaction.py") not in probe(tmp_path / "ephemeral", "ephemeral"):
        return  # bytecode beside the sources: nothing is compiled here
    assert not kept(tmp_path / "ephemeral")
    probe(tmp_path / "cache")
    for path in kept(tmp_path / "cache"):
        path.chmod(0o666)
    assert str(ROOT / "sagent" / "agent" / "compaction.py") in probe(tmp_path / "cache")


def test_the_libraries_the_command_imports_are_kept_too(tmp_path: Path) -> None:
    libraries = tmp_path / "libraries"
    (libraries / "probe_library").mkdir(parents=True)
    (libraries / "probe_library" / "__init__.py").write_text("VALUE = 1\n")
    (libraries / "probe_library" / "part.py").write_text("def twice(x):\n    return 2 * x\n")
    cache = tmp_path / "cache"
    first = [name for name in probe(cache, libraries=libraries) if "/libraries/" in name]
    assert sorted(Path(name).name for name in first) == ["__init__.py", "part.py"]
    assert [name for name in probe(cache, libraries=libraries) if "/libraries/" in name] == []
    assert not list(libraries.rglob("*.pyc"))  # nothing beside the sources
