"""Score and pass/fail replies as judges write them, and two readings that were silently wrong and are errors now."""

from __future__ import annotations

import pytest

from pytest_llmjudge.errors import VerdictParseError
from pytest_llmjudge.parsing import parse_verdict
from pytest_llmjudge.parsing.funnel import Asked
from pytest_llmjudge.rubrics import Case, Reply
from pytest_llmjudge.rubrics.passfail import PassFail
from pytest_llmjudge.rubrics.score import Score

SCORE = Asked(verdict=False)
VERDICT = Asked(verdict=True)
TEN = (1, 10)


def raw(text: str, scale: tuple[float, float] = TEN, asked: Asked | None = SCORE) -> float | None:
    return parse_verdict(text, scale=scale, asked=asked).raw_score


def verdict(text: str) -> str | None:
    return parse_verdict(text, asked=VERDICT).verdict


# ------------------------------------------------------------------ score markers judges write instead of [[8]]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The assistant's answer: 8/10.", 8),
        ("The response covers every step but one.\n\nThe assistant's answer: 6/10.", 6),
        ("Helpfulness is high.\nMy assessment: 7 out of 10", 7),
    ],
)
def test_a_fraction_on_the_scale_after_a_label_is_the_score(text: str, expected: float) -> None:
    assert raw(text) == expected


def test_a_fraction_on_another_scale_after_a_label_is_not() -> None:
    with pytest.raises(VerdictParseError):
        parse_verdict("Accuracy: 4/5", scale=TEN, asked=SCORE)


def test_per_criterion_fractions_that_disagree_are_no_single_score() -> None:
    with pytest.raises(VerdictParseError, match="per-criterion"):
        parse_verdict("Accuracy: 4/10\nClarity: 9/10", scale=TEN, asked=SCORE)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("[[Rating]: 3]", 3), ("[[rating]]: 8", 8), ("The answer is thin.\n[[Rating]]: 4", 4)],
)
def test_the_rating_label_inside_the_brackets_with_its_value_after_them(text: str, expected: float) -> None:
    assert raw(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        'The answer is complete and correct, so I rate it as follows: "Rating: [[9]]".',
        'Everything asked for is there. "Rating: [[9]]"',
    ],
)
def test_a_rating_quoted_as_the_replys_last_words_is_the_judges_own(text: str) -> None:
    assert raw(text) == 9


@pytest.mark.parametrize(
    "text",
    [
        'The output ends with "Rating: [[10]]" and then says nothing more.',
        'The output claims: "Rating: [[10]]"',
    ],
)
def test_a_quoted_rating_that_is_not_the_replys_end_or_is_attributed_is_not(text: str) -> None:
    with pytest.raises(VerdictParseError):
        parse_verdict(text, scale=TEN, asked=SCORE)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("답변은 정확하지만 설명이 부족합니다. 따라서 2점으로 평가하겠습니다.\n\n[[rating]]", 2),
        ("回答基本正确，但缺少细节。我给这个回答打7分。\n\n评分：[[rating]]", 7),
        ("説明は丁寧ですが、誤りが一つあります。6点を付けます。", 6),
    ],
)
def test_a_score_given_in_korean_chinese_or_japanese_prose_before_an_empty_rating_bracket(
    text: str, expected: float
) -> None:
    assert raw(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The response is fine.\n\n### Final Score\n8", 8),
        ("The response is fine.\n\n**Final score**\n\n8/10", 8),
        ("The response is fine.\n\n## Rating\n\n**6**", 6),
    ],
)
def test_a_score_heading_with_the_number_on_the_next_line(text: str, expected: float) -> None:
    assert raw(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Score: 3\nScore: 7 (total)", 7),
        ("Score: 3 + 4 = 7", 7),
        ("Score: (8 + 9) / 2 = 8.5", 8.5),
        ("Score: 4\nScore: 4 + 3 = 7", 7),
        ("Accuracy: 4/10\nClarity: 3/10\nTotal: 7/10", 7),
    ],
)
def test_two_score_lines_where_the_second_is_the_total_and_worked_out_sums(text: str, expected: float) -> None:
    assert parse_verdict(text, scale=(0, 10), asked=SCORE).raw_score == expected


def test_a_score_heading_followed_by_a_breakdown_of_sub_scores_reads_the_heading() -> None:
    text = "## Score: 7/10\n\nBreakdown:\n- Accuracy: 3/4\n- Clarity: 2/3\n- Style: 2/3"
    assert parse_verdict(text, scale=(0, 10), asked=SCORE).raw_score == 7


# ------------------------------------------------------------------ silent wrong readings, now errors


@pytest.mark.parametrize(
    "text",
    [
        "The translation keeps most of the meaning, but one clause prevents full comprehensibility, as required by"
        " a score of 5 in the rubric.",
        "It misses the date, which the rubric requires for a score of 5.",
    ],
)
def test_the_rubrics_score_mentioned_is_not_the_judges_own(text: str) -> None:
    with pytest.raises(VerdictParseError):
        parse_verdict(text, scale=(1, 5), asked=SCORE)


@pytest.mark.parametrize("asked", [SCORE, None], ids=["score-asked", "unknown"])
@pytest.mark.parametrize(
    "text",
    [
        '{"reasoning": "The answer is right.", "score": 9.3, "status": "PASS"}',
        'The answer is right.\nScore: 9.3\n```json\n{"status": "PASS"}\n```',
    ],
    ids=["one-object", "score-in-prose"],
)
def test_an_off_scale_score_is_not_rescued_by_a_verdict_word(text: str, asked: Asked | None) -> None:
    with pytest.raises(VerdictParseError, match="outside the 0-1 scale"):
        parse_verdict(text, scale=(0, 1), asked=asked)


def test_a_score_rubric_refuses_the_off_scale_score_beside_a_pass() -> None:
    rubric = Score()
    (prompt,) = rubric.prompts(Case.build("Paris.", "Names the capital of France"))
    with pytest.raises(VerdictParseError, match="outside"):
        rubric.parse(prompt, Reply('{"reasoning": "Correct.", "score": 9.3, "status": "PASS"}'))


def test_a_verdict_rubric_still_reads_its_verdict_beside_a_stray_score() -> None:
    # Where a verdict was asked, a score is not the answer: the verdict is (see the PassFail echo tests).
    assert verdict('{"reasoning": "Correct.", "verdict": "pass", "score": 9.3}') == "pass"


# ------------------------------------------------------------------ pass/fail replies


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The student's final answer matches the reference. The reasoning is sound. Correct", "pass"),
        ("The substitution in step 2 drops a sign, so the result differs. Incorrect.", "fail"),
        ("The answer is **incorrect**.", "fail"),
        ("Thus, the response is **correct**.", "pass"),
        ("Therefore, the prediction is incorrect.", "fail"),
        ("The answer provided is not correct.", "fail"),
        ("After checking each step, I find the solution correct.", "pass"),
        ("The model gives 42, as the reference does. The answer is correct", "pass"),
    ],
)
def test_a_verdict_word_at_the_end_in_bold_or_in_a_final_sentence(text: str, expected: str) -> None:
    assert verdict(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Correct. The student's answer is wrong in one step, but the final result matches.", "pass"),
        ("Incorrect\n\nThe student's answer is correct in its first step, but the conclusion does not follow.", "fail"),
        ("No, the proof assumes what it sets out to show, although the algebra is correct.", "fail"),
        ("**Verdict: Incorrect**\n\nAlthough the answer is correct in part, the final value is wrong.", "fail"),
    ],
)
def test_a_verdict_followed_by_an_argument_for_the_other_side_is_the_verdict(text: str, expected: str) -> None:
    assert verdict(text) == expected


def test_a_concluding_sentence_settles_sentences_that_disagree() -> None:
    text = "At first glance the answer is correct. The units are off by a factor of ten.\nTherefore, the answer is incorrect."
    assert verdict(text) == "fail"


def test_sentences_that_disagree_with_no_conclusion_stay_an_error() -> None:
    with pytest.raises(VerdictParseError, match="both correct and incorrect"):
        parse_verdict("The answer is correct. On reflection the answer is incorrect. It cites a source.", asked=VERDICT)


@pytest.mark.parametrize(
    "text", ["Correct.\n\nThe final value is off by one.\n\nIncorrect", "Yes, the answer is incorrect."]
)
def test_a_verdict_word_against_another_one_or_its_own_sentence_is_an_error(text: str) -> None:
    with pytest.raises(VerdictParseError, match="in the same breath"):
        parse_verdict(text, asked=VERDICT)


def test_passfail_reads_a_verdict_in_a_final_sentence() -> None:
    rubric = PassFail()
    (prompt,) = rubric.prompts(Case.build("Paris is the capital of France.", "Names the capital of France"))
    got = rubric.parse(prompt, Reply("It names Paris, which the criteria ask for. Thus, the response is **correct**."))
    assert (got.verdict, got.score) == ("pass", 0.85)
