"""The macOS Seatbelt profile, checked as text (no Mac here to run it): writes only under the workspace,
/tmp and $TMPDIR, the protected files and denied paths refused after those allows, no network unless asked."""

from __future__ import annotations

from pathlib import Path

from sagent.sandbox import SandboxPolicy
from sagent.sandbox.seatbelt import seatbelt_profile


def test_workspace_write_allows_the_workspace_and_tmp_and_denies_the_rest() -> None:
    text = seatbelt_profile(SandboxPolicy(), (Path("/Users/a/proj"),), tmpdir="/var/folders/xy/T")
    lines = text.splitlines()
    assert lines[0] == "(version 1)" and "(deny default)" in lines
    allow = next(line for line in lines if line.startswith("(allow file-write* "))
    for path in ("/Users/a/proj", "/private/tmp", "/var/folders/xy/T"):
        assert f'(subpath "{path}")' in allow
    deny = next(line for line in lines if line.startswith("(deny file-write* "))
    assert '(subpath "/Users/a/proj/.git/hooks")' in deny and '(subpath "/Users/a/proj/.sagent")' in deny
    assert lines.index(deny) > lines.index(allow)  # SBPL: the later rule wins
    hidden = next(line for line in lines if line.startswith("(deny file-read* file-write* "))
    assert f'(subpath "{Path.home() / ".ssh"}")' in hidden
    assert "(allow network*)" not in text


def test_read_only_writes_nothing_and_network_is_asked_for() -> None:
    text = seatbelt_profile(SandboxPolicy(mode="read-only"), (Path("/w"),))
    assert "(allow file-write* " not in text and "(allow network*)" not in text
    assert "(allow network*)" in seatbelt_profile(SandboxPolicy(network=True), (Path("/w"),))


def test_a_path_with_quotes_cannot_break_out_of_its_string() -> None:
    text = seatbelt_profile(SandboxPolicy(), (Path('/w/a") (allow default) ("'),))
    assert '(subpath "/w/a\\") (allow default) (\\"")' in text  # one string, its quotes escaped
