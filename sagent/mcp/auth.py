"""The bearer token `sagent mcp serve --http` requires of every request.

The token is `SAGENT_MCP_TOKEN` when set; otherwise a new random one is made at start and written to a
file only its user can read (0600, in a folder only they can enter, 0700): under `$XDG_RUNTIME_DIR/sagent`
when that is a private folder of the user's, else under sagent's data folder. The server prints the
file's path on stderr and removes the file when it stops. A host sends `Authorization: Bearer TOKEN`; a
request without it, or with another token, gets 401 before anything of the MCP server sees it, so it
runs nothing (the scheme's case does not matter, the token's does). The comparison takes the same time
whatever the token sent (`hmac.compare_digest`).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

TOKEN_VARIABLE = "SAGENT_MCP_TOKEN"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class TokenError(OSError):
    """The token file cannot be written privately (a folder that is not the user's own, say)."""


def private_folder() -> Path:
    """A folder for the token only the user can enter, made (0700) when missing; TokenError when the one
    found is a symlink or someone else's."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    base: Path | None = None
    if runtime and os.path.isabs(runtime):
        try:
            info = os.lstat(runtime)
            if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077:
                base = Path(runtime) / "sagent"
        except OSError:
            base = None
    if base is None:
        from sagent.agent.session import data_dir

        base = data_dir() / "mcp"
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = os.lstat(base)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise TokenError(f"{base} is not a folder of this user's own; the token is not written there")
    os.chmod(base, 0o700)
    return base


def write_token(token: str, port: int) -> Path:
    """Write `token` to a new file readable by the user alone and return its path."""
    path = private_folder() / f"mcp-{port}.token"
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    return path


def server_token(port: int) -> tuple[str, Path | None]:
    """The token the server requires and the file it was written to (None when it came from
    SAGENT_MCP_TOKEN); ValueError when that variable is set but too short to guard anything."""
    given = os.environ.get(TOKEN_VARIABLE)
    if given is not None:
        given = given.strip()
        if len(given) < 16:
            raise ValueError(f"{TOKEN_VARIABLE} must be at least 16 characters (it is {len(given)})")
        return given, None
    token = secrets.token_urlsafe(32)
    return token, write_token(token, port)


def requiring_token(app: App, token: str) -> App:
    """`app` behind the bearer token: HTTP requests without `Authorization: Bearer <token>` get 401."""
    expected = token.encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") not in ("http", "websocket"):
            await app(scope, receive, send)  # lifespan: the server's own start and stop
            return
        sent = b""
        for name, value in scope.get("headers") or ():
            if name.lower() == b"authorization":
                sent = value
                break
        scheme, _, given = sent.partition(b" ")
        if not (scheme.lower() == b"bearer" and hmac.compare_digest(given, expected)):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            else:
                await _unauthorized(send, "missing" if not sent else "wrong")
            return
        await app(scope, receive, send)

    return guarded


async def _unauthorized(send: Send, what: str) -> None:
    body = json.dumps({"error": f"unauthorized: {what} bearer token (see {TOKEN_VARIABLE})"}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", b'Bearer realm="sagent"'),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})
