"""What a sub-agent on another process carries of its parent tree's policy, and how the worker applies it.

A spawn request (`remote.spawn_remote`) holds one `policy` object:

    {"version": 1,
     "permissions": [POLICY, ...],     # the parent's own, then each ancestor's (see `permissions.transfer`)
     "unanswered": "allow" | "deny" | "parent",   # what a call that would ask does on the worker
     "sandbox": SANDBOX}               # the parent's OS sandbox (`SandboxPolicy.to_wire`), when it sent one

The worker (`child_permissions`) gives the child its own policy with the parent's policies as `inherited`:
`sagent.permissions.policy.decide` holds every call to each of them and the strictest answer wins (deny
beats ask beats allow), exactly as for a local sub-agent under its ancestors. Plan mode in the parent
means plan mode for the child; a deny rule of any of them holds; the worker's own rules still hold too.

Nobody on the worker approves the child's calls. A call that would ask goes to the parent's approver
when the parent has one (`unanswered` is "parent": a person at the REPL, an application's approver; see
`approval`), and is refused when that cannot be reached. Otherwise it is refused when any of the tree's
policies has a headless default of "deny" (`unanswered` "deny"), and runs when none has ("allow"), as it
would have in the parent's own process. The child's Bash runs in the stricter of the worker's sandbox and
the parent's (`SandboxPolicy.stricter`): a parent in read-only gets no writes from its child on a worker
that runs with danger-full-access.

A request without a `policy`, or with one that cannot be read, is refused: a worker never runs a
sub-agent without its parent's policy. New fields join `policy` next to `permissions` (the OS sandbox's
settings, say): `parse_tree_policy` refuses fields it does not know, so an old worker never ignores one.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from sagent.permissions.policy import Permissions, policies
from sagent.permissions.transfer import PolicyWireError, policy_from_wire, policy_to_wire
from sagent.sandbox.policy import SandboxError, SandboxPolicy

if TYPE_CHECKING:
    from sagent.agent.agent import Agent
    from sagent.agent.hooks import Approver
    from sagent.agent.settings import AgentSettings

Unanswered = Literal["allow", "deny", "parent"]
VERSION = 1
FIELDS = frozenset({"version", "permissions", "unanswered", "sandbox"})


@dataclass(frozen=True, slots=True)
class TreePolicy:
    """The parent tree's policy as a worker reads it from a spawn request."""

    permissions: tuple[Permissions, ...]
    """The parent's policy and its ancestors' (empty when the parent runs without one)."""
    unanswered: Unanswered
    """What a call that would ask does on the worker: run, be refused, or go to the parent's approver."""
    sandbox: SandboxPolicy | None = None
    """The parent's OS sandbox (None from a parent that sent none: the worker's own alone holds)."""


def tree_policy_wire(parent: Agent) -> dict[str, Any]:
    """The `policy` field of a spawn request by `parent`."""
    found: list[Permissions] = []
    for policy in policies(parent):
        if not any(policy is seen for seen in found):
            found.append(policy)
    root = str(parent.context.cwd)
    if parent.settings.approver is not None:
        unanswered = "parent"  # its approver answers (or, when it cannot be reached, the call is refused)
    else:
        unanswered = "deny" if any(p.headless == "deny" for p in found) else "allow"
    return {
        "version": VERSION,
        "permissions": [policy_to_wire(dataclasses.replace(p, inherited=()), root) for p in found],
        "unanswered": unanswered,
        "sandbox": parent.settings.sandbox.to_wire(),
    }


def parse_tree_policy(data: object, cwd: str) -> TreePolicy:
    """The tree policy of a spawn request, its relative rules anchored at `cwd`; PolicyWireError when it
    is missing or cannot be read (the spawn must then be refused)."""
    if data is None:
        raise PolicyWireError("the request carries no permission policy; the worker runs no sub-agent without one")
    if not isinstance(data, dict):
        raise PolicyWireError(f"the permission policy is an object, not {type(data).__name__}")
    unknown = set(data) - FIELDS
    if unknown:
        raise PolicyWireError(f"the permission policy has a field this worker does not know: {sorted(unknown)[0]!r}")
    if data.get("version") != VERSION:
        raise PolicyWireError(f"the permission policy is version {data.get('version')!r}; this worker reads {VERSION}")
    unanswered = data.get("unanswered")
    if unanswered not in ("allow", "deny", "parent"):
        raise PolicyWireError(f"the permission policy's unanswered is allow, deny or parent, not {unanswered!r}")
    entries = data.get("permissions")
    if not isinstance(entries, list):
        raise PolicyWireError("the permission policy's permissions are a list")
    sandbox = None
    if data.get("sandbox") is not None:
        try:
            sandbox = SandboxPolicy.from_wire(data["sandbox"])
        except SandboxError as error:
            raise PolicyWireError(f"the policy's sandbox cannot be read: {error}") from None
    return TreePolicy(tuple(policy_from_wire(entry, cwd) for entry in entries), unanswered, sandbox)


def child_settings(settings: AgentSettings, tree: TreePolicy, approver: Approver | None = None) -> AgentSettings:
    """`settings` (the worker's own, for its child) bound by the parent tree's policy as well: the child's
    policy is the worker's with the tree's inherited, its permission hook is in place, and its approver is
    `approver` (the parent's, over the bus) when the tree says to ask the parent, else none."""
    from sagent.permissions.policy import PermissionHook

    own = settings.permissions
    if not isinstance(own, Permissions):  # a worker without a policy of its own: the tree's alone decides
        own = Permissions(mode="bypassPermissions", mode_origin="the worker has no policy of its own")
    carried = tuple(  # with the parent to ask, an unanswerable question is refused, never let through
        dataclasses.replace(p, headless="deny") if tree.unanswered != "allow" else p for p in tree.permissions
    )
    hooks = settings.hooks
    if not any(isinstance(hook, PermissionHook) for hook in hooks):
        hooks = (*hooks, PermissionHook())
    return dataclasses.replace(
        settings,
        permissions=dataclasses.replace(own, inherited=(*own.inherited, *carried)),
        hooks=hooks,
        approver=approver if tree.unanswered == "parent" else None,
        sandbox=settings.sandbox if tree.sandbox is None else settings.sandbox.stricter(tree.sandbox),
    )
