"""WebFetch and WebSearch against a fake web on 127.0.0.1, and the address guard every fetch goes through."""

from __future__ import annotations

import ipaddress
import json
import ssl
from pathlib import Path

import pytest

from sagent.agent.agent import Agent
from sagent.agent.fleet import Fleet
from sagent.agent.session import SessionLog
from sagent.providers.scripted import ScriptedModel, text_turn, tool_turn
from sagent.tools.base import ToolContext, ToolError
from sagent.tools.net import Fetcher, TTLCache, refused_kind, retry_after
from sagent.tools.web import Brave, DuckDuckGo, SearXNG, WebFetch, WebSearch, backend_from_env, domain_matches
from sagent.types import ToolResult, Usage
from tests.fakes.pdf import make_pdf
from tests.fakes.web_server import Answer, FakeWeb, payload


def names(mapping: dict[str, list[str]]):
    """A resolver answering from `mapping`, as DNS would."""

    async def resolve(host: str, port: int) -> list[str]:
        if host not in mapping:
            raise OSError("Name or service not known")
        return mapping[host]

    return resolve


def local_fetcher(**kw) -> Fetcher:
    return Fetcher(allow_hosts=["127.0.0.1"], **kw)


async def fetch(tool: WebFetch, url: str, tmp_path: Path, **arguments) -> str:
    return await tool.run({"url": url, **arguments}, ToolContext(cwd=tmp_path))


# ------------------------------------------------------------------------------------------ extraction


async def test_an_article_becomes_markdown_without_its_navigation_and_ads(tmp_path: Path) -> None:
    with FakeWeb({"/2026/03/taskgroups": Answer.html(payload("article.html"))}) as web:
        text = await fetch(WebFetch(local_fetcher()), f"{web.url}/2026/03/taskgroups", tmp_path)
    # The article: its title, byline, headings, code, list, table and links, as Markdown.
    assert "# Structured concurrency with asyncio TaskGroups" in text
    assert "Ada Example · 2026-03-03" in text
    assert "## Replacing gather" in text and "## What happens on failure" in text
    assert '    first = tg.create_task(fetch("https://example.org/a"))' in text
    assert "- The first exception cancels every other task in the group." in text
    assert "**ExceptionGroup**" in text and "`except*`" in text
    assert "[asyncio documentation on task groups](https://docs.python.org/3/library/asyncio-task.html" in text
    assert "| TaskGroup | yes |" in text
    # Not the page around it: navigation, cookie banner, ads (even the one inside the article), sidebar,
    # newsletter box, comments, related posts, footer, scripts.
    for junk in (
        "About us",
        "Accept all",
        "MEGA SALE",
        "QuickHost",
        "Ultimate VPN",
        "Popular this week",
        "Get the newsletter",
        "First! Great post",
        "You might also like",
        "All rights reserved",
        "Privacy policy",
        "gtag",
        "Share on X",
    ):
        assert junk not in text, junk


async def test_text_json_and_pdf_pages_come_as_text_and_binaries_are_refused(tmp_path: Path) -> None:
    pdf = make_pdf(["Quarterly report\nRevenue grew 12%", "Appendix\nMethod notes"])
    routes = {
        "/notes.txt": Answer(200, "plain notes\nline two", {"content-type": "text/plain; charset=utf-8"}),
        "/data.json": Answer.json({"version": "2.1", "ok": True}),
        "/report.pdf": Answer(200, pdf, {"content-type": "application/pdf"}),
        "/logo.png": Answer(200, b"\x89PNG\r\n\x1a\n" + b"\0" * 64, {"content-type": "image/png"}),
        "/tool.zip": Answer(200, b"PK\x03\x04" + bytes(range(256)), {"content-type": "application/zip"}),
    }
    tool = WebFetch(local_fetcher())
    with FakeWeb(routes) as web:
        assert "plain notes\nline two" in await fetch(tool, f"{web.url}/notes.txt", tmp_path)
        assert '"version": "2.1"' in await fetch(tool, f"{web.url}/data.json", tmp_path)
        report = await fetch(tool, f"{web.url}/report.pdf", tmp_path)
        assert "--- page 1 of 2 ---\nQuarterly report\nRevenue grew 12%" in report
        assert "--- page 2 of 2 ---\nAppendix" in report
        only_two = await fetch(tool, f"{web.url}/report.pdf", tmp_path, pages="2")
        assert "page 2 of 2" in only_two and "Quarterly" not in only_two
        with pytest.raises(ToolError, match=r"image/png .* not text"):
            await fetch(tool, f"{web.url}/logo.png", tmp_path)
        with pytest.raises(ToolError, match="application/zip"):
            await fetch(tool, f"{web.url}/tool.zip", tmp_path)


async def test_pages_are_cached_for_fifteen_minutes(tmp_path: Path) -> None:
    now = [1000.0]
    tool = WebFetch(local_fetcher())
    tool.cache = TTLCache(15 * 60, clock=lambda: now[0])
    with FakeWeb({"/a": Answer(200, "version one", {"content-type": "text/plain"})}) as web:
        assert "version one" in await fetch(tool, f"{web.url}/a", tmp_path)
        web.routes["/a"] = Answer(200, "version two", {"content-type": "text/plain"})
        now[0] += 14 * 60
        assert "version one" in await fetch(tool, f"{web.url}/a", tmp_path)
        assert len(web.requests) == 1
        now[0] += 2 * 60
        assert "version two" in await fetch(tool, f"{web.url}/a", tmp_path)
        assert len(web.requests) == 2


# -------------------------------------------------------------------------------------- address guard


def test_refused_kinds_of_address() -> None:
    def kind(text: str) -> str | None:
        return refused_kind(ipaddress.ip_address(text))

    assert kind("127.0.0.1") == "loopback" and kind("::1") == "loopback"
    assert kind("10.1.2.3") == "private" and kind("192.168.0.10") == "private" and kind("172.16.5.4") == "private"
    assert kind("169.254.169.254") == "link-local" and kind("fe80::1") == "link-local"
    assert kind("224.0.0.251") == "multicast" and kind("ff02::1") == "multicast"
    assert kind("0.0.0.0") == "unspecified"
    assert kind("240.0.0.1") is not None  # reserved
    assert kind("100.64.0.1") == "non-public"  # carrier-grade NAT
    assert kind("::ffff:10.0.0.1") == "private"  # an IPv4-mapped private address
    assert kind("2002:a00:1::") == "private"  # 6to4 around 10.0.0.1
    assert kind("fd00::1") == "private"
    assert kind("93.184.216.34") is None and kind("2606:4700:4700::1111") is None


async def test_a_redirect_chain_into_a_private_address_is_refused_at_the_hop(tmp_path: Path) -> None:
    with FakeWeb() as web:
        port = web.port
        web.routes.update(
            {
                "/start": Answer.redirect(f"http://news.example.com:{port}/hop"),
                "/hop": Answer.redirect(f"http://intranet.example.com:{port}/admin"),
                "/admin": Answer(200, "internal secrets", {"content-type": "text/plain"}),
            }
        )
        # news.example.com is the one host the user allowed; intranet.example.com resolves to a private address.
        resolve = names({"news.example.com": ["127.0.0.1"], "intranet.example.com": ["10.0.0.7"]})
        tool = WebFetch(Fetcher(allow_hosts=["news.example.com"], resolve=resolve))
        with pytest.raises(ToolError) as refused:
            await fetch(tool, f"http://news.example.com:{port}/start", tmp_path)
    message = str(refused.value)
    assert "intranet.example.com resolves to 10.0.0.7, a private address" in message
    assert "--allow-host intranet.example.com" in message
    assert web.paths() == ["/start", "/hop"]  # followed hop by hop, and stopped before the private one
    assert all(r["headers"]["host"] == f"news.example.com:{port}" for r in web.requests)


async def test_internal_addresses_are_refused_before_any_connection(tmp_path: Path) -> None:
    with FakeWeb({"/": Answer(200, "a local service", {"content-type": "text/plain"})}) as web:
        tool = WebFetch(
            Fetcher(resolve=names({"rebind.example.com": ["93.184.216.34", "127.0.0.1"], "localhost": ["127.0.0.1"]}))
        )
        for url, says in (
            (f"{web.url}/", "127.0.0.1 is a loopback address"),
            (f"http://localhost:{web.port}/", "localhost resolves to 127.0.0.1, a loopback address"),
            (f"http://rebind.example.com:{web.port}/", "resolves to 127.0.0.1, a loopback address"),
            ("http://169.254.169.254/latest/meta-data/", "link-local"),
            (f"http://[::ffff:127.0.0.1]:{web.port}/", "loopback"),
            ("file:///etc/passwd", "only http and https"),
            ("ftp://example.com/file", "only http and https"),
        ):
            with pytest.raises(ToolError, match="refused") as refused:
                await fetch(tool, url, tmp_path)
            assert says in str(refused.value), url
        assert web.requests == []  # the server was right there, and never asked
        # Allowed by name (or as HOST:PORT), the same server answers.
        allowed = WebFetch(Fetcher(allow_hosts=[f"127.0.0.1:{web.port}"]))
        assert "a local service" in await fetch(allowed, f"{web.url}/", tmp_path)


# ------------------------------------------------------------------------------------------------ errors


async def test_clear_errors_for_status_timeouts_size_and_names(tmp_path: Path) -> None:
    routes = {
        "/missing": Answer(404, "no", {"content-type": "text/plain"}),
        "/private": Answer(403, "no", {"content-type": "text/plain"}),
        "/broken": Answer(502, "bad gateway", {"content-type": "text/plain"}),
        "/slow": Answer(200, "late", {"content-type": "text/plain"}, delay=1.5),
        "/huge": Answer(200, "x" * 2_000, {"content-type": "text/plain"}),
        "/loop": Answer.redirect("/loop"),
    }
    fetcher = Fetcher(allow_hosts=["127.0.0.1"], timeout=0.5, resolve=names({}))
    with FakeWeb(routes) as web:
        for path, says in (
            ("/missing", "HTTP 404 Not Found: there is no such page"),
            ("/private", "HTTP 403 Forbidden: the site refuses access"),
            ("/broken", "HTTP 502 Bad Gateway: the server failed; try again later"),
            ("/slow", "timed out after 0.5 s"),
            ("/loop", "more than 8 redirects"),
        ):
            with pytest.raises(ToolError) as error:
                await fetch(WebFetch(fetcher), web.url + path, tmp_path)
            assert says in str(error.value), path
        # Its own fetcher with time to spare: on a loaded machine the short timeout above could end it first.
        roomy = Fetcher(allow_hosts=["127.0.0.1"], timeout=30, resolve=names({}))
        with pytest.raises(ToolError, match="over the 1,000-byte limit"):
            await roomy.get(f"{web.url}/huge", max_bytes=1000)
    with pytest.raises(ToolError, match=r"cannot resolve nowhere\.example"):
        await fetch(WebFetch(fetcher), "https://nowhere.example/", tmp_path)


async def test_rate_limits_wait_out_a_short_retry_after_and_report_a_long_one(tmp_path: Path) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    limited = Answer(429, "slow down", {"content-type": "text/plain", "retry-after": "3"})
    routes = {
        "/busy": [limited, Answer(200, "finally", {"content-type": "text/plain"})],
        "/closed": Answer(429, "come back later", {"content-type": "text/plain", "retry-after": "3600"}),
    }
    tool = WebFetch(local_fetcher(sleep=sleep))
    with FakeWeb(routes) as web:
        assert "finally" in await fetch(tool, f"{web.url}/busy", tmp_path)
        assert waits == [3.0]
        with pytest.raises(ToolError, match="HTTP 429 Too Many Requests: rate limited; retry after 3600 s"):
            await fetch(tool, f"{web.url}/closed", tmp_path)
    assert waits == [3.0] and web.paths().count("/closed") == 1  # an hour is not waited for
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after({"retry-after": "soon"}) is None


# ----------------------------------------------------------------------------------- question, small model


async def test_a_question_about_a_large_page_goes_to_the_providers_small_model(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    section = "<h2>Section {n}</h2><p>" + "Filler text about many unrelated things. " * 30 + "</p>"
    body = "".join(section.format(n=n) for n in range(40))
    page = f"<html><body><article><h1>Big manual</h1>{body}<p>The default port is 7878.</p></article></body></html>"
    usage = Usage(input_tokens=12_000, output_tokens=20)
    answer = text_turn("The page says the default port is 7878.", usage)
    built: list[ScriptedModel] = []

    def models(provider: str | None, model: str | None) -> ScriptedModel:
        built.append(ScriptedModel([answer], provider=provider or "", name=model or ""))
        return built[-1]

    with FakeWeb({"/manual": Answer.html(page)}) as web:
        ask = {"url": f"{web.url}/manual", "question": "What is the default port?"}
        main = ScriptedModel(
            [tool_turn(("WebFetch", ask)), text_turn("It is 7878.")], provider="anthropic", name="claude-sonnet-4-6"
        )
        log = SessionLog.create(tmp_path, {})
        tools = [WebFetch(local_fetcher())]
        agent = Agent(main, tools=tools, cwd=tmp_path, fleet=Fleet(models=models), session=log)
        assert (await agent.ask("what port?")).text == "It is 7878."
        await agent.aclose()
    assert [(m.provider, m.name) for m in built] == [("anthropic", "claude-haiku-4-5")]
    asked = built[0].requests[0].messages[0].text
    assert "The default port is 7878." in asked and "Question: What is the default port?" in asked
    result = next(m for m in agent.history if isinstance(m, ToolResult))
    assert "A small model read the page" in result.text and "the default port is 7878" in result.text
    saved = Path(result.text.split("all of it is in ")[1].split(")")[0])
    assert "The default port is 7878." in saved.read_text()  # the whole page, for Read
    assert len(result.text) < 1000  # the page itself stayed out of the main context
    # The small model's tokens are charged to the agent and logged.
    assert agent.cost.by_model["claude-haiku-4-5"].usage == usage
    assert agent.cost.by_model["claude-haiku-4-5"].cost.total == pytest.approx(12_000 * 1.0 / 1e6 + 20 * 5.0 / 1e6)
    assert log.path is not None
    logged = [json.loads(line) for line in log.path.read_text().splitlines()]
    calls = [r["event"] for r in logged if r.get("kind") == "event" and r["event"]["type"] == "small_model_call"]
    assert [(c["tool"], c["model"]) for c in calls] == [("WebFetch", "claude-haiku-4-5")]
    _, state = SessionLog.open(log.path)  # and the log still replays
    assert len(state.history) == len(agent.history)


async def test_a_question_about_a_short_page_is_left_to_the_agent(tmp_path: Path) -> None:
    with FakeWeb({"/short": Answer(200, "port: 7878", {"content-type": "text/plain"})}) as web:
        ask = {"url": f"{web.url}/short", "question": "What is the default port?"}
        main = ScriptedModel([tool_turn(("WebFetch", ask)), text_turn("7878")], provider="anthropic")
        agent = Agent(main, tools=[WebFetch(local_fetcher())], cwd=tmp_path, fleet=Fleet(models=_no_models))
        await agent.ask("what port?")
    result = next(m for m in agent.history if isinstance(m, ToolResult))
    assert result.text.endswith("port: 7878")


def _no_models(provider: str | None, model: str | None) -> ScriptedModel:
    raise AssertionError("no model should be built")


# -------------------------------------------------------------------------------------------- WebSearch


async def test_duckduckgo_results_have_title_url_and_snippet_without_ads(tmp_path: Path) -> None:
    with FakeWeb({"/html/": Answer.html(payload("duckduckgo.html"))}) as web:
        tool = WebSearch(DuckDuckGo(f"{web.url}/html/"), local_fetcher())
        text = await tool.run({"query": "asyncio taskgroup"}, ToolContext(cwd=tmp_path))
        assert web.requests[0]["method"] == "POST" and "q=asyncio+taskgroup" in web.requests[0]["body"]
        narrowed = await tool.run(
            {"query": "asyncio taskgroup", "allowed_domains": ["python.org"]}, ToolContext(cwd=tmp_path)
        )
        assert "site%3Apython.org" in web.requests[1]["body"]  # one allowed domain narrows the query too
        blocked = await tool.run(
            {"query": "asyncio taskgroup", "blocked_domains": ["stackoverflow.com", "example.com"]},
            ToolContext(cwd=tmp_path),
        )
    assert text.startswith("4 results for 'asyncio taskgroup' from DuckDuckGo:")
    assert (
        "1. Coroutines and Tasks — Python 3.14 documentation\n"
        "   https://docs.python.org/3/library/asyncio-task.html\n"
        "   The TaskGroup class provides a more modern alternative to create_task()."
    ) in text
    assert "https://stackoverflow.com/questions/78123456/asyncio-taskgroup-vs-gather" in text
    assert "Learn Python Fast" not in text and "y.js" not in text  # the ad
    assert "duckduckgo.com/l/" not in text  # the redirect links are unwrapped
    # allowed: docs.python.org and peps.python.org are below python.org; the others are not.
    assert "docs.python.org" in narrowed and "peps.python.org" in narrowed
    assert "stackoverflow" not in narrowed and "journal.example.com" not in narrowed
    assert "stackoverflow" not in blocked and "journal.example.com" not in blocked and "docs.python.org" in blocked


async def test_brave_and_searxng_backends_and_choosing_one(tmp_path: Path) -> None:
    def brave(request: dict) -> Answer:
        if request["headers"].get("x-subscription-token") != "brave-key":
            return Answer.json({"error": "bad token"}, 401)
        return Answer.json(payload("brave.json"))

    with FakeWeb({"/res/v1/web/search": brave, "/search": Answer.json(payload("searxng.json"))}) as web:
        found = await Brave("brave-key", f"{web.url}/res/v1/web/search").search("asyncio", 5, local_fetcher())
        assert found[0].title == "Coroutines and Tasks — Python 3.14 documentation"
        assert found[0].snippet.startswith("The TaskGroup class provides") and "<strong>" not in found[0].snippet
        assert found[1].title == "python - asyncio TaskGroup vs gather - Stack Overflow"
        with pytest.raises(ToolError, match="HTTP 401"):
            await Brave("wrong", f"{web.url}/res/v1/web/search").search("asyncio", 5, local_fetcher())
        searx = await SearXNG(web.url).search("asyncio", 5, local_fetcher())
        assert [r.url for r in searx] == [
            "https://docs.python.org/3/library/asyncio-task.html",
            "https://journal.example.com/2026/03/taskgroups",
        ]
        assert "format=json" in web.requests[-1]["path"]
    assert isinstance(backend_from_env({}), DuckDuckGo)
    assert isinstance(backend_from_env({"BRAVE_API_KEY": "k"}), Brave)
    assert isinstance(backend_from_env({"SEARXNG_URL": "http://searx.lan"}), SearXNG)
    assert isinstance(backend_from_env({"BRAVE_API_KEY": "k", "SAGENT_SEARCH": "duckduckgo"}), DuckDuckGo)
    with pytest.raises(ToolError, match="needs BRAVE_API_KEY"):
        backend_from_env({"SAGENT_SEARCH": "brave"})
    with pytest.raises(ToolError, match="not a search backend"):
        backend_from_env({"SAGENT_SEARCH": "altavista"})
    assert domain_matches("docs.python.org", ["python.org"]) and not domain_matches("notpython.org", ["python.org"])


# ------------------------------------------------------------------------------------------------ HTTPS


def certificate(tmp_path: Path, host: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A self-signed certificate for `host`: the server's context, and a client context trusting it."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_file, key_file)
    client = ssl.create_default_context(cafile=str(cert_file))
    return server, client


async def test_https_goes_to_the_checked_address_with_the_hosts_own_name_and_certificate(tmp_path: Path) -> None:
    server, client = certificate(tmp_path, "docs.example.test")
    resolve = names({"docs.example.test": ["127.0.0.1"], "mirror.example.test": ["127.0.0.1"]})
    fetcher = Fetcher(
        allow_hosts=["docs.example.test", "mirror.example.test"], resolve=resolve, verify=client, timeout=5
    )
    with FakeWeb({"/guide": Answer(200, "secure guide", {"content-type": "text/plain"})}, tls=server) as web:
        text = await fetch(WebFetch(fetcher), f"https://docs.example.test:{web.port}/guide", tmp_path)
        assert "secure guide" in text
        assert web.requests[0]["headers"]["host"] == f"docs.example.test:{web.port}"
        # The same address under a name the certificate does not hold: TLS checks the name, not the address.
        with pytest.raises(ToolError, match=r"cannot connect to mirror\.example\.test"):
            await fetch(WebFetch(fetcher), f"https://mirror.example.test:{web.port}/guide", tmp_path)
    assert len(web.requests) == 1


async def test_a_connection_reset_names_the_error_instead_of_empty_brackets(tmp_path: Path) -> None:
    """httpx raises `ReadError('')` when the server resets the connection: the message said "()" then."""
    import socket
    import struct
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def reset_one() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with RST
        conn.close()

    thread = threading.Thread(target=reset_one, daemon=True)
    thread.start()
    try:
        with pytest.raises(ToolError) as caught:
            await fetch(WebFetch(local_fetcher(timeout=5)), f"http://127.0.0.1:{listener.getsockname()[1]}/", tmp_path)
    finally:
        thread.join(5)
        listener.close()
    assert "()" not in str(caught.value)
    assert str(caught.value).endswith("(ReadError)")
