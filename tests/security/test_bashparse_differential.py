"""The parser against Bash itself: generated lines (quotes, escapes, substitutions, here-documents,
wrappers, line continuations, comments) run in real Bash with stub programs that log their name; every
stub that ran must be among the commands `parse_line` found, or the line must be marked as hiding
something (so no rule can allow it, and a deny rule asks). The stubs only append to a log in tmp_path."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from sagent.permissions.bash import parse_line

NAMES = ["zz1", "zz2", "zz3", "zz4", "zz5"]
SEPARATORS = ["; ", " && ", " || ", " | ", " & ", "\n", " |& "]


def simple(rng: random.Random) -> str:
    n = rng.choice(NAMES)
    forms = [
        n, f"'{n}'", f'"{n}"', f"{n[0]}\\{n[1:]}", f"{n[0]}''{n[1:]}", f"$'{n}'", f"{n} a#b", f"{n} #c",
        f"env {n}", f"time {n}", f"A=1 {n}", f"{n} > out", f"{n} 2>&1", f"timeout 5 {n}", f"nice -n 1 {n}",
        f"{{z,}}{n[1:]}", f"$'\\x7a'{n[1:]}", f"env -u FOO -- {n}", f"timeout -k 1 5 {n}", f"nohup {n}",
        f"setsid -w {n}", f"stdbuf -o0 {n}", f"echo a | xargs -n1 {n}", f"find . -maxdepth 0 -exec {n} {{}} \\;",
        f"flock lockfile {n}", f"flock lockfile -c '{n}'", f"sh -c '{n}'", f"command {n}", f"exec {n}",
        f"/usr/bin/env {n}", f"time -p {n}", f"builtin command -- {n}", f"script -qc '{n}' /dev/null",
    ]  # fmt: skip
    return rng.choice(forms)


def line_of(rng: random.Random, depth: int = 0) -> str:
    command = simple(rng)
    if depth >= 3:
        return command
    inner = line_of(rng, depth + 1)
    forms = [
        f"echo $({inner})", f"echo `{inner}`", f'echo "$({inner})"', f"( {inner} )", f"{{ {inner}; }}",
        f"if {inner}; then {simple(rng)}; fi", f"case x in x) {inner};; esac", f"f{depth}() {{ {inner}; }}; f{depth}",
        f"cat <<EOF\n$({inner})\nEOF", f"cat <<-EOF\n\t`{inner}`\n\tEOF", f"echo $(( $({inner}) ))",
        f"echo x | {inner}", f"{inner} \\\n; {simple(rng)}", f'cat <<< "$({inner})"', f"echo ${{x:-$({inner})}}",
        f"[[ x == $({inner}) ]]", f"for i in 1; do {inner}; done", f"echo a\\;{inner}", f"echo a\r{inner}",
        f"echo `echo \\`{inner}\\``", f"echo $'a\\'; {inner}'", f'echo "a\\"; {inner}"', f"echo x # {inner}",
        f"echo '{inner}' | bash" if "'" not in inner else inner, f"bash -c '{inner}'" if "'" not in inner else inner,
        f"eval '{inner}'" if "'" not in inner else inner, command,
    ]  # fmt: skip
    return rng.choice(forms)


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("stubs")
    for name in NAMES:
        stub = folder / name
        stub.write_text(f'#!/bin/sh\necho {name} >> "$ZZLOG"\n')
        stub.chmod(0o755)
    return folder


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("seed", range(4))
def test_every_program_bash_runs_is_one_the_parser_found(seed: int, stubs: Path, tmp_path: Path) -> None:
    rng = random.Random(seed)
    environment = {**os.environ, "PATH": f"{stubs}:/usr/bin:/bin"}
    missed = []
    for k in range(50):
        line = line_of(rng)
        for _ in range(rng.randint(0, 2)):
            line += rng.choice(SEPARATORS) + line_of(rng)
        log = tmp_path / f"ran-{k}"
        try:
            subprocess.run(
                ["bash", "-c", line + "\nwait"],
                cwd=tmp_path,
                env={**environment, "ZZLOG": str(log)},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=10,
            )
        except subprocess.TimeoutExpired:
            continue
        ran = set(log.read_text().split()) if log.exists() else set()
        parsed = parse_line(line)
        found = {os.path.basename(c.words[0]) for c in parsed.commands if c.words and c.static[0]}
        found |= set(parsed.loose_words)
        if ran - found and not parsed.hidden:
            missed.append((line, sorted(ran - found)))
    assert not missed, missed
