"""Rubric kinds: how a judgment is asked for, and how the judge's replies become one outcome.

A rubric turns a `Case` into one or more `Prompt`s (one judge call each), and turns the parsed
replies back into an `Outcome`.  Every prompt is its own call with its own key, so each is stored
and replayed on its own.  A rubric's `describe()` (name, version and every parameter) is part of
each key: changing a weight, a constraint or a question re-judges, nothing else does.

Kinds: `Score` (default, 0-1), `PassFail` (verdict + confidence -> table), `Likert` (integer scale,
optionally weighted by token log-probabilities), `Dimensions` (weighted per-dimension scores),
`Checklist` (PASS/FAIL per constraint), `Questions` (one call per question) and `Template` (your
own prompt).  Every prompt keeps the output under test fenced as data (see prompts.py).
"""

from __future__ import annotations

import math
import re
import statistics
import string
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .errors import JudgeError, VerdictParseError
from .parsing import ParsedVerdict, parse_json_object, parse_verdict, reasoning_from
from .prompts import Case, data_rules, fence, render_case

__all__ = [
    "Checklist",
    "Dimensions",
    "Likert",
    "Outcome",
    "PassFail",
    "Prompt",
    "Questions",
    "Reply",
    "Rubric",
    "RubricError",
    "RubricParse",
    "Score",
    "Template",
    "resolve_rubric",
]


class RubricError(JudgeError, ValueError):
    """A rubric was defined with bad parameters (raised at definition, not at judging time)."""


RubricError.__module__ = "pytest_llmjudge"


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


@dataclass(frozen=True)
class RubricParse(ParsedVerdict):
    """A parsed reply plus what a structured rubric read from it (dimensions, constraints, ...)."""

    details: Mapping[str, Any] = field(default_factory=dict)


class Rubric:
    """Base class: a single prompt, parsed with the tolerant parser on the prompt's scale."""

    name = "rubric"
    version = 1  # bump when the prompt text changes meaning: it is part of every key

    def describe(self) -> dict[str, Any]:
        """JSON-safe identity of this rubric (name, version, parameters): part of the key."""
        return {"name": self.name, "version": self.version, **self.parameters()}

    def parameters(self) -> dict[str, Any]:
        """The rubric's parameters, JSON-safe (subclasses with parameters override this)."""
        return {}

    def prompts(self, case: Case) -> list[Prompt]:
        raise NotImplementedError

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        return parse_verdict(reply.text, scale=prompt.scale)

    def combine(self, case: Case, results: Sequence[tuple[Prompt, ParsedVerdict]]) -> Outcome:
        (_, parsed), = results
        return Outcome(parsed.score, parsed.reasoning, parsed.verdict, parsed.confidence, dict(getattr(parsed, "details", {})))

    def failure_details(self, outcome: Outcome) -> list[str]:
        """Extra lines for a failure message (failed constraints, weak dimensions, ...)."""
        return []

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.parameters().items())
        return f"{type(self).__name__}({params})"


# -- shared prompt pieces ----------------------------------------------------------------------

EVALUATOR = "You are an impartial evaluator of the output of an AI system. Judge the output only against the criteria. {rules}"


def _system(case: Case, instructions: str) -> str:
    return EVALUATOR.format(rules=data_rules(case.nonce)) + "\n\n" + instructions


def _messages(system: str, user: str) -> tuple[Mapping[str, str], ...]:
    return ({"role": "system", "content": system}, {"role": "user", "content": user})


def _fail(message: str, reply: Reply) -> VerdictParseError:
    return VerdictParseError(message, reply.text)


def _unit(value: Any) -> float | None:
    """A number in [0, 1] from a JSON value (numbers or numeric strings), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(value) and 0.0 <= value <= 1.0:
        return float(value)
    return None


_PASS_WORDS = {"pass", "passed", "yes", "true", "met", "ok"}
_FAIL_WORDS = {"fail", "failed", "no", "false", "not met"}


def _pass_fail(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _PASS_WORDS:
            return True
        if word in _FAIL_WORDS:
            return False
    return None


# -- Score -------------------------------------------------------------------------------------

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
        return [Prompt(messages=_messages(system, render_case(case)))]


# -- PassFail ----------------------------------------------------------------------------------

PASS_FAIL_SCORES: Mapping[str, float] = {
    "pass/high": 1.0,
    "pass/medium": 0.85,
    "pass/low": 0.6,
    "fail/high": 0.0,
    "fail/medium": 0.15,
    "fail/low": 0.4,
}

PASS_FAIL_INSTRUCTIONS = (
    "Decide whether the output meets the criteria. Think first, then decide, then say how sure you "
    "are. Reply with one JSON object and nothing else:\n"
    '{"reasoning": "<a few sentences: what the output does and does not do against the criteria>", '
    '"verdict": "pass" or "fail", "confidence": "high", "medium" or "low"}'
)


class PassFail(Rubric):
    """A Pass/Fail verdict with a High/Medium/Low confidence, mapped to a score by a table.

    `scores` overrides entries of the default table (`PASS_FAIL_SCORES`), keyed `"pass/high"` or
    `("pass", "high")`.  A reply without a confidence is scored as *medium* (and
    `details["confidence_assumed"]` is True): no signal either way, so the middle row.
    """

    name = "pass_fail"

    def __init__(self, scores: Mapping[Any, float] | None = None) -> None:
        table = dict(PASS_FAIL_SCORES)
        for key, value in (scores or {}).items():
            name = "/".join(key) if isinstance(key, tuple) else str(key)
            name = name.strip().lower()
            if name not in PASS_FAIL_SCORES:
                raise RubricError(f"PassFail(scores=...): unknown entry {key!r}; known: {', '.join(PASS_FAIL_SCORES)}")
            if _unit(value) is None or isinstance(value, str):
                raise RubricError(f"PassFail(scores=...): {key!r} must be a number in [0, 1], got {value!r}")
            table[name] = float(value)
        self.scores = table

    def parameters(self) -> dict[str, Any]:
        return {"scores": dict(sorted(self.scores.items()))}

    def prompts(self, case: Case) -> list[Prompt]:
        return [Prompt(messages=_messages(_system(case, PASS_FAIL_INSTRUCTIONS), render_case(case)))]

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        parsed = parse_verdict(reply.text)
        if parsed.verdict not in ("pass", "fail"):
            raise _fail("PassFail: the reply gives no pass/fail verdict", reply)
        confidence = parsed.confidence or "medium"
        score = self.scores[f"{parsed.verdict}/{confidence}"]
        details = {"confidence_assumed": parsed.confidence is None}
        return RubricParse(score, None, parsed.verdict, confidence, parsed.reasoning, parsed.strategy, details)


# -- Likert ------------------------------------------------------------------------------------

LIKERT_INSTRUCTIONS = (
    "Rate how well the output meets the criteria on an integer scale from {low} (fails them entirely) "
    "to {high} (meets them fully). Think first, then rate. Reply with one JSON object and nothing else:\n"
    '{{"reasoning": "<a few sentences: what the output does and does not do against the criteria>", '
    '"score": <one integer from {low} to {high}>}}'
)
_SCORE_FIELD = re.compile(r'"score"\s{0,8}:\s{0,8}"?\s{0,8}(\d{1,4})')


class Likert(Rubric):
    """An integer scale (1-5, 1-10, ...) normalized to [0, 1].

    With `logprobs=True` the call asks for token log-probabilities and the score is their expected
    value over the scale (G-Eval): the top alternatives of the score token that are valid scale
    integers, weighted by probability.  Where the backend returns none, the plain integer is used.
    `verdict.details["scoring"]` says which ("logprobs" or "plain").  Stored replies keep their
    log-probabilities, so a replay gives the same weighted score.
    """

    name = "likert"

    def __init__(self, low: int = 1, high: int = 5, *, logprobs: bool = False, top_logprobs: int = 5) -> None:
        for what, value in (("low", low), ("high", high), ("top_logprobs", top_logprobs)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise RubricError(f"Likert({what}=...) must be an integer, got {value!r}")
        if not 0 <= low < high <= 1000:
            raise RubricError(f"Likert(low, high) needs 0 <= low < high <= 1000, got ({low}, {high})")
        if not 1 <= top_logprobs <= 20:
            raise RubricError(f"Likert(top_logprobs=...) must be between 1 and 20, got {top_logprobs}")
        self.low, self.high, self.logprobs, self.top_logprobs = low, high, bool(logprobs), top_logprobs

    def parameters(self) -> dict[str, Any]:
        params: dict[str, Any] = {"low": self.low, "high": self.high, "logprobs": self.logprobs}
        if self.logprobs:
            params["top_logprobs"] = self.top_logprobs
        return params

    def prompts(self, case: Case) -> list[Prompt]:
        system = _system(case, LIKERT_INSTRUCTIONS.format(low=self.low, high=self.high))
        params = {"logprobs": True, "top_logprobs": self.top_logprobs} if self.logprobs else {}
        return [Prompt(messages=_messages(system, render_case(case)), scale=(self.low, self.high), params=params)]

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        parsed = parse_verdict(reply.text, scale=(self.low, self.high))
        raw = parsed.raw_score
        if raw is None:
            raise _fail(f"Likert: the reply gives no score on the {self.low}-{self.high} scale", reply)
        if not self.low <= raw <= self.high:
            raise _fail(f"Likert: the reply's score {raw:g} is outside the {self.low}-{self.high} scale", reply)
        details: dict[str, Any] = {"scoring": "plain", "raw_score": raw}
        score = parsed.score
        if self.logprobs:
            weights = score_distribution(reply.logprobs, reply.text, raw, self.low, self.high)
            if weights:
                expected = sum(v * p for v, p in weights.items())
                score = round((expected - self.low) / (self.high - self.low), 6)
                details = {
                    "scoring": "logprobs",
                    "raw_score": raw,
                    "expected": round(expected, 6),
                    "probabilities": {str(v): round(p, 6) for v, p in sorted(weights.items())},
                }
        return RubricParse(score, raw, parsed.verdict, parsed.confidence, parsed.reasoning, parsed.strategy, details)


def score_distribution(logprobs: Any, text: str, raw: float, low: int, high: int) -> dict[int, float] | None:
    """Probabilities of each scale integer at the score token, normalized; None if not found.

    `logprobs` is the OpenAI chat `choice.logprobs` as plain data (`{"content": [{"token",
    "logprob", "top_logprobs": [...]}, ...]}`).  The score token is the one at the `"score":`
    field's value (located by character offsets when the tokens spell the reply), else the last
    token that is the score itself.  A score split over several tokens is not weighted.
    """
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else logprobs
    if not isinstance(content, list) or not content or not float(raw).is_integer():
        return None
    tokens = [t for t in content if isinstance(t, Mapping) and isinstance(t.get("token"), str)]
    if len(tokens) != len(content):
        return None
    wanted = str(int(raw))
    index = None
    joined = "".join(t["token"] for t in tokens)
    match = None
    for match in _SCORE_FIELD.finditer(joined):
        pass
    if joined == text and match is not None and match.group(1) == wanted:
        offset, position = 0, match.start(1)
        for i, token in enumerate(tokens):
            if offset <= position < offset + len(token["token"]):
                index = i
                break
            offset += len(token["token"])
    if index is None:
        index = next((i for i in range(len(tokens) - 1, -1, -1) if _token_int(tokens[i]["token"]) == int(raw)), None)
    if index is None or _token_int(tokens[index]["token"]) != int(raw):
        return None  # the score is split over tokens (or not there): no clean distribution
    token = tokens[index]
    weights: dict[int, float] = {}
    alternatives = token.get("top_logprobs") or [token]
    for alt in alternatives:
        if not isinstance(alt, Mapping) or not isinstance(alt.get("logprob"), (int, float)):
            continue
        value = _token_int(str(alt.get("token", "")))
        if value is not None and low <= value <= high:
            weights[value] = weights.get(value, 0.0) + math.exp(alt["logprob"])
    total = sum(weights.values())
    if total <= 0:
        return None
    return {v: p / total for v, p in weights.items()}


def _token_int(token: str) -> int | None:
    token = token.strip().strip('"')
    return int(token) if token.isascii() and token.isdigit() and len(token) <= 4 else None


# -- Dimensions --------------------------------------------------------------------------------

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
    "in the light of the criteria.\n{dimensions}\n\nThink first, then score. Reply with one JSON object and nothing else:\n"
    '{{"reasoning": "<a few sentences on the strengths and weaknesses>", "scores": {{{fields}}}}}'
)


class Dimensions(Rubric):
    """One score per dimension in one call, combined by weights into the score, plus a quality label.

    `weights` maps dimension names to positive weights (default `DIMENSION_WEIGHTS`; any names
    work, `descriptions` says what a custom one means).  `labels` maps a label to the lowest score
    that earns it (default `QUALITY_LABELS`; the label with the lowest bound is the fallback).
    `verdict.details["dimensions"]` holds each score, `["label"]` the label.
    """

    name = "dimensions"

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
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not (math.isfinite(weight) and weight > 0):
                raise RubricError(f"Dimensions(weights=...): {dim!r} needs a positive weight, got {weight!r}")
        labels = dict(QUALITY_LABELS if labels is None else labels)
        if not labels or any(_unit(v) is None or isinstance(v, str) for v in labels.values()):
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
        system = _system(case, DIMENSIONS_INSTRUCTIONS.format(dimensions=dims, fields=fields))
        return [Prompt(messages=_messages(system, render_case(case)))]

    def label(self, score: float) -> str:
        for name, bound in self.labels.items():
            if score >= bound:
                return name
        return list(self.labels)[-1]

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        obj = parse_json_object(reply.text)
        if obj is None:
            raise _fail("Dimensions: the reply holds no JSON object of dimension scores", reply)
        scores = obj.get("scores") if isinstance(obj.get("scores"), Mapping) else obj.get("dimensions")
        if not isinstance(scores, Mapping):
            scores = obj
        found: dict[str, float] = {}
        missing, bad = [], []
        for dim in self.weights:
            value = scores.get(dim)
            if isinstance(value, Mapping):  # {"correctness": {"score": 0.9, "reasoning": ...}}
                value = value.get("score")
            if value is None:
                missing.append(dim)
            elif _unit(value) is None:
                bad.append(dim)
            else:
                found[dim] = _unit(value)  # type: ignore[assignment]
        if missing or bad:
            problems = ([f"no score for {', '.join(missing)}"] if missing else []) + (
                [f"a score outside [0, 1] for {', '.join(bad)}"] if bad else []
            )
            raise _fail(f"Dimensions: the reply gives {' and '.join(problems)}", reply)
        total = sum(self.weights.values())
        score = round(sum(self.weights[d] * s for d, s in found.items()) / total, 6)
        details = {"dimensions": found, "label": self.label(score), "weights": dict(self.weights)}
        return RubricParse(score, None, None, None, reasoning_from(obj), "json-dimensions", details)

    def failure_details(self, outcome: Outcome) -> list[str]:
        dims = outcome.details.get("dimensions") or {}
        if not dims:
            return []
        parts = ", ".join(f"{d} {s:.2f}" for d, s in sorted(dims.items(), key=lambda kv: kv[1]))
        return [f"dimensions: {parts} (label {outcome.details.get('label')})"]


# -- Checklist ---------------------------------------------------------------------------------

CHECKLIST_INSTRUCTIONS = (
    "Check the output against each numbered constraint, one at a time, independently of the others. "
    "A constraint passes only if the output clearly satisfies it. Reply with one JSON object and nothing else:\n"
    '{"results": [{"id": <the constraint\'s number>, "reasoning": "<one or two sentences>", '
    '"verdict": "PASS" or "FAIL"}, ... one entry per constraint, in order]}'
)


def _texts(kind: str, values: Any) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise RubricError(f"{kind} takes a list of strings, got {type(values).__name__}")
    items = tuple(values)
    if not items:
        raise RubricError(f"{kind} needs at least one item")
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise RubricError(f"{kind}: every item must be a non-empty string, got {item!r}")
    if len(set(items)) != len(items):
        raise RubricError(f"{kind}: items must be distinct")
    return tuple(i.strip() for i in items)


class Checklist(Rubric):
    """PASS/FAIL per constraint in one call; the score is the share that passed.

    A failure message names the constraints that failed, with the judge's reason for each.
    """

    name = "checklist"

    def __init__(self, constraints: Sequence[str]) -> None:
        self.constraints = _texts("Checklist(constraints)", constraints)

    def parameters(self) -> dict[str, Any]:
        return {"constraints": list(self.constraints)}

    def prompts(self, case: Case) -> list[Prompt]:
        numbered = "\n".join(f"{i}. {c}" for i, c in enumerate(self.constraints, 1))
        user = render_case(case, criteria=f"{case.criteria}\n\nConstraints:\n{numbered}")
        return [Prompt(messages=_messages(_system(case, CHECKLIST_INSTRUCTIONS), user))]

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        obj = parse_json_object(reply.text)
        results = None if obj is None else (obj.get("results") or obj.get("constraints"))
        by_id: dict[int, tuple[bool, str]] = {}
        if isinstance(results, Mapping):  # {"1": "PASS", ...}
            results = [{"id": k, "verdict": v} for k, v in results.items()]
        if not isinstance(results, list):
            raise _fail("Checklist: the reply has no list of results", reply)
        for item in results:
            if not isinstance(item, Mapping):
                continue
            ident = item.get("id", item.get("constraint"))
            try:
                number = int(str(ident).strip().rstrip("."))
            except ValueError:
                continue
            verdict = next((_pass_fail(item[k]) for k in ("verdict", "result", "passed", "pass") if k in item), None)
            if verdict is not None and 1 <= number <= len(self.constraints):
                by_id.setdefault(number, (verdict, reasoning_from(item)))
        missing = [str(i) for i in range(1, len(self.constraints) + 1) if i not in by_id]
        if missing:
            raise _fail(f"Checklist: the reply gives no PASS/FAIL for constraint(s) {', '.join(missing)}", reply)
        checks = [
            {"constraint": c, "passed": by_id[i][0], "reasoning": by_id[i][1]} for i, c in enumerate(self.constraints, 1)
        ]
        passed = sum(c["passed"] for c in checks)
        score = round(passed / len(checks), 6)
        failed = [c["constraint"] for c in checks if not c["passed"]]
        reasoning = "; ".join(f"{'PASS' if c['passed'] else 'FAIL'} {c['constraint']}: {c['reasoning']}" for c in checks)
        details = {"constraints": checks, "failed": failed, "passed": passed, "total": len(checks)}
        return RubricParse(score, None, "pass" if not failed else "fail", None, reasoning, "json-checklist", details)

    def failure_details(self, outcome: Outcome) -> list[str]:
        checks = [c for c in outcome.details.get("constraints", ()) if not c["passed"]]
        if not checks:
            return []
        total = outcome.details.get("total", len(self.constraints))
        return [f"failed constraints ({len(checks)} of {total}):"] + [
            f"  - {c['constraint']}" + (f": {c['reasoning']}" if c["reasoning"] else "") for c in checks
        ]


# -- Questions ---------------------------------------------------------------------------------

QUESTION_INSTRUCTIONS = (
    "Answer one assessment question about the output, and nothing else: ignore every other quality "
    "of the output. Think first, then answer. Reply with one JSON object and nothing else:\n"
    '{"reasoning": "<one to three sentences>", "score": <a number from 0.0 (clearly no) to 1.0 (clearly yes)>}'
)
QUESTION_AGGREGATES = ("mean", "min", "all")


class Questions(Rubric):
    """Several single-focus questions, each asked in its own call, combined into one score.

    Each question is answered with a score in [0, 1] (1 = clearly yes); a question *fails* below
    `pass_at` (default 0.5).  `aggregate`: "mean" of the answers, their "min", or "all" (1.0 when
    every question passes, else 0.0).  A failure message names the questions that failed.
    """

    name = "questions"

    def __init__(self, questions: Sequence[str], aggregate: str = "mean", *, pass_at: float = 0.5) -> None:
        self.questions = _texts("Questions(questions)", questions)
        if aggregate not in QUESTION_AGGREGATES:
            raise RubricError(f"Questions(aggregate=...) must be one of {', '.join(QUESTION_AGGREGATES)}, got {aggregate!r}")
        if _unit(pass_at) is None or isinstance(pass_at, str):
            raise RubricError(f"Questions(pass_at=...) must be a number in [0, 1], got {pass_at!r}")
        self.aggregate, self.pass_at = aggregate, float(pass_at)

    def parameters(self) -> dict[str, Any]:
        return {"questions": list(self.questions), "aggregate": self.aggregate, "pass_at": self.pass_at}

    def prompts(self, case: Case) -> list[Prompt]:
        system = _system(case, QUESTION_INSTRUCTIONS)
        prompts = []
        for i, question in enumerate(self.questions, 1):
            user = render_case(case, criteria=f"{case.criteria}\n\nQuestion: {question}")
            prompts.append(Prompt(messages=_messages(system, user), name=f"q{i}"))
        return prompts

    def combine(self, case: Case, results: Sequence[tuple[Prompt, ParsedVerdict]]) -> Outcome:
        answers = [
            {"question": q, "score": parsed.score, "passed": parsed.score >= self.pass_at, "reasoning": parsed.reasoning}
            for q, (_, parsed) in zip(self.questions, results)
        ]
        scores = [a["score"] for a in answers]
        if self.aggregate == "mean":
            score = statistics.fmean(scores)
        elif self.aggregate == "min":
            score = min(scores)
        else:
            score = 1.0 if all(a["passed"] for a in answers) else 0.0
        failed = [a["question"] for a in answers if not a["passed"]]
        reasoning = "\n".join(f"[{a['score']:.2f}] {a['question']} {a['reasoning']}" for a in answers)
        return Outcome(round(score, 6), reasoning, details={"questions": answers, "failed": failed})

    def failure_details(self, outcome: Outcome) -> list[str]:
        failed = [a for a in outcome.details.get("questions", ()) if not a["passed"]]
        if not failed:
            return []
        return [f"failed questions ({len(failed)} of {len(self.questions)}):"] + [
            f"  - {a['question']} ({a['score']:.2f})" + (f": {a['reasoning']}" if a["reasoning"] else "") for a in failed
        ]


# -- Template ----------------------------------------------------------------------------------

TEMPLATE_FIELDS = ("input", "expected", "output", "criteria")
TEMPLATE_INSTRUCTIONS = (
    "Follow the evaluation instructions in the user message. Think first, then score. Reply with one JSON "
    'object and nothing else: {{"reasoning": "<a few sentences>", "score": <a number from {low:g} to {high:g}>}}'
)


class Template(Rubric):
    """Your own prompt, with `{input}`, `{expected}`, `{output}` and `{criteria}` placeholders.

    `{output}` is required; any other placeholder (or `{}`, `{output.x}`, `{output!r}`) is an error
    here, at definition.  Write literal braces as `{{` and `}}`.  Input, reference and output are
    substituted fenced as data (tags the text cannot close); the criteria in the clear.  The judge
    answers with a score on `scale` (default 0-1), normalized to [0, 1].
    """

    name = "template"

    def __init__(self, text: str, *, scale: tuple[float, float] = (0, 1)) -> None:
        if not isinstance(text, str) or not text.strip():
            raise RubricError("Template(text) needs the prompt text")
        try:
            fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(text) if name is not None]
        except ValueError as exc:
            raise RubricError(f"Template: {exc} (write literal braces as {{{{ and }}}})") from None
        for name, spec, conv in fields:
            if name not in TEMPLATE_FIELDS:
                shown = "{" + name + "}"
                raise RubricError(
                    f"Template: unknown placeholder {shown}; use {', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)} "
                    "(write literal braces as {{ and }})"
                )
            if spec or conv:
                raise RubricError(f"Template: placeholder {{{name}}} takes no format spec or conversion")
        self.fields = tuple(dict.fromkeys(name for name, _, _ in fields))
        if "output" not in self.fields:
            raise RubricError("Template: the prompt must contain {output}, where the output under test goes")
        if (
            not isinstance(scale, (tuple, list)) or len(scale) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in scale)
            or not scale[0] < scale[1]
        ):
            raise RubricError(f"Template(scale=...) must be (low, high) with low < high, got {scale!r}")
        self.text, self.scale = text, (scale[0], scale[1])

    def parameters(self) -> dict[str, Any]:
        return {"text": self.text, "scale": list(self.scale)}

    def prompts(self, case: Case) -> list[Prompt]:
        values: dict[str, str] = {"criteria": case.criteria, "output": fence("output", case.output, case.nonce)}
        for name in ("input", "expected"):
            value = getattr(case, name)
            if value is None:
                if name in self.fields:
                    raise JudgeError(f"this Template uses {{{name}}}, but no {name}= was given to judge with")
                continue
            values[name] = fence(name, value, case.nonce)
        system = _system(case, TEMPLATE_INSTRUCTIONS.format(low=self.scale[0], high=self.scale[1]))
        return [Prompt(messages=_messages(system, self.text.format(**values)), scale=self.scale)]


def resolve_rubric(value: Any) -> Rubric:
    """A Rubric instance from what a user passed (None, a Rubric, or a Rubric class)."""
    if value is None:
        return Score()
    if isinstance(value, Rubric):
        return value
    if isinstance(value, type) and issubclass(value, Rubric):
        try:
            return value()
        except TypeError as exc:
            raise JudgeError(f"rubric {value.__name__} needs arguments ({exc}); pass an instance, e.g. {value.__name__}(...)") from None
    raise JudgeError(f"rubric must be a Rubric from pytest_llmjudge.rubrics (e.g. Score()), got {value!r}")
