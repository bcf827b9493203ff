"""The parser's general rules for replies nobody tuned it on: ranges, disagreeing scores, self-corrections,
labelled yes/no verdicts and bracketed verdicts.  Each rule has a case that reads right and one that must raise."""

from __future__ import annotations

import pytest

from pytest_llmjudge.errors import VerdictParseError
from pytest_llmjudge.parsing import parse_verdict

TEN = (1, 10)
ZERO_TEN = (0, 10)
UNIT = (0, 1)


def score_of(text: str, scale: tuple[float, float] = UNIT) -> float:
    return parse_verdict(text, scale=scale).score


def raises(text: str, scale: tuple[float, float] = UNIT) -> None:
    with pytest.raises(VerdictParseError):
        parse_verdict(text, scale=scale)


# ------------------------------------------------------------------ a range is never a score


@pytest.mark.parametrize(
    "text",
    [
        "The score is 0.0 (not relevant at all) to 1.0 (fully relevant). The answer is on topic.",
        "Score: 0.0 (poor) to 1.0 (excellent), depending on how well the answer is grounded.",
        "The score ranges from 0.0 to 1.0, where higher means more faithful.",
        "The score is between 0.0 and 1.0 and reflects faithfulness.",
        "Scores run 0 (irrelevant) - 1 (relevant); this one is hard to place.",
    ],
)
def test_a_number_that_is_part_of_a_range_is_not_a_score(text: str) -> None:
    raises(text)


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("The score is 0.0 (irrelevant) to 1.0 (relevant). I give this answer a score of 0.8.", 0.8),
        ("Scores range from 0 to 1.\nScore: 0.7", 0.7),
        ("On a scale from 0.0 (poor) to 1.0 (excellent), the response deserves 0.9.", 0.9),
    ],
)
def test_the_score_after_a_range_explanation_is_read(text: str, score: float) -> None:
    assert score_of(text) == pytest.approx(score)


# ------------------------------------------------------------------ disagreeing plain scores fail closed


def test_two_disagreeing_score_lines_with_nothing_ranking_them_raise() -> None:
    raises("Score: 3/10\nrevised\nScore: 7/10", ZERO_TEN)


def test_repeated_score_lines_that_agree_are_read() -> None:
    assert score_of("Score: 7/10\nThe answer is right.\nScore: 7/10", ZERO_TEN) == pytest.approx(0.7)


def test_a_final_score_still_beats_a_plain_one() -> None:
    assert score_of("Score: 3\nMore thought.\nFinal score: 7", ZERO_TEN) == pytest.approx(0.7)


# ------------------------------------------------------------------ a retracted score is not the answer


@pytest.mark.parametrize(
    "text",
    [
        "The score is 5. No, it is 6.",
        "The score is [[5]]. No, it is 6.",
        "Score: 4. Actually, make it 3.",
        "Rating: 8 - wait, 7 is fairer.",
    ],
)
def test_a_score_the_judge_retracts_for_another_number_raises(text: str) -> None:
    raises(text, ZERO_TEN)


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("The score is 5. No, I am confident.", 0.5),
        ("Score: 8. No issues were found in 3 files.", 0.8),
    ],
)
def test_a_no_that_retracts_nothing_keeps_the_score(text: str, score: float) -> None:
    assert score_of(text, ZERO_TEN) == pytest.approx(score)


# ------------------------------------------------------------------ labelled yes/no verdicts with a reason


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("I think Judgement: No because the proof skips steps.", "fail"),
        ("Judgement: no, the proof omits steps", "fail"),
        ("Verdict: Yes - every step is justified.", "pass"),
        ("<summary>Great</summary><judgement>Judgement: Yes</judgement>", "pass"),
    ],
)
def test_a_yes_no_verdict_label_followed_by_its_reason(text: str, verdict: str) -> None:
    got = parse_verdict(text, scale=UNIT)
    assert got.verdict == verdict
    assert got.score == (1.0 if verdict == "pass" else 0.0)


@pytest.mark.parametrize(
    "text",
    ["Judgement: yesh it's complicated", "Answer: no idea what the user wanted.", "Judgement: maybe"],
)
def test_a_yes_no_label_whose_value_is_another_word_is_no_verdict(text: str) -> None:
    raises(text)


# ------------------------------------------------------------------ bracketed verdicts


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("After analysis, the model correctly addressed the user's allergy. [[YES]]", "pass"),
        ("The model failed to remember the allergy. [[NO]]", "fail"),
        ("Both checks hold. [[PASS]]", "pass"),
        ("Initially [[YES]] but actually [[NO]]", "fail"),
    ],
)
def test_a_bracketed_verdict_is_the_judges_decision_and_the_last_wins(text: str, verdict: str) -> None:
    assert parse_verdict(text, scale=UNIT).verdict == verdict


def test_a_quoted_bracketed_verdict_is_not_the_judges() -> None:
    raises('The output ends with "[[YES]]" but gives no reasons.')


# ------------------------------------------------------------------ invalid JSON escapes


def test_invalid_escapes_in_a_json_reply_are_kept_as_literal_backslashes() -> None:
    got = parse_verdict('{"score": 4, "reason": "the regex \\d+ and \\; match, and \\n is a newline"}', scale=(1, 5))
    assert got.score == pytest.approx(0.75)
    assert "\\d+ and \\;" in got.reasoning
    assert "\n is a newline" in got.reasoning
