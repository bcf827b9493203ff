"""Property-based tests: `parse_verdict` returns a score in [0, 1] or raises VerdictParseError."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pytest_llmjudge.errors import VerdictParseError
from pytest_llmjudge.parsing import parse_json_object, parse_verdict
from pytest_llmjudge.parsing.funnel import ParsedVerdict

FRAGMENTS = [
    "{",
    "}",
    "[",
    "]",
    "[[",
    "]]",
    '"',
    "'",
    ":",
    ",",
    "\n",
    " ",
    "```",
    "```json\n",
    "\\",
    "%",
    "/",
    "(",
    ")",
    "score",
    "Score: ",
    "SCORE",
    "rating",
    "Rating: ",
    "[RESULT] ",
    "GRADE: ",
    "C",
    "P",
    "I",
    "PASS",
    "FAIL",
    "pass",
    "Verdict: ",
    "<answer>",
    "</answer>",
    "<think>",
    "</think>",
    "Confidence: ",
    "out of",
    "not ",
    "I would rate it a ",
    "The score is ",
    '"score": ',
    '"reason": ',
    '"pass": ',
    "true",
    "false",
    "null",
    "0",
    "1",
    "5",
    "10",
    "0.5",
    "-3",
    "+2",
    "1e3",
    "99",
    "4.25",
    "<output-abc123def456>",
    "</output-abc123def456>",
    "Reference ",
    "example",
    "\u200b",
    "无",
    "模型",
]

replies = st.one_of(
    st.text(max_size=400),
    st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=5)), max_size=30).map("".join),
)


@st.composite
def scales(draw: st.DrawFn) -> tuple[float, float]:
    lo = draw(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False))
    width = draw(st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False))
    hi = lo + width
    assume(lo < hi)
    return lo, hi


COMMON_SCALES = st.sampled_from([(0, 1), (1, 5), (1, 10), (0, 10), (0, 100)])
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_outcome(text: str, scale: tuple[float, float]) -> ParsedVerdict | None:
    try:
        got = parse_verdict(text, scale=scale)
    except VerdictParseError as err:
        assert err.text == text
        if len(text.strip()) >= 30:
            assert text.strip() not in str(err)
        return None
    assert isinstance(got, ParsedVerdict)
    assert isinstance(got.score, float)
    assert 0.0 <= got.score <= 1.0
    assert got.score == round(got.score, 6)
    assert got.verdict in (None, "pass", "fail")
    assert got.confidence in (None, "high", "medium", "low")
    assert isinstance(got.reasoning, str)
    assert got.raw_score is None or math.isfinite(got.raw_score)
    assert got.strategy in ("json", "json-repair", "json-fragment", "labelled", "prose", "bare-number")
    return got


@SETTINGS
@given(text=replies, scale=st.one_of(COMMON_SCALES, scales()))
def test_any_text_gives_a_unit_score_or_a_parse_error(text: str, scale: tuple[float, float]) -> None:
    _check_outcome(text, scale)


@SETTINGS
@given(text=replies)
def test_parse_json_object_returns_a_dict_or_none(text: str) -> None:
    value = parse_json_object(text)
    assert value is None or isinstance(value, dict)


@SETTINGS
@given(
    raw=st.floats(min_value=-1e4, max_value=1e4, allow_nan=False, allow_infinity=False),
    scale=COMMON_SCALES,
    as_string=st.booleans(),
)
def test_json_score_is_normalized_and_clamped(raw: float, scale: tuple[float, float], as_string: bool) -> None:
    lo, hi = scale
    value = repr(raw) if as_string else raw
    got = parse_verdict(json.dumps({"reasoning": "r", "score": value}), scale=scale)
    expected = round(min(1.0, max(0.0, (raw - lo) / (hi - lo))), 6)
    assert got.score == pytest.approx(expected, abs=1e-6)
    assert got.raw_score == raw
    assert got.strategy == "json"


@SETTINGS
@given(
    n=st.integers(min_value=0, max_value=100),
    scale=COMMON_SCALES,
    form=st.sampled_from(["Score: {}", "Rating: [[{}]]", "[RESULT] {}", "{}"]),
)
def test_labelled_integer_scores(n: int, scale: tuple[float, float], form: str) -> None:
    lo, hi = scale
    got = parse_verdict("The answer is adequate.\n" + form.format(n) if form != "{}" else str(n), scale=scale)
    assert got.score == pytest.approx(round(min(1.0, max(0.0, (n - lo) / (hi - lo))), 6), abs=1e-6)
    assert got.raw_score == n


@SETTINGS
@given(prose=st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Zs")), max_size=200))
def test_letters_only_prose_without_verdict_words_is_an_error(prose: str) -> None:
    assume("pass" not in prose.lower() and "fail" not in prose.lower() and "grade" not in prose.lower())
    # A last word that is a verdict on its own (Y/N, yes/no, correct/incorrect) is read: see the README's policy.
    words = prose.lower().split()
    assume(not words or words[-1] not in {"y", "n", "yes", "no", "correct", "incorrect"})
    with pytest.raises(VerdictParseError):
        parse_verdict(prose, scale=(1, 10))
