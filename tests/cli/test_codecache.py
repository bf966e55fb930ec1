"""The methods `dataclasses` generates are compiled through a cache kept between runs of the command
(`sagent.lib.codecache`): the same classes as without it, nothing compiled twice, and a file that cannot
be trusted or read is ignored."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.cli.test_headless import env_for
from tests.fakes.anthropic_server import FakeAnthropic, text_response

# A process that builds a few dataclasses with the cache installed, then removes it, and reports what it saw.
PROBE = """
    import dataclasses, json, sys
    from sagent.lib import codecache

    compiled = []
    real_compile = compile
    def counting(*args, **kwargs):
        compiled.append(1)
        return real_compile(*args, **kwargs)
    import builtins
    builtins.compile = counting

    codecache.install()
    installed = "exec" in vars(dataclasses)

    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int
        y: int = 2
        tags: tuple[str, ...] = ()

    @dataclasses.dataclass(order=True)
    class Version:
        major: int
        minor: int = dataclasses.field(default=0, repr=False)

    codecache.remove()
    p = Point(1)
    try:
        p.x = 5
        frozen = False
    except dataclasses.FrozenInstanceError:
        frozen = True
    print(json.dumps({
        "installed": installed, "removed": "exec" not in vars(dataclasses), "compiled": len(compiled),
        "kept": len(codecache._codes),
        "repr": repr(p), "eq": p == Point(1, 2), "hash": hash(p) == hash(Point(1)), "frozen": frozen,
        "order": Version(1, 2) < Version(2), "version": repr(Version(3, 4)),
        "fields": [f.name for f in dataclasses.fields(Point)],
    }))
"""


def probe(tmp_path: Path) -> dict[str, object]:
    script = tmp_path / "probe.py"
    script.write_text(textwrap.dedent(PROBE))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def cache_file(tmp_path: Path) -> Path:
    [found] = (tmp_path / "cache" / "sagent").glob("dataclass-methods-*.marshal")
    return found


def test_classes_are_the_same_and_a_second_run_compiles_nothing(tmp_path: Path) -> None:
    first = probe(tmp_path)
    assert first["installed"] and first["removed"]
    assert first["kept"] == 0  # once saved, the process holds none of the cache
    assert first["compiled"] > 5  # each generated method compiled once
    assert cache_file(tmp_path).stat().st_mode & 0o777 == 0o600
    second = probe(tmp_path)
    assert second["compiled"] == 0  # every method's code came from the file
    for seen in (first, second):
        assert seen["repr"] == "Point(x=1, y=2, tags=())"
        assert seen["eq"] and seen["hash"] and seen["frozen"] and seen["order"]
        assert seen["version"] == "Version(major=3)"
        assert seen["fields"] == ["x", "y", "tags"]


def test_a_file_others_may_write_to_is_not_trusted(tmp_path: Path) -> None:
    probe(tmp_path)
    cache_file(tmp_path).chmod(0o666)
    assert probe(tmp_path)["compiled"] > 5  # compiled again, not taken from a file anyone could have changed


def test_a_damaged_file_is_ignored_and_replaced(tmp_path: Path) -> None:
    probe(tmp_path)
    file = cache_file(tmp_path)
    file.write_bytes(b"\x00not marshal data at all")
    seen = probe(tmp_path)
    assert seen["compiled"] > 5 and seen["repr"] == "Point(x=1, y=2, tags=())"
    assert isinstance(marshal.loads(file.read_bytes()), dict)  # written again, whole
    file.write_bytes(marshal.dumps({"not code": 42}))  # well-formed, but not code objects
    assert probe(tmp_path)["compiled"] > 5


def test_an_unwritable_cache_folder_costs_nothing_but_the_cache(tmp_path: Path) -> None:
    (tmp_path / "cache").write_text("a file where the folder should be")
    seen = probe(tmp_path)
    assert seen["repr"] == "Point(x=1, y=2, tags=())" and seen["removed"]


def test_the_command_keeps_the_cache_and_a_library_call_does_not(tmp_path: Path) -> None:
    with FakeAnthropic([text_response("one"), text_response("two")]) as fake:
        env = {**env_for(fake, tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
        library = (
            "import contextlib, io; from sagent.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['-p', 'hi', '--provider', 'anthropic', '--base-url', {fake.url!r}])\n"
        )
        done = subprocess.run([sys.executable, "-c", library], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert not (tmp_path / "cache" / "sagent").exists()
        command = [sys.executable, "-m", "sagent", "-p", "hi", "--provider", "anthropic", "--base-url", fake.url]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.strip() == "two", done.stderr
    codes = marshal.loads(cache_file(tmp_path).read_bytes())
    assert any("__dataclass_self__" in source or "def __init__" in source for source in codes)
