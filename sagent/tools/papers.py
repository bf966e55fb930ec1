"""Paper tools: PaperSearch, PaperDetails and PaperFetch, over the public Semantic Scholar and OpenAlex APIs.

Search asks both services at once and merges their results by DOI and arXiv id. Details come with the
paper's references and citations, each with an id to ask for next, so a model can walk the citation graph.
Fetch downloads the PDF (arXiv first, then the open-access links), keeps it in a cache folder, and returns
the text of its pages. Every request goes through `Fetcher`; answers are cached for 15 minutes, which also
spares the services' rate limits.

Environment: SEMANTIC_SCHOLAR_API_KEY (optional, a higher rate limit), OPENALEX_API_KEY and OPENALEX_EMAIL
(optional); SAGENT_SEMANTIC_SCHOLAR_URL, SAGENT_OPENALEX_URL and SAGENT_ARXIV_URL point at a mirror or proxy.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sagent.lib.words import quantity
from sagent.lib.xdg import cache_home
from sagent.tools.base import AnyOrder, ToolContext, ToolError
from sagent.tools.net import ALLOW_HOSTS_ENV, Fetcher, TTLCache, host_of
from sagent.tools.web import CACHE_SECONDS

S2_URL = "https://api.semanticscholar.org/graph/v1"
OPENALEX_URL = "https://api.openalex.org"
ARXIV_URL = "https://arxiv.org"
S2_FIELDS = "paperId,externalIds,title,year,authors,venue,abstract,citationCount,openAccessPdf"
S2_LINK_FIELDS = "paperId,externalIds,title,year,authors,venue,citationCount"
MAX_PDF_BYTES = 60_000_000
ABSTRACT_IN_LIST = 300

_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.IGNORECASE)
_ARXIV_ID = re.compile(r"^(\d{4}\.\d{4,5}|[a-z\-]+(\.[A-Z]{2})?/\d{7})(v\d+)?$", re.IGNORECASE)
_ARXIV_IN_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^?#]+?)(?:\.pdf)?(?:[?#]|$)", re.IGNORECASE)


def norm_doi(value: str | None) -> str | None:
    if not value:
        return None
    doi = value.strip()
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "doi:"):
        if doi.lower().startswith(prefix):
            doi = doi[len(prefix) :]
    return doi.lower() or None


def norm_arxiv(value: str | None) -> str | None:
    """An arXiv id without its version ("1706.03762v5" → "1706.03762"); None when `value` is not one."""
    if not value:
        return None
    text = value.strip()
    if text.lower().startswith("arxiv:"):
        text = text[6:]
    m = _ARXIV_ID.match(text)
    return m.group(1).lower() if m else None


# ----------------------------------------------------------------------------------------------- Paper


@dataclass(slots=True)
class Paper:
    title: str
    year: int | None = None
    authors: list[str] = field(default_factory=list)
    venue: str = ""
    abstract: str = ""
    citations: int | None = None
    doi: str | None = None
    arxiv: str | None = None
    s2_id: str | None = None
    openalex_id: str | None = None
    pdf_urls: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.doi = norm_doi(self.doi)
        self.arxiv = norm_arxiv(self.arxiv) or arxiv_of(self.doi or "")

    @property
    def id(self) -> str:
        """The id to give PaperDetails or PaperFetch for this paper."""
        if self.arxiv:
            return f"arXiv:{self.arxiv}"
        if self.doi:
            return f"DOI:{self.doi}"
        return self.s2_id or self.openalex_id or self.title

    def identities(self) -> set[str]:
        """What identifies the paper across services."""
        keys = {f"doi:{self.doi}"} if self.doi else set()
        if self.arxiv:
            keys.add(f"arxiv:{self.arxiv}")
        return keys

    def merged(self, other: Paper) -> Paper:
        """This paper with what `other` (the same paper from another service) adds."""
        return replace(
            self,
            year=self.year or other.year,
            authors=self.authors or other.authors,
            venue=self.venue or other.venue,
            abstract=self.abstract if len(self.abstract) >= len(other.abstract) else other.abstract,
            citations=max((c for c in (self.citations, other.citations) if c is not None), default=None),
            doi=self.doi or other.doi,
            arxiv=self.arxiv or other.arxiv,
            s2_id=self.s2_id or other.s2_id,
            openalex_id=self.openalex_id or other.openalex_id,
            pdf_urls=list(dict.fromkeys([*self.pdf_urls, *other.pdf_urls])),
            sources=list(dict.fromkeys([*self.sources, *other.sources])),
        )

    def line(self) -> str:
        """One line for a list: title, year, first authors, citation count, id."""
        authors = ", ".join(self.authors[:3]) + (" et al." if len(self.authors) > 3 else "")
        parts = [f"{self.title} ({self.year or 'n.d.'})"]
        if authors:
            parts.append(authors)
        if self.citations is not None:
            parts.append(f"{self.citations:,} citations")
        return " · ".join(parts) + f" · id {self.id}"

    def block(self, abstract_chars: int | None) -> str:
        """Several lines: the title line, venue and ids, the abstract (cut to `abstract_chars` if given)."""
        ids = [f"arXiv:{self.arxiv}" if self.arxiv else "", f"DOI:{self.doi}" if self.doi else ""]
        ids += [f"S2:{self.s2_id}" if self.s2_id else "", f"OpenAlex:{self.openalex_id}" if self.openalex_id else ""]
        lines = [self.line()]
        meta = " · ".join(x for x in [self.venue, *ids] if x)
        if meta:
            lines.append(meta)
        if self.pdf_urls:
            lines.append("open-access PDF: " + self.pdf_urls[0])
        abstract = " ".join(self.abstract.split())
        if abstract:
            if abstract_chars is not None and len(abstract) > abstract_chars:
                abstract = abstract[:abstract_chars].rsplit(" ", 1)[0] + " …"
            lines.append(f"Abstract: {abstract}")
        return "\n".join(lines)


def merge_ranked(*lists: list[Paper]) -> list[Paper]:
    """Papers from several services as one list without duplicates (the same DOI or arXiv id), in order of
    their best rank in any list; a paper both services found comes before one found by one at that rank."""
    merged: list[Paper] = []
    best: list[tuple[int, int]] = []
    by_key: dict[str, int] = {}
    for rank in range(max((len(x) for x in lists), default=0)):
        for papers in lists:
            if rank >= len(papers):
                continue
            paper = papers[rank]
            at = next((by_key[k] for k in paper.identities() if k in by_key), None)
            if at is None:
                at = len(merged)
                merged.append(paper)
                best.append((rank, 0))
            else:
                merged[at] = merged[at].merged(paper)
                best[at] = (best[at][0], best[at][1] - 1)
            for k in merged[at].identities():
                by_key[k] = at
    order = sorted(range(len(merged)), key=lambda i: best[i])
    return [merged[i] for i in order]


# --------------------------------------------------------------------------------------------- services


def _s2_paper(data: Mapping[str, Any]) -> Paper:
    ext = data.get("externalIds") or {}
    pdf = (data.get("openAccessPdf") or {}).get("url")
    return Paper(
        title=(data.get("title") or "").strip(),
        year=data.get("year"),
        authors=[a.get("name", "") for a in data.get("authors") or [] if a.get("name")],
        venue=data.get("venue") or "",
        abstract=data.get("abstract") or "",
        citations=data.get("citationCount"),
        doi=ext.get("DOI"),
        arxiv=norm_arxiv(ext.get("ArXiv")),
        s2_id=data.get("paperId"),
        pdf_urls=[pdf] if pdf else [],
        sources=["Semantic Scholar"],
    )


def _abstract_from_index(index: Mapping[str, list[int]] | None) -> str:
    """OpenAlex gives abstracts as an inverted index (word → positions); this puts the words back."""
    if not index:
        return ""
    at = {pos: word for word, positions in index.items() for pos in positions}
    return " ".join(at[i] for i in sorted(at))


def _openalex_paper(data: Mapping[str, Any]) -> Paper:
    arxiv = None
    pdfs: list[str] = []
    locations = [data.get("best_oa_location") or {}, *(data.get("locations") or [])]
    for loc in locations:
        for url in (loc.get("landing_page_url"), loc.get("pdf_url")):
            m = _ARXIV_IN_URL.search(url or "")
            if m and arxiv is None:
                arxiv = norm_arxiv(m.group(1))
        if loc.get("pdf_url"):
            pdfs.append(loc["pdf_url"])
    source = ((data.get("primary_location") or {}).get("source") or {}).get("display_name") or ""
    return Paper(
        title=(data.get("title") or data.get("display_name") or "").strip(),
        year=data.get("publication_year"),
        authors=[
            a["author"]["display_name"]
            for a in data.get("authorships") or []
            if (a.get("author") or {}).get("display_name")
        ],
        venue=source,
        abstract=_abstract_from_index(data.get("abstract_inverted_index")),
        citations=data.get("cited_by_count"),
        doi=data.get("doi"),
        arxiv=arxiv,
        openalex_id=(data.get("id") or "").rsplit("/", 1)[-1] or None,
        pdf_urls=list(dict.fromkeys(pdfs)),
        sources=["OpenAlex"],
    )


@dataclass(frozen=True, slots=True)
class Details:
    paper: Paper
    references: list[Paper]
    citations: list[Paper]
    source: str


class Scholar:
    """The two services and arXiv behind one fetcher and one 15-minute cache of their answers."""

    def __init__(
        self,
        fetcher: Fetcher | None = None,
        *,
        s2_url: str = S2_URL,
        openalex_url: str = OPENALEX_URL,
        arxiv_url: str = ARXIV_URL,
        s2_key: str | None = None,
        openalex_key: str | None = None,
        openalex_email: str | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        self.fetcher = fetcher or Fetcher.from_env()
        self.s2_url = s2_url.rstrip("/")
        self.openalex_url = openalex_url.rstrip("/")
        self.arxiv_url = arxiv_url.rstrip("/")
        self.s2_key = s2_key
        self.openalex_params = {k: v for k, v in (("api_key", openalex_key), ("mailto", openalex_email)) if v}
        self.cache_dir = cache_dir or _cache_home() / "sagent" / "papers"
        self._answers: TTLCache[Any] = TTLCache(CACHE_SECONDS, size=256)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, fetcher: Fetcher | None = None) -> Scholar:
        env = os.environ if environ is None else environ
        urls = {
            "s2_url": env.get("SAGENT_SEMANTIC_SCHOLAR_URL") or S2_URL,
            "openalex_url": env.get("SAGENT_OPENALEX_URL") or OPENALEX_URL,
            "arxiv_url": env.get("SAGENT_ARXIV_URL") or ARXIV_URL,
        }
        fetcher = fetcher or Fetcher.from_env(env)
        for name, default in (("s2_url", S2_URL), ("openalex_url", OPENALEX_URL), ("arxiv_url", ARXIV_URL)):
            if urls[name] != default:
                fetcher.allow(host_of(urls[name]))  # an endpoint the user named
        return cls(
            fetcher,
            s2_url=urls["s2_url"],
            openalex_url=urls["openalex_url"],
            arxiv_url=urls["arxiv_url"],
            s2_key=env.get("SEMANTIC_SCHOLAR_API_KEY") or None,
            openalex_key=env.get("OPENALEX_API_KEY") or None,
            openalex_email=env.get("OPENALEX_EMAIL") or None,
        )

    async def _json(self, url: str, params: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> Any:
        key = (url, tuple(sorted(params.items())))
        cached = self._answers.get(key)
        if cached is None:
            page = await self.fetcher.get(url, params=params, headers={"accept": "application/json", **(headers or {})})
            cached = page.json()
            self._answers.put(key, cached)
        return cached

    # Semantic Scholar

    async def _s2(self, path: str, **params: Any) -> Any:
        headers = {"x-api-key": self.s2_key} if self.s2_key else None
        return await self._json(f"{self.s2_url}{path}", params, headers)

    async def s2_search(self, query: str, limit: int) -> list[Paper]:
        data = await self._s2("/paper/search", query=query, limit=limit, fields=S2_FIELDS)
        return [_s2_paper(p) for p in data.get("data") or [] if p.get("title")]

    async def s2_details(self, paper_id: str, limit: int) -> Details:
        paper, refs, cites = await asyncio.gather(
            self._s2(f"/paper/{paper_id}", fields=S2_FIELDS),
            self._s2(f"/paper/{paper_id}/references", fields=S2_LINK_FIELDS, limit=limit),
            self._s2(f"/paper/{paper_id}/citations", fields=S2_LINK_FIELDS, limit=limit),
        )
        return Details(
            _s2_paper(paper),
            [_s2_paper(r["citedPaper"]) for r in refs.get("data") or [] if (r.get("citedPaper") or {}).get("title")],
            [_s2_paper(c["citingPaper"]) for c in cites.get("data") or [] if (c.get("citingPaper") or {}).get("title")],
            "Semantic Scholar",
        )

    # OpenAlex

    async def _openalex(self, path: str, **params: Any) -> Any:
        return await self._json(f"{self.openalex_url}{path}", {**params, **self.openalex_params})

    async def openalex_search(self, query: str, limit: int) -> list[Paper]:
        data = await self._openalex("/works", search=query, **{"per-page": limit})
        return [_openalex_paper(w) for w in data.get("results") or [] if w.get("title") or w.get("display_name")]

    async def openalex_details(self, work: str, limit: int) -> Details:
        paper = _openalex_paper(await self._openalex(f"/works/{work}"))
        wid = paper.openalex_id
        refs, cites = await asyncio.gather(
            self._openalex("/works", filter=f"cited_by:{wid}", **{"per-page": limit}),
            self._openalex("/works", filter=f"cites:{wid}", sort="cited_by_count:desc", **{"per-page": limit}),
        )
        return Details(
            paper,
            [_openalex_paper(w) for w in refs.get("results") or []],
            [_openalex_paper(w) for w in cites.get("results") or []],
            "OpenAlex",
        )

    # both

    async def search(self, query: str, limit: int) -> tuple[list[Paper], list[str]]:
        """Merged results and the failures of either service (as text); `ToolError` when both failed."""
        answers = await asyncio.gather(
            self.s2_search(query, limit), self.openalex_search(query, limit), return_exceptions=True
        )
        lists: list[list[Paper]] = []
        failures: list[str] = []
        for service, answer in zip(("Semantic Scholar", "OpenAlex"), answers, strict=True):
            if isinstance(answer, ToolError):
                failures.append(f"{service}: {answer}")
            elif isinstance(answer, BaseException):
                raise answer
            else:
                lists.append(answer)
        if not lists:
            raise ToolError("both paper services failed. " + " | ".join(failures))
        return merge_ranked(*lists)[:limit], failures

    async def details(self, paper_id: str, limit: int) -> Details:
        """Semantic Scholar's details, or OpenAlex's when it fails or does not know the paper."""
        s2_id, openalex_id = ids_for(paper_id)
        failures = []
        if s2_id is not None:
            try:
                return await self.s2_details(s2_id, limit)
            except ToolError as error:
                failures.append(f"Semantic Scholar: {error}")
        if openalex_id is not None:
            try:
                return await self.openalex_details(openalex_id, limit)
            except ToolError as error:
                failures.append(f"OpenAlex: {error}")
        raise ToolError(f"no details for {paper_id}. " + " | ".join(failures))


def arxiv_of(paper_id: str) -> str | None:
    """The arXiv id in `paper_id` ("arXiv:1706.03762", "1706.03762v2", the arXiv DOI), or None."""
    text = paper_id.strip()
    if text.lower().startswith(("doi:", "10.", "https://doi.org/", "http://doi.org/")):
        m = _ARXIV_DOI.match(norm_doi(text) or "")
        return norm_arxiv(m.group(1)) if m else None
    return norm_arxiv(text)


def ids_for(paper_id: str) -> tuple[str | None, str | None]:
    """How Semantic Scholar and OpenAlex name the paper `paper_id` (an arXiv id, a DOI, a Semantic Scholar
    id or an OpenAlex id); None for a service that cannot look it up by that id."""
    text = paper_id.strip()
    lowered = text.lower()
    arxiv = arxiv_of(text)
    if arxiv:
        return f"ARXIV:{arxiv}", f"doi:10.48550/arxiv.{arxiv}"
    if lowered.startswith(("doi:", "10.", "https://doi.org/", "http://doi.org/")):
        doi = norm_doi(text)
        return f"DOI:{doi}", f"doi:{doi}"
    if lowered.startswith("openalex:"):
        return None, text.split(":", 1)[1]
    if re.fullmatch(r"W\d+", text):
        return None, text
    if lowered.startswith("s2:"):
        return text.split(":", 1)[1], None
    if re.fullmatch(r"[0-9a-f]{40}", lowered) or lowered.startswith("corpusid:"):
        return text, None
    raise ToolError(
        f"cannot tell what kind of id {paper_id!r} is; give an arXiv id (arXiv:1706.03762), a DOI "
        "(DOI:10.1145/…), a Semantic Scholar id or an OpenAlex id (W2963403868), as PaperSearch lists them"
    )


def _cache_home() -> Path:
    return cache_home()


# ------------------------------------------------------------------------------------------------ tools


# What Scholar.from_env reads: a shared Scholar is made again when any of them changes.
_SCHOLAR_ENV = (
    "SAGENT_SEMANTIC_SCHOLAR_URL",
    "SAGENT_OPENALEX_URL",
    "SAGENT_ARXIV_URL",
    "SEMANTIC_SCHOLAR_API_KEY",
    "OPENALEX_API_KEY",
    "OPENALEX_EMAIL",
    "XDG_CACHE_HOME",
    "HOME",
    ALLOW_HOSTS_ENV,
)
_shared: dict[tuple[str | None, ...], Scholar] = {}


def shared_scholar() -> Scholar:
    """The Scholar that paper tools built without one share (`PaperSearch()`, `PaperFetch()`, ...), as the
    ones `builtin_tools` makes share theirs: one cache of answers among them. One per environment, so a
    changed environment is obeyed."""
    key = tuple(os.environ.get(name) for name in _SCHOLAR_ENV)
    scholar = _shared.get(key)
    if scholar is None:
        scholar = _shared[key] = Scholar.from_env()
    return scholar


class _PaperTool(AnyOrder):
    def __init__(self, scholar: Scholar | None = None) -> None:
        self.scholar = scholar or shared_scholar()


def _limit(arguments: dict[str, Any], default: int, most: int) -> int:
    limit = arguments.get("limit") or default
    if not 1 <= limit <= most:
        raise ToolError(f"limit must be from 1 to {most}, got {limit}")
    return limit


class PaperSearch(_PaperTool):
    name = "PaperSearch"
    reproducible = True  # the search can be run again: compaction may prune its old output
    description = (
        "Search scholarly papers in Semantic Scholar and OpenAlex together; results are merged (one entry "
        "per DOI or arXiv id) with title, year, authors, citations, ids and the start of the abstract. Give "
        "a result's id to PaperDetails (references and citations) or PaperFetch (the full text)."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "keywords, a title, or a topic"},
            "limit": {"type": "integer", "description": "how many papers, 1 to 50", "default": 10},
        },
        "required": ["query"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        query = arguments["query"].strip()
        if not query:
            raise ToolError("the query is empty")
        papers, failures = await self.scholar.search(query, _limit(arguments, 10, 50))
        lines = [f"{quantity(len(papers), 'paper')} for {query!r}:" if papers else f"no papers for {query!r}"]
        for n, paper in enumerate(papers, 1):
            block = paper.block(ABSTRACT_IN_LIST).replace("\n", "\n   ")
            lines.append(f"{n}. {block}\n   found by: {', '.join(paper.sources)}")
        lines += [f"[{failure}; these results are from the other service]" for failure in failures]
        return "\n".join(lines)


class PaperDetails(_PaperTool):
    name = "PaperDetails"
    reproducible = True
    description = (
        "A paper's details: title, authors, venue, ids, the full abstract, the papers it cites (references) "
        "and papers that cite it (citations), each with an id to look up next. Walk the citation graph by "
        "calling it again with those ids."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "id": {
                "type": "string",
                "description": "arXiv:1706.03762, DOI:10.…, a Semantic Scholar id or an OpenAlex id (W…)",
            },
            "limit": {"type": "integer", "description": "references and citations to list, 1 to 100", "default": 20},
        },
        "required": ["id"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        details = await self.scholar.details(arguments["id"], _limit(arguments, 20, 100))
        lines = [details.paper.block(None), f"(from {details.source})"]
        for title, papers in (("References", details.references), ("Cited by", details.citations)):
            lines.append(f"\n{title} ({len(papers)} shown):" if papers else f"\n{title}: none known")
            lines += [f"- {p.line()}" for p in papers]
        return "\n".join(lines)


class PaperFetch(_PaperTool):
    name = "PaperFetch"
    reproducible = True
    description = (
        "Download a paper's PDF (from arXiv when it has an arXiv id, else from its open-access links) and "
        "return the text of its pages with page numbers. PDFs are kept in a cache folder, so asking for more "
        "pages later costs no download; the answer gives the PDF's path, which Read also opens."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "the paper's id as PaperSearch gives it"},
            "pages": {"type": "string", "description": 'the pages: "1-5", "3" or "7-" (default: from page 1)'},
        },
        "required": ["id"],
    }

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        from sagent.tools.pdf import pdf_text

        paper_id = arguments["id"].strip()
        path, source = await self._pdf(paper_id)
        text = await asyncio.to_thread(pdf_text, path, arguments.get("pages"), name=paper_id)
        return f"{paper_id}: {source}; the PDF is at {path}\n{text}"

    async def _pdf(self, paper_id: str) -> tuple[Path, str]:
        """The cached PDF of the paper, downloading it first when it is not cached."""
        scholar = self.scholar
        ids_for(paper_id)  # a clear error for an id no service knows how to read
        arxiv = arxiv_of(paper_id)
        name = f"arxiv-{arxiv}" if arxiv else paper_id.strip()
        path = scholar.cache_dir / (re.sub(r"[^A-Za-z0-9._-]+", "_", name) + ".pdf")
        if path.is_file():
            return path, "from the cache"
        candidates = [f"{scholar.arxiv_url}/pdf/{arxiv}"] if arxiv else []
        if not arxiv:
            details = await scholar.details(paper_id, 1)
            if details.paper.arxiv:
                candidates.append(f"{scholar.arxiv_url}/pdf/{details.paper.arxiv}")
            candidates += details.paper.pdf_urls
        if not candidates:
            raise ToolError(f"{paper_id} has no arXiv id and no open-access PDF link known to the services")
        tried = []
        for url in dict.fromkeys(candidates):
            try:
                page = await scholar.fetcher.get(url, headers={"accept": "application/pdf"}, max_bytes=MAX_PDF_BYTES)
            except ToolError as error:
                tried.append(str(error))
                continue
            if not page.body.startswith(b"%PDF-"):
                tried.append(f"{url}: not a PDF ({page.media_type or 'unknown type'}; a landing page?)")
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(".part")
            partial.write_bytes(page.body)
            partial.replace(path)
            return path, f"downloaded from {page.url}"
        raise ToolError(f"no PDF of {paper_id} could be downloaded:\n- " + "\n- ".join(tried))
