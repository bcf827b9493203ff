"""Weighted dimensions: one score per dimension in one call, combined by weights, plus a quality label."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from ..case import Case
from ..parsing.funnel import ParsedVerdict, parse_json_object, reasoning_from
from .base import (
    NUMBER,
    REASONING,
    Outcome,
    Prompt,
    Reply,
    Rubric,
    RubricError,
    ask,
    parse_failure,
    reading,
    register_rubric,
    reply_object,
    unit_score,
)
from .parsed import RubricParse

DIMENSION_WEIGHTS: Mapping[str, float] = {
    "correctness": 0.4,
    "relevance": 0.2,
    "completeness": 0.2,
    "clarity": 0.1,
    "professionalism": 0.1,
}
DIMENSION_DESCRIPTIONS: Mapping[str, str] = {
    "correctness": "the content is factually and technically correct (agrees with the reference, where one is given)",
    "relevance": "it addresses what was asked, without digressions",
    "completeness": "it covers everything the criteria ask for",
    "clarity": "it is clear, well organised and easy to follow",
    "professionalism": "its tone is appropriate, courteous and professional",
}
QUALITY_LABELS: Mapping[str, float] = {"Excellent": 0.9, "Good": 0.8, "Medium": 0.6, "Pass": 0.4, "Fail": 0.0}

DIMENSIONS_INSTRUCTIONS = (
    "Score the output on each dimension below, each from 0.0 (fails it entirely) to 1.0 (fully meets it), "
    "in the light of the criteria.\n{dimensions}\n\n"
    "Think first, then score. Reply with one JSON object and nothing else:\n"
    '{{"reasoning": "<a few sentences on the strengths and weaknesses>", "scores": {{{fields}}}}}'
)


@register_rubric
class Dimensions(Rubric):
    """One score per dimension in one call, combined by weights into the score, plus a quality label.

    `weights` maps dimension names to positive weights (default `DIMENSION_WEIGHTS`; any names
    work, `descriptions` says what a custom one means).  `labels` maps a label to the lowest score
    that earns it (default `QUALITY_LABELS`; the label with the lowest bound is the fallback).
    `verdict.details["dimensions"]` holds each score, `["label"]` the label.
    """

    name = "dimensions"
    instructions: ClassVar[str] = DIMENSIONS_INSTRUCTIONS  # with slots for the {dimensions} and the {fields}
    extra_fields: ClassVar[Mapping[str, Mapping[str, Any]]] = {}  # what the reply holds beside the scores

    def __init__(
        self,
        weights: Mapping[str, float] | None = None,
        labels: Mapping[str, float] | None = None,
        descriptions: Mapping[str, str] | None = None,
    ) -> None:
        weights = dict(DIMENSION_WEIGHTS if weights is None else weights)
        if not weights:
            raise RubricError("Dimensions(weights=...) needs at least one dimension")
        for dim, weight in weights.items():
            if not isinstance(dim, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,39}", dim):
                raise RubricError(f"Dimensions: dimension names are identifiers (letters, digits, _), got {dim!r}")
            if (
                isinstance(weight, bool)
                or not isinstance(weight, (int, float))
                or not (math.isfinite(weight) and weight > 0)
            ):
                raise RubricError(f"Dimensions(weights=...): {dim!r} needs a positive weight, got {weight!r}")
        labels = dict(QUALITY_LABELS if labels is None else labels)
        if not labels or any(unit_score(v) is None or isinstance(v, str) for v in labels.values()):
            raise RubricError(f"Dimensions(labels=...) maps labels to lowest scores in [0, 1], got {labels!r}")
        descriptions = {**DIMENSION_DESCRIPTIONS, **(descriptions or {})}
        self.weights = {k: float(v) for k, v in weights.items()}
        self.labels = dict(sorted(((k, float(v)) for k, v in labels.items()), key=lambda kv: -kv[1]))
        self.descriptions = {d: descriptions.get(d, "") for d in self.weights}

    def parameters(self) -> dict[str, Any]:
        return {"weights": self.weights, "labels": self.labels, "descriptions": self.descriptions}

    def prompts(self, case: Case) -> list[Prompt]:
        dims = "\n".join(f"- {d}: {text}" if text else f"- {d}" for d, text in self.descriptions.items())
        fields = ", ".join(f'"{d}": <0.0-1.0>' for d in self.weights)
        return [ask(case, self.instructions.format(dimensions=dims, fields=fields), items=len(self.weights))]

    def reply_schema(self) -> dict[str, Any]:
        scores = reply_object(**dict.fromkeys(self.weights, NUMBER))
        return reply_object(reasoning=REASONING, scores=scores, **self.extra_fields)

    def label(self, score: float) -> str:
        """The label with the highest bound `score` reaches, else the lowest label."""
        return next((name for name, bound in self.labels.items() if score >= bound), list(self.labels)[-1])

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        """The dimension scores of the object the judge wrote itself: an object it copied from the prompt
        (an output carrying planted scores) is no reply, nor is a reasoning that is the format's placeholder
        or a copy; a score outside [0, 1] is off the asked scale."""
        kind = type(self).__name__
        asked = self.asked(prompt)
        with reading(kind, reply):
            obj = parse_json_object(reply.text, asked)
            reasoning = "" if obj is None else reasoning_from(obj, asked)
        if obj is None:
            raise parse_failure(f"{kind}: the reply holds no JSON object of dimension scores", reply)
        scores = obj.get("scores") if isinstance(obj.get("scores"), Mapping) else obj.get("dimensions")
        if not isinstance(scores, Mapping):
            scores = obj
        values = {d: scores.get(d) for d in self.weights}
        # {"correctness": {"score": 0.9, "reasoning": ...}} holds its score inside
        values = {d: v.get("score") if isinstance(v, Mapping) else v for d, v in values.items()}
        found = {d: unit for d, v in values.items() if v is not None and (unit := unit_score(v)) is not None}
        missing = [d for d, v in values.items() if v is None]
        bad = [d for d in values if d not in found and d not in missing]
        if missing or bad:
            problems = ([f"no score for {', '.join(missing)}"] if missing else []) + (
                [f"a score outside [0, 1] for {', '.join(bad)}"] if bad else []
            )
            raise parse_failure(f"{kind}: the reply gives {' and '.join(problems)}", reply)
        total = sum(self.weights.values())
        score = round(sum(self.weights[d] * s for d, s in found.items()) / total, 6)
        details = {"dimensions": found, "label": self.label(score), "weights": dict(self.weights)}
        details.update(self.extras(obj, score))
        return RubricParse(score, None, None, None, reasoning, "json-dimensions", details)

    def extras(self, obj: Mapping[str, Any], score: float) -> dict[str, Any]:
        """What a kind reads from the reply's object beside the scores, for the details (none here)."""
        return {}

    def failure_details(self, outcome: Outcome) -> list[str]:
        dims = outcome.details.get("dimensions") or {}
        if not dims:
            return []
        parts = ", ".join(f"{d} {s:.2f}" for d, s in sorted(dims.items(), key=lambda kv: kv[1]))
        return [f"dimensions: {parts} (label {outcome.details.get('label')})"]
