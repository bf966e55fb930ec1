"""Programs that run another command (`sudo rm`, `timeout 5 rm`, `find -exec rm`) or a shell string
(`bash -c 'rm x'`, `su -c`, `watch 'rm x'`), and how to find what they run.

`peel(words)` reads one command's words (None for a word that is not static) and says what the program
runs: the index where the wrapped command starts, or a shell string to parse, or that it cannot tell (an
option it does not know, a word that is not static where an option or the command should be). Options are
read from each program's own manual; an option not listed makes the wrapper unsure rather than guessed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "busybox-sh"})
"""Programs that run shell code from `-c STRING` or from their standard input."""

BENIGN = frozenset(
    {
        "time",
        "nice",
        "nohup",
        "timeout",
        "stdbuf",
        "ionice",
        "chrt",
        "taskset",
        "command",
        "builtin",
        "exec",
        "setsid",
        "xargs",
        "coproc",
    }
)
"""Wrappers that change only how the command runs (time, priority, buffering, session): a line through
one is allowed when the command it wraps is. Every other wrapper needs an allow rule of its own as well."""


@dataclass(frozen=True, slots=True)
class Peeled:
    """What one wrapper runs: `start`, the index of the wrapped command's first word (None: no command);
    `strings`, shell code it runs (None for code that is not static); `unsure`, why it cannot tell (empty
    when it can); `open_ended` for xargs (more arguments come from the input); `writes`, files named by
    its options that it writes (`time -o FILE`)."""

    start: int | None = None
    strings: tuple[str | None, ...] = ()
    unsure: str = ""
    open_ended: bool = False
    writes: tuple[str | None, ...] = ()
    reads_input: bool = False  # a shell with neither -c nor a script: it runs what its input holds
    script: int | None = None  # a shell given a script file: the index of its name
    foreign: bool = False  # the code it reads from its input is not shell code (python, perl, …)
    more: tuple[tuple[int, int], ...] = field(default=())  # find -exec: further commands as (start, end)
    end: int | None = None  # the wrapped command's end (find -exec … ;), None for the rest of the line


Words = list[str | None]


class _Unsure(Exception):
    pass


def _options(
    words: Words, i: int, flags: str, with_arg: str, long_flags: str = "", long_arg: str = "", optional: str = ""
) -> tuple[int, dict[str, list[str | None]]]:
    """Read options from `words[i]` on; the index of the first operand and the options met (letter or
    long name -> values). `optional`: short options whose value, if any, is attached (`-d[=x]`)."""
    long_f = set(long_flags.split())
    long_a = set(long_arg.split())
    short_optional, *long_optional = optional.split() or [""]
    seen: dict[str, list[str | None]] = {}
    while i < len(words):
        word = words[i]
        if word is None:
            raise _Unsure("a word that is not static where an option or the command should be")
        if word == "--":
            return i + 1, seen
        if not word.startswith("-") or word == "-":
            return i, seen
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            if name in long_a:
                if eq:
                    seen.setdefault(name, []).append(value)
                    i += 1
                else:
                    if i + 1 >= len(words):
                        raise _Unsure(f"--{name} without its value")
                    seen.setdefault(name, []).append(words[i + 1])
                    i += 2
                continue
            if name in long_f or name in long_optional:
                seen.setdefault(name, []).append(value if eq else "")
                i += 1
                continue
            raise _Unsure(f"an option it does not know: --{name}")
        j = 1
        i += 1
        while j < len(word):
            letter = word[j]
            if letter in with_arg:
                rest = word[j + 1 :]
                if rest:
                    seen.setdefault(letter, []).append(rest)
                else:
                    if i >= len(words):
                        raise _Unsure(f"-{letter} without its value")
                    seen.setdefault(letter, []).append(words[i])
                    i += 1
                break
            if letter in short_optional:
                seen.setdefault(letter, []).append(word[j + 1 :])
                break
            if letter in flags:
                seen.setdefault(letter, []).append("")
                j += 1
                continue
            raise _Unsure(f"an option it does not know: -{letter}")
    return i, seen


def _string_at(words: Words, i: int) -> str | None:
    return words[i] if i < len(words) else ""


def peel(name: str, words: Words) -> Peeled | None:
    """What the command whose program is `name` (its basename) and whose words are `words` (the program
    at 0) runs; None when it is not a wrapper."""
    handler = _HANDLERS.get(name)
    if handler is None:
        return None
    try:
        return handler(words)
    except _Unsure as why:
        return Peeled(unsure=f"{name}: {why}")


def _simple(flags: str, with_arg: str, long_flags: str = "", long_arg: str = "", operands: int = 0, optional: str = ""):  # type: ignore[no-untyped-def]
    def handler(words: Words) -> Peeled:
        i, _ = _options(words, 1, flags, with_arg, long_flags, long_arg, optional)
        i += operands
        if operands and i > len(words):
            return Peeled()
        if any(w is None for w in words[i - operands : i]):
            raise _Unsure("a word that is not static where an operand should be")
        return Peeled(start=i if i < len(words) else None)

    return handler


def _time(words: Words) -> Peeled:
    i, seen = _options(words, 1, "pavq", "of", "portability append verbose quiet", "output format")
    return Peeled(start=i if i < len(words) else None, writes=tuple(seen.get("o", []) + seen.get("output", [])))


def _nice(words: Words) -> Peeled:
    i = 1
    if (
        i < len(words)
        and words[i] is not None
        and (words[i] or "").startswith("-")
        and (words[i] or "")[1:].lstrip("-").isdigit()
    ):
        i += 1  # the old form: nice -10 cmd
    i, _ = _options(words, i, "", "n", "", "adjustment")
    return Peeled(start=i if i < len(words) else None)


def _env(words: Words) -> Peeled:
    i, seen = _options(
        words, 1, "i0v", "uCSP", "ignore-environment null debug", "unset chdir split-string", optional=""
    )
    if "S" in seen or "split-string" in seen:
        values = seen.get("S", []) + seen.get("split-string", [])
        rest = words[i:]
        if any(v is None for v in values) or any(w is None for w in rest):
            return Peeled(strings=(None,))
        return Peeled(strings=(" ".join([*(v or "" for v in values), *(w or "" for w in rest)]),))
    if i < len(words) and words[i] == "-":
        i += 1
    while i < len(words):
        word = words[i]
        if word is None:
            raise _Unsure("a word that is not static where an assignment or the command should be")
        name, eq, _ = word.partition("=")
        if not eq or not name.replace("_", "a").isalnum():
            break
        i += 1
    return Peeled(start=i if i < len(words) else None)


def _timeout(words: Words) -> Peeled:
    i, _ = _options(words, 1, "v", "sk", "preserve-status foreground verbose", "signal kill-after")
    if i >= len(words):
        return Peeled()
    if words[i] is None:
        raise _Unsure("a duration that is not static")
    return Peeled(start=i + 1 if i + 1 < len(words) else None)


def _command(words: Words) -> Peeled:
    i, seen = _options(words, 1, "pvV", "")
    if "v" in seen or "V" in seen:
        return Peeled()  # `command -v rm` only looks the name up
    return Peeled(start=i if i < len(words) else None)


def _ionice(words: Words) -> Peeled:
    i, seen = _options(words, 1, "tu", "cnpP", "ignore", "class classdata pid pgid uid")
    if any(k in seen for k in ("p", "P", "u", "pid", "pgid", "uid")):
        return Peeled()
    return Peeled(start=i if i < len(words) else None)


def _chrt(words: Words) -> Peeled:
    i, seen = _options(
        words,
        1,
        "abdfiormvRe",
        "TPD",
        "all-tasks batch deadline fifo idle other rr max verbose reset-on-fork ext",
        "sched-runtime sched-period sched-deadline",
    )
    if "p" in seen or i >= len(words):
        return Peeled()
    return Peeled(start=i + 1 if i + 1 < len(words) else None)


def _taskset(words: Words) -> Peeled:
    i, seen = _options(words, 1, "acpV", "", "all-tasks cpu-list pid version")
    if "p" in seen or "pid" in seen or i >= len(words):
        return Peeled()
    return Peeled(start=i + 1 if i + 1 < len(words) else None)


def _flock(words: Words) -> Peeled:
    flags, with_arg = "sxenuoFhV", "wEc"
    longs, long_args = (
        "shared exclusive nonblock nb unlock close no-fork verbose help version",
        "timeout wait conflict-exit-code command",
    )
    i, seen = _options(words, 1, flags, with_arg, longs, long_args)
    if i >= len(words):
        return Peeled()
    if words[i] is None:
        raise _Unsure("a lock file that is not static")
    j, more = _options(words, i + 1, flags, with_arg, longs, long_args)
    codes = seen.get("c", []) + seen.get("command", []) + more.get("c", []) + more.get("command", [])
    if codes:
        return Peeled(strings=tuple(codes))
    return Peeled(start=j if j < len(words) else None)


def _xargs(words: Words) -> Peeled:
    i, _ = _options(
        words,
        1,
        "0rtpxo",
        "adEILnPs",
        "null no-run-if-empty verbose interactive exit open-tty show-limits help version",
        "arg-file delimiter max-lines max-args max-procs max-chars process-slot-var",
        optional="eil eof replace max-lines",
    )
    return Peeled(start=i if i < len(words) else None, open_ended=True)


def _sudo(words: Words) -> Peeled:
    i, seen = _options(
        words,
        1,
        "AbEeHiKklNnPSsVv",
        "CDghpRrTtUu",
        "askpass background preserve-env edit set-home login remove-timestamp reset-timestamp list "
        "non-interactive preserve-groups stdin shell validate version help no-update",
        "close-from chdir group host prompt chroot role type command-timeout other-user user",
    )
    if "e" in seen or "edit" in seen:
        raise _Unsure("sudo -e edits files as another user")
    if any(k in seen for k in ("l", "list", "v", "validate")) or ("k" in seen and i >= len(words)):
        return Peeled()
    if i >= len(words):
        if "i" in seen or "s" in seen or "login" in seen or "shell" in seen:
            return Peeled(strings=(None,))  # a login shell reading its input
        return Peeled()
    return Peeled(start=i)


def _doas(words: Words) -> Peeled:
    i, seen = _options(words, 1, "nsL", "uC")
    if "C" in seen or "L" in seen:
        return Peeled()
    if i >= len(words):
        return Peeled(strings=(None,)) if "s" in seen else Peeled()
    return Peeled(start=i)


def _su(words: Words) -> Peeled:
    i, seen = _options(
        words,
        1,
        "lmpPf",
        "cCgGsw",
        "login preserve-environment pty fast",
        "command session-command group supp-group shell whitelist-environment",
    )
    codes = seen.get("c", []) + seen.get("C", []) + seen.get("command", []) + seen.get("session-command", [])
    # `su [-] [user [args]]`: arguments after the user go to the shell, which may read them as `-c CODE`.
    rest = words[i:]
    if rest and rest[0] == "-":
        rest = rest[1:]
    extra = rest[1:]
    if extra:
        if any(w is None for w in extra):
            raise _Unsure("arguments that are not static for the user's shell")
        if "-c" in extra:
            codes.append(extra[extra.index("-c") + 1] if extra.index("-c") + 1 < len(extra) else "")
        else:
            raise _Unsure("arguments passed to the user's shell")
    return Peeled(strings=tuple(codes) or (None,))


def _script(words: Words) -> Peeled:
    i, seen = _options(
        words,
        1,
        "aefqhV",
        "cEmoOBITt",
        "append return flush force quiet help version",
        "command echo logging-format output-limit log-out log-in log-io log-timing timing",
    )
    codes = seen.get("c", []) + seen.get("command", [])
    files = tuple(words[i : i + 1]) or ("typescript",)
    logs = tuple(v for k in ("O", "I", "B", "log-out", "log-in", "log-io", "T", "log-timing") for v in seen.get(k, []))
    return Peeled(strings=tuple(codes) or (None,), writes=files + logs)


def _trace(flags: str, with_arg: str, long_flags: str, long_arg: str):  # type: ignore[no-untyped-def]
    def handler(words: Words) -> Peeled:
        i, seen = _options(words, 1, flags, with_arg, long_flags, long_arg)
        if "p" in seen and i >= len(words):
            return Peeled()
        return Peeled(start=i if i < len(words) else None, writes=tuple(seen.get("o", []) + seen.get("output", [])))

    return handler


def _unshare(words: Words) -> Peeled:
    i, _ = _options(
        words,
        1,
        "muinpUCTfrc",
        "SGRwl",
        "fork map-root-user map-current-user map-auto keep-caps mount-proc mount uts ipc net pid user cgroup "
        "time kill-child help version",
        "propagation setgroups setuid setgid root wd load-interp map-user map-group map-users map-groups "
        "monotonic boottime",
    )
    return Peeled(start=i) if i < len(words) else Peeled(strings=(None,))


def _nsenter(words: Words) -> Peeled:
    i, _ = _options(
        words,
        1,
        "aFZceh",
        "tSGL",
        "all no-fork follow-context preserve-credentials env help version",
        "target setuid setgid",
        optional="muinpUCTrw mount uts ipc net pid user cgroup time root wd user-parent",
    )
    return Peeled(start=i) if i < len(words) else Peeled(strings=(None,))


def _chroot(words: Words) -> Peeled:
    i, _ = _options(words, 1, "", "", "skip-chdir help version", "userspec groups")
    if i >= len(words):
        return Peeled()
    if words[i] is None:
        raise _Unsure("a root folder that is not static")
    return Peeled(start=i + 1) if i + 1 < len(words) else Peeled(strings=(None,))


def _watch(words: Words) -> Peeled:
    i, seen = _options(
        words,
        1,
        "bcegtwprxhv",
        "nqd",
        "beep color no-color errexit chgexit no-title no-wrap precise no-rerun exec help version",
        "interval equexit differences",
        optional="d",
    )
    if i >= len(words):
        return Peeled()
    if "x" in seen or "exec" in seen:
        return Peeled(start=i)
    rest = words[i:]
    if any(w is None for w in rest):
        return Peeled(strings=(None,))
    return Peeled(strings=(" ".join(w or "" for w in rest),))


_LOCAL_COMMANDS = ("proxycommand", "localcommand", "knownhostscommand", "remotecommand")


def _ssh(words: Words) -> Peeled:
    i, seen = _options(words, 1, "46AaCfGgKkMNnqsTtVvXxYy", "BbcDEeFIiJLlmOoPpQRSWw")
    local: list[str | None] = []
    for value in seen.get("o", []):
        key, _, code = (value or "").replace("=", " ", 1).partition(" ")
        if value is None or key.lower() in _LOCAL_COMMANDS:
            local.append(None if value is None else code.strip())  # run by ssh itself, on this machine
    if i + 1 >= len(words):
        return Peeled(strings=tuple(local))
    rest = words[i + 1 :]
    if any(w is None for w in rest):
        return Peeled(strings=(*local, None))
    return Peeled(strings=(*local, " ".join(w or "" for w in rest)))


def _rsync(words: Words) -> Peeled:
    shells: list[str | None] = []
    for k, word in enumerate(words[1:], 1):
        if word in ("-e", "--rsh") and k + 1 < len(words):
            shells.append(words[k + 1])
        elif word is not None and word.startswith("--rsh="):
            shells.append(word[6:])
        elif word is not None and word.startswith("-e") and len(word) > 2 and not word.startswith("--"):
            shells.append(word[2:])
    return Peeled(strings=tuple(shells))


def _at(words: Words) -> Peeled:
    if any(w is not None and w.startswith("-") and "f" in w for w in words[1:]):
        return Peeled()
    return Peeled(reads_input=True)


def _pkexec(words: Words) -> Peeled:
    i, _ = _options(words, 1, "", "", "disable-internal-agent help version keep-cwd", "user")
    return Peeled(start=i) if i < len(words) else Peeled(strings=(None,))


def _busybox(words: Words) -> Peeled:
    return Peeled(start=1) if len(words) > 1 else Peeled()


def _find(words: Words) -> Peeled:
    runs: list[tuple[int, int]] = []
    writes: list[str | None] = []
    i = 1
    while i < len(words):
        word = words[i]
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            end = i + 1
            while end < len(words) and words[end] not in (";", "+"):
                end += 1
            runs.append((i + 1, end))
            i = end + 1
            continue
        if word in ("-fprint", "-fprint0", "-fls", "-fprintf") and i + 1 < len(words):
            writes.append(words[i + 1])
        i += 1
    if not runs:
        return Peeled(writes=tuple(writes))
    (start, end), more = runs[0], tuple(runs[1:])
    return Peeled(start=start, end=end, more=more, writes=tuple(writes))


def _parallel(words: Words) -> Peeled:
    rest = words[1:]
    if ":::" in rest:
        rest = rest[: rest.index(":::")]
    if any(w is None for w in rest):
        return Peeled(strings=(None,))
    # Its options are many and change how the rest is read: every suffix is held against the rules.
    suffixes = tuple(" ".join(w or "" for w in rest[k:]) for k in range(len(rest)))
    return Peeled(strings=(*suffixes, None))


def _shell(words: Words) -> Peeled:
    words = list(words)
    k = 1
    while k < len(words) and (words[k] or "").startswith("+") and len(words[k] or "") > 1:
        words[k] = "-" + (words[k] or "")[1:]  # `+x`, `+o name`: read like their `-` forms
        k += 2 if words[k] == "-o" else 1
    i, seen = _options(
        words,
        1,
        "abcefhiklmnprstuvxBCEHPTs",
        "oO",
        "login norc noprofile posix restricted verbose debugger dump-strings dump-po-strings help version noediting",
        "rcfile init-file",
    )
    if "c" in seen:
        if i >= len(words):
            return Peeled(strings=("",))
        return Peeled(strings=(words[i],))
    if i < len(words) and "s" not in seen:
        return Peeled(script=i)  # a script file: a program like any other
    return Peeled(reads_input=True)


def _eval(words: Words) -> Peeled:
    rest = words[1:]
    if any(w is None for w in rest):
        return Peeled(strings=(None,))
    return Peeled(strings=(" ".join(w or "" for w in rest),))


def _trap(words: Words) -> Peeled:
    i, seen = _options(words, 1, "lp", "")
    if "l" in seen or "p" in seen or i >= len(words) or i + 1 >= len(words):
        return Peeled()
    return Peeled(strings=(words[i],))


_CODE_OPTIONS = frozenset({"-c", "-e", "-E", "-r", "-m", "-p", "--eval", "--print", "-i", "--interactive"})


def _interpreter(words: Words) -> Peeled:
    """python, perl, node, …: with no script and no code option they run the program on their input."""
    for word in words[1:]:
        if word is None:
            return Peeled()
        if word == "-":
            return Peeled(reads_input=True, foreign=True)
        if word in _CODE_OPTIONS or (word[:2] in _CODE_OPTIONS and not word.startswith("--")):
            return Peeled()
        if not word.startswith("-"):
            return Peeled()  # a script file
    return Peeled(reads_input=True, foreign=True)


_INTERPRETERS = ("python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "node", "nodejs", "php", "lua")

_HANDLERS: dict[str, Callable[[Words], Peeled]] = {
    "time": _time,
    "nice": _nice,
    "nohup": _simple("", ""),
    "env": _env,
    "timeout": _timeout,
    "stdbuf": _simple("", "ioe", "", "input output error"),
    "ionice": _ionice,
    "chrt": _chrt,
    "taskset": _taskset,
    "flock": _flock,
    "xargs": _xargs,
    "exec": _simple("cl", "a"),
    "command": _command,
    "builtin": _simple("", ""),
    "coproc": _simple("", ""),
    "setsid": _simple("cfw", "", "ctty fork wait"),
    "sudo": _sudo,
    "doas": _doas,
    "su": _su,
    "runuser": _su,
    "script": _script,
    "strace": _trace("cCdDfFhiqrtTvVwxyYzZk", "abeEIoOpPsSUuX", "", "output"),
    "ltrace": _trace("bcCfhiLrStTV", "aADeFlnopsuwx", "", "output"),
    "unshare": _unshare,
    "nsenter": _nsenter,
    "chroot": _chroot,
    "watch": _watch,
    "ssh": _ssh,
    "busybox": _busybox,
    "toybox": _busybox,
    "rsync": _rsync,
    "at": _at,
    "batch": _at,
    "pkexec": _pkexec,
    "find": _find,
    "parallel": _parallel,
    "eval": _eval,
    "trap": _trap,
    **{shell: _shell for shell in SHELLS},
    **{name: _interpreter for name in _INTERPRETERS},
}


def is_wrapper(name: str) -> bool:
    """Whether `peel` knows the program `name` as one that runs another command or shell code."""
    return name in _HANDLERS


def program_name(word: str) -> str:
    """The name a rule compares: the last part of a path (`/bin/rm`, `./rm` -> `rm`)."""
    return os.path.basename(word.rstrip("/")) or word if "/" in word else word
