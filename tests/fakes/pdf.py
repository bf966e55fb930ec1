"""Real PDFs made in the test, with pypdfium2 (the library sagent reads them with): a page per text,
each line a text object in a standard font, so the PDF has a real text layer to extract."""

from __future__ import annotations

import ctypes


def make_pdf(pages: list[str]) -> bytes:
    import io

    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    doc = pdfium.PdfDocument.new()
    try:
        for text in pages:
            page = doc.new_page(612, 792)
            y = 740.0
            for line in text.splitlines():
                obj = raw.FPDFPageObj_NewTextObj(doc.raw, b"Helvetica", ctypes.c_float(12))
                wide = ctypes.create_string_buffer((line + "\0").encode("utf-16-le"))
                raw.FPDFText_SetText(obj, ctypes.cast(wide, ctypes.POINTER(raw.FPDF_WCHAR)))
                raw.FPDFPageObj_Transform(obj, 1, 0, 0, 1, 72, y)
                raw.FPDFPage_InsertObject(page.raw, obj)
                y -= 16
            raw.FPDFPage_GenerateContent(page.raw)
            page.close()
        out = io.BytesIO()
        doc.save(out)
        return out.getvalue()
    finally:
        doc.close()
