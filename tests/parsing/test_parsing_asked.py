"""Reading real judges knowing what was asked: verdict words where a verdict was asked, and nowhere else;
score markers of other judges and languages; thinking blocks; self-corrections; per-item lists."""

from __future__ import annotations

import pytest

from pytest_llmjudge.errors import VerdictParseError
from pytest_llmjudge.parsing import parse_verdict
from pytest_llmjudge.parsing.funnel import Asked
from pytest_llmjudge.rubrics import Case, Reply
from pytest_llmjudge.rubrics.passfail import PassFail
from pytest_llmjudge.rubrics.score import Score

VERDICT = Asked(verdict=True)
SCORE = Asked(verdict=False)
TEN = (1, 10)


def verdict_of(text: str, asked: Asked | None = VERDICT) -> str | None:
    return parse_verdict(text, asked=asked).verdict


def raises(text: str, scale: tuple[float, float] = (0, 1), asked: Asked | None = None) -> None:
    with pytest.raises(VerdictParseError):
        parse_verdict(text, scale=scale, asked=asked)


# ------------------------------------------------------------------ verdict words count where a verdict was asked


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Verdict: correct", "pass"),
        ("The proof skips a case.\nAnswer: incorrect", "fail"),
        ("**Final verdict:** valid", "pass"),
        ("Decision: invalid — the date is wrong.", "fail"),
        ("Judgment: true", "pass"),
        ("incorrect\n\nThe student's answer uses the wrong formula.", "fail"),
        ("The student's answer is correct. The substitution is right.", "pass"),
        ("The response is incorrect because it names the wrong year.", "fail"),
    ],
)
def test_verdict_words_count_where_a_verdict_was_asked(text: str, verdict: str) -> None:
    assert verdict_of(text) == verdict


@pytest.mark.parametrize("text", ["Verdict: correct", "Answer: yes", "The answer is correct.", "Yes"])
def test_verdict_words_are_no_score_where_a_score_was_asked(text: str) -> None:
    raises(text, asked=SCORE)


def test_the_last_explicit_verdict_follows_a_self_correction() -> None:
    text = (
        "Answer: incorrect\n\nThe domain condition looks wrong at first.\n...\n"
        "On checking again, the verdict above was a mistake: every condition holds.\nVerdict: correct"
    )
    assert verdict_of(text) == "pass"


def test_sentence_verdicts_that_disagree_with_no_label_raise() -> None:
    with pytest.raises(VerdictParseError, match="both correct and incorrect"):
        parse_verdict("The answer is correct. On reflection the answer is incorrect.", asked=VERDICT)


def test_a_verdict_rubric_needs_a_verdict_not_a_number() -> None:
    raises("10\n\n    10\n\n    10", asked=VERDICT)


def test_passfail_reads_a_real_verdict_word_reply() -> None:
    rubric = PassFail()
    (prompt,) = rubric.prompts(Case.build("Paris is the capital of France.", "Names the capital of France"))
    got = rubric.parse(prompt, Reply("The response names Paris.\nVerdict: correct"))
    assert (got.verdict, got.score) == ("pass", 0.85)


def test_a_score_rubric_refuses_a_yes_where_it_asked_for_a_score() -> None:
    rubric = Score()
    (prompt,) = rubric.prompts(Case.build("Paris.", "Names the capital of France"))
    with pytest.raises(VerdictParseError):
        rubric.parse(prompt, Reply("Yes"))


def test_without_asked_the_corpus_vocabulary_stays() -> None:
    assert verdict_of("The output is on topic.\nY", asked=None) == "pass"
    raises("Verdict: correct")  # a correctness word alone is no verdict when nothing says one was asked


# ------------------------------------------------------------------ score markers of real judges


@pytest.mark.parametrize(
    ("text", "scale", "score"),
    [
        ("したがって、評価は[[1]]です。", TEN, 0.0),
        ("全体的に良い説明でした。評価：[[8]]", TEN, 7 / 9),
        ("...설명이 부족합니다. \n\n[결과] 3", (1, 5), 0.5),
        ("...the reforms are realistic.\n\nRESULT 3", (1, 5), 0.5),
        ("The answer is thorough.\n\n[[Rating: 8]]", TEN, 7 / 9),
        ("Overall very good.\n\n[[Rating: [[9]]]]", TEN, 8 / 9),
        ("综合考虑，给出的评分是：\n\n[[Rating: [3]]]", TEN, 2 / 9),
    ],
)
def test_score_markers_of_real_judges(text: str, scale: tuple[float, float], score: float) -> None:
    assert parse_verdict(text, scale=scale).score == pytest.approx(score, abs=1e-6)


@pytest.mark.parametrize(
    "text", ["Rating: [[5, 1, 3]]", "**Rating: [[8.5], [8.2], [7.8]]**", "Rating: [[5], [1], [2]]"]
)
def test_several_ratings_in_one_bracket_are_no_single_score(text: str) -> None:
    raises("An 8.5 rating balances these strengths; a lower rating of 7.8 fits the third.\n\n" + text, TEN)


# ------------------------------------------------------------------ reasoning models


def test_a_thinking_block_that_never_closes_is_cut_off() -> None:
    with pytest.raises(VerdictParseError, match="never closed"):
        parse_verdict("<think>\nThe answer looks right. Score: 4? Maybe 5.\nLet me check the", scale=(1, 5))


def test_the_answer_after_a_closed_thinking_block_counts() -> None:
    text = "<think>\nScore: 2 at first sight, but the units are fine.\n</think>\n\nScore: 5"
    assert parse_verdict(text, scale=(1, 5)).score == 1.0


# ------------------------------------------------------------------ fields and tags named otherwise


@pytest.mark.parametrize(
    ("text", "asked", "score", "verdict"),
    [
        ('{"value": 0.8, "reason": "Grounded in the context."}', None, 0.8, None),
        ('{"reasoning": "Meets every criterion.", "value": "Y", "score": 1}', VERDICT, 1.0, "pass"),
        ('{"reasoning": "Misses the date.", "value": "N"}', VERDICT, 0.0, "fail"),
        ('{"status": "pass", "reason": "All checks hold."}', None, 1.0, "pass"),
        ('{"is_valid": false, "reason": "Wrong schema."}', VERDICT, 0.0, "fail"),
        ('{"reasoning": "Answers it.", "score": true}', VERDICT, 1.0, "pass"),
        ('{"verdict": "incorrect", "reasoning": "Wrong year."}', VERDICT, 0.0, "fail"),
    ],
)
def test_json_fields_named_otherwise(text: str, asked: Asked | None, score: float, verdict: str | None) -> None:
    got = parse_verdict(text, asked=asked)
    assert (got.score, got.verdict) == (score, verdict)


@pytest.mark.parametrize("text", ['{"verdict": "yes"}', '{"score": true}', '{"verdict": "correct"}'])
def test_json_verdict_words_are_no_answer_where_a_score_was_asked(text: str) -> None:
    raises(text, asked=SCORE)


def test_score_tags_and_a_tag_named_after_the_rubric() -> None:
    assert parse_verdict("<evaluation_score>0.7</evaluation_score>").score == 0.7
    assert parse_verdict("Reasoning first.\n<rating>4</rating>", scale=(1, 5)).score == 0.75
    named = Asked(fields=("reasoning", "helpfulness"))
    assert parse_verdict("<helpfulness>4</helpfulness>", scale=(1, 5), asked=named).score == 0.75
    raises("<helpfulness>4</helpfulness>", (1, 5))  # a tag no one asked for is no score


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("답변이 정확합니다.\n점수: 8", 7 / 9),
        ("回答は正確です。\nスコア: 8", 7 / 9),
        ("回答は正確です。\n評価: 8", 7 / 9),
        ("回答准确。\n评分：8", 7 / 9),
        ("Die Antwort ist korrekt.\nBewertung: 8", 7 / 9),
        ("La respuesta es correcta.\nPuntuación: 8", 7 / 9),
        ("La réponse est correcte.\nNote : 8/10", 7 / 9),
    ],
)
def test_score_labels_in_other_languages(text: str, score: float) -> None:
    assert parse_verdict(text, scale=TEN).score == pytest.approx(score, abs=1e-6)


def test_an_english_note_is_no_score() -> None:
    raises("Note: 2 of the claims are unsupported.", TEN)


def test_a_score_in_a_sentence() -> None:
    assert parse_verdict("I would rate it 7 out of 10.", scale=(0, 10)).score == 0.7


def test_an_explicit_correction_of_a_score_follows_the_last_one() -> None:
    text = "Score: 3\nWait, the score above was a mistake: the answer covers every step.\nScore: 5"
    assert parse_verdict(text, scale=(1, 5)).score == 1.0
    raises("Score: 3/10\nrevised\nScore: 7/10", (0, 10))  # no explicit correction: nothing ranks them
