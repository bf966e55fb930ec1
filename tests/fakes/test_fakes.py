"""The fakes answer what other CLIs send too: the peer benchmark runs them against these servers."""

from __future__ import annotations

import httpx
from google import genai
from google.genai import types

from tests.fakes.anthropic_server import FakeAnthropic, text_response
from tests.fakes.gemini_server import FakeGemini, gemini_text


def test_a_plain_generate_content_gets_the_whole_reply_as_one_json_response() -> None:
    # The Gemini CLI's side requests (routing, checks) ask without streaming and read a JSON body.
    with FakeGemini([gemini_text('{"next_speaker": "user"}')]) as fake:
        client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=fake.root))
        reply = client.models.generate_content(model="gemini-3-flash-preview", contents="who speaks next?")
    assert reply.text == '{"next_speaker": "user"}'
    assert reply.candidates is not None and reply.candidates[0].finish_reason == types.FinishReason.STOP
    assert fake.requests[0]["path"].endswith("/models/gemini-3-flash-preview:generateContent")


def test_a_get_takes_no_step_is_recorded_and_answered_404_and_sizes_are_recorded() -> None:
    with FakeAnthropic([text_response("hi")]) as fake:
        got = httpx.get(f"{fake.url}/v1/models")
        sent = httpx.post(f"{fake.url}/v1/messages", content=b'{"model": "m", "messages": []}')
    assert got.status_code == 404 and "error" in got.json()
    assert [g["path"] for g in fake.gets] == ["/v1/models"]
    assert sent.status_code == 200 and "hi" in sent.text  # the scripted step was still there for the POST
    assert fake.requests[0]["size"] == len(b'{"model": "m", "messages": []}')


def test_each_streamed_message_has_an_id_of_its_own() -> None:
    # Claude Code joins streamed pieces that share a message id into one message, as the API's ids never repeat.
    import anthropic

    with FakeAnthropic([text_response("one"), text_response("two")]) as fake:
        client = anthropic.Anthropic(api_key="test", base_url=fake.url)
        ids = []
        for _ in range(2):
            with client.messages.stream(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]) as s:
                ids.append(s.get_final_message().id)
    assert ids == ["msg_fake01", "msg_fake02"]
