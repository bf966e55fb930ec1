"""A `Permissions` as plain JSON data and back, to carry a policy to another process (a fleet worker).

    data = policy_to_wire(policy, project_root="/home/me/app")
    again = policy_from_wire(data, cwd="/srv/worker/app")      # PolicyWireError when it cannot be read

What travels is what decides: the mode (and where it came from), each allow/ask/deny rule as its text with
its origin, the headless default, and the extra project roots. The rules are parsed again on the other
side, so a rule means there what its text means there:

- a path rule relative to the project (`Edit(src/**)`, `Read(.env)`) is anchored at the receiver's working
  directory, its project; `~/` is the receiver's home; an absolute pattern stays absolute. A deny or ask
  rule whose absolute pattern lies inside the sender's project is carried twice: as written, and relative
  to the project, so `Read(/home/me/app/secrets/**)` also covers `secrets/**` on the worker. Allow rules
  are carried only as written (a copy could only loosen);
- an extra root (`--add-dir`) inside the sender's project travels relative to it and is anchored at the
  receiver's project; one outside it names a folder on the sender's machine and is dropped. A policy with
  fewer roots asks more, never less.

Reading is strict: anything that is not exactly this shape (an unknown mode, a rule that does not parse,
a list where a string belongs) is a `PolicyWireError`, and the receiver must refuse the work that came
with it rather than run without the policy.
"""

from __future__ import annotations

import os
from typing import Any

from sagent.permissions.modes import parse_mode
from sagent.permissions.policy import Permissions
from sagent.permissions.rules import Rule, RuleError, parse_rule

LISTS = ("allow", "ask", "deny")


class PolicyWireError(ValueError):
    """A policy on the wire that cannot be read; the message says what is wrong with it."""


def policy_to_wire(policy: Permissions, project_root: str) -> dict[str, Any]:
    """`policy` as JSON data; `project_root` is the sender's project (where its relative rules start)."""
    root = os.path.realpath(project_root)
    data: dict[str, Any] = {
        "mode": policy.mode,
        "mode_origin": policy.mode_origin,
        "headless": policy.headless,
        "roots": [rel for rel in (_relative(r, root) for r in policy.roots) if rel is not None],
    }
    for which in LISTS:
        rules: tuple[Rule, ...] = getattr(policy, which)
        entries = [{"rule": rule.text, "origin": rule.origin} for rule in rules]
        if which != "allow":
            entries += [{"rule": twin, "origin": rule.origin} for rule in rules if (twin := _twin(rule, root))]
        data[which] = entries
    return data


def policy_from_wire(data: object, cwd: str) -> Permissions:
    """The policy `data` describes, its relative rules and roots anchored at `cwd`; PolicyWireError when
    `data` is not exactly a policy."""
    if not isinstance(data, dict):
        raise PolicyWireError(f"a policy is an object, not {type(data).__name__}")
    unknown = set(data) - {"mode", "mode_origin", "headless", "roots", *LISTS}
    if unknown:
        raise PolicyWireError(f"a policy has no field {sorted(unknown)[0]!r}")
    mode = data.get("mode")
    if not isinstance(mode, str):
        raise PolicyWireError("a policy names its mode")
    headless = data.get("headless")
    if headless not in ("allow", "deny"):
        raise PolicyWireError(f"a policy's headless default is allow or deny, not {headless!r}")
    roots = data.get("roots", [])
    if not isinstance(roots, list) or not all(isinstance(r, str) and not os.path.isabs(r) for r in roots):
        raise PolicyWireError("a policy's roots are a list of paths relative to the project")
    origin = data.get("mode_origin", "")
    if not isinstance(origin, str):
        raise PolicyWireError("a policy's mode origin is text")
    root = os.path.realpath(cwd)
    try:
        chosen = parse_mode(mode)
        rules = {which: tuple(_rule(entry, root) for entry in _entries(data, which)) for which in LISTS}
    except (RuleError, ValueError) as error:
        raise PolicyWireError(str(error)) from None
    return Permissions(
        mode=chosen,
        allow=rules["allow"],
        ask=rules["ask"],
        deny=rules["deny"],
        roots=tuple(os.path.realpath(os.path.join(root, r)) for r in roots),
        headless=headless,
        mode_origin=origin or "the parent agent",
        started_in_bypass=chosen == "bypassPermissions",
    )


def _entries(data: dict[str, Any], which: str) -> list[dict[str, Any]]:
    entries = data.get(which, [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise PolicyWireError(f"a policy's {which} rules are a list of objects")
    return entries


def _rule(entry: dict[str, Any], root: str) -> Rule:
    text, origin = entry.get("rule"), entry.get("origin", "")
    if not isinstance(text, str) or not isinstance(origin, str) or set(entry) - {"rule", "origin"}:
        raise PolicyWireError(f"a rule is {{'rule': TEXT, 'origin': TEXT}}, not {entry!r}")
    return parse_rule(text, origin, root)


def _relative(path: str, root: str) -> str | None:
    """`path` relative to `root` when it lies inside it (None otherwise)."""
    real = os.path.realpath(path)
    if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
        return os.path.relpath(real, root)
    return None


def _twin(rule: Rule, root: str) -> str | None:
    """A path rule's text with its absolute pattern inside the project made relative to it (None when it
    has no such pattern)."""
    if rule.kind != "path" or not rule.spec.startswith("/"):
        return None
    spec = "/" + rule.spec.lstrip("/")
    prefix = root.rstrip(os.sep) + os.sep
    if not spec.startswith(prefix):
        return None
    rest = spec[len(prefix) :]
    return f"{rule.tool}({rest})" if rest and not rest.startswith("/") else None
