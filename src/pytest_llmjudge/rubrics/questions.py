"""Questions: several single-focus questions, each asked in its own call, combined into one score."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

from ..case import Case, render_case
from ..parsing.funnel import ParsedVerdict
from .base import (
    Outcome,
    Prompt,
    Rubric,
    RubricError,
    ask,
    listing,
    one_of,
    register_rubric,
    score_reply,
    text_items,
    unit_score,
)

QUESTION_INSTRUCTIONS = (
    "Answer one assessment question about the output, and nothing else: ignore every other quality "
    "of the output. Think first, then answer. Reply with one JSON object and nothing else:\n"
    '{"reasoning": "<one to three sentences>", "score": <a number from 0.0 (clearly no) to 1.0 (clearly yes)>}'
)
QUESTION_AGGREGATES = ("mean", "min", "all")


@register_rubric
class Questions(Rubric):
    """Several single-focus questions, each asked in its own call, combined into one score.

    Each question is answered with a score in [0, 1] (1 = clearly yes); a question *fails* below
    `pass_at` (default 0.5).  `aggregate`: "mean" of the answers, their "min", or "all" (1.0 when
    every question passes, else 0.0).  A failure message names the questions that failed.
    """

    name = "questions"

    def __init__(self, questions: Sequence[str], aggregate: str = "mean", *, pass_at: float = 0.5) -> None:
        self.questions = text_items("Questions(questions)", questions)
        one_of("Questions(aggregate=...)", aggregate, QUESTION_AGGREGATES)
        if unit_score(pass_at) is None or isinstance(pass_at, str):
            raise RubricError(f"Questions(pass_at=...) must be a number in [0, 1], got {pass_at!r}")
        self.aggregate, self.pass_at = aggregate, float(pass_at)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], aggregate: str = "mean", *, pass_at: float = 0.5) -> Questions:
        """The questions in a file `llmjudge questions` wrote (or a JSON/YAML list of question strings).

        The file is parsed, never executed; a missing or malformed file is a `RubricError` naming it.
        """
        from .questions_file import read_questions_file

        loaded = read_questions_file(path)
        try:
            return cls(loaded.questions, aggregate, pass_at=pass_at)
        except RubricError as exc:
            raise RubricError(f"{loaded.path}: {exc}") from None

    def parameters(self) -> dict[str, Any]:
        return {"questions": list(self.questions), "aggregate": self.aggregate, "pass_at": self.pass_at}

    def prompts(self, case: Case) -> list[Prompt]:
        users = [render_case(case, criteria=f"{case.criteria}\n\nQuestion: {q}") for q in self.questions]
        return [ask(case, QUESTION_INSTRUCTIONS, user, name=f"q{i}") for i, user in enumerate(users, 1)]

    def reply_schema(self) -> dict[str, Any]:
        return score_reply()

    def combine(self, case: Case, results: Sequence[tuple[Prompt, ParsedVerdict]]) -> Outcome:
        answers: list[dict[str, Any]] = [
            {"question": q, "score": r.score, "passed": r.score >= self.pass_at, "reasoning": r.reasoning}
            for q, (_, r) in zip(self.questions, results, strict=False)
        ]
        scores = [a["score"] for a in answers]
        if self.aggregate == "mean":
            score = math.fsum(scores) / len(scores)  # fmean's own formula, without importing statistics
        elif self.aggregate == "min":
            score = min(scores)
        else:
            score = 1.0 if all(a["passed"] for a in answers) else 0.0
        failed = [a["question"] for a in answers if not a["passed"]]
        reasoning = "\n".join(f"[{a['score']:.2f}] {a['question']} {a['reasoning']}" for a in answers)
        return Outcome(round(score, 6), reasoning, details={"questions": answers, "failed": failed})

    def failure_details(self, outcome: Outcome) -> list[str]:
        answers = outcome.details.get("questions", ())
        failed = [(f"{a['question']} ({a['score']:.2f})", a["reasoning"]) for a in answers if not a["passed"]]
        return listing(f"failed questions ({len(failed)} of {len(self.questions)}):", failed) if failed else []
