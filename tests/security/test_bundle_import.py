"""Hostile session bundles: `sagent sessions import DIR` refuses each one whole, with exit code 1 and a line
naming the file and what is wrong, and writes nothing: names with `..` or absolute ones, symbolic links
(to a file and to a folder), a huge (sparse) file, a file added, removed or changed, a log whose hash chain
breaks even though bundle.json was rewritten to match it, and a file swapped while it is copied in."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.session import SessionLog, sessions_dir
from sagent.cli.main import main as cli
from sagent.evidence import bundle as bundle_module
from sagent.evidence.bundle import BundleError, export_bundle, import_bundle
from sagent.providers.scripted import ScriptedModel, text_turn


@pytest.fixture
def bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bundle of a small session (a log and a spilled output), and the working directory of the import."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    log = SessionLog.create(tmp_path, {"provider": "scripted", "model": "m"}, directory=tmp_path / "src")
    import asyncio

    async def run() -> None:
        agent = Agent(ScriptedModel([text_turn("hello")]), session=log, cwd=tmp_path)
        async for _ in agent.run("hi"):
            pass
        await agent.aclose()

    asyncio.run(run())
    assert log.path is not None and log.session_dir is not None
    (log.session_dir / "outputs").mkdir(parents=True)
    (log.session_dir / "outputs" / "out.txt").write_text("output\n")
    folder = tmp_path / "bundle"
    export_bundle(log.path, folder)
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    return folder


def manifest(folder: Path) -> dict:
    return json.loads((folder / "bundle.json").read_text())


def rewrite(folder: Path, data: dict) -> None:
    (folder / "bundle.json").write_text(json.dumps(data))


def relist(folder: Path) -> None:
    """bundle.json rewritten to match the files as they are now: what a forger does."""
    data = manifest(folder)
    for entry in data["files"]:
        content = (folder / entry["path"]).read_bytes()
        entry["size"], entry["sha256"] = len(content), hashlib.sha256(content).hexdigest()
    rewrite(folder, data)


def refused(folder: Path, capsys: pytest.CaptureFixture[str], why: str) -> None:
    assert cli(["sessions", "import", str(folder)]) == 1
    err = capsys.readouterr().err
    assert f"refused {folder}" in err and why in err and "nothing was imported" in err, err
    written = sessions_dir(Path.cwd())
    assert not written.exists() or not [p for p in written.iterdir() if not p.name.startswith(".")]
    assert not written.exists() or not list(written.iterdir())  # no staging folder left either
    assert cli(["sessions", "verify", str(folder)]) == 1
    assert why in capsys.readouterr().out


def session_of(folder: Path) -> str:
    return str(manifest(folder)["session"])


@pytest.mark.parametrize(
    "name",
    ["../escape.txt", "/etc/passwd", "{s}/../../escape.txt", "{s}/./x", "other/x", "{s}\\..\\x", ""],
)
def test_names_that_leave_the_bundle_are_refused(bundle: Path, capsys, name: str) -> None:
    data = manifest(bundle)
    data["files"].append({"path": name.format(s=data["session"]), "size": 0, "sha256": hashlib.sha256().hexdigest()})
    rewrite(bundle, data)
    refused(bundle, capsys, "file name")
    assert not (bundle.parent / "escape.txt").exists()


def test_a_symbolic_link_is_refused_wherever_it_is(bundle: Path, tmp_path: Path, capsys) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("my key")
    out = bundle / session_of(bundle) / "outputs" / "out.txt"
    out.unlink()
    out.symlink_to(secret)
    relist(bundle)
    refused(bundle, capsys, "a symbolic link")
    out.unlink()
    out.write_text("output\n")
    relist(bundle)
    (bundle / session_of(bundle) / "agents").symlink_to(tmp_path, target_is_directory=True)
    refused(bundle, capsys, "a symbolic link")


def test_a_huge_file_is_refused_without_being_read(bundle: Path, capsys, monkeypatch) -> None:
    out = bundle / session_of(bundle) / "outputs" / "out.txt"
    with out.open("r+b") as file:
        file.truncate(3 << 30)  # sparse: 3 GiB that take no disk
    refused(bundle, capsys, "bytes where bundle.json says")
    reads: list[Path] = []
    monkeypatch.setattr(bundle_module, "_sha256_file", lambda path, limit: reads.append(path) or (0, ""))
    data = manifest(bundle)
    entry = next(e for e in data["files"] if e["path"].endswith("out.txt"))
    entry["size"] = 3 << 30  # listed as it is: over the limit a file may have
    rewrite(bundle, data)
    refused(bundle, capsys, "more than the")
    assert reads == []


def test_a_partial_or_changed_bundle_is_refused(bundle: Path, capsys) -> None:
    out = bundle / session_of(bundle) / "outputs" / "out.txt"
    out.write_text("outpot\n")  # changed, same size
    refused(bundle, capsys, "its SHA-256 is not the one bundle.json lists")
    out.write_text("output\n")
    (bundle / session_of(bundle) / "outputs" / "added.txt").write_text("x")
    refused(bundle, capsys, "not in bundle.json")
    (bundle / session_of(bundle) / "outputs" / "added.txt").unlink()
    out.unlink()
    refused(bundle, capsys, "missing (the bundle is partial)")
    out.write_text("output\n")
    (bundle / "bundle.json").unlink()
    refused(bundle, capsys, "not a session bundle")


def test_a_log_that_fails_its_chain_is_refused_even_when_relisted(bundle: Path, capsys) -> None:
    log = bundle / f"{session_of(bundle)}.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    record = json.loads(lines[1])
    record["event"] = {**record["event"], "forged": True}  # an edited record, its hash left as it was
    lines[1] = json.dumps(record).encode() + b"\n"
    log.write_bytes(b"".join(lines))
    relist(bundle)
    refused(bundle, capsys, "record 2")
    del lines[1]  # a record taken out: the chain breaks at the next one
    log.write_bytes(b"".join(lines))
    relist(bundle)
    refused(bundle, capsys, f"{log.name}: record 2")


def test_a_log_under_another_sessions_name_is_refused(bundle: Path, tmp_path: Path, capsys) -> None:
    # A whole, valid log of another session put in as this one's: its header says whose it is.
    other = SessionLog.create(tmp_path, {"provider": "scripted", "model": "m"}, directory=tmp_path / "other")
    other.close()
    assert other.path is not None
    (bundle / f"{session_of(bundle)}.jsonl").write_bytes(other.path.read_bytes())
    relist(bundle)
    refused(bundle, capsys, f"its header names session '{other.id}'")


def test_a_file_swapped_during_the_copy_is_caught(bundle: Path, monkeypatch) -> None:
    real = bundle_module.verify_bundle
    out = bundle / session_of(bundle) / "outputs" / "out.txt"

    def then_swap(folder: Path) -> bundle_module.BundleReport:
        report = real(folder)
        out.write_text("swaped\n")  # same size, other bytes, after the check
        return report

    monkeypatch.setattr(bundle_module, "verify_bundle", then_swap)
    target = sessions_dir(Path.cwd())
    with pytest.raises(BundleError, match="changed while it was being copied"):
        import_bundle(bundle, target)
    assert list(target.iterdir()) == []
    assert os.listdir(bundle)  # the bundle itself is left as it was
