"""The text of a PDF, page by page, through pypdfium2 (imported only when a PDF is read)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import BinaryIO

from sagent.tools.base import MAX_OUTPUT, ToolError

_RANGE = re.compile(r"^\s*(\d+)?\s*(-)?\s*(\d+)?\s*$")


def parse_pages(spec: str | None, count: int) -> list[int]:
    """1-based page numbers from "3", "2-5", "2,4-6", "7-" (to the end) or "-3" (the first three);
    every page when `spec` is empty. `ToolError` for a malformed spec or pages past the end."""
    if not spec or not spec.strip():
        return list(range(1, count + 1))
    pages: list[int] = []
    for part in spec.split(","):
        m = _RANGE.match(part)
        if not m or not (m.group(1) or m.group(3)):
            raise ToolError(f'pages must look like "3", "2-5", "2,4-6" or "7-"; got {spec!r}')
        first = int(m.group(1)) if m.group(1) else 1
        last = (int(m.group(3)) if m.group(3) else count) if m.group(2) else first
        if first < 1 or last < first:
            raise ToolError(f"bad page range {part.strip()!r} in {spec!r}")
        if first > count:
            raise ToolError(f"page {first} is past the end: the PDF has {count} page{'s' * (count != 1)}")
        pages += [n for n in range(first, min(last, count) + 1) if n not in pages]
    return pages


def pdf_text(source: Path | bytes | BinaryIO, pages: str | None, *, name: str, budget: int = MAX_OUTPUT - 500) -> str:
    """The text of the wanted pages of a PDF, each under a `--- page N of M ---` line, at most about
    `budget` characters; the end says which pages are left and how to ask for them. An open file is read
    through as pdfium needs its parts, never loaded whole."""
    import pypdfium2 as pdfium

    try:
        doc = pdfium.PdfDocument(str(source) if isinstance(source, Path) else source)
    except pdfium.PdfiumError as error:
        raise ToolError(f"{name}: cannot open the PDF ({error}); it may be damaged or password-protected") from None
    try:
        count = len(doc)
        wanted = parse_pages(pages, count)
        out = [f"{name}: PDF, {count} page{'s' * (count != 1)}"]
        size, shown = 0, 0
        for n in wanted:
            page = doc[n - 1]
            textpage = page.get_textpage()
            try:
                text = textpage.get_text_range().replace("\r\n", "\n").replace("\r", "\n").strip()
            finally:
                textpage.close()
                page.close()
            if not text:
                text = "[no text on this page: it may be a scanned image]"
            block = f"--- page {n} of {count} ---\n{text}"
            if shown and size + len(block) > budget:
                break
            if len(block) > budget:
                block = block[:budget] + f"\n[… page {n} cut at {budget:,} characters]"
            out.append(block)
            size += len(block)
            shown += 1
        rest = wanted[shown:]
        if rest:
            out.append(f'[{len(rest)} more page(s) not shown: ask for pages="{_ranges(rest)}" to go on]')
        return "\n".join(out)
    finally:
        doc.close()


def _ranges(pages: list[int]) -> str:
    """ "4-7,9" for [4, 5, 6, 7, 9]."""
    parts: list[str] = []
    start = prev = pages[0]
    for n in [*pages[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ",".join(parts)
