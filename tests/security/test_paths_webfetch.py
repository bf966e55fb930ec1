"""WebFetch rules hold past the first hop: a `WebFetch(domain:…)` deny holds when an allowed host redirects
there (checked at every hop, before any request reaches the denied host), and a redirect to a host the rules
would ask about is not followed (nobody can be asked in the middle of a fetch; the model is told the URL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagent.tools.net import Fetcher
from sagent.tools.web import WebFetch
from tests.fakes.web_server import Answer, FakeWeb
from tests.security.paths_world import World, build_world, run_call


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return build_world(tmp_path, monkeypatch)


HOSTS = ("good.test", "mirror.good.test", "other.test", "evil.test", "sub.evil.test")


def local_names():
    """Every fake host resolves to the loopback fake server (which the fetcher is told to allow)."""

    async def resolve(host: str, port: int) -> list[str]:
        if host.rstrip(".").lower() not in HOSTS:
            raise OSError("Name or service not known")
        return ["127.0.0.1"]

    return resolve


def fetch_tool() -> WebFetch:
    return WebFetch(Fetcher(allow_hosts=[*HOSTS, *(h.upper() for h in HOSTS)], resolve=local_names()), cache_seconds=0)


RULES = {"deny": ("WebFetch(domain:evil.test)",), "allow": ("WebFetch(domain:good.test)",)}


@pytest.mark.parametrize(
    "target",
    [
        "http://evil.test:{port}/secret",
        "http://sub.evil.test:{port}/secret",
        "http://EVIL.TEST:{port}/secret",
        "http://evil.test.:{port}/secret",
        "//evil.test:{port}/secret",  # a scheme-relative Location
    ],
)
async def test_a_deny_rule_holds_when_an_allowed_host_redirects_there(world: World, target: str) -> None:
    with FakeWeb() as web:
        port = web.port
        web.routes.update(
            {
                "/start": Answer.redirect(f"http://mirror.good.test:{port}/hop"),
                "/hop": Answer.redirect(target.format(port=port)),
                "/secret": Answer(200, "the denied host's page", {"content-type": "text/plain"}),
            }
        )
        out = await run_call(
            world, "WebFetch", {"url": f"http://good.test:{port}/start"}, mode="default", tools=[fetch_tool()], **RULES
        )
    assert "the denied host's page" not in out
    assert out.startswith("denied: ") and "WebFetch(domain:evil.test)" in out, out
    assert web.paths() == ["/start", "/hop"]  # stopped before any request reached the denied host


async def test_a_redirect_to_a_host_that_would_ask_is_not_followed_and_the_model_is_told(world: World) -> None:
    with FakeWeb() as web:
        port = web.port
        web.routes.update(
            {
                "/start": Answer.redirect(f"http://other.test:{port}/elsewhere"),
                "/elsewhere": Answer(200, "a page on another host", {"content-type": "text/plain"}),
                "/same": Answer.redirect(f"http://good.test:{port}/page"),
                "/page": Answer(200, "a page on the same host", {"content-type": "text/plain"}),
            }
        )
        held = await run_call(
            world, "WebFetch", {"url": f"http://good.test:{port}/start"}, mode="default", tools=[fetch_tool()], **RULES
        )
        same = await run_call(
            world, "WebFetch", {"url": f"http://good.test:{port}/same"}, mode="default", tools=[fetch_tool()], **RULES
        )
    assert "a page on another host" not in held
    assert f"redirects to another host: http://other.test:{port}/elsewhere" in held
    assert "call WebFetch again with that URL" in held
    assert "a page on the same host" in same  # a redirect within the host the call was allowed for
    assert web.paths() == ["/start", "/same", "/page"]
