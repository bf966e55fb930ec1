"""The deferred import of an SDK: every name resolves as after a plain import, a request streams with it on,
and what it cannot defer exactly is imported as usual."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from sagent.lib import deferred_import
from tests.fakes import anthropic_server as anth
from tests.fakes import gemini_server as gem
from tests.fakes import openai_responses_server as resp

ROOT = Path(__file__).resolve().parents[2]


def run_names(mode: str, sdk: str, given: str = "") -> str:
    command = [sys.executable, "-m", "tests.providers.sdk_names", mode, sdk]
    done = subprocess.run(command, input=given, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("sdk", ["anthropic", "openai", "google.genai"])
def test_every_name_of_the_sdk_is_what_a_plain_import_gives(sdk: str) -> None:
    plain = run_names("plain", sdk)
    seen = json.loads(run_names("deferred", sdk, plain))
    # Name by name, in an order no import follows, before anything else loaded the rest ...
    assert seen["before"] == []
    # ... and after the rest loaded: the same modules, each with the same namespace, all of them plain.
    assert (seen["after"], seen["extra"], seen["left"], seen["plain_modules"]) == ([], [], [], [])
    if sdk != "google.genai":  # its `__init__` imports its client, which imports the rest: nothing waits
        assert seen["waiting"] and seen["loaded"] < seen["plain"] / 2, seen


PROVIDERS = {
    "anthropic": (anth.FakeAnthropic, anth.text_response, "ANTHROPIC_API_KEY"),
    "openai": (resp.FakeResponses, resp.responses_text, "OPENAI_API_KEY"),
    "google": (gem.FakeGemini, gem.gemini_text, "GEMINI_API_KEY"),
}


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_the_command_defers_the_sdk_and_its_request_streams(provider: str, tmp_path: Path) -> None:
    server, text, key = PROVIDERS[provider]
    with server([text("streamed through")]) as fake:
        flags = ["-p", "hi", "--provider", provider, "--base-url", fake.url, "--output-format", "json"]
        code = textwrap.dedent(f"""
            import json, sys
            from sagent.cli.main import main
            from sagent.lib import deferred_import
            code = main({flags!r}, command=True)
            sys.stdout.flush()
            roots = list(deferred_import._roots)
            deferred_import.finish(roots[0])  # what waited still loads after the request
            print(json.dumps([code, roots, deferred_import.pending(roots[0])]), file=sys.stderr)
        """)
        env = {"PATH": "/usr/bin:/bin", key: "test", "XDG_DATA_HOME": str(tmp_path), "HOME": str(tmp_path)}
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
        )
    assert '"streamed through"' in done.stdout and '"is_error": false' in done.stdout, done.stdout + done.stderr
    status, roots, left = json.loads(done.stderr.strip().splitlines()[-1])
    assert (status, left) == (0, [])
    assert roots == [{"anthropic": "anthropic", "openai": "openai", "google": "google.genai"}[provider]]


# --------------------------------------------------------------------------------------- a package of our own

FILES = {
    "__init__.py": """
        from . import pure
        from .pure import Thing as Thing
        from .used import Used
        USED_NAME = Used.__name__
        try:
            from . import broken
        except ImportError:
            BROKEN = True
    """,
    "pure/__init__.py": """
        from .thing import Thing as Thing
        from .other import Other as Other
        __all__ = ["Thing", "Other"]
    """,
    "pure/thing.py": "class Thing: pass\n",
    "pure/other.py": "class Other: pass\n",
    "used.py": "class Used: pass\n",
    "broken/__init__.py": "from .part import X\n",
    "broken/part.py": "import no_such_module_anywhere\nX = 1\n",
    "lenient/__init__.py": "from .part import Z as Z\nfrom .fine import W as W\n",
    "lenient/part.py": "import no_such_module_anywhere\nZ = 1\n",
    "lenient/fine.py": "W = 2\n",
    "starred/__init__.py": "from .mixed import *\n",
    "starred/mixed.py": "import os\nif os.sep:\n    Y = 1\n",
    "hooked/__init__.py": "from .thing import Thing\ndef __getattr__(name):\n    raise AttributeError(name)\n",
    "hooked/thing.py": "class Thing: pass\n",
}


@pytest.fixture
def package(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """A package of `FILES` under a name of its own, deferred; its modules are forgotten afterwards."""
    name = f"fakesdk_{request.node.name.replace('[', '_').replace(']', '_').replace('-', '_')}"[:60]
    for path, text in FILES.items():
        file = tmp_path / name / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(textwrap.dedent(text))
    sys.path.insert(0, str(tmp_path))
    deferred_import.defer(name)
    try:
        yield name
    finally:
        sys.path.remove(str(tmp_path))
        deferred_import._roots.remove(name)
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]
            deferred_import._pending.pop(module, None)


def test_a_name_runs_only_the_import_that_binds_it_and_finish_runs_the_rest(package: str) -> None:
    top = __import__(package)
    pure = sys.modules[f"{package}.pure"]
    assert f"{package}.pure.thing" not in sys.modules and type(pure) is not types.ModuleType
    assert top.Thing.__name__ == "Thing" and top.Thing is sys.modules[f"{package}.pure.thing"].Thing
    assert f"{package}.pure.other" not in sys.modules
    assert deferred_import.pending(package) == [f"{package}.pure"]
    deferred_import.finish(package)
    assert pure.Other is sys.modules[f"{package}.pure.other"].Other
    assert type(pure) is types.ModuleType and type(pure.__loader__).__name__ == "SourceFileLoader"
    assert deferred_import.pending(package) == []


def test_what_the_module_reads_runs_on_import_and_a_guarded_import_fails_where_it_did(package: str) -> None:
    top = __import__(package)
    assert top.USED_NAME == "Used"  # read by the next statement: imported at once
    # Imported inside a try: a package that waited would have hidden the failure the package acts on.
    assert top.BROKEN is True and f"{package}.broken" not in sys.modules


def test_a_waiting_import_that_fails_raises_where_its_name_is_asked_for(package: str) -> None:
    lenient = __import__(f"{package}.lenient", fromlist=["W"])  # a plain import would have failed here
    assert lenient.W == 2
    with pytest.raises(ModuleNotFoundError, match="no_such_module_anywhere"):
        _ = lenient.Z
    with pytest.raises(ModuleNotFoundError):  # again, as often as it is asked for
        deferred_import.finish(package)


def test_a_star_import_of_unknown_names_and_a_module_getattr_import_as_usual(package: str) -> None:
    starred = __import__(f"{package}.starred", fromlist=["Y"])
    hooked = __import__(f"{package}.hooked", fromlist=["Thing"])
    assert starred.Y == 1 and type(starred) is types.ModuleType
    assert hooked.Thing.__name__ == "Thing" and type(hooked) is types.ModuleType


def test_a_star_import_and_dir_see_every_name(package: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {package}.pure import *", namespace)
    assert {"Thing", "Other"} <= set(namespace)
    pure = sys.modules[f"{package}.pure"]
    assert {"Thing", "Other", "thing", "other"} <= set(dir(pure)) and type(pure) is types.ModuleType


def test_threads_asking_at_once_all_get_the_same_objects(package: str) -> None:
    pure = __import__(f"{package}.pure", fromlist=["pure"])
    seen: list[tuple[object, object]] = []
    start = threading.Barrier(9)

    def ask() -> None:
        start.wait()
        seen.append((pure.Thing, pure.Other))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    start.wait()
    deferred_import.finish(package)
    for thread in threads:
        thread.join()
    assert set(seen) == {(sys.modules[f"{package}.pure.thing"].Thing, sys.modules[f"{package}.pure.other"].Other)}


def test_the_rest_loads_while_the_event_loop_waits_not_while_the_run_works(tmp_path: Path) -> None:
    (tmp_path / "idlesdk").mkdir()
    (tmp_path / "idlesdk" / "__init__.py").write_text("from .heavy import Heavy as Heavy\n")
    (tmp_path / "idlesdk" / "heavy.py").write_text("class Heavy: pass\n")
    code = textwrap.dedent("""
        import asyncio, sys, time
        from sagent.lib import deferred_import
        deferred_import.defer("idlesdk")
        import idlesdk
        deferred_import.finish_in_background()
        end = time.monotonic() + 0.4
        while time.monotonic() < end:  # busy: no event loop waiting
            pass
        busy = "idlesdk.heavy" in sys.modules
        asyncio.run(asyncio.sleep(0.5))  # the loop waits on its selector
        print(busy, "idlesdk.heavy" in sys.modules, deferred_import.pending("idlesdk"))
    """)
    env_path = f"{tmp_path}:{ROOT}"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": env_path}, timeout=60
    )
    assert done.stdout.split() == ["False", "True", "[]"], done.stderr
