"""The advisor's structured answer (the seed's form: an assessment, the next steps, the risks), asked for
where the advisor's provider supports structured output, and how the executor reads it."""

from __future__ import annotations

import json
from dataclasses import dataclass

from sagent.types import ResponseSchema

ADVICE_SCHEMA = ResponseSchema(
    name="advice",
    description="Your guidance to the executor.",
    schema={
        "type": "object",
        "properties": {
            "assessment": {"type": "string", "description": "what is going on and what is wrong, briefly"},
            "next_steps": {
                "type": "array",
                "items": {"type": "string"},
                "description": "what the executor should do next, in order, each one concrete",
            },
            "risks": {
                "type": "array",
                "items": {"type": "string"},
                "description": "what could go wrong or must be checked (may be empty)",
            },
        },
        "required": ["assessment", "next_steps", "risks"],
        "additionalProperties": False,
    },
)
"""What the advisor is asked for on providers with structured output."""


@dataclass(frozen=True, slots=True)
class StructuredAdvice:
    """The advisor's answer in the seed's form."""

    assessment: str
    next_steps: tuple[str, ...]
    risks: tuple[str, ...]

    def render(self) -> str:
        """The answer as the executor reads it: the assessment, then numbered steps and listed risks."""
        lines = [f"Assessment: {self.assessment}"]
        if self.next_steps:
            lines += ["Next steps:", *(f"{i}. {step}" for i, step in enumerate(self.next_steps, 1))]
        if self.risks:
            lines += ["Risks:", *(f"- {risk}" for risk in self.risks)]
        return "\n".join(lines)


def parse_advice(text: str) -> StructuredAdvice | None:
    """The structured answer in `text` (the JSON object of `ADVICE_SCHEMA`), or None when `text` is not one
    (then it is read as free text)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("assessment"), str):
        return None
    steps, risks = value.get("next_steps", []), value.get("risks", [])
    if not isinstance(steps, list) or not isinstance(risks, list):
        return None
    return StructuredAdvice(
        value["assessment"].strip(),
        tuple(str(s).strip() for s in steps if str(s).strip()),
        tuple(str(r).strip() for r in risks if str(r).strip()),
    )
