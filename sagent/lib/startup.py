"""The garbage collector paused, and the methods of dataclasses compiled from a cache, while a run starts.

A run's start-up is mostly imports: the provider's SDK (a second or more for `anthropic`) and sagent itself.
Imports create hundreds of thousands of objects that live as long as the process, and the collector, which
runs every few hundred allocations, walks them again and again while they are being created: about a sixth
of the SDK's import time here. None of that work frees anything.

So the `sagent` command pauses the collector as a run starts (`pause`), and each part of the start-up says
when it is over (`done`): the main thread once the agent is built, the SDK's background import once it
has finished (`expect` registers it). When the last part is done, everything alive is frozen (moved out
of the collector's view, as `gc.freeze` does: the modules, classes and settings a run keeps until it exits)
and the collector runs again, only over what the run creates from then on, which also keeps its pauses
short while the agent works.

While it is paused, `dataclasses` also compiles the methods it generates through the cache of
`sagent.lib.codecache`, and, where Python writes no bytecode, sagent's own modules load through the cache of
`sagent.lib.bytecode`; the first saves what it compiled when the start-up is done, the second as the
process exits.

Only the command does this (`sagent.cli.main.entry`): a library user's process, or a test calling `main`,
keeps its collector as it is. Every call here is harmless when nothing was paused.
"""

from __future__ import annotations

import gc
import threading

from sagent.lib import bytecode, codecache

_lock = threading.Lock()
_waiting: set[str] = set()
_paused = False


def pause() -> None:
    """Pause the collector until the main thread's start-up (`done("main")`) and every part `expect`
    registers are done."""
    global _paused
    with _lock:
        if _paused or not gc.isenabled():
            return
        gc.disable()
        _paused = True
        _waiting.add("main")
    codecache.install()
    bytecode.install()


def paused() -> bool:
    """Whether the `sagent` command's start-up is under way (`pause` was called and is not over)."""
    return _paused


def expect(part: str) -> None:
    """Keep the collector paused until `done(part)` too (nothing when it is not paused)."""
    with _lock:
        if _paused:
            _waiting.add(part)


def done(part: str) -> None:
    """`part` of the start-up is over; the last one freezes what is alive and resumes the collector."""
    global _paused
    with _lock:
        _waiting.discard(part)
        if not _paused or _waiting:
            return
        _paused = False
    codecache.remove()
    gc.freeze()
    gc.enable()
