"""Web tools: WebFetch reads a page as Markdown, WebSearch finds pages through a pluggable search backend.

Both go through `Fetcher` (tools/net.py), which refuses internal addresses. HTML becomes Markdown with
trafilatura, which keeps the article and drops navigation, sidebars and ads; it and lxml load on first use.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from sagent.lib.words import quantity
from sagent.tools.base import AnyOrder, ToolContext, ToolError
from sagent.tools.net import Fetcher, Page, TTLCache, host_of

if TYPE_CHECKING:
    from trafilatura.settings import Document

CACHE_SECONDS = 15 * 60
QUESTION_ABOVE = 12_000  # characters of page above which a question goes to a small model
SMALL_MODEL_PAGE = 300_000  # characters of page a small model is given at most
_TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/x-yaml")
_ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.8,*/*;q=0.5"

ANSWER_SYSTEM = (
    "You answer a question about a web page from its content alone. Be exact: quote code, commands, "
    "numbers and names as the page gives them. When the page does not answer the question, say so and say "
    "what it does cover."
)


# --------------------------------------------------------------------------------------------- content


# Ad containers trafilatura may take for article text when they sit inside it: dropped before extraction.
_AD_CLASSES = ("ad", "ads", "advert", "advertisement", "sponsored", "inline-ad", "ad-slot", "ad-box", "promo")
AD_XPATHS = [
    *(f"//*[contains(concat(' ', normalize-space(@class), ' '), ' {c} ')]" for c in _AD_CLASSES),
    "//*[starts-with(@id, 'div-gpt-ad')]",
]


def html_to_markdown(html: str | bytes, url: str) -> str:
    """The readable part of an HTML page as Markdown, headed by its title, author and date when known."""
    import trafilatura

    logging.getLogger("trafilatura").setLevel(logging.ERROR)
    options: dict[str, Any] = {
        "url": url,
        "prune_xpath": AD_XPATHS,
        "output_format": "markdown",
        "include_links": True,
        "include_formatting": True,
        "include_tables": True,
        "include_comments": False,
    }
    text = trafilatura.extract(html, **options) or trafilatura.extract(html, favor_recall=True, **options)
    if not text:
        text = trafilatura.html2txt(html) or ""
    text = text.strip()
    # Its parser takes bytes too, whatever the annotation says; older releases returned None for no metadata.
    meta: Document | None = trafilatura.extract_metadata(html, default_url=url)  # type: ignore[arg-type]
    if meta is None:
        return text
    title, _, body = (
        text.partition("\n") if text.startswith("# ") else (f"# {meta.title}" if meta.title else "", "", text)
    )
    byline = " · ".join(x for x in (meta.author, meta.date) if x)
    return "\n\n".join(x for x in (title, byline, body.strip()) if x)


def page_content(page: Page, pages: str | None = None) -> str:
    """A fetched page as text: Markdown for HTML, the text of a PDF's pages, text as it is.
    `ToolError` for anything else (images, archives, binaries)."""
    media = page.media_type
    start = page.body[:1024].lstrip().lower()
    if media == "application/pdf" or page.body.startswith(b"%PDF-"):
        from sagent.tools.pdf import pdf_text

        return pdf_text(page.body, pages, name=page.url)
    if media in ("text/html", "application/xhtml+xml") or (
        not media and (start.startswith(b"<!doctype html") or start.startswith(b"<html"))
    ):
        # Without a declared charset, trafilatura reads the bytes and finds the page's own <meta charset>.
        return html_to_markdown(page.text() if page.charset else page.body, page.url)
    if media.startswith("text/") or media in _TEXT_TYPES or media.endswith(("+json", "+xml")):
        return page.text()
    if not media:
        try:
            return page.body.decode("utf-8")
        except UnicodeDecodeError:
            pass
    raise ToolError(
        f"{page.url} is {media or 'binary data'} ({len(page.body):,} bytes), not text: WebFetch reads HTML, "
        "text and PDF; for an image, download it with Bash (curl) and Read it"
    )


# -------------------------------------------------------------------------------------------- WebFetch


class WebFetch(AnyOrder):
    name = "WebFetch"
    reproducible = True  # the page can be fetched again: compaction may prune its old output
    description = (
        "Fetch a web page (http or https) and return its readable content as Markdown: the article, without "
        "navigation, ads and sidebars. PDFs give the text of their pages, plain text and JSON come as they "
        "are. Redirects are followed; pages are cached for 15 minutes. With `question`, a large page is read "
        "by a small model that answers the question, and the whole page is saved to a file you can Read. "
        "Internal addresses (localhost, private networks, cloud metadata) are refused."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "the page's URL; https:// is assumed when left out"},
            "question": {"type": "string", "description": "what you want to know from the page (optional)"},
            "pages": {"type": "string", "description": 'for a PDF: the pages, as "3", "2-5" or "7-"'},
        },
        "required": ["url"],
    }

    def __init__(self, fetcher: Fetcher | None = None, *, cache_seconds: float = CACHE_SECONDS) -> None:
        self.fetcher = fetcher or Fetcher.from_env()
        self.cache: TTLCache[tuple[str, str]] = TTLCache(cache_seconds)

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        url = arguments["url"].strip()
        if "://" not in url:
            url = "https://" + url
        pages = arguments.get("pages")
        key = (url, pages)
        cached = self.cache.get(key)
        hops = _HopCheck(self.name, ctx)
        if cached is None:
            try:
                if ctx.guard is None:  # no policy: a fetcher of one's own need not take the hop check
                    page = await self.fetcher.get(url, headers={"accept": _ACCEPT})
                else:
                    page = await self.fetcher.get(url, headers={"accept": _ACCEPT}, check_hop=hops)
            except RedirectHeld as held:
                return held.note
            content = await asyncio.to_thread(page_content, page, pages)
            cached = (page.url, content)
            self.cache.put(key, cached)
        elif cached[0] != url:  # the rules may have changed since the redirect was followed
            try:
                hops(url, cached[0])
            except RedirectHeld as held:
                return held.note
        final_url, content = cached
        head = final_url if final_url == url else f"{final_url} (redirected from {url})"
        question = (arguments.get("question") or "").strip()
        if question and len(content) > QUESTION_ABOVE and ctx.runtime is not None:
            saved = ctx.save_output(f"webfetch-{hashlib.sha256(final_url.encode()).hexdigest()[:12]}.md", content)
            prompt = f"Page: {final_url}\n\n{content[:SMALL_MODEL_PAGE]}\n\n---\nQuestion: {question}"
            try:
                answer = await ctx.runtime.ask_small_model(self.name, ANSWER_SYSTEM, prompt)
            except ToolError as error:
                note = f"[the question could not be put to a small model: {error}; the page follows]"
                return f"{head}\n{note}\n\n{content}"
            return (
                f"{head}\nA small model read the page ({len(content):,} characters; all of it is in {saved}) "
                f"and answered {question!r}:\n\n{answer.strip()}"
            )
        return f"{head}\n\n{content}"


class RedirectHeld(ToolError):
    """A redirect not followed because the permission rules would ask about where it goes; `note` tells the
    model where it leads, so it can fetch that URL in a call of its own (which asks the user)."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


class _HopCheck:
    """The permission rules held against each redirect of one WebFetch call. A redirect within the same host
    (or between its `www.` and bare names) is followed as the call was allowed; to another host it is followed
    only when the rules let that host be fetched unasked: a deny rule refuses it, and a host they would ask
    about is not fetched (there is no one to ask in the middle of a fetch): the model is told the URL instead."""

    def __init__(self, tool: str, ctx: ToolContext) -> None:
        self.tool, self.guard = tool, ctx.guard

    def __call__(self, from_url: str, to_url: str) -> None:
        if self.guard is None:
            return
        answer = self.guard.refuse_url(self.tool, to_url)
        if answer is None:
            return
        kind, reason = answer
        if kind == "deny":
            raise ToolError(f"denied: {from_url} redirects to {to_url}, and {reason}")
        if _same_site(host_of(from_url), host_of(to_url)):
            return
        raise RedirectHeld(
            f"{from_url} redirects to another host: {to_url}. It was not followed, as the permission rules ask "
            f"before fetching from there ({reason}). To read it, call {self.tool} again with that URL."
        )


def _same_site(a: str, b: str) -> bool:
    return a.removeprefix("www.") == b.removeprefix("www.")


# ------------------------------------------------------------------------------------------- WebSearch


@dataclass(frozen=True, slots=True)
class SearchResult:
    title: str
    url: str
    snippet: str


class SearchBackend(Protocol):
    """A web search service: `search` returns up to `count` results for `query`."""

    name: str

    async def search(self, query: str, count: int, fetcher: Fetcher) -> list[SearchResult]: ...


def _plain(fragment: str) -> str:
    """Text of an HTML fragment (snippets come with <b> and entities), whitespace collapsed."""
    if not fragment:
        return ""
    import lxml.html

    try:
        text = lxml.html.fragment_fromstring(fragment, create_parent="div").text_content()
    except Exception:  # lxml raises several kinds for odd input; the fragment is shown as it is then
        text = fragment
    return " ".join(text.split())


class DuckDuckGo:
    """DuckDuckGo's HTML endpoint: no key needed."""

    name = "DuckDuckGo"

    def __init__(self, endpoint: str = "https://html.duckduckgo.com/html/") -> None:
        self.endpoint = endpoint

    async def search(self, query: str, count: int, fetcher: Fetcher) -> list[SearchResult]:
        from urllib.parse import parse_qs, urljoin, urlparse

        import lxml.html

        page = await fetcher.get(self.endpoint, form={"q": query, "b": ""})
        if page.status == 202 or b"anomaly-modal" in page.body:
            raise ToolError(
                "DuckDuckGo asked for a CAPTCHA (too many searches from this address); wait a while, or set "
                "BRAVE_API_KEY or SEARXNG_URL to search with another backend"
            )
        tree = lxml.html.fromstring(page.body or b"<html></html>")
        results: list[SearchResult] = []
        for item in tree.find_class("result"):
            classes = item.get("class", "").split()
            if "result--ad" in classes:
                continue
            links = [a for a in item.iter("a") if "result__a" in a.get("class", "").split()]
            if not links:
                continue
            href = urljoin(self.endpoint, links[0].get("href", ""))
            target = parse_qs(urlparse(href).query).get("uddg")  # DuckDuckGo's redirect carries the URL
            snippets = item.find_class("result__snippet")
            results.append(
                SearchResult(
                    " ".join(links[0].text_content().split()),
                    target[0] if target else href,
                    " ".join(snippets[0].text_content().split()) if snippets else "",
                )
            )
            if len(results) >= count:
                break
        return results


class Brave:
    """The Brave Search API (a free key: BRAVE_API_KEY)."""

    name = "Brave Search"

    def __init__(self, key: str, endpoint: str = "https://api.search.brave.com/res/v1/web/search") -> None:
        self.key = key
        self.endpoint = endpoint

    async def search(self, query: str, count: int, fetcher: Fetcher) -> list[SearchResult]:
        page = await fetcher.get(
            self.endpoint,
            params={"q": query, "count": min(count, 20)},
            headers={"accept": "application/json", "x-subscription-token": self.key},
        )
        items = (page.json().get("web") or {}).get("results") or []
        return [
            SearchResult(_plain(r.get("title", "")), r.get("url", ""), _plain(r.get("description", "")))
            for r in items[:count]
            if r.get("url")
        ]


class SearXNG:
    """A SearXNG instance's JSON API (SEARXNG_URL; no key, the instance must allow format=json)."""

    name = "SearXNG"

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")

    async def search(self, query: str, count: int, fetcher: Fetcher) -> list[SearchResult]:
        page = await fetcher.get(f"{self.base_url}/search", params={"q": query, "format": "json"})
        items = page.json().get("results") or []
        return [
            SearchResult(_plain(r.get("title", "")), r.get("url", ""), _plain(r.get("content", "")))
            for r in items[:count]
            if r.get("url")
        ]


SEARCH_ENV = "SAGENT_SEARCH"


def backend_from_env(environ: Mapping[str, str] | None = None) -> SearchBackend:
    """SAGENT_SEARCH names the backend (duckduckgo, brave, searxng); without it Brave when BRAVE_API_KEY is
    set, SearXNG when SEARXNG_URL is, else DuckDuckGo."""
    env = os.environ if environ is None else environ
    choice = env.get(SEARCH_ENV, "").strip().lower()
    key, searx = env.get("BRAVE_API_KEY", ""), env.get("SEARXNG_URL", "")
    if not choice:
        choice = "brave" if key else "searxng" if searx else "duckduckgo"
    if choice == "brave":
        if not key:
            raise ToolError(f"{SEARCH_ENV}=brave needs BRAVE_API_KEY (a free key from brave.com/search/api)")
        return Brave(key)
    if choice == "searxng":
        if not searx:
            raise ToolError(f"{SEARCH_ENV}=searxng needs SEARXNG_URL, the address of a SearXNG instance")
        return SearXNG(searx)
    if choice == "duckduckgo":
        return DuckDuckGo()
    raise ToolError(f"{SEARCH_ENV}={choice!r} is not a search backend; use duckduckgo, brave or searxng")


def domain_matches(host: str, domains: Iterable[str]) -> bool:
    """True when `host` is one of `domains` or below one (docs.python.org is below python.org)."""
    host = host.lower().rstrip(".")
    for d in domains:
        d = d.lower().strip().lstrip("*.").rstrip(".")
        if d and (host == d or host.endswith("." + d)):
            return True
    return False


class WebSearch(AnyOrder):
    name = "WebSearch"
    reproducible = True  # a search can be run again: compaction may prune its old output
    description = (
        "Search the web. Returns results as title, URL and snippet; WebFetch a result to read it. "
        "`allowed_domains` keeps only results from those sites (and their subdomains), `blocked_domains` "
        "drops results from them."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to search for"},
            "count": {"type": "integer", "description": "how many results, 1 to 20", "default": 8},
            "allowed_domains": {
                "type": "array",
                "items": {"type": "string"},
                "description": 'only results from these domains, e.g. ["docs.python.org"]',
            },
            "blocked_domains": {
                "type": "array",
                "items": {"type": "string"},
                "description": "no results from these domains",
            },
        },
        "required": ["query"],
    }

    def __init__(
        self,
        backend: SearchBackend | None = None,
        fetcher: Fetcher | None = None,
        *,
        allowed_domains: Iterable[str] = (),
        blocked_domains: Iterable[str] = (),
    ) -> None:
        """`backend` defaults to the one the environment names (see `backend_from_env`), chosen at the first
        search; `blocked_domains` apply to every search, `allowed_domains` unless a search gives its own."""
        self.backend = backend
        self.fetcher = fetcher or Fetcher.from_env()
        self.allowed_domains = list(allowed_domains)
        self.blocked_domains = list(blocked_domains)

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        query = arguments["query"].strip()
        if not query:
            raise ToolError("the query is empty")
        count = arguments.get("count") or 8
        if not 1 <= count <= 20:
            raise ToolError(f"count must be from 1 to 20, got {count}")
        allowed = list(arguments.get("allowed_domains") or self.allowed_domains)
        blocked = [*self.blocked_domains, *(arguments.get("blocked_domains") or [])]
        if self.backend is None:
            self.backend = backend_from_env()
            if isinstance(self.backend, SearXNG):
                self.fetcher.allow(host_of(self.backend.base_url))  # an instance the user named
        sent = f"{query} site:{allowed[0]}" if len(allowed) == 1 else query
        found = await self.backend.search(sent, min(20, count * 2 if allowed or blocked else count), self.fetcher)
        passed = [
            r
            for r in found
            if (not allowed or domain_matches(host_of(r.url), allowed)) and not domain_matches(host_of(r.url), blocked)
        ]
        kept, dropped = passed[:count], len(found) - len(passed)
        if not kept:
            why = f" ({dropped} dropped by the domain lists)" if dropped else ""
            return f"no results for {query!r} from {self.backend.name}{why}"
        lines = [f"{quantity(len(kept), 'result')} for {query!r} from {self.backend.name}:"]
        for n, r in enumerate(kept, 1):
            lines.append(f"{n}. {r.title or r.url}\n   {r.url}" + (f"\n   {r.snippet}" if r.snippet else ""))
        return "\n".join(lines)
