"""Anthropic's prompt cache, simulated from its public rules, so tests and benchmarks can see what a client's
`cache_control` breakpoints would earn.

The rules (Anthropic's prompt caching docs): a request is read as one sequence of blocks, tools first, then
the system prompt, then each message's content blocks. A `cache_control` breakpoint caches the prefix up to
and including its block. At each breakpoint the server looks for an earlier cache entry of the exact same
prefix, at the breakpoint or up to 20 blocks before it. Tokens up to the longest hit are cache reads, the
tokens from there to the last breakpoint are written to the cache, the rest is plain input. Prefixes under
the minimum length are not cached. At most four breakpoints are allowed.

Tokens are counted as one per four characters of each block's JSON, which is what a real tokenizer does
with code and English, near enough for comparisons.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

LOOKBACK = 20
MAX_BREAKPOINTS = 4


class PromptCache:
    def __init__(self, min_tokens: int = 1024) -> None:
        self.min_tokens = min_tokens
        self.entries: set[str] = set()

    def usage(self, body: dict[str, Any]) -> dict[str, int]:
        """The usage the server reports for `body` (input_tokens excludes cache reads and writes), updating
        the cache as the server would."""
        blocks = _blocks(body)
        breakpoints = [i for i, (_, _, marked) in enumerate(blocks) if marked]
        if len(breakpoints) > MAX_BREAKPOINTS:
            raise ValueError(f"{len(breakpoints)} cache_control breakpoints; the API allows {MAX_BREAKPOINTS}")
        cumulative, total = [], 0
        for _, tokens, _ in blocks:
            total += tokens
            cumulative.append(total)
        read = 0
        for point in breakpoints:
            for index in range(point, max(-1, point - LOOKBACK - 1), -1):
                if blocks[index][0] in self.entries:
                    read = max(read, cumulative[index])
                    break
        written = 0
        if breakpoints and cumulative[breakpoints[-1]] >= self.min_tokens:
            written = max(0, cumulative[breakpoints[-1]] - read)
            for point in breakpoints:
                if cumulative[point] >= self.min_tokens:
                    self.entries.add(blocks[point][0])
        return {
            "input_tokens": total - read - written,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
        }


def _blocks(body: dict[str, Any]) -> list[tuple[str, int, bool]]:
    """(hash of the prefix through this block, tokens of the block, has a breakpoint) for every block."""
    items: list[tuple[str, dict[str, Any]]] = [("tool", t) for t in body.get("tools", [])]
    system = body.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    items += [("system", b) for b in system]
    for message in body.get("messages", []):
        content = message["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        items += [(message["role"], b) for b in content]
    running = hashlib.sha256()
    out = []
    for role, block in items:
        plain = {k: v for k, v in block.items() if k != "cache_control"}
        text = role + json.dumps(plain, sort_keys=True, ensure_ascii=False)
        running.update(text.encode())
        out.append((running.copy().hexdigest(), (len(text) + 3) // 4, "cache_control" in block))
    return out
