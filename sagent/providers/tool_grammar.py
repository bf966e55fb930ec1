"""GBNF grammars that hold a local model to one valid tool call or to plain words.

llama.cpp (its `llama-server` and llama-cpp-python's server alike) takes a GBNF grammar with a chat
completion request and samples only tokens the grammar allows. `turn_grammar` builds one from the offered
tools, so that a reply is exactly one of:

- a call, written in the text protocol's block (`sagent.providers.text_tools`):

      <tool_call>
      {"name": "List", "arguments": {"path": "docs"}}
      </tool_call>

  where the name is one of the offered tools and the arguments follow that tool's JSON schema (its required
  properties always, the others optionally, in the schema's order, each value of its type or enum);
- plain text that does not begin like a call or a pseudo call (`<`, `{`, `[`, a backtick, white space or
  `functions.`), so a small model cannot answer with JSON or a half-written call instead of words.

Either part can be left out: `calls=False` gives an answer-only grammar (after tool results), `text=False` a
call-only one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from sagent.types import ToolSpec

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
PSEUDO_PREFIX = "functions."
"""What llama-cpp-python's function-calling format taught small models to write before a call."""

_COMMON = r"""ws ::= [ ]?
string ::= "\"" char* "\""
char ::= [^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])
integer ::= "-"? [0-9]+
number ::= "-"? [0-9]+ ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
boolean ::= "true" | "false"
value ::= string | number | boolean | "null" | array | object
array ::= "[" ws (value (ws "," ws value)*)? ws "]"
object ::= "{" ws (string ws ":" ws value (ws "," ws string ws ":" ws value)*)? ws "}"
any ::= [^\x00]"""


def literal(text: str) -> str:
    """`text` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def _rule_name(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]+", "-", text).strip("-").lower() or "x"


class _Rules:
    """The rules of one grammar, named uniquely."""

    def __init__(self) -> None:
        self.rules: dict[str, str] = {}

    def add(self, name: str, body: str) -> str:
        base, n = _rule_name(name), 1
        unique = base
        while unique in self.rules:
            n += 1
            unique = f"{base}-{n}"
        self.rules[unique] = body
        return unique

    def value(self, schema: Any, name: str) -> str:
        """The rule for a value that `schema` allows (a general JSON value where the schema says little)."""
        if not isinstance(schema, dict):
            return "value"
        if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
            options = " | ".join(literal(json.dumps(v)) for v in schema["enum"])
            return self.add(name, options)
        kind = schema.get("type")
        if isinstance(kind, list):  # ["string", "null"]: any of them
            return self.add(name, " | ".join(self.value({**schema, "type": k}, f"{name}-{k}") for k in kind))
        if kind in ("string", "integer", "number", "boolean"):
            return str(kind)
        if kind == "array":
            item = self.value(schema.get("items"), f"{name}-item")
            return self.add(name, f'"[" ws ({item} (ws "," ws {item})*)? ws "]"')
        if kind == "object" and isinstance(schema.get("properties"), dict) and schema["properties"]:
            return self.object(schema, name)
        if kind == "object":
            return "object"
        if kind == "null":
            return '"null"'
        return "value"

    def object(self, schema: dict[str, Any], name: str) -> str:
        """An object with the schema's properties: the required ones always, then each other one optionally,
        in the schema's order."""
        properties: dict[str, Any] = schema.get("properties") or {}
        required = [p for p in schema.get("required") or [] if p in properties]
        optional = [p for p in properties if p not in required]
        members = {
            p: f'{literal(json.dumps(p))} ws ":" ws {self.value(properties[p], f"{name}-{p}")}' for p in properties
        }
        # tails[i]: the optional members from i on, each after a comma (something was written before them).
        tails = [""] * (len(optional) + 1)
        for i in reversed(range(len(optional))):
            tails[i] = self.add(f"{name}-after-{optional[i]}", f'(ws "," ws {members[optional[i]]})? {tails[i + 1]}')
        if required:
            body = ' ws "," ws '.join(members[p] for p in required)
            return self.add(name, f'"{{" ws {body} {tails[0]} ws "}}"')
        if not optional:
            return self.add(name, '"{" ws "}"')
        # Nothing required: empty, or the first member written is any optional one, then those after it.
        first = ""
        for i in reversed(range(len(optional))):
            alternative = f"{members[optional[i]]} {tails[i + 1]}"
            first = self.add(f"{name}-from-{optional[i]}", f"{alternative} | {first}" if first else alternative)
        return self.add(name, f'"{{" ws ({first})? ws "}}"')


def _not_prefix(rules: _Rules, word: str) -> str:
    """Text that does not start with `word`: it ends within it, or differs from it at some character."""
    name = ""
    for index in reversed(range(len(word))):
        char = word[index]
        other = f"[^{_class_char(char)}\\x00] any*"
        going_on = f" | {literal(char)} {name}" if name else ""
        name = rules.add(f"not-{word[index:]}", f'{other}{going_on} | ""')
    return name


def _class_char(char: str) -> str:
    return "\\" + char if char in "]\\^-" else char


def answer_rule(rules: _Rules) -> str:
    """Plain words: not starting like a call (`<`, `{`, `[`, a backtick, white space) or with `functions.`."""
    first = PSEUDO_PREFIX[0]
    after_first = _not_prefix(rules, PSEUDO_PREFIX[1:])
    body = f"[^<{{\\[`{first} \\t\\r\\n\\x00] any* | {literal(first)} {after_first}"
    return rules.add("answer", body)


def call_rule(rules: _Rules, tools: Sequence[ToolSpec]) -> str:
    """One call of one of `tools`, in the text protocol's block."""
    alternatives = []
    for tool in tools:
        schema = dict(tool.input_schema)
        if not schema.get("properties"):
            arguments = rules.add(f"args-{tool.name}", '"{" ws "}"')
        else:
            arguments = rules.object({**schema, "type": "object"}, f"args-{tool.name}")
        head = literal(f'{OPEN}\n{{"name": {json.dumps(tool.name)}, "arguments": ')
        alternatives.append(rules.add(f"call-{tool.name}", f"{head} {arguments} {literal('}' + chr(10) + CLOSE)}"))
    return rules.add("call", " | ".join(alternatives))


def turn_grammar(tools: Sequence[ToolSpec], *, calls: bool = True, text: bool = True) -> str:
    """A GBNF grammar for one reply: a call of one of `tools` (when `calls` and there are tools) or plain
    words (when `text`). ValueError when that leaves nothing to write."""
    rules = _Rules()
    options = []
    if calls and tools:
        options.append(call_rule(rules, tools))
    if text:
        options.append(answer_rule(rules))
    if not options:
        raise ValueError("a reply must be allowed to be a call or text")
    lines = [f"root ::= {' | '.join(options)}"]
    lines += [f"{name} ::= {body}" for name, body in rules.rules.items()]
    return "\n".join(lines) + "\n" + _COMMON + "\n"
