"""Your own prompt, with `{input}`, `{expected}`, `{output}` and `{criteria}` placeholders checked at definition."""

from __future__ import annotations

import math
import string
from typing import Any

from ..case import Case, fence
from ..errors import JudgeError
from ..parsing.answers import Answer
from .base import Prompt, Rubric, RubricError, ask, declaration, register_rubric, score_reply

TEMPLATE_FIELDS = ("input", "expected", "output", "criteria")
TEMPLATE_INSTRUCTIONS = (
    "Follow the evaluation instructions in the user message. Think first, then score. Reply with one JSON "
    'object and nothing else: {{"reasoning": "<a few sentences>", "score": <a number from {low:g} to {high:g}>}}'
)
# A template that declares its answers (`answer=`) says itself how to answer: the system message does not.
DECLARED_INSTRUCTIONS = (
    "Follow the evaluation instructions in the user message, and give your {what} in the form they ask for."
)


def placeholders(kind: str, text: Any, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """The placeholders of a prompt template, each once, in order; a `RubricError` naming `kind` for a missing
    text, a placeholder not in `allowed`, or one with a format spec or conversion."""
    if not isinstance(text, str) or not text.strip():
        raise RubricError(f"{kind}(text) needs the prompt text")
    try:
        fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(text) if name is not None]
    except ValueError as exc:
        raise RubricError(f"{kind}: {exc} (write literal braces as {{{{ and }}}})") from None
    for name, spec, conv in fields:
        if name not in allowed:
            shown = "{" + name + "}"
            raise RubricError(
                f"{kind}: unknown placeholder {shown}; use {', '.join('{' + f + '}' for f in allowed)} "
                "(write literal braces as {{ and }})"
            )
        if spec or conv:
            raise RubricError(f"{kind}: placeholder {{{name}}} takes no format spec or conversion")
    return tuple(dict.fromkeys(name for name, _, _ in fields))


@register_rubric
class Template(Rubric):
    """Your own prompt, with `{input}`, `{expected}`, `{output}` and `{criteria}` placeholders.

    `{output}` is required; any other placeholder (or `{}`, `{output.x}`, `{output!r}`) is an error
    here, at definition.  Write literal braces as `{{` and `}}`.  Input, reference and output are
    substituted fenced as data (tags the text cannot close); the criteria in the clear.  The judge
    answers with a score on `scale` (default 0-1), normalized to [0, 1].  `answer` (an `Answer`) says where a
    prompt ported from another tool has its judge put the score: `Answer(field="relevancy")`,
    `Answer(tag="score")`, `Answer(label="Total rating")`; it is read first, and the judge is not asked for JSON.
    """

    name = "template"

    def __init__(self, text: str, *, scale: tuple[float, float] = (0, 1), answer: Answer | None = None) -> None:
        self.fields = placeholders("Template", text, TEMPLATE_FIELDS)
        if "output" not in self.fields:
            raise RubricError("Template: the prompt must contain {output}, where the output under test goes")
        if answer is not None:
            self.declared = declaration("Template(answer=...)", answer, None, text)
        if (
            not isinstance(scale, (tuple, list))
            or len(scale) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in scale)
            or not scale[0] < scale[1]
        ):
            raise RubricError(f"Template(scale=...) must be (low, high) with low < high, got {scale!r}")
        self.text, self.scale = text, (scale[0], scale[1])

    def parameters(self) -> dict[str, Any]:
        params: dict[str, Any] = {"text": self.text, "scale": list(self.scale)}
        if self.declared is not None:  # only a declaring template's keys carry it: the others' stay as they were
            params["answer"] = self.declared.describe()
        return params

    def prompts(self, case: Case) -> list[Prompt]:
        if self.declared is not None:
            instructions = DECLARED_INSTRUCTIONS.format(what="score")
        else:
            instructions = TEMPLATE_INSTRUCTIONS.format(low=self.scale[0], high=self.scale[1])
        return [ask(case, instructions, render("Template", self.text, self.fields, case), scale=self.scale)]

    def reply_schema(self) -> dict[str, Any] | None:
        return None if self.declared is not None else score_reply()


def render(kind: str, text: str, fields: tuple[str, ...], case: Case) -> str:
    """A template of the user's own filled in: the criteria in the clear, input, reference and output fenced as data;
    a `JudgeError` naming `kind` when it uses {input} or {expected} and the case has none."""
    values: dict[str, str] = {"criteria": case.criteria, "output": fence("output", case.output, case.nonce)}
    for name in ("input", "expected"):
        value = getattr(case, name)
        if value is None:
            if name in fields:
                raise JudgeError(f"this {kind} uses {{{name}}}, but no {name}= was given to judge with")
            continue
        values[name] = fence(name, value, case.nonce)
    return text.format(**values)
