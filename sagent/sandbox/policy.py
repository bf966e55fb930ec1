"""`SandboxPolicy`: what a Bash command may touch, as one frozen value.

    SandboxPolicy()                                    # workspace-write, no network (the default)
    SandboxPolicy(mode="read-only")                    # reads anything not denied, writes nothing
    SandboxPolicy(network=True)                        # workspace-write with the whole network
    SandboxPolicy(allowed_domains=("pypi.org", "*.pythonhosted.org"))  # only these, through a proxy
    SandboxPolicy(mode="danger-full-access")           # no sandbox at all

The names are Codex's. Only the standard library is imported here: the command line reads this module
before anything heavy is loaded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast

SandboxMode = Literal["read-only", "workspace-write", "danger-full-access"]
MODES: tuple[SandboxMode, ...] = ("read-only", "workspace-write", "danger-full-access")

# Credentials a command has no business reading; `~` is the user's home when the sandbox starts.
DEFAULT_DENY_READ: tuple[str, ...] = (
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.azure",
    "~/.config/gcloud",
    "~/.kube",
    "~/.netrc",
    "~/.git-credentials",
    "~/.pypirc",
    "$XDG_CONFIG_HOME/sagent",  # sagent's settings, trusted folders, tokens
    "$XDG_DATA_HOME/sagent",  # every project's session logs, the typed-input history
)
# Inside a writable root, these stay read-only where they exist: a command that rewrote them would run
# code (or loosen sagent's settings) outside the sandbox the next time git, a shell or sagent starts.
PROTECTED_NAMES: tuple[str, ...] = (
    ".git/hooks",
    ".git/config",
    ".sagent",
    ".mcp.json",
    ".claude",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".gitconfig",
    ".config/git",
)


class SandboxError(ValueError):
    """A sandbox setting that cannot be used; one line naming the key and the value."""


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """The sandbox every Bash command of an agent runs in (see docs/tools.md, Bash)."""

    mode: SandboxMode = "workspace-write"
    """read-only: nothing is writable (but a scratch $TMPDIR, emptied at the end); workspace-write: the
    workspace (the working directory and the project's roots), /tmp, $TMPDIR and `writable_roots`;
    danger-full-access: no sandbox."""
    network: bool = False
    """True: the whole network (unless `allowed_domains` narrows it). False: none, but `allowed_domains`."""
    allowed_domains: tuple[str, ...] = ()
    """Hosts reachable through sagent's proxy (HTTP and HTTPS, `*.example.com` for subdomains); when any
    is given, every other host is refused, whatever `network` says."""
    writable_roots: tuple[str, ...] = ()
    """More folders commands may write to, absolute (a `~` is expanded)."""
    deny_read: tuple[str, ...] = DEFAULT_DENY_READ
    """Paths commands may neither read nor write (a folder shows empty, a file empty)."""
    required: bool = False
    """True: a run where the sandbox cannot start fails instead of running commands without it."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise SandboxError(f"sandbox mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        for name in ("allowed_domains", "writable_roots", "deny_read"):
            value: object = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(v, str) for v in cast("tuple[object, ...]", value)):
                raise SandboxError(f"sandbox {name} must be a list of strings")
            object.__setattr__(self, name, tuple(cast("tuple[str, ...]", value)))
        for domain in self.allowed_domains:
            check_domain(domain)

    @property
    def confines(self) -> bool:
        """Whether the policy asks for a sandbox at all (every mode but danger-full-access)."""
        return self.mode != "danger-full-access"

    @property
    def uses_proxy(self) -> bool:
        return self.confines and bool(self.allowed_domains)

    @property
    def full_network(self) -> bool:
        return not self.confines or (self.network and not self.allowed_domains)

    def with_mode(self, mode: str) -> SandboxPolicy:
        return replace(self, mode=parse_mode(mode))

    def describe(self, roots: tuple[Path, ...] = ()) -> list[str]:
        """The policy in a few lines, for /status, /permissions and a headless run's start."""
        if not self.confines:
            return ["sandbox: danger-full-access (commands run without a sandbox)"]
        lines = [f"sandbox: {self.mode}" + (" (required)" if self.required else "")]
        if self.mode == "workspace-write":
            writable = [*map(str, roots), "/tmp", *([os.environ["TMPDIR"]] if os.environ.get("TMPDIR") else [])]
            writable += [str(expand(r)) for r in self.writable_roots]
            lines.append("  writable: " + ", ".join(dict.fromkeys(writable)))
        if self.allowed_domains:
            lines.append("  network: only " + ", ".join(self.allowed_domains) + " (through sagent's proxy)")
        else:
            lines.append("  network: " + ("on" if self.network else "off"))
        lines.append("  not readable: " + ", ".join(self.deny_read))
        return lines


def parse_mode(text: str) -> SandboxMode:
    if text not in MODES:
        raise SandboxError(f"{text!r} is not a sandbox mode ({', '.join(MODES)})")
    return text


def check_domain(domain: str) -> None:
    """A domain pattern: a host name, an IP address, or `*.` and a host name."""
    host = domain[2:] if domain.startswith("*.") else domain
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789-.:[]")
    if not host or not set(host.lower()) <= allowed or host.startswith(".") or "*" in host:
        raise SandboxError(f"{domain!r} is not a domain (a host name, or *.example.com for its subdomains)")


def domain_allowed(host: str, patterns: tuple[str, ...]) -> bool:
    """Whether `host` is one of `patterns` (case-insensitive; `*.example.com` matches its subdomains only)."""
    host = host.lower().rstrip(".").strip("[]")
    for pattern in patterns:
        pattern = pattern.lower().strip("[]")
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]) and len(host) > len(pattern) - 1:
                return True
        elif host == pattern:
            return True
    return False


def expand(path: str) -> Path:
    """`~`, `$XDG_CONFIG_HOME` and `$XDG_DATA_HOME` (with their defaults) expanded; the path made absolute."""
    home = Path.home()
    if path.startswith("$XDG_CONFIG_HOME"):
        base = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
        path = base + path[len("$XDG_CONFIG_HOME") :]
    elif path.startswith("$XDG_DATA_HOME"):
        base = os.environ.get("XDG_DATA_HOME") or str(home / ".local" / "share")
        path = base + path[len("$XDG_DATA_HOME") :]
    return Path(os.path.abspath(os.path.expanduser(path)))


SETTINGS_MEMBERS = ("mode", "network", "allowedDomains", "writableRoots", "denyRead", "required")


def from_settings(value: dict[str, Any], where: str = "sandbox") -> SandboxPolicy:
    """A policy from the settings key `sandbox` (`{"mode", "network", "allowedDomains", "writableRoots",
    "denyRead", "required"}`); `denyRead` adds to the default list. SandboxError names the member at fault."""
    options: dict[str, Any] = {}
    for member, inner in value.items():
        key = f"{where}.{member}"
        if member == "mode":
            if not isinstance(inner, str) or inner not in MODES:
                raise SandboxError(f"{key}: must be one of {', '.join(MODES)}, not {inner!r}")
            options["mode"] = parse_mode(inner)
        elif member in ("network", "required"):
            if not isinstance(inner, bool):
                raise SandboxError(f"{key}: must be true or false")
            options[member] = inner
        elif member in ("allowedDomains", "writableRoots", "denyRead"):
            if not isinstance(inner, list) or not all(isinstance(v, str) and v.strip() for v in inner):
                raise SandboxError(f"{key}: must be a list of strings")
            if member == "writableRoots" and any(not expand(v).is_dir() for v in inner):
                missing = next(v for v in inner if not expand(v).is_dir())
                raise SandboxError(f"{key}: {missing} is not a folder")
            try:
                for v in inner if member == "allowedDomains" else ():
                    check_domain(v)
            except SandboxError as error:
                raise SandboxError(f"{key}: {error}") from None
            name = {"allowedDomains": "allowed_domains", "writableRoots": "writable_roots"}.get(member, "deny_read")
            options[name] = tuple(inner) if member != "denyRead" else (*DEFAULT_DENY_READ, *inner)
        else:
            raise SandboxError(f"{key}: unknown member (the members are: {', '.join(SETTINGS_MEMBERS)})")
    return SandboxPolicy(**options)


DEFAULT = SandboxPolicy()
OFF = SandboxPolicy(mode="danger-full-access")
