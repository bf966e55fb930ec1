"""A sub-agent on a fleet worker runs its Bash in the stricter of the worker's OS sandbox and its parent's: a
parent in read-only cannot get a file written by a child on a worker that runs without a sandbox.

The end-to-end case uses real processes (a nats-server, `sagent serve` hosts, fake Anthropic servers) and the
real bubblewrap sandbox; it skips where the sandbox cannot start."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sagent.fleet_nats.policy import parse_tree_policy
from sagent.permissions.transfer import PolicyWireError
from sagent.sandbox.policy import DEFAULT, OFF, SandboxError, SandboxPolicy
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.nats_server import NatsServer
from tests.fleet_nats.helpers import Served, fleet, wait_until
from tests.security.test_fleet_policy import OPEN_WORKER, child_script, lead_script

STRICTER = [
    # (worker's, parent's, what the child gets)
    (OFF, SandboxPolicy(mode="read-only"), "read-only"),
    (SandboxPolicy(mode="read-only"), OFF, "read-only"),
    (OFF, DEFAULT, "workspace-write"),
    (DEFAULT, OFF, "workspace-write"),
    (OFF, OFF, "danger-full-access"),
]


@pytest.mark.parametrize(("worker", "parent", "mode"), STRICTER)
def test_the_stricter_mode_wins_whichever_side_holds_it(
    worker: SandboxPolicy, parent: SandboxPolicy, mode: str
) -> None:
    assert worker.stricter(parent).mode == mode


def test_network_domains_roots_and_denied_paths_combine_to_what_both_allow() -> None:
    open_net = SandboxPolicy(network=True, writable_roots=("/srv/a", "/srv/b"), deny_read=("~/.ssh",))
    closed = SandboxPolicy(network=False, writable_roots=("/srv/b",), deny_read=("~/.aws",))
    both = open_net.stricter(closed)
    assert not both.network and not both.allowed_domains
    assert both.writable_roots == ("/srv/b",)
    assert set(both.deny_read) == {"~/.ssh", "~/.aws"}

    pypi = SandboxPolicy(allowed_domains=("pypi.org", "*.pythonhosted.org"))
    assert open_net.stricter(pypi).allowed_domains == ("pypi.org", "*.pythonhosted.org")
    files = SandboxPolicy(allowed_domains=("files.pythonhosted.org", "example.com"))
    assert set(pypi.stricter(files).allowed_domains) == {"files.pythonhosted.org"}
    disjoint = pypi.stricter(SandboxPolicy(allowed_domains=("example.com",)))
    assert disjoint.allowed_domains == () and not disjoint.network and not disjoint.full_network
    assert SandboxPolicy(required=True).stricter(DEFAULT).required


@pytest.mark.parametrize(
    "policy", [DEFAULT, OFF, SandboxPolicy("read-only", True, ("a.test",), ("/x",), ("~/.y",), True)]
)
def test_a_policy_crosses_the_wire_unchanged(policy: SandboxPolicy) -> None:
    assert SandboxPolicy.from_wire(json.loads(json.dumps(policy.to_wire()))) == policy


BAD_SANDBOXES = [
    "read-only",
    [],
    {"mode": "read-only"},
    {**DEFAULT.to_wire(), "mode": "none"},
    {**DEFAULT.to_wire(), "network": "yes"},
    {**DEFAULT.to_wire(), "denyRead": "~/.ssh"},
    {**DEFAULT.to_wire(), "allowedDomains": ["*"]},
    {**DEFAULT.to_wire(), "extra": 1},
]


@pytest.mark.parametrize("sandbox", BAD_SANDBOXES)
def test_a_sandbox_the_worker_cannot_read_refuses_the_spawn(sandbox: object) -> None:
    with pytest.raises(SandboxError):
        SandboxPolicy.from_wire(sandbox)
    policy = {"version": 1, "permissions": [], "unanswered": "allow", "sandbox": sandbox}
    with pytest.raises(PolicyWireError):
        parse_tree_policy(policy, "/")


def test_a_child_on_an_unsandboxed_worker_writes_nothing_for_a_read_only_parent(
    nats: NatsServer,
    tmp_path: Path,
) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap); .ci/run installs it")
    markers = tmp_path / "markers"
    markers.mkdir()
    with (
        FakeAnthropic([lead_script(False)] * 6) as lead_fake,
        FakeAnthropic([child_script(markers)] * 4) as worker_fake,
    ):
        # The worker runs anything, unsandboxed: only the parent's read-only sandbox stands in the way.
        worker = Served(nats, "f1", "worker1", worker_fake, tmp_path / "w", *OPEN_WORKER)
        lead = Served(
            nats,
            "f1",
            "lead",
            lead_fake,
            tmp_path / "l",
            "--permission-mode",
            "bypassPermissions",
            "--sandbox",
            "read-only",
        )
        try:
            assert fleet(nats, "f1", lead.env, "send", "lead", "go").returncode == 0
            wait_until(lambda: len(worker_fake.requests) >= 2, "the child to try its calls and answer")
            results = json.dumps(worker_fake.requests[1]["body"]["messages"][-1]["content"])
            assert not (markers / "bash-ran").exists(), results
            assert (markers / "write-ran").exists()  # the Write tool is sagent's own, held by the rules alone
        finally:
            lead.stop()
            worker.stop()
