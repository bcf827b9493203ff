"""Rubric kinds: how a judgment is asked for, and how the judge's replies become one outcome.

A rubric turns a `Case` into one or more `Prompt`s (one judge call each), and turns the parsed
replies back into an `Outcome`.  Every prompt is its own call with its own key, so each is stored
and replayed on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .parsing import ParsedVerdict, parse_verdict
from .prompts import Case, data_rules, render_case

__all__ = ["Outcome", "Prompt", "Reply", "Rubric", "Score", "resolve_rubric"]


@dataclass(frozen=True)
class Prompt:
    """One judge call a rubric asks for."""

    messages: tuple[Mapping[str, str], ...]
    scale: tuple[float, float] = (0.0, 1.0)
    name: str = ""  # which part of the rubric this call is ("" for single-call rubrics)
    params: Mapping[str, Any] = field(default_factory=dict)  # extra call parameters (logprobs, ...)


@dataclass(frozen=True)
class Reply:
    """What the judge said for one prompt (live or replayed)."""

    text: str
    logprobs: Any = None


@dataclass(frozen=True)
class Outcome:
    """What a rubric makes of its replies: one score in [0, 1] and why."""

    score: float
    reasoning: str
    verdict: str | None = None
    confidence: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


class Rubric:
    """Base class: a single prompt, parsed with the tolerant parser on the prompt's scale."""

    name = "rubric"
    version = 1  # bump when the prompt text changes meaning: it is part of every key

    def describe(self) -> dict[str, Any]:
        """JSON-safe identity of this rubric (name, version, parameters): part of the key."""
        return {"name": self.name, "version": self.version}

    def prompts(self, case: Case) -> list[Prompt]:
        raise NotImplementedError

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        return parse_verdict(reply.text, scale=prompt.scale)

    def combine(self, case: Case, results: Sequence[tuple[Prompt, ParsedVerdict]]) -> Outcome:
        (_, parsed), = results
        return Outcome(parsed.score, parsed.reasoning, parsed.verdict, parsed.confidence)

    def failure_details(self, outcome: Outcome) -> list[str]:
        """Extra lines for a failure message (failed constraints, weak dimensions, ...)."""
        return []


SCORE_SYSTEM = (
    "You are an impartial evaluator of the output of an AI system. Judge the output only against "
    "the criteria. {rules}\n\n"
    "Think first, then score. Reply with one JSON object and nothing else:\n"
    '{{"reasoning": "<a few sentences: what the output does and does not do against the criteria>", '
    '"score": <a number from 0.0 (fails the criteria entirely) to 1.0 (meets them fully)>}}'
)


class Score(Rubric):
    """The default: the judge gives a score in [0, 1], its reasoning first."""

    name = "score"

    def prompts(self, case: Case) -> list[Prompt]:
        system = SCORE_SYSTEM.format(rules=data_rules(case.nonce))
        return [Prompt(messages=({"role": "system", "content": system}, {"role": "user", "content": render_case(case)}))]


def resolve_rubric(value: Any) -> Rubric:
    """A Rubric instance from what a user passed (None, a Rubric, or a Rubric class)."""
    if value is None:
        return Score()
    if isinstance(value, Rubric):
        return value
    if isinstance(value, type) and issubclass(value, Rubric):
        return value()
    from .errors import JudgeError

    raise JudgeError(f"rubric must be a Rubric from pytest_llmjudge.rubrics (e.g. Score()), got {value!r}")
