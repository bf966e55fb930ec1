"""A custom tool from a typed function with @tool: the schema comes from the type hints, the
description from the docstring. The agent calls it like any built-in tool."""

import asyncio
from pathlib import Path

from _offline import model_or_script, text_turn, tool_turn

from sagent import Agent, ToolError, tool


@tool
def count_words(path: str, ignore_case: bool = True) -> str:
    """Count the words of a text file and name the most common one.

    Args:
        path: the file to count, relative to the examples folder
        ignore_case: count "The" and "the" as one word
    """
    file = Path(__file__).parent / path
    if not file.is_file():
        raise ToolError(f"no file {path}")  # the model reads this and can try again
    words = file.read_text().split()
    if ignore_case:
        words = [w.lower() for w in words]
    common = max(set(words), key=words.count)
    return f"{path}: {len(words)} words; the most common is {common!r} ({words.count(common)} times)"


model = model_or_script(
    [tool_turn(("count_words", {"path": "_offline.py"})), text_turn("Counted; see the tool result above.")]
)


async def main() -> None:
    print("schema:", count_words.input_schema)
    agent = Agent(model, tools=[count_words])
    answer = await agent.ask("How many words are in _offline.py? Use count_words.")
    print("tool said:", agent.history[-2].text)
    print("answer:", answer.text)


asyncio.run(main())
