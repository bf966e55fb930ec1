"""A full `Tool`: a class with a name, a description, a JSON schema, `run`, and `resource`, which names
what concurrent calls must not touch at once. This one keeps notes in a JSON file beside the agent's
working directory; two calls on the same file run in order, calls on different files concurrently."""

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from _offline import model_or_script, text_turn, tool_turn

from sagent import Agent, ToolContext, ToolError


class Notes:
    name = "Notes"
    description = "Keep short notes in a notebook file: add a note, or list the notes. Returns the notebook."
    input_schema = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["add", "list"]},
            "text": {"type": "string", "description": "the note, for add"},
            "notebook": {"type": "string", "description": "the notebook's name", "default": "notes"},
        },
        "required": ["action"],
    }

    def _file(self, arguments: dict[str, Any], ctx: ToolContext) -> Path:
        return ctx.cwd / f"{arguments.get('notebook') or 'notes'}.json"

    def resource(self, arguments: dict[str, Any], ctx: ToolContext) -> str | None:
        return str(self._file(arguments, ctx))  # calls on one notebook never overlap

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        file = self._file(arguments, ctx)
        notes = json.loads(file.read_text()) if file.exists() else []
        if arguments["action"] == "add":
            text = (arguments.get("text") or "").strip()
            if not text:
                raise ToolError("add needs the text of the note")
            notes.append(text)
            file.write_text(json.dumps(notes))
        return "\n".join(f"{n}. {note}" for n, note in enumerate(notes, 1)) or "the notebook is empty"


model = model_or_script(
    [
        tool_turn(("Notes", {"action": "add", "text": "buy milk"}), ("Notes", {"action": "add", "text": "call Ada"})),
        tool_turn(("Notes", {"action": "add"})),  # a mistake: the tool says what is missing
        tool_turn(("Notes", {"action": "list"})),
        text_turn("Two notes: buy milk, call Ada."),
    ]
)


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        agent = Agent(model, tools=[Notes()], cwd=folder)
        answer = await agent.ask("Note 'buy milk' and 'call Ada', then list my notes.")
        for message in agent.history:
            if message.role == "tool_result":
                print(f"[Notes{' error' if message.is_error else ''}] {message.text}")
        print("answer:", answer.text)
        print("on disk:", (Path(folder) / "notes.json").read_text())


asyncio.run(main())
