"""Leaving the process quickly once a run is over, and safely when it ends while an SDK is still loading.

After a provider's SDK is imported, the interpreter's own teardown (clearing thousands of modules, running
the garbage collector over their classes and pydantic models) takes about a third of a second, and
writes nothing: every byte a run means to keep is already out of the process by then.

The teardown is also unsafe while a background thread is inside an SDK's native code: a command that ends
early (a wrong flag, while the provider's SDK is still being imported) would otherwise have the interpreter
stop that daemon thread in the middle of a pydantic-core call, which aborts the process (status 134,
"FATAL: exception not rethrown") instead of exiting with the command's own code. `leave` avoids both:
`os._exit` when nothing can be lost, else a teardown that waits for those threads first.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


def leave(code: int) -> NoReturn:
    """End the `sagent` command with `code`: through `exit_now` when it can, else the ordinary exit, which
    waits for the threads running SDK code first (`sagent.lib.sdk_threads`)."""
    exit_now(code)
    sys.exit(code)


def exit_code(stop: SystemExit) -> int:
    """The status a `SystemExit` asks for, as the interpreter would exit with it (a message is written to
    stderr and means 1)."""
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    sys.stderr.write(f"{stop.code}\n")
    return 1


def exit_now(code: int) -> None:
    """End the process with `code` without the interpreter's teardown, when nothing can be lost by it;
    otherwise return, and the caller exits the ordinary way.

    Why nothing is lost, step by step:
    - the session log writes each record with one unbuffered `os.write` and was closed by the run (its
      lock released), so there is nothing of it left in this process;
    - stdout and stderr are flushed here; if a flush fails (a closed pipe), this returns and the ordinary
      exit reports it as it always has;
    - the `atexit` handlers run here as they would: ending the process groups of Bash calls left behind,
      stopping a local llama-server, removing temporary directories, flushing `logging`;
    - an ordinary exit waits for threads that are not daemons; if any is alive, this returns and the
      ordinary exit waits for it (and, first, for the threads running SDK code: `sagent.lib.sdk_threads`).
      sagent's own threads are daemons, which `os._exit` ends at once and safely.
    What is skipped is only the teardown of modules and objects, and their `__del__` methods: an SDK's
    HTTP client whose sockets the kernel closes with the process.
    """
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return
    if not _flushed():
        return
    from sagent.lib import sdk_threads

    sdk_threads.leaving_now()  # no handler waits for a thread that os._exit ends anyway
    atexit._run_exitfuncs()
    atexit._clear()  # run once: if this returns below, the ordinary exit must not run them again
    if _flushed():  # what the handlers wrote
        os._exit(code)
    sdk_threads.settle()  # the ordinary exit follows, without the handlers (they ran) that would wait


def _flushed() -> bool:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is None:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            return False  # a stream that cannot be flushed: the ordinary exit says so, with its exit status
    return True
