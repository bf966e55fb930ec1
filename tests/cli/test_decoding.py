"""Tolerant decoding: whatever bytes or JSON come in, the text out encodes as UTF-8 and the count is exact."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from sagent.cli.decoding import decode_bytes, scrub_json
from sagent.cli.records import parse_input_line


@given(st.binary(max_size=2000))
def test_any_bytes_decode_to_encodable_text_and_the_replacements_are_counted(data: bytes) -> None:
    text, replaced = decode_bytes(data)
    text.encode("utf-8")  # never raises
    strict = data.decode("utf-8-sig", "surrogateescape")
    assert replaced == sum(0xDC80 <= ord(c) <= 0xDCFF for c in strict)
    if replaced == 0:
        assert text == data.decode("utf-8-sig")


@given(
    st.recursive(st.text(), lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4))
)
def test_any_json_value_comes_out_encodable(value: object) -> None:
    cleaned, _ = scrub_json(value)
    json.dumps(cleaned, ensure_ascii=False).encode("utf-8")


def test_a_lone_surrogate_escape_in_a_stream_json_line_becomes_a_replacement_character() -> None:
    message = parse_input_line(b'{"type": "user", "message": {"content": "a \\ud800 b \\ud83d\\ude00"}}')
    assert message is not None and message.text == "a \ufffd b \U0001f600"  # a real pair stays one emoji
