"""`/model`: alone, a searchable list of the models sagent can switch to (see model_choice.py for what it
offers); with a name, a switch, refused with the nearest names when no provider knows it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sagent.repl.model_choice import ModelOption, header, model_options, parse_request, refusal, target_provider
from sagent.repl.picker import Picker, PickItem, open_picker

if TYPE_CHECKING:
    from sagent.repl.host import ReplHost

ID_WIDTH = 30
"""The model column is at most this wide; a longer id is cut with an ellipsis."""


def model_command(repl: ReplHost, arg: str) -> list[str]:
    """The body of `/model [NAME | PROVIDER:NAME | --force NAME]`: the lines to show; ValueError saying
    why a name is refused (the command shows it as its error)."""
    if repl.switch is None:
        raise ValueError("switching is not available here")
    model = repl.agent.model
    if not arg:
        open_picker(repl, model_picker(repl))
        return []
    request = parse_request(arg)
    why = refusal(request, model.provider, model.name)
    if why is not None:
        raise ValueError(why)
    return [repl.switch(repl.agent, target_provider(request, model.provider), request.model)]


def model_picker(repl: ReplHost) -> Picker:
    """The list `/model` opens, on the model in use."""
    model = repl.agent.model
    options = model_options(model.provider, model.name, os.environ)
    width = min(max(len(o.id) for o in options), ID_WIDTH)
    items = [PickItem(o.row(width), o.search_text(), o) for o in options]
    picker = Picker(f"Switch model (now {model.provider}/{model.name})", items, lambda o: _choose(repl, o))
    picker.header = header(width)
    picker.index = next((n for n, o in enumerate(options) if o.current), 0)
    return picker


def _choose(repl: ReplHost, option: ModelOption) -> None:
    if repl.switch is not None:
        repl.commit([repl.switch(repl.agent, option.provider, option.id)])
