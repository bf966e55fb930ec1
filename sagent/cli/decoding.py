"""Tolerant decoding of what users feed sagent: any bytes in, clean text out, and the user told once.

Standard input may be Latin-1, binary, or cut mid-character; a stream-json line may escape a lone UTF-16
surrogate ("\\ud800"), which JSON allows and UTF-8 cannot encode. Either would crash the first encoder it
reaches (the session log, stdout, a provider's SDK), so both are replaced with U+FFFD where the text enters
sagent, and nothing downstream ever sees a character it cannot encode.
"""

from __future__ import annotations

from typing import IO, Any

from sagent.encoding import scrub


def decode_bytes(data: bytes) -> tuple[str, int]:
    """`data` as UTF-8 text (a leading byte-order mark dropped), each byte that is not part of valid UTF-8
    replaced with U+FFFD; and how many bytes were replaced."""
    # surrogateescape maps each bad byte to one code point in U+DC80..U+DCFF, so they can be counted
    # exactly; valid input never produces one.
    text = data.decode("utf-8-sig", "surrogateescape")
    return scrub(text)


def scrub_json(value: Any) -> tuple[Any, int]:
    """A decoded JSON value with lone surrogates replaced in every string (keys included); and the count."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        items = [scrub_json(item) for item in value]
        return [item for item, _ in items], sum(n for _, n in items)
    if isinstance(value, dict):
        total = 0
        cleaned: dict[Any, Any] = {}
        for key, item in value.items():
            key, n_key = scrub_json(key)
            item, n_item = scrub_json(item)
            cleaned[key] = item
            total += n_key + n_item
        return cleaned, total
    return value, 0


class InputNotice:
    """Tells the user, once per run, that their input was not clean text and what was done about it."""

    def __init__(self, stderr: IO[str] | None, what: str, *, ongoing: bool = False) -> None:
        """`what` names the input in the notice; `ongoing` input (lines that keep arriving) is reported at
        its first replacement only, and the notice says so."""
        self.stderr = stderr
        self.what = what
        self.ongoing = ongoing
        self.replaced = 0

    def count(self, replaced: int, unit: str = "character") -> None:
        """Note `replaced` bytes or characters (`unit`) replaced; the first time, write one line to stderr."""
        if replaced <= 0:
            return
        first = self.replaced == 0
        self.replaced += replaced
        if first and self.stderr is not None:
            verb = f"{unit} was" if replaced == 1 else f"{unit}s were"
            later = "; later ones are replaced without notice" if self.ongoing else ""
            self.stderr.write(
                f"sagent: {self.what} was not valid UTF-8 text: {replaced} {verb} replaced with U+FFFD{later}\n"
            )
            self.stderr.flush()

    def decode(self, data: bytes) -> str:
        """`data` decoded as `decode_bytes` does, counting the bytes replaced."""
        text, replaced = decode_bytes(data)
        self.count(replaced, "byte")
        return text

    def clean(self, value: Any) -> Any:
        """A decoded JSON value scrubbed as `scrub_json` does, counting the characters replaced."""
        value, replaced = scrub_json(value)
        self.count(replaced)
        return value
