"""`@path` mentions, pasted paths, the fuzzy file match and the attachments they build, hostile files
included: nothing may hang, crash or read more than its cap."""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sagent import attachments
from sagent.attachments import (
    AttachmentError,
    attach,
    attachment_label,
    attachment_labels,
    is_shell_context,
    shell_context,
    typed_text,
)
from sagent.providers.llamacpp import without_images
from sagent.repl import file_index
from sagent.repl.file_index import FileIndex, fuzzy_rank, list_files
from sagent.repl.mentions import MentionCompleter, compose, find_mentions, mention_text, pasted_paths
from sagent.repl.render import Renderer, Settings
from sagent.types import ImagePart, ModelRequest, TextPart, ToolResult, UserMessage

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(17)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    (root / "README.md").write_text("# Demo\n")
    (root / "my notes.md").write_text("remember the milk\n")
    (root / "shot.png").write_bytes(PNG)
    return root


# ------------------------------------------------------------------------------------------ parsing


def test_mentions_plain_quoted_and_escaped_but_not_emails() -> None:
    text = 'see @src/app.py and @"my notes.md", @my\\ notes.md; mail bob@example.com or @ alone'
    assert [m.path for m in find_mentions(text)] == ["src/app.py", "my notes.md", "my notes.md;"]
    first = find_mentions(text)[0]
    assert text[first.start : first.end] == "@src/app.py"


@pytest.mark.parametrize("path", ["a.py", "my notes.md", 'odd"name.txt', "tab\there", "back\\slash"])
def test_a_mention_written_for_any_path_reads_back_as_that_path(path: str) -> None:
    assert [m.path for m in find_mentions(f"look at {mention_text(path)} now")] == [path]


# ------------------------------------------------------------------------------------------ matching


def test_fuzzy_ranking_prefers_file_names_runs_and_short_paths() -> None:
    paths = ["docs/readme-old/x.txt", "README.md", "src/app.py", "a/p/p/y.txt", "tests/test_app.py", "src/"]
    assert fuzzy_rank("rdme", paths)[0] == "README.md"
    assert fuzzy_rank("appy", paths)[:2] == ["src/app.py", "tests/test_app.py"]
    assert fuzzy_rank("sapp", paths)[0] == "src/app.py"  # s(rc)/app, not te(s)t_app
    assert fuzzy_rank("tapp", paths)[0] == "tests/test_app.py"
    assert fuzzy_rank("zzz", paths) == []
    assert fuzzy_rank("src/", paths)[0] == "src/"
    assert len(fuzzy_rank("", paths, limit=3)) == 3


def test_the_index_lists_files_and_their_folders(project: Path) -> None:
    paths = FileIndex(project).paths()
    assert {"src/app.py", "README.md", "my notes.md", "src/"} <= set(paths)


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")
def test_ripgrep_listing_honours_gitignore(project: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text("build/\n")
    (project / "build").mkdir()
    (project / "build" / "out.js").write_text("x")
    listed = list_files(project)
    assert "src/app.py" in listed and not any(p.startswith("build/") for p in listed)


def test_the_walk_skips_generated_folders_and_stops_at_its_cap(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_index.shutil, "which", lambda name: None)  # no ripgrep: the walk
    (project / "node_modules" / "x").mkdir(parents=True)
    (project / "node_modules" / "x" / "index.js").write_text("x")
    assert "src/app.py" in list_files(project) and not any("node_modules" in p for p in list_files(project))
    for n in range(50):
        (project / f"f{n}.txt").write_text("")
    monkeypatch.setattr(file_index, "MAX_FILES", 10)
    assert len(list_files(project)) == 10


def test_completion_offers_fuzzy_matches_quoted_when_needed(project: Path) -> None:
    completer = MentionCompleter(lambda: project)
    offered = list(completer.completions("explain @apy"))
    assert offered[0].text == "@src/app.py " and offered[0].start_position == -len("@apy")
    assert next(c.text for c in completer.completions("@notes")) == '@"my notes.md" '
    folder = [c for c in completer.completions("@sr") if c.text.endswith("/")]
    assert folder and folder[0].text == "@src/"  # no space: the next characters go on into the folder
    assert list(completer.completions("mail me@exa")) == []
    assert list(completer.completions("@app.py done")) == []


# ------------------------------------------------------------------------------------ attachments


def test_a_text_file_is_attached_in_a_delimited_block(project: Path) -> None:
    found = attach("src/app.py", project)
    (block,) = found.parts
    assert isinstance(block, TextPart)
    assert block.text.startswith('<file path="src/app.py" lines="2">\n') and block.text.endswith("\n</file>")
    assert "return 42" in block.text and found.label == "src/app.py (2 lines)" and not found.note
    assert attachment_label(block) == "@src/app.py"


def test_an_image_is_attached_as_an_image_part_named_by_the_text_before_it(project: Path) -> None:
    header, image = attach(project / "shot.png", project).parts
    assert isinstance(image, ImagePart) and image.media_type == "image/png"
    assert base64.b64decode(image.data) == PNG
    assert attachment_label(header) == "@shot.png"


def test_a_huge_text_file_is_cut_with_a_note_and_read_only_to_the_cap(project: Path) -> None:
    big = project / "big.log"
    big.write_text("".join(f"line {n}\n" for n in range(300_000)))  # about 3.4 MB
    found = attach(big, project)
    (block,) = found.parts
    assert isinstance(block, TextPart)
    assert len(block.text) < attachments.MAX_TEXT_BYTES + 1000
    assert "line 1999\n" in block.text and "line 2000\n" not in block.text
    assert "only its first 2,000 lines" in found.note and "the Read tool gives the rest" in block.text


def test_one_huge_line_is_cut_at_the_byte_cap(project: Path) -> None:
    (project / "min.js").write_text("x" * 1_000_000)
    found = attach("min.js", project)
    assert "bytes) are attached (1,000,000 bytes in all)" in found.note
    assert len(found.parts[0].text) < attachments.MAX_TEXT_BYTES + 1000  # type: ignore[union-attr]


def test_a_folder_is_attached_as_its_listing(project: Path) -> None:
    found = attach("src", project)
    assert found.parts[0].text.startswith('<directory path="src">\napp.py\n')  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: None, "no such file"),
        (lambda p: p.write_bytes(b"\x7fELF\x00\x01\x02" * 100), "is a binary file"),
        (lambda p: p.write_bytes(b"%PDF-1.7\n..."), "is a PDF"),
        (lambda p: os.mkfifo(p), "named pipe (FIFO)"),
        (lambda p: p.symlink_to(p), "too many levels of symbolic links"),
        (lambda p: p.write_bytes(PNG + bytes(attachments.MAX_IMAGE_BYTES)), "image too large"),
    ],
)
def test_hostile_paths_are_refused_in_one_line(project: Path, make, said: str) -> None:
    target = project / "thing"
    make(target)
    with pytest.raises(AttachmentError) as refused:
        attach("thing", project)
    assert said in str(refused.value) and "\n" not in str(refused.value)
    assert refused.value.missing == (said == "no such file")


def test_devices_nul_bytes_and_long_names_are_refused(project: Path) -> None:
    with pytest.raises(AttachmentError, match="character device"):
        attach("/dev/zero", project)
    with pytest.raises(AttachmentError):
        attach("bad\0name", project)
    with pytest.raises(AttachmentError, match="too long"):
        attach("x" * 5000, project)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_refused(project: Path) -> None:
    secret = project / "secret.txt"
    secret.write_text("s")
    secret.chmod(0)
    with pytest.raises(AttachmentError, match="permission denied"):
        attach(secret, project)


# ------------------------------------------------------------------------------------ composing


def test_a_message_keeps_the_typed_text_first_and_attaches_each_file_once(project: Path) -> None:
    context = (shell_context("git status", "clean"),)
    text = "compare @src/app.py with @README.md, then @src/app.py again and @alice"
    composed = compose(text, project, context)
    message = composed.message
    assert message.content[0] == TextPart(text) and message.content[1] == context[0]
    labels = [attachment_label(p) for p in message.content]
    assert labels == [None, "$ git status", "@src/app.py", "@README.md"]  # the comma is not part of the path
    assert typed_text(message) == text
    assert composed.notes == ("@alice: no such file or folder; sent as plain text",)


def test_an_absolute_image_path_is_attached_without_an_at(project: Path) -> None:
    image = project / "shot.png"
    composed = compose(f"what is in {str(image)!r} and /no/such.png", project)
    assert [type(p).__name__ for p in composed.message.content] == ["TextPart", "TextPart", "ImagePart"]
    assert not composed.notes
    spaced = project / "Screen Shot 1.png"
    spaced.write_bytes(PNG)
    typed = "what is " + str(spaced).replace(" ", "\\ ")  # a terminal without bracketed paste types it so
    assert isinstance(compose(typed, project).message.content[-1], ImagePart)


def test_a_mention_of_something_unattachable_says_why(project: Path) -> None:
    os.mkfifo(project / "pipe")
    composed = compose("read @pipe", project)
    assert len(composed.message.content) == 1
    (note,) = composed.notes
    assert note == "pipe is a named pipe (FIFO): only regular files and directories can be attached; not attached"


def test_pasted_paths_become_mentions_only_when_they_are_all_paths(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "Screen Shot 1.png"
    outside.write_bytes(PNG)
    escaped = str(outside).replace(" ", "\\ ")
    assert pasted_paths(escaped, project) == [str(outside)]
    assert pasted_paths(f"'{outside}'", project) == [str(outside)]
    assert pasted_paths(f"file://{str(outside).replace(' ', '%20')}", project) == [str(outside)]
    assert pasted_paths(f'"{project / "my notes.md"}" {project / "shot.png"}', project) == ["my notes.md", "shot.png"]
    assert pasted_paths("/no/such/file.png", project) is None
    assert pasted_paths("README.md", project) is None  # a word, not a pasted path
    assert pasted_paths(f"look at {project / 'shot.png'}", project) is None
    assert pasted_paths("it's", project) is None


# ---------------------------------------------------------------------------------- showing, models


def test_the_screen_shows_the_typed_text_and_names_the_attachments_not_their_content(project: Path) -> None:
    message = compose("fix @src/app.py", project, (shell_context("make", "ok"),)).message
    block = Renderer(Settings(color=False)).user_block(message)
    assert block == "› fix @src/app.py\n  ↳ $ make\n  ↳ @src/app.py"
    assert "return 42" not in block


def test_text_typed_to_look_like_a_block_is_still_shown_as_typed(project: Path) -> None:
    message = compose('<file path="x">', project).message
    assert typed_text(message) == '<file path="x">'
    assert Renderer(Settings(color=False)).user_block(message) == '› <file path="x">'


def test_shell_context_names_the_command_and_carries_its_output() -> None:
    part = shell_context('grep "x" <a>', "a\nb\n")
    assert is_shell_context(part) and attachment_label(part) == '$ grep "x" <a>'
    assert part.text.endswith("a\nb\n</shell>")
    assert not is_shell_context(TextPart("$ ls"))


def test_the_local_model_reads_a_note_in_place_of_an_image() -> None:
    image = ImagePart("aW1n", "image/png")
    request = ModelRequest("s", (UserMessage((TextPart("see"), image)), ToolResult("c", "Read", (image,))))
    stripped = without_images(request)
    for message in stripped.messages:
        assert not any(isinstance(p, ImagePart) for p in message.content)  # type: ignore[union-attr]
    assert "cannot see images" in stripped.messages[0].content[1].text  # type: ignore[union-attr]
    plain = ModelRequest("s", (UserMessage.of("hi"),))
    assert without_images(plain) is plain


# ----------------------------------------------------------------------------------- the REPL's flow


async def test_a_bang_command_goes_with_the_next_message_once_and_help_lists_both(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sagent.agent.agent import Agent
    from sagent.providers.scripted import ScriptedModel, text_turn
    from sagent.repl.app import Repl
    from sagent.repl.commands import run_command

    model = ScriptedModel([text_turn("seen"), text_turn("again")])
    agent = Agent(model, cwd=project)
    repl = Repl(agent, new_agent=lambda path=None: agent, settings=Settings(width=100, color=False))
    repl.submit("!printf 'one\\ntwo\\n'; exit 3")
    assert repl.state.shell is not None
    await repl.state.shell
    shown = capsys.readouterr().out
    assert "! printf 'one\\ntwo\\n'; exit 3\n  │ one\n  │ two\n  │ exit code 3\n" in shown
    repl.submit("and @README.md?")
    assert repl.task is not None
    await repl.task
    sent = model.requests[0].messages[-1]
    assert isinstance(sent, UserMessage) and [attachment_label(p) for p in sent.content] == [
        None,
        "$ printf 'one\\ntwo\\n'; exit 3",
        "@README.md",
    ]
    assert "one\ntwo\nexit code 3" in sent.content[1].text  # type: ignore[union-attr]
    repl.submit("once more")
    await repl.task
    assert len(model.requests[1].messages[-1].content) == 1  # the output went with one message only
    await run_command(repl, "/help")
    assert re.search(r"\n  !command +run a shell command", capsys.readouterr().out)
    await agent.aclose()


def test_a_huge_message_or_paste_is_handled_at_c_speed(project: Path) -> None:
    log = "error: it broke 'badly\n" * 50_000 + f"see {project / 'shot.png'}"  # 1.2 MB with an open quote
    composed = compose(log, project)
    assert [type(p).__name__ for p in composed.message.content] == ["TextPart", "TextPart", "ImagePart"]
    assert pasted_paths("/" + "x" * 100_000, project) is None


async def test_an_image_for_a_model_that_cannot_read_images_goes_as_a_note(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sagent.agent.agent import Agent
    from sagent.providers.scripted import ScriptedModel, text_turn
    from sagent.repl.app import Repl

    model = ScriptedModel([text_turn("no eyes")], accepts_images=False)
    agent = Agent(model, cwd=project)
    repl = Repl(agent, new_agent=lambda path=None: agent, settings=Settings(width=100, color=False))
    repl.submit("what is @shot.png")
    assert repl.task is not None
    await repl.task
    sent = model.requests[0].messages[-1]
    assert not any(isinstance(p, ImagePart) for p in sent.content)  # type: ignore[union-attr]
    assert "cannot read images" in sent.content[-1].text  # type: ignore[union-attr]
    assert "does not read images: they are sent as a note; /model switches" in capsys.readouterr().out
    await agent.aclose()


async def test_a_file_a_deny_rule_keeps_from_read_is_not_attached(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sagent.agent.agent import Agent
    from sagent.permissions.policy import Permissions
    from sagent.providers.scripted import ScriptedModel, text_turn
    from sagent.repl.app import Repl

    (project / ".env").write_text("API_KEY=secret\n")
    model = ScriptedModel([text_turn("ok")])
    policy = Permissions.build(deny=["Read(./.env)"], cwd=project)
    agent = Agent(model, cwd=project, permissions=policy)
    repl = Repl(agent, new_agent=lambda path=None: agent, settings=Settings(width=100, color=False))
    repl.submit("check @.env and @README.md")
    assert repl.task is not None
    await repl.task
    sent = model.requests[0].messages[-1]
    assert "secret" not in "".join(p.text for p in sent.content if isinstance(p, TextPart))  # type: ignore[union-attr]
    assert attachment_labels(sent) == ["@README.md"]  # type: ignore[arg-type]
    assert ".env (1 line): a deny rule forbids it: Read(./.env)" in capsys.readouterr().out
    await agent.aclose()
