"""The web and paper tools, and Read on PDFs and images, used by the agent in a scripted session through
the command line: the model is a fake Anthropic server, the web a fake on 127.0.0.1."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from tests.cli.test_headless import env_for, run_sagent
from tests.fakes.anthropic_server import FakeAnthropic, text_response, tool_use_response
from tests.fakes.pdf import make_pdf
from tests.fakes.web_server import Answer, FakeWeb, payload
from tests.tools.test_papers import routes as paper_routes
from tests.tools.test_read_media import png


def tool_results(request: dict) -> dict[str, dict]:
    """The tool results of the last user turn of a request, by tool name (from the calls they answer)."""
    messages = request["body"]["messages"]
    names = {
        b["id"]: b["name"]
        for m in messages
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use"
    }
    results: dict[str, dict] = {}
    for block in messages[-1]["content"]:
        if block.get("type") == "tool_result":
            results.setdefault(names[block["tool_use_id"]], []).append(block)
    return results


def text_of(result: dict) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def test_every_web_and_paper_tool_in_one_scripted_session(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.pdf").write_bytes(make_pdf(["Reading list\nStart with the Transformer paper."]))
    (project / "diagram.png").write_bytes(png(4, 4))
    big = "<html><body><article><h1>Server manual</h1>" + "<p>Unrelated configuration prose.</p>" * 600
    big += "<p>The default port is 7878.</p></article></body></html>"
    web_routes = {
        **paper_routes(),
        "/2026/03/taskgroups": Answer.html(payload("article.html")),
        "/manual": Answer.html(big),
        "/search": Answer.json(payload("searxng.json")),
    }
    with FakeWeb(web_routes) as web:
        script = [
            tool_use_response(
                [
                    ("WebSearch", {"query": "asyncio taskgroup"}),
                    ("WebFetch", {"url": f"{web.url}/2026/03/taskgroups"}),
                    ("WebFetch", {"url": "http://169.254.169.254/latest/meta-data/"}),
                ]
            ),
            tool_use_response(
                [
                    ("PaperSearch", {"query": "attention is all you need"}),
                    ("PaperDetails", {"id": "arXiv:1706.03762"}),
                    ("PaperFetch", {"id": "arXiv:1706.03762", "pages": "1"}),
                ]
            ),
            tool_use_response([("Read", {"path": "notes.pdf"}), ("Read", {"path": "diagram.png"})]),
            tool_use_response([("WebFetch", {"url": f"{web.url}/manual", "question": "What is the default port?"})]),
            text_response("The small model says the port is 7878."),  # asked by WebFetch, on claude-haiku-4-5
            text_response("Done: TaskGroups cancel siblings; the Transformer paper is read; the port is 7878."),
        ]
        with FakeAnthropic(script) as fake:
            env = {
                **env_for(fake, tmp_path),
                "SEARXNG_URL": web.url,
                "SAGENT_SEMANTIC_SCHOLAR_URL": f"{web.url}/s2",
                "SAGENT_OPENALEX_URL": f"{web.url}/oa",
                "SAGENT_ARXIV_URL": f"{web.url}/arxiv",
                "XDG_CACHE_HOME": str(tmp_path / "cache"),
            }
            args = [
                "-p",
                "research asyncio and transformers",
                "--model",
                "claude-sonnet-4-6",
                "--allow-host",
                "127.0.0.1",
            ]
            done = run_sagent([*args, "--output-format", "json"], env, cwd=project)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"].startswith("Done: TaskGroups cancel siblings")
    requests = fake.requests
    assert [r["body"]["model"] for r in requests] == ["claude-sonnet-4-6"] * 4 + [
        "claude-haiku-4-5",
        "claude-sonnet-4-6",
    ]

    first = tool_results(requests[1])
    search = text_of(first["WebSearch"][0])
    assert "2 results for 'asyncio taskgroup' from SearXNG" in search
    assert "https://docs.python.org/3/library/asyncio-task.html" in search
    (refused,) = [r for r in first["WebFetch"] if r.get("is_error")]  # results come in the order calls end
    (article,) = [r for r in first["WebFetch"] if not r.get("is_error")]
    assert "## Replacing gather" in text_of(article) and "MEGA SALE" not in text_of(article)
    assert refused["is_error"] is True and "link-local address" in text_of(refused)

    second = tool_results(requests[2])
    assert "id arXiv:1706.03762" in text_of(second["PaperSearch"][0])
    assert "found by: Semantic Scholar, OpenAlex" in text_of(second["PaperSearch"][0])
    assert "Long Short-Term Memory" in text_of(second["PaperDetails"][0])
    fetched = text_of(second["PaperFetch"][0])
    assert "--- page 1 of 3 ---\nAttention Is All You Need" in fetched
    assert (tmp_path / "cache" / "sagent" / "papers" / "arxiv-1706.03762.pdf").is_file()

    third = tool_results(requests[3])

    def has_image(result: dict) -> bool:
        return any(b.get("type") == "image" for b in result["content"] if isinstance(b, dict))

    (image_result,) = [r for r in third["Read"] if has_image(r)]
    (pdf_result,) = [r for r in third["Read"] if not has_image(r)]
    assert "--- page 1 of 1 ---\nReading list" in text_of(pdf_result)
    image = next(b for b in image_result["content"] if b["type"] == "image")
    assert image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == png(4, 4)

    asked = requests[4]["body"]["messages"][0]["content"]
    asked_text = asked if isinstance(asked, str) else "".join(b.get("text", "") for b in asked)
    assert "The default port is 7878." in asked_text and "Question: What is the default port?" in asked_text
    answered = text_of(tool_results(requests[5])["WebFetch"][0])
    assert "A small model read the page" in answered and "the port is 7878" in answered
    assert "claude-haiku-4-5" in result["modelUsage"]  # its tokens are on the bill


def test_without_allow_host_a_local_address_is_refused(tmp_path: Path) -> None:
    with FakeWeb({"/": Answer(200, "admin panel", {"content-type": "text/plain"})}) as web:
        script = [tool_use_response([("WebFetch", {"url": f"{web.url}/"})]), text_response("It was refused.")]
        with FakeAnthropic(script) as fake:
            done = run_sagent(["-p", "fetch it", "--model", "claude-sonnet-4-6"], env_for(fake, tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    refused = tool_results(fake.requests[1])["WebFetch"][0]
    assert refused["is_error"] is True and "127.0.0.1 is a loopback address" in text_of(refused)
    assert "--allow-host 127.0.0.1" in text_of(refused)
    assert web.requests == []
