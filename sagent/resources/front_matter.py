"""The front matter of a Markdown resource file (a skill's SKILL.md, an agent file, a command file): the YAML
between a first line `---` and the next `---`, and the Markdown after it.

Files written for other agents are read as those agents read them: YAML, so lists (`tools: [Read, Grep]` or
one `- Read` per line), quoted and folded strings all work. A block that YAML refuses but that is plain
`key: value` lines (a description holding `: `, which YAML reads as a nested mapping) is read line by line
rather than refused, so a hand-written file that works elsewhere works here too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sagent.lib.bounded_read import UnreadableFile, read_bounded

MAX_RESOURCE_BYTES = 256_000
"""A resource file larger than this is a mistake, not a prompt."""


class ResourceError(ValueError):
    """A resource file that cannot be used; the message names the file and what is wrong."""


def read_markdown(path: Path, limit: int = MAX_RESOURCE_BYTES) -> tuple[dict[str, Any], str]:
    """The front matter (an empty dict when there is none) and the body of the UTF-8 Markdown file `path`;
    ResourceError naming the file when it cannot be read, is too large, is not UTF-8 text, or its front
    matter is not a mapping. Never reads more than `limit` bytes, and never from a FIFO or a device."""
    raw = read_resource(path, limit, ResourceError)
    try:
        text = raw.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError:
        raise ResourceError(f"{path}: not UTF-8 text") from None
    return split_front_matter(text, path)


def read_resource(path: Path, limit: int, error: type[Exception]) -> bytes:
    """The file's bytes (see `sagent.lib.bounded_read`), or `error` with one line naming the file and why."""
    try:
        raw = read_bounded(path, limit)
    except UnreadableFile as refused:
        reason = {
            "unreadable": f"cannot be read: {refused.detail}",
            "not_regular": "not a regular file",
            "too_large": f"larger than {limit:,} bytes",
        }[refused.kind]
        raise error(f"{path}: {reason}") from None
    assert raw is not None
    return raw


def split_front_matter(text: str, path: Path | str) -> tuple[dict[str, Any], str]:
    """`text` as (front matter, body); see the module's docstring. `path` names the file in errors."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise ResourceError(f"{path}: the front matter opened by '---' on line 1 is never closed")
    block = "\n".join(lines[1:end])
    body = "\n".join(lines[end + 1 :])
    import yaml

    try:
        meta = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as error:
        meta = _plain_lines(block)
        if meta is None:
            where = getattr(error, "problem_mark", None)
            line = f" (line {where.line + 2})" if where is not None else ""
            raise ResourceError(f"{path}: the front matter is not valid YAML{line}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise ResourceError(f"{path}: the front matter is not a set of 'key: value' lines")
    return {str(k): v for k, v in meta.items()}, body


def _plain_lines(block: str) -> dict[str, Any] | None:
    """`key: value` lines read one by one (the value is everything after the first `: `); None when a line
    is something else."""
    meta: dict[str, Any] = {}
    for line in block.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, colon, value = line.partition(":")
        if not colon or not key.strip() or key != key.strip():
            return None
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        meta[key] = value
    return meta


def text_field(meta: dict[str, Any], key: str, path: Path | str) -> str | None:
    """The front matter's `key` as text (a number or a boolean as written); None when absent or empty;
    ResourceError when it is a list or a mapping."""
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value).strip() or None
    raise ResourceError(f"{path}: `{key}` must be text, not {type(value).__name__}")


def names_field(meta: dict[str, Any], key: str, path: Path | str) -> tuple[str, ...] | None:
    """The front matter's `key` as a list of names: a YAML list, or text with the names separated by commas
    or spaces (`Read, Grep` or `Read Grep`; `Bash(git diff:*)` stays one name). None when absent."""
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return _split_names(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    raise ResourceError(f"{path}: `{key}` must be a list of names or text such as 'Read, Grep'")


def _split_names(value: str) -> tuple[str, ...]:
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    names, depth, current = [], 0, ""
    for char in value:
        if char in ", " and depth == 0:
            names.append(current)
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current += char
    names.append(current)
    return tuple(n.strip().strip("'\"") for n in names if n.strip().strip("'\""))
