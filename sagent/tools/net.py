"""Fetching from the web for the tools, safely by default.

`Fetcher` speaks http and https only. Before each request, and again on every redirect hop, it resolves
the host and refuses loopback, private, link-local, multicast and reserved addresses; it then connects to
the address it checked (the Host header and TLS name stay the host's), so a second DNS answer cannot slip
an internal address in between. A host the user allows by name (`--allow-host`, `SAGENT_ALLOW_HOSTS`, or
an endpoint URL the user configured) skips the address check. Responses are capped in size; timeouts,
4xx/5xx and rate limits become `ToolError`s that say what happened, and a `Retry-After` is waited out when
it is short.
"""

from __future__ import annotations

import asyncio
import email.utils
import ipaddress
import os
import socket
import ssl
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from sagent import __version__
from sagent.tools.base import ToolError

if TYPE_CHECKING:
    import httpx

DEFAULT_TIMEOUT = 30.0
TOTAL_TIMEOUTS = 4  # a whole response may take this many timeouts
MAX_BYTES = 10_000_000
MAX_REDIRECTS = 8
MAX_RETRIES = 2
MAX_RETRY_WAIT = 30.0  # a rate limit asking for a longer wait is reported instead of waited out
USER_AGENT = f"sagent/{__version__} (a coding agent; +https://pypi.org/project/sagent/)"
ALLOW_HOSTS_ENV = "SAGENT_ALLOW_HOSTS"

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""Resolves a host name and port to its IP addresses (as text)."""

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


async def system_resolve(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def refused_kind(ip: IPAddress) -> str | None:
    """Why sagent will not connect to `ip` ("loopback", "private", …), or None for a public address."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is not None:
            return refused_kind(embedded)
    for attribute, kind in (
        ("is_unspecified", "unspecified"),
        ("is_loopback", "loopback"),
        ("is_link_local", "link-local"),
        ("is_multicast", "multicast"),
        ("is_private", "private"),
        ("is_reserved", "reserved"),
    ):
        if getattr(ip, attribute):
            return kind
    return None if ip.is_global else "non-public"


def allowed_hosts_from_env(environ: Mapping[str, str] | None = None) -> list[str]:
    value = (environ if environ is not None else os.environ).get(ALLOW_HOSTS_ENV, "")
    return [h.strip() for h in value.split(",") if h.strip()]


def host_of(url: str) -> str:
    """The host of `url`, lowercased; "" when it has none or is not a URL."""
    import httpx

    try:
        return (httpx.URL(url).host or "").lower()
    except httpx.InvalidURL:
        return ""


@dataclass(frozen=True, slots=True)
class Page:
    """A fetched response: the final URL after redirects, its media type (lowercased, no parameters)."""

    url: str
    status: int
    media_type: str
    charset: str | None
    body: bytes

    def text(self) -> str:
        return self.body.decode(self.charset or "utf-8", errors="replace")

    def json(self) -> Any:
        import json

        try:
            return json.loads(self.body)
        except ValueError:
            raise ToolError(f"{self.url}: the answer is not JSON ({self.media_type or 'no type'})") from None


_SSL: ssl.SSLContext | None = None


def _ssl_context() -> ssl.SSLContext:
    global _SSL
    if _SSL is None:
        _SSL = ssl.create_default_context()
        try:
            import certifi

            _SSL.load_verify_locations(certifi.where())
        except ImportError:
            pass
    return _SSL


class Fetcher:
    """Guarded HTTP for the web and paper tools. `resolve` may be replaced (tests map names to addresses)."""

    def __init__(
        self,
        *,
        allow_hosts: Iterable[str] = (),
        resolve: Resolver | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        user_agent: str = USER_AGENT,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        verify: ssl.SSLContext | None = None,
    ) -> None:
        """`verify` replaces the certificate authorities trusted (certifi's, by default)."""
        self.allow_hosts = {h.lower() for h in allow_hosts}
        self.verify = verify
        self.resolve = resolve or system_resolve
        self.timeout = timeout
        self.user_agent = user_agent
        self.sleep = sleep

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Fetcher:
        """A fetcher allowing the hosts listed in SAGENT_ALLOW_HOSTS (comma-separated)."""
        return cls(allow_hosts=allowed_hosts_from_env(environ))

    def allow(self, *hosts: str) -> None:
        """Let these hosts be fetched whatever their addresses (hosts the user named)."""
        self.allow_hosts |= {h.lower() for h in hosts if h}

    def allows(self, host: str, port: int | None) -> bool:
        host = host.lower()
        return host in self.allow_hosts or f"{host}:{port}" in self.allow_hosts

    async def address(self, url: httpx.URL) -> str:
        """The checked address to connect to for `url`; `ToolError` when the URL may not be fetched."""
        if url.scheme not in ("http", "https"):
            raise ToolError(f"refused {url}: only http and https URLs are fetched")
        host = url.host
        if not host:
            raise ToolError(f"refused {url}: the URL has no host")
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            literal: IPAddress | None = ipaddress.ip_address(host.split("%")[0])
        except ValueError:
            literal = None
        if literal is not None:
            addresses = [str(literal)]
        else:
            try:
                addresses = await self.resolve(host, port)
            except (OSError, UnicodeError) as error:
                raise ToolError(f"cannot resolve {host} ({error})") from None
            if not addresses:
                raise ToolError(f"cannot resolve {host}")
        if not self.allows(host, url.port):
            for text in addresses:
                kind = refused_kind(ipaddress.ip_address(text.split("%")[0]))
                if kind is not None:
                    where = f"{host} is" if literal is not None else f"{host} resolves to {text},"
                    raise ToolError(
                        f"refused {url}: {where} a {kind} address. sagent does not fetch from loopback, private, "
                        "link-local, multicast or reserved addresses; a user can allow a host with "
                        f"--allow-host {host} (or {ALLOW_HOSTS_ENV})"
                    )
        return addresses[0]

    async def get(
        self,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        form: Mapping[str, str] | None = None,
        max_bytes: int = MAX_BYTES,
        check_hop: Callable[[str, str], None] | None = None,
    ) -> Page:
        """GET `url` (POST when `form` is given), following redirects with every hop checked. 2xx only:
        any other status raises `ToolError`; 429 and 503 are retried when their `Retry-After` is short.
        `check_hop(from_url, to_url)` is called before each redirect is followed, and raises (a
        `ToolError`) to stop there: the caller's permission rules hold at every hop."""
        import httpx  # here, not at import: the tools load with every agent

        current = httpx.URL(url, params=params) if params else httpx.URL(url)
        method = "POST" if form is not None else "GET"
        async with httpx.AsyncClient(
            verify=self.verify or _ssl_context(), timeout=httpx.Timeout(self.timeout), follow_redirects=False
        ) as client:
            for _hop in range(MAX_REDIRECTS + 1):
                response, body = await self._send(client, method, current, headers, form, max_bytes)
                if response.is_redirect and "location" in response.headers:
                    following = current.join(response.headers["location"])
                    if check_hop is not None:
                        check_hop(str(current), str(following))
                    current = following
                    if response.status_code in (301, 302, 303):
                        method, form = "GET", None
                    continue
                media, _, _ = response.headers.get("content-type", "").partition(";")
                return Page(str(current), response.status_code, media.strip().lower(), response.charset_encoding, body)
        raise ToolError(f"{url}: more than {MAX_REDIRECTS} redirects")

    async def _send(
        self,
        client: httpx.AsyncClient,
        method: str,
        url: httpx.URL,
        headers: Mapping[str, str] | None,
        form: Mapping[str, str] | None,
        max_bytes: int,
    ) -> tuple[httpx.Response, bytes]:
        import httpx

        for attempt in range(MAX_RETRIES + 1):
            ip = await self.address(url)
            sent_headers = {"user-agent": self.user_agent, "host": url.netloc.decode("ascii"), **(headers or {})}
            extensions = {"sni_hostname": url.host} if url.scheme == "https" else {}
            request = client.build_request(
                method, url.copy_with(host=ip), headers=sent_headers, data=form, extensions=extensions
            )
            try:
                # `timeout` bounds each step (connect, each read); the whole response gets a few times that,
                # so a server that drips its bytes cannot hold the tool for ever.
                async with asyncio.timeout(self.timeout * TOTAL_TIMEOUTS):
                    response = await client.send(request, stream=True)
                    try:
                        body = await _read_capped(response, max_bytes, url)
                    finally:
                        await response.aclose()
            except httpx.TimeoutException:
                raise ToolError(f"{url}: timed out after {self.timeout:g} s") from None
            except TimeoutError:
                raise ToolError(f"{url}: not complete after {self.timeout * TOTAL_TIMEOUTS:g} s; gave up") from None
            except httpx.HTTPError as error:
                raise ToolError(f"{url}: cannot connect to {url.host} ({str(error) or type(error).__name__})") from None
            status = response.status_code
            if status in (429, 503) and attempt < MAX_RETRIES:
                wait = retry_after(response.headers)
                if wait is None:
                    wait = 2.0**attempt if status == 429 else None
                if wait is not None and wait <= MAX_RETRY_WAIT:
                    await self.sleep(wait)
                    continue
            if status >= 400:
                raise ToolError(http_error(url, response))
            return response, body
        raise AssertionError("unreachable")


async def _read_capped(response: httpx.Response, max_bytes: int, url: httpx.URL) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise ToolError(f"{url}: the response is {int(declared):,} bytes, over the {max_bytes:,}-byte limit")
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise ToolError(f"{url}: the response is over the {max_bytes:,}-byte limit; not read")
        chunks.append(chunk)
    return b"".join(chunks)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from a `Retry-After` header (a number or an HTTP date); None when absent or unreadable."""
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def http_error(url: httpx.URL, response: httpx.Response) -> str:
    status = response.status_code
    head = f"{url}: HTTP {status} {response.reason_phrase}".rstrip()
    if status == 429 or (status == 503 and "retry-after" in response.headers):
        wait = retry_after(response.headers)
        return f"{head}: rate limited" + (f"; retry after {wait:.0f} s" if wait is not None else "; retry later")
    if status == 404:
        return f"{head}: there is no such page; check the URL"
    if status in (401, 403):
        return f"{head}: the site refuses access (it needs a login or blocks automated clients)"
    if status >= 500:
        return f"{head}: the server failed; try again later"
    return head


# ------------------------------------------------------------------------------------------------ cache

V = TypeVar("V")


class TTLCache(Generic[V]):
    """The newest `size` values, each kept for `ttl` seconds."""

    def __init__(self, ttl: float, size: int = 64, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.size = size
        self.clock = clock
        self._items: OrderedDict[Any, tuple[float, V]] = OrderedDict()

    def get(self, key: Any) -> V | None:
        item = self._items.get(key)
        if item is None:
            return None
        if item[0] <= self.clock():
            del self._items[key]
            return None
        self._items.move_to_end(key)
        return item[1]

    def put(self, key: Any, value: V) -> None:
        self._items[key] = (self.clock() + self.ttl, value)
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)
