"""An integer scale (1-5, 1-10, ...), optionally scored as the expected value of its token log-probabilities."""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
import re
from collections.abc import Mapping
from typing import Any

from ..backends.protocol import CallRequest, UnsupportedParamError
from ..case import Case
from ..errors import Redacted, VerdictParseError
from ..parsing.funnel import ParsedVerdict, parse_verdict
from .base import REASONING, Prompt, Reply, Rubric, RubricError, ask, parse_failure, register_rubric, reply_object
from .parsed import RubricParse

LIKERT_INSTRUCTIONS = (
    "Rate how well the output meets the criteria on an integer scale from {low} (fails them entirely) "
    "to {high} (meets them fully). Think first, then rate. Reply with one JSON object and nothing else:\n"
    '{{"reasoning": "<a few sentences: what the output does and does not do against the criteria>", '
    '"score": <one integer from {low} to {high}>}}'
)
_SCORE_FIELD = re.compile(r'"score"\s{0,8}:\s{0,8}"?\s{0,8}(\d{1,4})')


@register_rubric
class Likert(Rubric):
    """An integer scale (1-5, 1-10, ...) normalized to [0, 1].

    With `logprobs=True` the score is the expected value of the score token's log-probabilities over
    the scale (G-Eval); where the backend gives none, or refuses them (with a `LogprobsFallbackWarning`),
    the plain integer.  `verdict.details["scoring"]` says which ("logprobs" or "plain").
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
        params = {"logprobs": True, "top_logprobs": self.top_logprobs} if self.logprobs else {}
        instructions = LIKERT_INSTRUCTIONS.format(low=self.low, high=self.high)
        return [ask(case, instructions, scale=(self.low, self.high), params=params)]

    def reply_schema(self) -> dict[str, Any]:
        return reply_object(reasoning=REASONING, score={"type": "integer"})

    @classmethod
    def from_stored(cls, entry: Mapping[str, Any]) -> list[Rubric]:
        """The usual scales, with the log-probability setting the stored call was made with."""
        params = entry.get("params")
        if isinstance(params, Mapping) and "logprobs" in params:
            logprobs, top = bool(params.get("logprobs")), params.get("top_logprobs", 5)
        else:  # recorded before the sampling parameters were stored: logprobs were stored only if asked for
            logprobs, top = entry.get("logprobs") is not None, 5
        top = top if isinstance(top, int) and not isinstance(top, bool) and 1 <= top <= 20 else 5
        return [cls(low, high, logprobs=logprobs, top_logprobs=top) for low, high in _USUAL_SCALES]

    def stored_logprobs(self, prompt: Prompt, reply: Reply) -> Any:
        """Only the score token and its alternatives (the distribution the score is computed from)."""
        if not self.logprobs or reply.logprobs is None:
            return None
        try:
            raw = parse_verdict(reply.text, scale=(self.low, self.high), asked=self.asked(prompt)).raw_score
        except VerdictParseError:
            return None
        token = None if raw is None else score_token(reply.logprobs, reply.text, raw)
        if token is None:
            return None
        kept: dict[str, Any] = {"token": token["token"], "logprob": token.get("logprob")}
        alternatives = token.get("top_logprobs")
        if isinstance(alternatives, list):
            kept["top_logprobs"] = [
                {"token": a.get("token"), "logprob": a.get("logprob")} for a in alternatives if isinstance(a, Mapping)
            ]
        return {"content": [kept]}

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        parsed = parse_verdict(reply.text, scale=(self.low, self.high), asked=self.asked(prompt))
        raw = parsed.raw_score
        if raw is None:
            raise parse_failure(f"Likert: the reply gives no score on the {self.low}-{self.high} scale", reply)
        if not self.low <= raw <= self.high:
            raise parse_failure(f"Likert: the reply's score {raw:g} is outside the {self.low}-{self.high} scale", reply)
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


LOGPROB_PARAMS = ("logprobs", "top_logprobs")


class LogprobsFallbackWarning(Redacted, UserWarning):
    """The judge refused log-probabilities: a logprobs rubric was scored plainly."""


def without_logprobs(request: CallRequest, exc: UnsupportedParamError) -> CallRequest | None:
    """The same call without log-probabilities, when `exc` is the judge refusing them; else None.

    Its reply is stored under the judgment's usual key: a judge that refuses them answers plainly every time.
    """
    params = dict(request.params or {})
    if exc.unsupported_param not in LOGPROB_PARAMS or not any(p in params for p in LOGPROB_PARAMS):
        return None
    return dataclasses.replace(request, params={k: v for k, v in params.items() if k not in LOGPROB_PARAMS})


_USUAL_SCALES = ((1, 5), (1, 10), (0, 10), (1, 7), (1, 3), (0, 5), (0, 4), (1, 4), (0, 100), (1, 100))


def score_distribution(logprobs: Any, text: str, raw: float, low: int, high: int) -> dict[int, float] | None:
    """Probabilities of each scale integer at the score token, normalized; None if not found.

    `logprobs` is the OpenAI chat `choice.logprobs` as plain data (`{"content": [{"token", "logprob",
    "top_logprobs": [...]}, ...]}`); a score split over several tokens is not weighted.
    """
    token = score_token(logprobs, text, raw)
    if token is None:
        return None
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


def score_token(logprobs: Any, text: str, raw: float) -> Mapping[str, Any] | None:
    """The token (with its alternatives) holding the integer score: the `"score":` field's value (found by
    character offsets where the tokens spell the reply), else the last token that is the score; or None."""
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else logprobs
    if not isinstance(content, list) or not content or not float(raw).is_integer():
        return None
    tokens = [t for t in content if isinstance(t, Mapping) and isinstance(t.get("token"), str)]
    if len(tokens) != len(content):
        return None
    index = None
    joined = "".join(t["token"] for t in tokens)
    fields = list(_SCORE_FIELD.finditer(joined))
    if joined == text and fields and fields[-1].group(1) == str(int(raw)):  # the last "score" field's token
        index = bisect.bisect_right(list(itertools.accumulate(len(t["token"]) for t in tokens)), fields[-1].start(1))
    if index is None:
        index = next((i for i in range(len(tokens) - 1, -1, -1) if _token_int(tokens[i]["token"]) == int(raw)), None)
    if index is None or _token_int(tokens[index]["token"]) != int(raw):
        return None  # the score is split over tokens (or not there): no clean distribution
    found_token: Mapping[str, Any] = tokens[index]
    return found_token


def _token_int(token: str) -> int | None:
    token = token.strip().strip('"')
    return int(token) if token.isascii() and token.isdigit() and len(token) <= 4 else None
