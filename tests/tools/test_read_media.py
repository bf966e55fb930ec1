"""Read on PDFs (text by page, through pypdfium2) and images (shown to models that accept them)."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.runtime import accepts_images
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools import Read
from sagent.tools.base import ToolContext, ToolError
from sagent.tools.files import MAX_IMAGE_BYTES
from sagent.types import ImagePart, ToolResult
from tests.fakes.pdf import make_pdf


def png(width: int = 2, height: int = 2) -> bytes:
    """A real PNG: red pixels, as any image library would write them."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\0" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


async def test_read_gives_the_text_of_pdf_pages_with_page_numbers(tmp_path: Path) -> None:
    pages = [f"Chapter {n}\nThe body of chapter {n}." for n in range(1, 6)]
    (tmp_path / "book.pdf").write_bytes(make_pdf(pages))
    ctx = ToolContext(cwd=tmp_path)
    whole = await Read().run({"path": "book.pdf"}, ctx)
    assert whole.startswith(f"{tmp_path / 'book.pdf'}: PDF, 5 pages\n--- page 1 of 5 ---\nChapter 1\n")
    assert "--- page 5 of 5 ---\nChapter 5\nThe body of chapter 5." in whole
    some = await Read().run({"path": "book.pdf", "pages": "2-3,5"}, ctx)
    assert [line for line in some.splitlines() if line.startswith("---")] == [
        "--- page 2 of 5 ---",
        "--- page 3 of 5 ---",
        "--- page 5 of 5 ---",
    ]
    assert "--- page 4 of 5 ---" in await Read().run({"path": "book.pdf", "pages": "4-"}, ctx)
    with pytest.raises(ToolError, match="page 9 is past the end: the PDF has 5 pages"):
        await Read().run({"path": "book.pdf", "pages": "9"}, ctx)
    with pytest.raises(ToolError, match="pages must look like"):
        await Read().run({"path": "book.pdf", "pages": "first"}, ctx)
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.7\nnot really a pdf")
    with pytest.raises(ToolError, match="cannot open the PDF"):
        await Read().run({"path": "broken.pdf"}, ctx)


async def test_a_long_pdf_is_read_a_page_range_at_a_time(tmp_path: Path) -> None:
    line = "word " * 15
    pages = ["\n".join(f"page {n} line {i} {line}" for i in range(45)) for n in range(1, 13)]
    (tmp_path / "long.pdf").write_bytes(make_pdf(pages))
    ctx = ToolContext(cwd=tmp_path)
    first = await Read().run({"path": "long.pdf"}, ctx)
    assert len(first) < 30_000
    note = first.splitlines()[-1]
    assert note.startswith("[") and "more page(s) not shown: ask for pages=" in note
    rest = note.split('pages="')[1].split('"')[0]
    shown = first.count("--- page ")
    assert rest == f"{shown + 1}-12"
    second = await Read().run({"path": "long.pdf", "pages": rest}, ctx)
    assert f"--- page {shown + 1} of 12 ---\npage {shown + 1} line 0" in second


async def test_an_image_is_shown_to_a_model_that_accepts_images(tmp_path: Path) -> None:
    data = png(3, 2)
    (tmp_path / "chart.png").write_bytes(data)
    model = ScriptedModel([tool_turn(("Read", {"path": "chart.png"})), text_turn("A red square.")])
    agent = Agent(model, tools=[Read()], cwd=tmp_path)
    await agent.ask("what is in chart.png?")
    result = next(m for m in model.requests[1].messages if isinstance(m, ToolResult))
    image = next(p for p in result.content if isinstance(p, ImagePart))
    assert image.media_type == "image/png" and base64.b64decode(image.data) == data
    assert f"{tmp_path / 'chart.png'}: PNG image, {len(data):,} bytes" in result.text


async def test_an_image_is_described_as_unsupported_to_a_text_only_model(tmp_path: Path) -> None:
    (tmp_path / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0" + b"\0" * 100)
    model = ScriptedModel(
        [tool_turn(("Read", {"path": "photo.jpg"})), text_turn("I cannot see it.")], accepts_images=False
    )
    agent = Agent(model, tools=[Read()], cwd=tmp_path)
    await agent.ask("what is in photo.jpg?")
    result = next(m for m in model.requests[1].messages if isinstance(m, ToolResult))
    assert not any(isinstance(p, ImagePart) for p in result.content) and not result.is_error
    assert "JPEG image, 104 bytes" in result.text and "does not accept images" in result.text


async def test_images_too_large_to_send_are_refused(tmp_path: Path) -> None:
    (tmp_path / "huge.png").write_bytes(png() + b"\0" * MAX_IMAGE_BYTES)
    with pytest.raises(ToolError, match="too large to send"):
        await Read().run({"path": "huge.png"}, ToolContext(cwd=tmp_path))


def test_which_models_accept_images() -> None:
    class Named:
        provider = "any"

        def __init__(self, name: str) -> None:
            self.name = name

    assert accepts_images(Named("claude-sonnet-4-6")) and accepts_images(Named("gpt-5.4"))
    assert not accepts_images(Named("kimi-k2-thinking"))  # the catalog says text only
    assert not accepts_images(Named("smollm2"))  # the embedded local model
    assert not accepts_images(Named("some-unknown-model"))  # unknown: an image would fail the request
