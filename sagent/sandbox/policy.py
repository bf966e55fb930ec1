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

    def stricter(self, other: SandboxPolicy) -> SandboxPolicy:
        """What both policies allow, and no more: the narrower mode, network only where both give it (the
        domains both allow, when either names some), the writable roots both name, every path either
        denies, and required when either requires it. A fleet worker holds a parent's sub-agent to this."""
        mode = MODES[min(MODES.index(self.mode), MODES.index(other.mode))]
        mine, theirs = self.allowed_domains, other.allowed_domains
        if mine and theirs:
            domains = tuple(
                dict.fromkeys(
                    [d for d in mine if d in theirs or (not d.startswith("*.") and domain_allowed(d, theirs))]
                    + [d for d in theirs if not d.startswith("*.") and domain_allowed(d, mine)]
                )
            )
            network = False
        else:
            domains = mine or theirs
            network = self.network and other.network
        if (mine or theirs) and not domains:  # both narrowed, to no host in common: no network at all
            network = False
        return SandboxPolicy(
            mode=mode,
            network=network,
            allowed_domains=domains,
            writable_roots=tuple(r for r in self.writable_roots if r in other.writable_roots),
            deny_read=tuple(dict.fromkeys((*self.deny_read, *other.deny_read))),
            required=self.required or other.required,
        )

    def to_wire(self) -> dict[str, Any]:
        """The policy as JSON, as `from_wire` reads it (a spawn request to a fleet worker carries it)."""
        return {
            "mode": self.mode,
            "network": self.network,
            "allowedDomains": list(self.allowed_domains),
            "writableRoots": list(self.writable_roots),
            "denyRead": list(self.deny_read),
            "required": self.required,
        }

    @classmethod
    def from_wire(cls, data: object) -> SandboxPolicy:
        """A policy `to_wire` wrote; SandboxError when it is not one (every member must be there)."""
        if not isinstance(data, dict) or set(data) != set(SETTINGS_MEMBERS):
            raise SandboxError(f"a sandbox policy has exactly the members {', '.join(SETTINGS_MEMBERS)}")
        if not isinstance(data["mode"], str) or not all(isinstance(data[k], bool) for k in ("network", "required")):
            raise SandboxError("a sandbox policy's mode is a string, its network and required true or false")
        lists = [data[k] for k in ("allowedDomains", "writableRoots", "denyRead")]
        if not all(isinstance(v, list) for v in lists):
            raise SandboxError("a sandbox policy's allowedDomains, writableRoots and denyRead are lists")
        domains, roots, denied = (tuple(v) for v in lists)
        return cls(parse_mode(data["mode"]), data["network"], domains, roots, denied, data["required"])

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
    from sagent.lib.xdg import config_home, data_home  # a relative value is ignored, as everywhere

    if path.startswith("$XDG_CONFIG_HOME"):
        path = str(config_home()) + path[len("$XDG_CONFIG_HOME") :]
    elif path.startswith("$XDG_DATA_HOME"):
        path = str(data_home()) + path[len("$XDG_DATA_HOME") :]
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
