"""Slack's Web API and Socket Mode through the official `slack_sdk` clients, for an asyncio service.

The Web API client is `slack_sdk.WebClient` (standard library HTTP, no extra dependency) with retry
handlers for rate limits (a 429's `Retry-After` is waited out) and dropped connections; its calls run in
a worker thread. Socket Mode is `slack_sdk`'s built-in client, which reconnects by itself when the
WebSocket drops; each envelope is acknowledged at once and handed to the service's event loop.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from slack_sdk import WebClient
    from slack_sdk.socket_mode.builtin import SocketModeClient

DEFAULT_API_URL = "https://slack.com/api/"
MAX_TEXT = 3500  # characters per posted message; longer answers are split


class SlackSetupError(Exception):
    """Slack refused the service's tokens or could not be reached: the message says which and the fix."""


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the bot is in the workspace (from `auth.test`)."""

    user_id: str
    bot_id: str
    team: str


class SlackApi:
    """The Web API calls the service makes, as coroutines (the SDK's blocking calls run in a thread)."""

    def __init__(self, bot_token: str, base_url: str = DEFAULT_API_URL, rate_limit_retries: int = 5) -> None:
        from slack_sdk import WebClient
        from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler

        handlers = [ConnectionErrorRetryHandler(), RateLimitErrorRetryHandler(max_retry_count=rate_limit_retries)]
        self.client: WebClient = WebClient(token=bot_token, base_url=base_url, retry_handlers=handlers)
        self._channels: dict[str, str] = {}

    def identity(self) -> Identity:
        """`auth.test`, blocking: a `SlackSetupError` when the bot token is refused."""
        answer = _checked(lambda: self.client.auth_test(), "the bot token (--bot-token, $SLACK_BOT_TOKEN)")
        return Identity(str(answer.get("user_id", "")), str(answer.get("bot_id", "")), str(answer.get("team_id", "")))

    async def call(self, method: Callable[..., Any], **params: Any) -> dict[str, Any]:
        """One Web API call in a worker thread; its answer, or {} after reporting a Slack error."""
        from slack_sdk.errors import SlackApiError, SlackClientError

        try:
            answer = await asyncio.to_thread(method, **params)
        except SlackApiError as error:
            _warn(f"Slack refused {getattr(method, '__name__', 'a call')}: {error.response.get('error')}")
            return {}
        except (SlackClientError, OSError) as error:
            _warn(f"Slack could not be reached: {error}")
            return {}
        return dict(answer.data) if isinstance(answer.data, dict) else {}

    async def post(
        self,
        channel: str,
        text: str,
        *,
        thread_ts: str | None = None,
        username: str | None = None,
        agent: str | None = None,
    ) -> str | None:
        """Post `text` (under `username`, marked as agent `agent`'s); the new message's ts."""
        params: dict[str, Any] = {"channel": channel, "text": text[:MAX_TEXT] or "…"}
        if thread_ts:
            params["thread_ts"] = thread_ts
        if username:
            params["username"] = username
        if agent:
            params["metadata"] = {"event_type": "sagent_agent", "event_payload": {"agent": agent}}
        answer = await self.call(self.client.chat_postMessage, **params)
        ts = answer.get("ts")
        return str(ts) if ts else None

    async def update(self, channel: str, ts: str, text: str) -> None:
        await self.call(self.client.chat_update, channel=channel, ts=ts, text=text[:MAX_TEXT] or "…")

    async def channel(self, name: str) -> str | None:
        """The id of the public channel `name` (made a valid channel name), created or joined as needed."""
        name = channel_name(name)
        if name in self._channels:
            return self._channels[name]
        from slack_sdk.errors import SlackApiError

        try:
            answer = await asyncio.to_thread(self.client.conversations_create, name=name)
            found: str | None = str(answer["channel"]["id"])
        except SlackApiError as error:
            if error.response.get("error") != "name_taken":
                _warn(f"cannot create #{name}: {error.response.get('error')}")
                return None
            found = await self._find(name)
        if found:
            self._channels[name] = found
        return found

    async def _find(self, name: str) -> str | None:
        cursor = None
        while True:
            answer = await self.call(
                self.client.conversations_list, limit=200, cursor=cursor, types="public_channel", exclude_archived=True
            )
            for channel in answer.get("channels", []):
                if channel.get("name") == name:
                    await self.call(self.client.conversations_join, channel=channel["id"])
                    return str(channel["id"])
            cursor = (answer.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                return None


def channel_name(name: str) -> str:
    """`name` as Slack allows channel names: lower case, letters, digits, `-` and `_`, at most 80."""
    return re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-")[:80] or "sagent"


def socket_client(
    app_token: str, api: SlackApi, on_envelope: Callable[[dict[str, Any]], None], ping_interval: float = 5.0
) -> SocketModeClient:
    """A connected Socket Mode client that acknowledges every envelope at once and passes its payload on
    (from the client's threads: `on_envelope` must be thread-safe). A `SlackSetupError` when the app
    token is refused."""
    from slack_sdk import WebClient
    from slack_sdk.socket_mode.builtin import SocketModeClient
    from slack_sdk.socket_mode.client import BaseSocketModeClient
    from slack_sdk.socket_mode.request import SocketModeRequest
    from slack_sdk.socket_mode.response import SocketModeResponse

    web = WebClient(token=app_token, base_url=api.client.base_url, retry_handlers=api.client.retry_handlers)
    client = SocketModeClient(app_token=app_token, web_client=web, ping_interval=ping_interval)
    client.logger.disabled = True  # the SDK logs reconnects as errors; the service reports what matters

    def listener(socket: BaseSocketModeClient, request: SocketModeRequest) -> None:
        socket.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))
        if request.type == "events_api":
            on_envelope(request.payload)

    client.socket_mode_request_listeners.append(listener)
    _checked(lambda: client.connect(), "the app token (--app-token, $SLACK_APP_TOKEN)")
    return client


def _checked(call: Callable[[], Any], what: str) -> Any:
    from slack_sdk.errors import SlackApiError, SlackClientError

    try:
        return call()
    except SlackApiError as error:
        reason = error.response.get("error")
        fix = (
            "check it, or make a new one"
            if reason in ("invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive")
            else "see docs/slack.md"
        )
        raise SlackSetupError(f"Slack refused {what}: {reason}; {fix}") from None
    except (SlackClientError, OSError) as error:
        raise SlackSetupError(f"cannot reach Slack to check {what}: {error}") from None


def _warn(text: str) -> None:
    import sys

    sys.stderr.write(f"sagent-slack: {text}\n")
