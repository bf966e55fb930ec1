"""PaperSearch, PaperDetails and PaperFetch against fake Semantic Scholar, OpenAlex and arXiv on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from sagent.tools.base import ToolContext, ToolError
from sagent.tools.net import Fetcher
from sagent.tools.papers import Paper, PaperDetails, PaperFetch, PaperSearch, Scholar, ids_for, merge_ranked
from tests.fakes.pdf import make_pdf
from tests.fakes.web_server import Answer, FakeWeb, payload

ATTENTION_PDF = [
    "Attention Is All You Need\nAshish Vaswani, Noam Shazeer\nAbstract\nThe Transformer uses attention only.",
    "1 Introduction\nRecurrent neural networks have been the state of the art.",
    "3 Model Architecture\nThe encoder maps an input sequence to representations.",
]


def query(request: dict) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(request["path"]).query).items()}


def openalex_works(request: dict) -> Answer:
    """/works answers a search, or the references (cited_by:) or citations (cites:) of a work."""
    q = query(request)
    if "search" in q:
        return Answer.json(payload("openalex_search.json"))
    if q.get("filter") == "cited_by:W2963403868":
        return Answer.json(payload("openalex_references.json"))
    if q.get("filter") == "cites:W2963403868":
        return Answer.json(payload("openalex_citations.json"))
    return Answer.json({"error": "unexpected"}, 400)


def routes() -> dict:
    return {
        "/s2/paper/search": Answer.json(payload("s2_search.json")),
        "/s2/paper/ARXIV:1706.03762": Answer.json(payload("s2_paper.json")),
        "/s2/paper/ARXIV:1706.03762/references": Answer.json(payload("s2_references.json")),
        "/s2/paper/ARXIV:1706.03762/citations": Answer.json(payload("s2_citations.json")),
        "/oa/works": openalex_works,
        "/oa/works/doi:10.48550/arxiv.1706.03762": Answer.json(payload("openalex_work.json")),
        "/arxiv/pdf/1706.03762": Answer(200, make_pdf(ATTENTION_PDF), {"content-type": "application/pdf"}),
    }


def scholar(web: FakeWeb, tmp_path: Path, **kw) -> Scholar:
    return Scholar(
        Fetcher(allow_hosts=["127.0.0.1"], **kw),
        s2_url=f"{web.url}/s2",
        openalex_url=f"{web.url}/oa",
        arxiv_url=f"{web.url}/arxiv",
        cache_dir=tmp_path / "papers",
    )


async def call(tool, tmp_path: Path, **arguments) -> str:
    return await tool.run(arguments, ToolContext(cwd=tmp_path))


async def test_search_merges_both_services_by_doi_and_arxiv_id(tmp_path: Path) -> None:
    with FakeWeb(routes()) as web:
        text = await call(PaperSearch(scholar(web, tmp_path)), tmp_path, query="attention transformer", limit=10)
    assert text.startswith("4 papers for 'attention transformer':")
    entries = text.split("\n")
    numbered = [line for line in entries if line[:2] in {f"{n}." for n in range(1, 10)}]
    # Attention (S2's arXiv id, OpenAlex's arXiv DOI) and BERT (DOI in two cases) appear once each, first,
    # as both services found them; then the papers only one service knows, by rank.
    assert numbered[0].startswith("1. Attention is All you Need (2017) · Ashish Vaswani, Noam M. Shazeer, Niki Parmar")
    assert "152,318 citations · id arXiv:1706.03762" in numbered[0]
    assert numbered[1].startswith("2. BERT: Pre-training") and "id arXiv:1810.04805" in numbered[1]
    assert {numbered[2][3:].split(" (")[0], numbered[3][3:].split(" (")[0]} == {
        "Deep Residual Learning for Image Recognition",
        "Attention Heads in Practice: A Field Guide",
    }
    assert text.count("Attention is All you Need") == 1 and text.count("BERT:") == 1
    block = text.split("\n2. ")[0]
    assert "found by: Semantic Scholar, OpenAlex" in block
    assert "arXiv:1706.03762 · DOI:10.48550/arxiv.1706.03762" in block
    assert "S2:204e3073870fae3d05bcbc2f6a8e263d9b72e776 · OpenAlex:W2963403868" in block
    assert "Abstract: The dominant sequence transduction models" in block
    assert "id DOI:10.1109/cvpr.2016.90" in text and "found by: OpenAlex" in text


async def test_search_goes_on_with_one_service_when_the_other_is_rate_limited(tmp_path: Path) -> None:
    web_routes = routes()
    web_routes["/s2/paper/search"] = Answer.json({"message": "Too Many Requests"}, 429, **{"retry-after": "600"})
    with FakeWeb(web_routes) as web:
        text = await call(PaperSearch(scholar(web, tmp_path)), tmp_path, query="attention")
        web.routes["/oa/works"] = Answer.json({"error": "down"}, 503)
        with pytest.raises(ToolError, match="both paper services failed"):
            await call(PaperSearch(scholar(web, tmp_path)), tmp_path, query="transformers")
    assert "3 papers for 'attention'" in text and "found by: OpenAlex" in text
    assert "[Semantic Scholar:" in text and "rate limited; retry after 600 s" in text


async def test_details_list_references_and_citations_with_ids_to_walk_the_graph(tmp_path: Path) -> None:
    web_routes = routes()
    web_routes["/s2/paper/ARXIV:1409.0473"] = Answer.json(
        {
            "paperId": "fa72",
            "externalIds": {"ArXiv": "1409.0473"},
            "title": "Neural Machine Translation by Jointly Learning to Align and Translate",
            "year": 2014,
            "authors": [],
            "abstract": "We conjecture...",
        }
    )
    web_routes["/s2/paper/ARXIV:1409.0473/references"] = Answer.json({"data": []})
    web_routes["/s2/paper/ARXIV:1409.0473/citations"] = Answer.json(
        {"data": [{"citingPaper": json.loads(payload("s2_paper.json"))}]}
    )
    with FakeWeb(web_routes) as web:
        tool = PaperDetails(scholar(web, tmp_path))
        text = await call(tool, tmp_path, id="arXiv:1706.03762v5", limit=5)
        assert any("limit=5" in p for p in web.paths())
        # A reference's id, as listed, is the next call: one step along the citation graph.
        reference = next(line for line in text.splitlines() if "Neural Machine Translation" in line)
        next_id = reference.rsplit("id ", 1)[1]
        walked = await call(tool, tmp_path, id=next_id)
    assert text.startswith("Attention is All you Need (2017)")
    assert "Abstract: The dominant sequence transduction models" in text and "recurrence and convolutions" in text
    assert "(from Semantic Scholar)" in text
    refs = text.split("References (3 shown):")[1].split("Cited by")[0]
    assert "Long Short-Term Memory (1997) · S. Hochreiter, J. Schmidhuber · 90,210 citations" in refs
    assert "id DOI:10.1162/neco.1997.9.8.1735" in refs and "id arXiv:1409.3215" in refs
    cited_by = text.split("Cited by (2 shown):")[1]
    assert "BERT" in cited_by and "id arXiv:2010.11929" in cited_by
    assert next_id == "arXiv:1409.0473"
    assert walked.startswith("Neural Machine Translation") and "Attention is All you Need" in walked


async def test_details_fall_back_to_openalex(tmp_path: Path) -> None:
    web_routes = routes()
    web_routes["/s2/paper/ARXIV:1706.03762"] = Answer.json({"error": "Paper not found"}, 404)
    with FakeWeb(web_routes) as web:
        text = await call(PaperDetails(scholar(web, tmp_path)), tmp_path, id="1706.03762")
    assert "(from OpenAlex)" in text and text.startswith("Attention Is All You Need (2017)")
    assert "Abstract: The dominant sequence transduction models are based on complex recurrent" in text
    assert "Long Short-Term Memory" in text.split("References")[1] and "BERT" in text.split("Cited by")[1]


async def test_fetch_takes_arxiv_first_returns_pages_and_caches_the_pdf(tmp_path: Path) -> None:
    with FakeWeb(routes()) as web:
        tool = PaperFetch(scholar(web, tmp_path))
        text = await call(tool, tmp_path, id="arXiv:1706.03762", pages="1-2")
        again = await call(tool, tmp_path, id="arXiv:1706.03762", pages="3")
        fetched = [p for p in web.paths() if p.startswith("/arxiv/")]
    assert fetched == ["/arxiv/pdf/1706.03762"]  # once: the second call read the cache
    assert "downloaded from" in text and "from the cache" in again
    assert "--- page 1 of 3 ---\nAttention Is All You Need\nAshish Vaswani, Noam Shazeer" in text
    assert "--- page 2 of 3 ---\n1 Introduction" in text and "Model Architecture" not in text
    assert '[1 more page(s) not shown: ask for pages="3" to go on]' not in text  # only 1-2 were asked for
    assert "--- page 3 of 3 ---\n3 Model Architecture" in again
    assert (tmp_path / "papers" / "arxiv-1706.03762.pdf").read_bytes().startswith(b"%PDF-")


async def test_fetch_without_arxiv_tries_the_open_access_links_in_turn(tmp_path: Path) -> None:
    doi = "10.1145/3591234.3591299"
    work = {
        "id": "https://openalex.org/W9",
        "doi": f"https://doi.org/{doi}",
        "title": "Attention Heads in Practice",
        "locations": [
            {"landing_page_url": "x", "pdf_url": "LANDING"},
            {"landing_page_url": "y", "pdf_url": "REAL"},
        ],
    }
    with FakeWeb() as web:
        work["locations"][0]["pdf_url"] = f"{web.url}/landing"
        work["locations"][1]["pdf_url"] = f"{web.url}/repository/paper.pdf"
        web.routes.update(
            {
                f"/s2/paper/DOI:{doi}": Answer.json({"error": "not found"}, 404),
                f"/oa/works/doi:{doi}": Answer.json(work),
                "/oa/works": Answer.json({"results": []}),
                "/landing": Answer.html("<html><body>Buy this article</body></html>"),
                "/repository/paper.pdf": Answer(200, make_pdf(["Field guide, page one"]), {}),
            }
        )
        text = await call(PaperFetch(scholar(web, tmp_path)), tmp_path, id=f"DOI:{doi}")
    assert "downloaded from" in text and "/repository/paper.pdf" in text
    assert "--- page 1 of 1 ---\nField guide, page one" in text
    with FakeWeb({"/s2/paper/DOI:10.1/none": Answer.json({"paperId": "z", "title": "No PDF anywhere"})}) as web:
        web.routes["/s2/paper/DOI:10.1/none/references"] = Answer.json({"data": []})
        web.routes["/s2/paper/DOI:10.1/none/citations"] = Answer.json({"data": []})
        with pytest.raises(ToolError, match="no arXiv id and no open-access PDF"):
            await call(PaperFetch(scholar(web, tmp_path)), tmp_path, id="DOI:10.1/none")


def test_ids_merge_rules() -> None:
    assert ids_for("arXiv:1706.03762v7") == ("ARXIV:1706.03762", "doi:10.48550/arxiv.1706.03762")
    assert ids_for("https://doi.org/10.48550/arXiv.1706.03762")[0] == "ARXIV:1706.03762"
    assert ids_for("10.18653/v1/N19-1423") == ("DOI:10.18653/v1/n19-1423", "doi:10.18653/v1/n19-1423")
    assert ids_for("W2963403868") == (None, "W2963403868")
    with pytest.raises(ToolError, match="cannot tell what kind of id"):
        ids_for("attention is all you need")
    a = Paper("A", doi="https://doi.org/10.1/X", sources=["S2"], citations=5)
    b = Paper("A again", doi="10.1/x", arxiv="2101.00001", sources=["OA"], citations=9)
    c = Paper("C", arxiv="2101.00001v2", sources=["S2"])  # the same paper as b, by arXiv id
    merged = merge_ranked([a, c], [b])
    assert len(merged) == 1 and merged[0].citations == 9 and merged[0].sources == ["S2", "OA"]
