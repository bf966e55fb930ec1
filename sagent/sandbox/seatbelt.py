"""macOS: the Seatbelt profile (`sandbox-exec -p PROFILE`) for a policy. Not in use yet.

The profile follows the same policy as bubblewrap on Linux: reads allowed but for the denied paths, writes
only under the workspace, /tmp (`/private/tmp`), `$TMPDIR` and the writable roots, the protected files
read-only, no network unless `network` is on. Seatbelt has no PID namespace, so ending a call's processes
falls back to sagent's own process-group and tag search (sagent.tools.processes), which `setsid` plus
`env -i` escapes; and `allowedDomains` has no proxy here yet (the network stays off).

It could not be tested where sagent is developed (Linux), so it is only generated, and checked as text:
a Mac user who wants to try it runs `sandbox-exec -p "$(python -m sagent.sandbox.seatbelt)" bash`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from sagent.sandbox.policy import PROTECTED_NAMES, SandboxPolicy, expand

# What any process needs to start and print on macOS, beyond the files it reads.
_BASE = """(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow file-read*)
(allow file-ioctl (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty"))
(allow file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/stdout") (literal "/dev/stderr"))
(allow ipc-posix-sem)
(allow ipc-posix-shm)
(allow pseudo-tty)
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.SecurityServer"))
"""


def _quote(path: Path | str) -> str:
    return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'


def seatbelt_profile(policy: SandboxPolicy, roots: tuple[Path, ...], tmpdir: str | None = None) -> str:
    """The SBPL profile text for `policy` with `roots` as the workspace."""
    lines = [_BASE.rstrip("\n")]
    writable: list[Path] = []
    if policy.mode == "workspace-write":
        writable += [Path("/private/tmp"), Path("/tmp")]
        temp = tmpdir if tmpdir is not None else os.environ.get("TMPDIR")
        if temp:
            writable.append(Path(temp))
        writable += list(roots)
        writable += [expand(r) for r in policy.writable_roots]
    if writable:
        lines.append("(allow file-write* " + " ".join(f"(subpath {_quote(p)})" for p in writable) + ")")
        protected = [root / name for root in roots for name in PROTECTED_NAMES]
        lines.append("(deny file-write* " + " ".join(f"(subpath {_quote(p)})" for p in protected) + ")")
    denied = [expand(p) for p in policy.deny_read]
    if denied:
        # Later rules win in SBPL: these come after the allows above.
        lines.append("(deny file-read* file-write* " + " ".join(f"(subpath {_quote(p)})" for p in denied) + ")")
    if policy.full_network:  # without it, `deny default` refuses every socket, the host's loopback included
        lines.append("(allow network*)")
        lines.append("(allow system-socket)")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # the profile of the default policy for the current folder, to try it by hand
    sys.stdout.write(seatbelt_profile(SandboxPolicy(), (Path.cwd(),)))
