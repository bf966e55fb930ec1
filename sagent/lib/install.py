"""How this copy of sagent was installed, and the command that adds an optional extra (`local`,
`selfhosted`) to it.

sagent is installed from its repository, never from PyPI: the `sagent` package there is another project.
So a hint that names an install command names the way this copy was put on the machine, with the folder
it came from, which pip and uv record in the package's `direct_url.json` (PEP 610):

- a checkout run with `uv run` (an editable install): `uv run --extra local sagent ...`;
- `uv tool install PATH`: `uv tool install 'PATH[local]'`, which replaces the tool's environment;
- `pipx install PATH`: `pipx install --force 'PATH[local]'`;
- `pip install PATH` into a virtual environment: that environment's pip, `pip install 'PATH[local]'`
  (`uv pip install` in one `uv venv` made, which has no pip).

Only the standard library is imported, and only when a hint is asked for.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

__all__ = ["extra_hint", "source_folder"]

NOT_PYPI = "not `pip install sagent`: PyPI's sagent is another project"


def extra_hint(extra: str) -> str:
    """The command, for this install, that adds `extra` (one line, no trailing period)."""
    folder, editable = source_folder()
    prefix = Path(sys.prefix)
    if editable and folder is not None:
        return f"in the checkout {folder}: uv run --extra {extra} sagent ... (or uv sync --extra {extra})"
    where = folder or "/path/to/sagent"
    target = shlex.quote(f"{where}[{extra}]")
    if (prefix / "uv-receipt.toml").exists():
        extras = ",".join(sorted({extra, *_tool_extras(prefix / "uv-receipt.toml")}))
        return f"uv tool install {shlex.quote(f'{where}[{extras}]')}"
    if (prefix / "pipx_metadata.json").exists():
        return f"pipx install --force {target}"
    if folder is not None and _made_by_uv(prefix):  # `uv venv` puts no pip in it
        return f"uv pip install --python {shlex.quote(sys.executable)} {target}"
    if folder is not None:
        return f"{shlex.quote(sys.executable)} -m pip install {target}"
    return (
        f"from a clone of sagent's repository: uv tool install '.[{extra}]' (or pipx install '.[{extra}]', "
        f"pip install '.[{extra}]'); {NOT_PYPI}"
    )


def _tool_extras(receipt: Path) -> list[str]:
    """The extras the uv tool was installed with (its receipt), which a new install must name again."""
    import tomllib

    try:
        requirements = tomllib.loads(receipt.read_text(encoding="utf-8"))["tool"]["requirements"]
        return [str(e) for r in requirements if r.get("name") == "sagent" for e in r.get("extras", [])]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def _made_by_uv(prefix: Path) -> bool:
    """Whether the environment at `prefix` was made by `uv venv` (its pyvenv.cfg names uv's version)."""
    try:
        text = (prefix / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(line.split("=")[0].strip() == "uv" for line in text.splitlines())


def source_folder() -> tuple[Path | None, bool]:
    """The folder this copy of sagent was installed from (None when the installer recorded none, as for a
    wheel), and whether it is an editable install of that folder (a checkout)."""
    import json
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    try:
        text = metadata.distribution("sagent").read_text("direct_url.json")
        record = json.loads(text) if text else {}
    except (metadata.PackageNotFoundError, ValueError, OSError):
        return None, False
    url = urlparse(str(record.get("url", "")))
    if url.scheme != "file" or not isinstance(record.get("dir_info"), dict):
        return None, False
    return Path(unquote(url.path)), bool(record["dir_info"].get("editable"))
