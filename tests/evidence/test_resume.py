"""Resume instead of replay on the Responses API (fake server): after the first request only the new items
go out with `previous_response_id`; when the server has lost the response, the whole history is sent."""

from __future__ import annotations

from pathlib import Path

from sagent.agent.agent import Agent
from sagent.providers.responses_resume import ResumingOpenAIModel
from sagent.tools import Read
from tests.fakes.openai_responses_server import FakeResponses, Fault, responses_text, responses_tools


async def test_only_new_items_follow_the_previous_response(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("print('a')\n")
    steps = [
        responses_tools([("Read", {"path": "a.py"})]),
        responses_text("a.py prints a."),
        Fault(400, "Previous response with id 'resp_fake01' not found.", "previous_response_not_found"),
        responses_text("Still a."),
    ]
    with FakeResponses(steps) as fake:
        model = ResumingOpenAIModel("gpt-5.4", api_key="sk-test", base_url=fake.url)
        agent = Agent(model, tools=[Read()], cwd=tmp_path)
        async for _ in agent.run("what does a.py print?"):
            pass
        async for _ in agent.run("and now?"):
            pass
        await agent.aclose()
        first, second, lost, again = fake.bodies()
    assert first["store"] is True and "previous_response_id" not in first
    assert [i.get("role") or i["type"] for i in first["input"]] == ["user"]
    # The tool round: only the tool's output goes, after the stored response.
    assert second["previous_response_id"] == "resp_fake01"
    assert [i["type"] for i in second["input"]] == ["function_call_output"]
    assert "print('a')" in second["input"][0]["output"]
    # The next turn: only the new user message; the server has lost it, so the whole history follows.
    assert lost["previous_response_id"] == "resp_fake01"
    assert [i.get("role") for i in lost["input"]] == ["user"] and lost["input"][0]["content"][0]["text"] == "and now?"
    assert "previous_response_id" not in again
    texts = [i["content"][0]["text"] for i in again["input"] if i.get("role") == "user"]
    assert texts == ["what does a.py print?", "and now?"]
    assert (model.resumed, model.full) == (2, 2)
    # The local history is whole either way.
    assert [m.text for m in agent.history if getattr(m, "role", "") == "user"] == ["what does a.py print?", "and now?"]
