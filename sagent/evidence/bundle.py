"""A portable session bundle: a session's whole tree (its log, its sub-agents' logs, its spilled outputs,
checkpoints and other side files) copied into one folder with a manifest, checked as a whole before it is
taken back in.

    report = export_bundle(log_path, Path("bundle"))   # <id>.jsonl, <id>/..., bundle.json
    check = verify_bundle(Path("bundle"))               # every file's size and SHA-256, every hash chain
    path = import_bundle(Path("bundle"), sessions_dir(cwd))

`bundle.json` names the session and lists every file (a relative path, its size and SHA-256); nothing else
may be in the folder. A bundle is refused whole, before anything is written, when it is not what it says:
a file missing (partial) or not listed, a size or hash that differs (tampered), a name that is absolute,
holds `..` or leaves the session's tree, a symbolic link or anything but a plain file, a file larger than
the limits, or a log whose hash chain, capsules or handoffs do not check out (`verify_tree`). The files are
read again while they are copied in, so a file changed between the check and the copy is caught too.

The manifest's own SHA-256 (`bundle_sha256`, printed on export and verify) names the whole bundle: a
recipient who learns it from the sender by another way knows the bundle is the one sent, which the
file hashes alone cannot say (whoever changes a file can rewrite them).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from sagent.evidence.verify import TreeReport, verify_tree
from sagent.lib.json import JSON, canonical_json

BUNDLE_FILE = "bundle.json"
FORMAT = "sagent-session-bundle"
VERSION = 1
MAX_MANIFEST_BYTES = 16 << 20
MAX_FILE_BYTES = 1 << 30
MAX_TOTAL_BYTES = 8 << 30
SKIPPED_SUFFIXES = (".lock",)  # who holds a log's lock: of this machine, meaningless in a copy
_CHUNK = 1 << 20


class BundleError(Exception):
    """A bundle that cannot be written, or that is refused: the message says which file and why."""


@dataclass(frozen=True, slots=True)
class BundleFile:
    """One file of a bundle: its path inside the bundle (POSIX, relative), size and SHA-256."""

    path: str
    size: int
    sha256: str


@dataclass(slots=True)
class BundleReport:
    """What an export wrote or a check found: the session, its files, the tree's check, the bundle's id."""

    folder: Path
    session: str
    files: list[BundleFile] = field(default_factory=list)
    tree: TreeReport | None = None
    bundle_sha256: str = ""
    skipped: list[str] = field(default_factory=list)

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.files)


# ------------------------------------------------------------------------------------------ export


def _sha256_file(path: Path, limit: int) -> tuple[int, str]:
    """The size and SHA-256 of the plain file at `path`, read without following a link, refusing more than
    `limit` bytes."""
    digest, size = hashlib.sha256(), 0
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise BundleError(f"{path}: not a plain file")
        while chunk := file.read(_CHUNK):
            size += len(chunk)
            if size > limit:
                raise BundleError(f"{path}: larger than {limit:,} bytes")
            digest.update(chunk)
    return size, digest.hexdigest()


def _tree_files(log: Path, checkpoints: bool) -> tuple[list[tuple[str, Path]], list[str]]:
    """The files of the session tree at `log` (bundle path, source) and what was left out (links, locks)."""
    root = log.parent
    found: list[tuple[str, Path]] = [(log.name, log)]
    skipped: list[str] = []
    side = log.with_suffix("")
    if not side.is_dir() or side.is_symlink():
        return found, skipped
    for folder, dirs, files in os.walk(side):  # os.walk does not follow links to folders
        here = Path(folder)
        for name in sorted(dirs):
            if (here / name).is_symlink():
                skipped.append(f"{(here / name).relative_to(root).as_posix()} (a symbolic link)")
            elif not checkpoints and name == "checkpoints":
                skipped.append(f"{(here / name).relative_to(root).as_posix()}/ (checkpoints left out)")
        dirs[:] = sorted(d for d in dirs if not (here / d).is_symlink() and (checkpoints or d != "checkpoints"))
        for name in sorted(files):
            source = here / name
            relative = source.relative_to(root).as_posix()
            if name.endswith(SKIPPED_SUFFIXES):
                continue
            if source.is_symlink() or not source.is_file():
                skipped.append(f"{relative} (a symbolic link)" if source.is_symlink() else f"{relative} (not a file)")
                continue
            found.append((relative, source))
    return found, skipped


def export_bundle(log: Path, dest: Path, *, checkpoints: bool = True) -> BundleReport:
    """Copy the session tree of `log` into the new (or empty) folder `dest` with its `bundle.json`.
    `BundleError` when the session does not check out or `dest` is in use; OSError when a file cannot be
    read or written. `checkpoints=False` leaves out the file checkpoints (your files' past contents)."""
    tree = verify_tree(log)
    if tree.first_break is not None:
        raise BundleError(f"the session does not check out, so no bundle was written: {tree.first_break.describe()}")
    if dest.is_symlink() or (dest.exists() and (not dest.is_dir() or any(dest.iterdir()))):
        raise BundleError(f"{dest}: exists and is not an empty folder")
    dest.mkdir(mode=0o700, parents=True, exist_ok=True)
    sources, skipped = _tree_files(log, checkpoints)
    report = BundleReport(dest, log.stem, tree=tree, skipped=skipped)
    for relative, source in sources:
        target = dest / relative
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        shutil.copyfile(source, target, follow_symlinks=False)
        target.chmod(0o600)
        size, digest = _sha256_file(target, MAX_FILE_BYTES)
        report.files.append(BundleFile(relative, size, digest))
    manifest: JSON = {
        "format": FORMAT,
        "v": VERSION,
        "session": log.stem,
        "log": log.name,
        "created": datetime.now(UTC).isoformat(),
        "sessions": len(tree.sessions),
        "records": tree.records,
        "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in report.files],
    }
    data = canonical_json(manifest)
    (dest / BUNDLE_FILE).write_bytes(data + b"\n")
    (dest / BUNDLE_FILE).chmod(0o600)
    report.bundle_sha256 = hashlib.sha256(data).hexdigest()
    return report


# ------------------------------------------------------------------------------------------ checking


def _safe_name(name: object, session: str) -> str:
    """`name` when it is a plain relative path inside the session's tree; BundleError otherwise."""
    if not isinstance(name, str) or not name or "\\" in name or "\x00" in name:
        raise BundleError(f"a file name {name!r} that is not a plain relative path")
    path = PurePosixPath(name)
    if path.is_absolute() or any(part in ("", ".", "..") for part in name.split("/")):
        raise BundleError(f"a file name {name!r} that leaves the bundle (absolute, or with . or ..)")
    if name != f"{session}.jsonl" and path.parts[0] != session:
        raise BundleError(f"a file name {name!r} outside the session's tree ({session}.jsonl, {session}/)")
    return name


def _read_manifest(folder: Path) -> dict[str, Any]:
    if folder.is_symlink() or not folder.is_dir():
        raise BundleError(f"{folder}: not a folder")
    path = folder / BUNDLE_FILE
    try:
        info = path.lstat()
    except FileNotFoundError:
        raise BundleError(f"{folder}: no {BUNDLE_FILE}: not a session bundle (or only part of one)") from None
    if not stat.S_ISREG(info.st_mode):
        raise BundleError(f"{path}: not a plain file")
    if info.st_size > MAX_MANIFEST_BYTES:
        raise BundleError(f"{path}: larger than {MAX_MANIFEST_BYTES:,} bytes")
    try:
        data = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as error:
        raise BundleError(f"{path}: not JSON ({error})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BundleError(f"{path}: not a sagent session bundle")
    if data.get("v") != VERSION:
        raise BundleError(f"{path}: bundle version {data.get('v')!r}; this sagent reads version {VERSION}")
    session = data.get("session")
    if not isinstance(session, str) or not session or "/" in session or session.startswith("."):
        raise BundleError(f"{path}: a session id {session!r} that is not a plain name")
    if data.get("log") != f"{session}.jsonl" or not isinstance(data.get("files"), list):
        raise BundleError(f"{path}: its log or its list of files is missing")
    return data


def _listed(data: dict[str, Any], session: str) -> list[BundleFile]:
    files: list[BundleFile] = []
    seen: set[str] = set()
    total = 0
    for entry in data["files"]:
        if not isinstance(entry, dict):
            raise BundleError("a file entry that is not an object")
        name = _safe_name(entry.get("path"), session)
        size, digest = entry.get("size"), entry.get("sha256")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0 or not isinstance(digest, str):
            raise BundleError(f"{name}: its size or SHA-256 is missing")
        if name.casefold() in seen:
            raise BundleError(f"{name}: listed twice")
        if size > MAX_FILE_BYTES:
            raise BundleError(f"{name}: {size:,} bytes, more than the {MAX_FILE_BYTES:,} a bundle's file may hold")
        total += size
        if total > MAX_TOTAL_BYTES:
            raise BundleError(f"the files add up to more than {MAX_TOTAL_BYTES:,} bytes")
        seen.add(name.casefold())
        files.append(BundleFile(name, size, digest))
    if f"{session}.jsonl" not in {f.path for f in files}:
        raise BundleError(f"the session's log {session}.jsonl is not listed")
    return files


def _check_contents(folder: Path, files: list[BundleFile]) -> None:
    """Nothing in `folder` but the manifest, the listed files and their folders; each listed file there,
    plain, of its size and hash."""
    listed = {f.path for f in files}
    parents = {p.as_posix() for f in files for p in PurePosixPath(f.path).parents if p.as_posix() != "."}
    for here, dirs, names in os.walk(folder):
        for name in [*dirs, *names]:
            path = Path(here) / name
            relative = path.relative_to(folder).as_posix()
            if path.is_symlink():
                raise BundleError(f"{relative}: a symbolic link (a bundle holds plain files only)")
            if relative == BUNDLE_FILE or relative in listed or (path.is_dir() and relative in parents):
                continue
            raise BundleError(f"{relative}: in the folder but not in {BUNDLE_FILE} (added, or the bundle was changed)")
    for entry in files:
        path = folder / entry.path
        try:
            info = path.lstat()
        except FileNotFoundError:
            raise BundleError(f"{entry.path}: missing (the bundle is partial)") from None
        if not stat.S_ISREG(info.st_mode):
            raise BundleError(f"{entry.path}: not a plain file")
        if info.st_size != entry.size:
            raise BundleError(f"{entry.path}: {info.st_size:,} bytes where {BUNDLE_FILE} says {entry.size:,}")
        if _sha256_file(path, entry.size)[1] != entry.sha256:
            raise BundleError(f"{entry.path}: its SHA-256 is not the one {BUNDLE_FILE} lists (it was changed)")


def verify_bundle(folder: Path) -> BundleReport:
    """Check the bundle in `folder` whole: its manifest, every file (`BundleError` naming the first that
    does not check out), then the session tree's hash chains, capsules and handoffs."""
    data = _read_manifest(folder)
    session = str(data["session"])
    files = _listed(data, session)
    _check_contents(folder, files)
    tree = verify_tree(folder / f"{session}.jsonl")
    if tree.first_break is not None:
        brk = tree.first_break
        where = brk.path.relative_to(folder) if brk.path.is_relative_to(folder) else brk.path
        raise BundleError(f"{where}: record {brk.record}: {brk.reason}")
    header = json.loads((folder / f"{session}.jsonl").read_bytes().split(b"\n", 1)[0])
    if header.get("session_id") != session:
        raise BundleError(f"{session}.jsonl: its header names session {header.get('session_id')!r}, not {session}")
    logs = {p.relative_to(folder).as_posix() for p in tree.sessions}
    unlisted = logs - {f.path for f in files}
    if unlisted:
        raise BundleError(f"{sorted(unlisted)[0]}: a log of the tree that {BUNDLE_FILE} does not list")
    manifest_bytes = (folder / BUNDLE_FILE).read_bytes().rstrip(b"\n")
    return BundleReport(folder, session, files, tree, hashlib.sha256(manifest_bytes).hexdigest())


# ------------------------------------------------------------------------------------------ import


def import_bundle(folder: Path, sessions: Path) -> tuple[Path, BundleReport]:
    """Check the bundle in `folder` and copy its session tree into the sessions folder `sessions`; the
    imported log's path. BundleError (nothing written) when the bundle does not check out, a file changes
    while it is copied, or a session of that id is there already."""
    from sagent.lib.private import private_dir

    report = verify_bundle(folder)
    log = sessions / f"{report.session}.jsonl"
    side = sessions / report.session
    if log.exists() or log.is_symlink() or side.exists() or side.is_symlink():
        raise BundleError(f"a session {report.session} is here already: {log}")
    private_dir(sessions)
    staging = Path(tempfile.mkdtemp(prefix=".import-", dir=sessions))
    try:
        for entry in report.files:
            target = staging / entry.path
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            _copy_checked(folder / entry.path, target, entry)
        moved = (staging / report.session).is_dir()
        if moved:
            os.rename(staging / report.session, side)
        try:
            _place(staging / log.name, log)
        except FileExistsError:
            if moved:
                shutil.rmtree(side, ignore_errors=True)
            raise BundleError(f"a session {report.session} is here already: {log}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return log, report


def _place(source: Path, target: Path) -> None:
    """Move `source` to `target`, never over a file that is there (FileExistsError): a hard link, where
    the file system has them, since a rename would replace a log that appeared meanwhile."""
    try:
        os.link(source, target)
    except FileExistsError:
        raise
    except OSError:  # no hard links here
        if target.exists() or target.is_symlink():
            raise FileExistsError(target) from None
        os.rename(source, target)


def _copy_checked(source: Path, target: Path, entry: BundleFile) -> None:
    """Copy `source` to `target` (0600), refusing it when what is read is not what was listed."""
    digest, size = hashlib.sha256(), 0
    fd = os.open(source, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "rb") as src, os.fdopen(out, "wb") as dst:
        while chunk := src.read(_CHUNK):
            size += len(chunk)
            if size > entry.size:
                break
            digest.update(chunk)
            dst.write(chunk)
    if size != entry.size or digest.hexdigest() != entry.sha256:
        raise BundleError(f"{entry.path}: changed while it was being copied in; nothing was imported")
