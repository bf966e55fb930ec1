"""Run by .ci/wheel-check with the python of a fresh venv where only the built wheel was pip-installed:
WebFetch of a page on 127.0.0.1 through that install, first as the tool, then through the `sagent` command
against the fake Anthropic server. Exits 1 with the reason when the installed set cannot do it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>Wheels that work</title></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article>
<h1>Wheels that work</h1>
<p>A package installed with plain pip must bring every module it imports at run time, not only the ones
a lock file happens to pin. This page is fetched by the WebFetch tool of a fresh install.</p>
<h2>What is checked</h2>
<ul><li>the HTML is read and the article kept</li><li>headings and lists come back as Markdown</li></ul>
<p>The check passes when this sentence, the heading and the list arrive as Markdown.</p>
</article>
<footer>Copyright nobody</footer>
</body></html>
"""


class Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: object) -> None:
        pass


def check_markdown(text: str, where: str) -> None:
    for expected in ("# Wheels that work", "## What is checked", "- headings and lists come back as Markdown"):
        if expected not in text:
            sys.exit(f"wheel-check: {where}: {expected!r} missing from WebFetch's answer:\n{text}")


def main() -> None:
    import sagent
    from sagent.tools.base import ToolContext
    from sagent.tools.net import Fetcher
    from sagent.tools.web import WebFetch

    if not Path(sagent.__file__).resolve().is_relative_to(Path(sys.prefix).resolve()):
        sys.exit(f"wheel-check: sagent was imported from {sagent.__file__}, not from the venv at {sys.prefix}")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/wheels"
    try:
        with tempfile.TemporaryDirectory() as scratch:
            tool = WebFetch(Fetcher(allow_hosts=["127.0.0.1"]))
            text = asyncio.run(tool.run({"url": url}, ToolContext(cwd=Path(scratch))))
            check_markdown(text, "the WebFetch tool")
            through_the_command(url, Path(scratch))
    finally:
        server.shutdown()
    print("wheel-check: WebFetch of a local page works from a plain pip install of the wheel")


def through_the_command(url: str, scratch: Path) -> None:
    """`sagent -p` from the venv: the fake model asks for WebFetch, and the page's Markdown goes back to it."""
    sys.path.append(str(REPO))  # after site-packages: the fakes come from the checkout, sagent from the wheel
    from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response

    steps = [tool_use_response([("WebFetch", {"url": url})]), text_response("fetched")]
    with FakeAnthropic(steps) as fake:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-ant-wheel-check-0001",
            "ANTHROPIC_BASE_URL": fake.url,
            "XDG_DATA_HOME": str(scratch / "data"),
        }
        command = [str(Path(sys.executable).parent / "sagent"), "-p", "fetch the page", "--allow-host", "127.0.0.1"]
        out = subprocess.run(
            [*command, "--output-format", "json"], capture_output=True, text=True, env=env, cwd=scratch, timeout=300
        )
        sent = [request["body"] for request in fake.requests]
    if out.returncode != 0 or json.loads(out.stdout)["result"] != "fetched":
        sys.exit(f"wheel-check: sagent -p exited {out.returncode}:\n{out.stdout}\n{out.stderr}")
    results = [
        block["content"]
        for block in sent[-1]["messages"][-1]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    text = "\n".join(
        c if isinstance(c, str) else "\n".join(part.get("text", "") for part in c if isinstance(part, dict))
        for c in results
    )
    check_markdown(text, "sagent -p")


if __name__ == "__main__":
    main()
