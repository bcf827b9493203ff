"""Issue 38: never the opposite of what the judge said, and templates that declare their answers.

One test per rule, each through the public readers (`parse_preference`, `parse_verdict`, `parse_json_object`), on the
issue's forms and on others of their kind.
"""

from __future__ import annotations

import pytest

from pytest_llmjudge import Answer
from pytest_llmjudge.errors import VerdictParseError
from pytest_llmjudge.parsing import parse_json_object, parse_preference, parse_verdict
from pytest_llmjudge.parsing.funnel import Asked

NUMBERS = Asked(answer=Answer({"1": "first", "2": "second", "3": "tie"}))
VERDICT = Asked(verdict=True)
SCORE = Asked(verdict=False)


def winner(text: str, asked: Asked | None = None) -> str:
    return parse_preference(text, asked).winner


def no_winner(text: str, asked: Asked | None = None) -> VerdictParseError:
    with pytest.raises(VerdictParseError) as info:
        parse_preference(text, asked)
    return info.value


# ---------------------------------------------------------------- 1. a side named with what points away from it


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Final verdict: Response B is worse than Response A.", "A"),
        ("WINNER: B is inferior", "A"),
        ("Verdict: Output (a) is weaker than Output (b).", "B"),
        ("My final verdict: Assistant A is less helpful than Assistant B.", "B"),
        ("Verdict: A, because B is worse.", "A"),  # another side named first: the comparison is about it
        ("Final decision: Assistant B is less accurate than Assistant A.", "A"),
    ],
)
def test_a_labelled_side_that_is_worse_is_read_for_the_other_side(text: str, expected: str) -> None:
    assert winner(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Verdict: B is not better than A",
        "My final verdict: A is not the better one.",
        "Final verdict: Response B isn't superior to Response A.",
        "Verdict: A is no better than B.",
        "Final verdict: Assistant A is not worse than Assistant B.",  # not worse: as good, or better
        "Verdict: Assistant A does not win.",
    ],
)
def test_a_labelled_side_with_a_negation_is_no_verdict(text: str) -> None:
    assert "negation" in str(no_winner(text))


@pytest.mark.parametrize(
    "text",
    [
        "B is worse than A.",  # no label: rightly an error
        "Therefore, Response A is not better than Response B.",
        "I looked at both. Response B is better in tone.\n\nTherefore, Response B is not better than Response A.",
    ],
)
def test_a_sentence_that_only_points_away_names_no_winner(text: str) -> None:
    no_winner(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("したがって、アシスタント2の回答がアシスタント1の回答よりも優れていると評価します。", "B"),
        ("したがって、アシスタント1の回答がアシスタント2の回答より優れていると評価します。", "A"),
        ("따라서 어시스턴트 B가 어시스턴트 A보다 더 낫습니다.", "B"),
        ("因此，助手B比助手A更好。", "B"),
    ],
)
def test_the_response_compared_against_is_never_the_winner(text: str, expected: str) -> None:
    assert winner(text) == expected


@pytest.mark.parametrize(
    "text",
    ["したがって、アシスタント1の回答は優れていません。", "したがって、アシスタント2の回答がより有用とは言えない。"],
)
def test_a_japanese_comparison_negated_after_it_is_no_win(text: str) -> None:
    no_winner(text)


@pytest.mark.parametrize(
    "text",
    [
        "両方の回答はほぼ同等であり、甲乙つけがたいです。したがって、3を出力します。",
        "したがって、どちらのアシスタントも同等に優れたパフォーマンスを示しています。",
        "Answer: Same",
        "Verdict: Equal",
        "同等",
        "引き分け",
    ],
)
def test_ties_in_the_default_vocabulary(text: str) -> None:
    assert winner(text) == "tie"


def test_a_tie_word_negated_is_no_tie() -> None:
    no_winner("したがって、両者は同等ではありません。")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Answer: Assistant 1", "A"),
        ("Answer: Response 2", "B"),
        ("Output (b)", "B"),
        ("アシスタント2", "B"),
        ("以上の理由から、アシスタント1の回答を選びます。", "A"),
        ("したがって、私の評価はアシスタント2が高いです。", "B"),
        ("したがって、アシスタント1の回答がより詳細で有用であると評価します。", "A"),
    ],
)
def test_names_and_choices_in_the_default_vocabulary(text: str, expected: str) -> None:
    assert winner(text) == expected


# ---------------------------------------------------------------- 2. a template's own answer words (pairwise)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Output: 2", "B"),
        ("Choice: 3", "tie"),
        ("I would choose:\n\n1\n\nIt answers every part of the question.", "A"),
        ("Both are fine, but the second is clearer.\n2", "B"),
        ("以上の理由から、アシスタント1の回答を選択します。1", "A"),
        ("…ほぼ同等であり…したがって、3を出力します。", "tie"),
        ("２", "B"),  # a full-width digit, as judges of Japanese prompts write it
        ("最後の行の出力: 2", "B"),
        ("I choose 1, since it cites the policy.", "A"),
        ("Answer: 2\n\nFinal answer: 1", "A"),  # several disagree: the one marked final
    ],
)
def test_declared_words_are_read_where_the_judge_answers_with_them(text: str, expected: str) -> None:
    assert winner(text, NUMBERS) == expected


@pytest.mark.parametrize(
    "text",
    [
        "1. The first answer lists the cities.\n2. The second does not.",  # list markers
        "The answer 3 is wrong for both.",
        "Accuracy: 1/5 for the first, 2/5 for the second.",
        "Output: 2\n\nOutput: 1",  # disagree, none final
        "Assistant 1 is better.\n\n2",  # the answer word contradicts the concluding sentence
    ],
)
def test_declared_words_elsewhere_or_in_conflict_are_no_verdict(text: str) -> None:
    no_winner(text, NUMBERS)


def test_declared_words_are_not_read_without_the_declaration() -> None:
    no_winner("Output: 2")
    no_winner("Both are fine.\n\n1")


def test_a_declaration_takes_letters_too() -> None:
    asked = Asked(answer=Answer({"A": "second", "B": "first"}))
    assert winner("Final Judgment: \\boxed{A}", asked) == "B"


@pytest.mark.parametrize(
    ("words", "error"),
    [
        ({"1": "winner"}, "use one of first, second, tie"),
        ({"": "first"}, "non-empty"),
    ],
)
def test_a_bad_declaration_says_what_is_wrong(words: dict[str, str], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        Answer(words).meanings({"first": "A", "second": "B", "tie": "tie"})


# ---------------------------------------------------------------- 3. pass/fail: retracted, conditional, disagreeing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("VERDICT: PASS. No wait, FAIL.", "fail"),
        ("Verdict: PASS (no, FAIL)", "fail"),
        ("Verdict: FAIL. Actually, PASS: the citation is there.", "pass"),
        ("Judgement: NO\n... actually Judgement: YES", "pass"),
        ("Verdict: FAIL → actually PASS", "pass"),
        ("Verdict: PASS. Hmm, actually no: FAIL.", "fail"),
        ("Verdict: PASS. No issues were found.", "pass"),  # "No" that opens a sentence takes nothing back
        ("Verdict: PASS. Actually, the steps are fine.", "pass"),
        ("Verdict: PASS? Not quite — FAIL.", "fail"),
        ("Verdict: FAIL. In fact, PASS.", "pass"),
        ("Verdict: PASS (the output must PASS or FAIL)", "pass"),  # the vocabulary, not a second verdict
        ("Verdict: PASS, it does not FAIL any check", "pass"),
    ],
)
def test_a_verdict_taken_back_on_its_line_is_replaced_by_the_one_after(text: str, expected: str) -> None:
    assert parse_verdict(text, asked=VERDICT).verdict == expected


@pytest.mark.parametrize(
    "text",
    [
        "Result: would PASS if it cited sources, but it does not",
        "Verdict: PASS if the dates are fixed.",
        "It could PASS once the second step is shown.",
        "VERDICT: PASS. No wait.",
        "Verdict: conditional PASS",
        "Verdict: PASS, provided the citation is added",
    ],
)
def test_a_verdict_under_a_condition_or_taken_back_for_nothing_is_no_verdict(text: str) -> None:
    with pytest.raises(VerdictParseError):
        parse_verdict(text, asked=VERDICT)


def test_a_second_verdict_on_the_labels_line_is_a_disagreement() -> None:
    with pytest.raises(VerdictParseError, match="disagree"):
        parse_verdict("Verdict: PASS, but really FAIL", asked=VERDICT)


def test_verdict_labels_that_disagree_fail_closed_unless_one_is_final() -> None:
    with pytest.raises(VerdictParseError, match="none is marked final"):
        parse_verdict("Verdict: PASS\nThe dates are wrong.\nVerdict: FAIL", asked=VERDICT)
    assert parse_verdict("Draft verdict: PASS\nFinal verdict: FAIL", asked=VERDICT).verdict == "fail"


# ---------------------------------------------------------------- 4. pass/fail in tags and boxes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "<explanation><thinking>Check 12*7.</thinking><answer>84</answer> matches the reference.</explanation>\n"
            "<is_correct>true</is_correct>",
            "pass",
        ),
        ("<is_correct>false</is_correct>\n<explanation>The year is wrong.</explanation>", "fail"),
        ("<reasoning>Off by one.</reasoning><verdict>FAIL</verdict>", "fail"),
        ("<analysis>It holds.</analysis>\n<answer>correct</answer>", "pass"),  # <answer> as the last tag
        ("Analysis step by step ...\n\nFinal Judgment: \\boxed{A} - CORRECT", "pass"),
        ("Analysis step by step ...\n\nFinal Judgment: \\boxed{B} - INCORRECT", "fail"),
    ],
)
def test_verdict_tags_and_boxed_verdicts(text: str, expected: str) -> None:
    assert parse_verdict(text, asked=VERDICT).verdict == expected


@pytest.mark.parametrize(
    "text",
    [
        "Final Judgment: \\boxed{C} - INCOMPLETE",
        "<answer>correct</answer>\n<explanation>The student says so.</explanation>",  # not the last tag
        "<is_correct>true</is_correct>\n<is_correct>false</is_correct>",
    ],
)
def test_tags_that_are_not_the_verdict_or_disagree_are_no_verdict(text: str) -> None:
    with pytest.raises(VerdictParseError):
        parse_verdict(text, asked=VERDICT)


def test_declared_verdict_words_tags_and_labels() -> None:
    letters = Asked(verdict=True, answer=Answer({"A": "pass", "B": "fail"}))
    assert parse_verdict("B", asked=letters).verdict == "fail"
    assert parse_verdict("Final Judgment: \\boxed{A}", asked=letters).verdict == "pass"
    with pytest.raises(VerdictParseError):
        parse_verdict("C", asked=letters)
    tagged = Asked(verdict=True, answer=Answer(tag="grade_ok"))
    assert parse_verdict("<grade_ok>no</grade_ok>", asked=tagged).verdict == "fail"
    labelled = Asked(verdict=True, answer=Answer({"OK": "pass", "NOT OK": "fail"}, label="Ruling"))
    assert parse_verdict("The steps hold.\nRuling: OK", asked=labelled).verdict == "pass"
    assert parse_verdict("Step 2 is wrong.\nRuling: NOT OK.", asked=labelled).verdict == "fail"


# ---------------------------------------------------------------- 5. scores under the metric's own name


@pytest.mark.parametrize(
    ("text", "raw"),
    [('{"relevancy": 4}', 4), ('{"readability": 3}', 3), ('{"reasoning": "clear", "coherence": 2}', 2)],
)
def test_a_whole_json_objects_one_numeric_field_on_the_scale_is_the_score(text: str, raw: float) -> None:
    assert parse_verdict(text, scale=(1, 4), asked=SCORE).raw_score == raw


def test_the_replys_only_object_after_prose_or_in_a_fence_counts_too() -> None:
    assert parse_verdict('Here is my rating:\n{"relevancy": 4}', scale=(1, 4), asked=SCORE).raw_score == 4
    assert parse_verdict('```json\n{"readability": 3}\n```', scale=(1, 4), asked=SCORE).raw_score == 3


@pytest.mark.parametrize(
    "text",
    [
        '{"relevancy": 7}',
        '{"relevancy": 4, "readability": 3}',
        '{"confidence": 3}',
        '{"relevancy": true}',
        '{"answer": 2}',  # the graded answer, not a score
        'Two ratings: {"a": 2} and {"b": 3}',
    ],
)
def test_other_numeric_objects_are_no_score(text: str) -> None:
    with pytest.raises(VerdictParseError):
        parse_verdict(text, scale=(1, 4), asked=SCORE)


def test_a_declared_field_or_label_is_read_first() -> None:
    field = Asked(verdict=False, answer=Answer(field="relevancy"))
    assert parse_verdict('{"relevancy": 4, "readability": 2}', scale=(1, 4), asked=field).raw_score == 4
    label = Asked(verdict=False, answer=Answer(label="Total rating"))
    assert parse_verdict("Evaluation: thin.\nTotal rating: 2", scale=(1, 4), asked=label).raw_score == 2
    assert parse_verdict("Evaluation: fine.\nTotal rating: 3", scale=(1, 4), asked=SCORE).raw_score == 3


# ---------------------------------------------------------------- 6. several verdict objects


def test_a_draft_and_a_final_object_read_the_final_one() -> None:
    assert parse_verdict('Draft: {"verdict": "pass"}\nFinal: {"verdict": "fail"}', asked=VERDICT).verdict == "fail"
    text = 'Draft:\n{"results": [{"id": 1, "verdict": "yes"}, {"id": 2, "verdict": "yes"}]}\n' + (
        'Final:\n{"results": [{"id": 1, "verdict": "yes"}, {"id": 2, "verdict": "no"}]}'
    )
    obj = parse_json_object(text)
    assert obj is not None and obj["results"][1]["verdict"] == "no"


@pytest.mark.parametrize(
    "text",
    [
        'Initial verdict: {"verdict": "pass"}\nRevised verdict: {"verdict": "fail"}',
        'Attempt 1: {"score": 0.9}\nAttempt 2: {"score": 0.4}',
    ],
)
def test_disagreeing_drafts_without_a_final_one_fail_closed(text: str) -> None:
    with pytest.raises(VerdictParseError, match="none is marked final|none marked final"):
        parse_verdict(text, asked=Asked())


def test_json_winners_that_disagree_fail_closed_unless_one_is_final() -> None:
    no_winner('{"winner": "A"}\n{"winner": "B"}')
    assert winner('Draft: {"winner": "A"}\nFinal: {"winner": "B"}') == "B"


def test_unmarked_objects_keep_the_first_as_the_shared_corpus_says() -> None:
    assert parse_verdict('{"score": 1.0}\n{"score": 0.1}').score == 1.0


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"verdict": "Yes"}\n```\n```json\n{"verdict": "No"}\n```',  # evalscope's own test raises on it
        '{"reasoning": "cites the policy", "passed": true}\n\nOn reflection:\n{"reasoning": "misreads it", "passed": false}',
        'Verdict object: {"verdict": "fail", "reason": "wrong date"} and then {"verdict": "pass", "reason": "ok"}',
    ],
)
def test_unmarked_verdict_objects_that_disagree_fail_closed(text: str) -> None:
    # Scores of unmarked objects keep the first (the shared corpus's source-defined policy); a pass and a
    # fail of the judge's own with nothing marking the answer could be read as the opposite of it.
    with pytest.raises(VerdictParseError, match="disagree"):
        parse_verdict(text, asked=VERDICT)


def test_unmarked_verdict_objects_that_agree_still_read() -> None:
    reply = parse_verdict('{"verdict": "pass", "score": 0.9}\n{"verdict": "pass", "score": 0.8}', asked=VERDICT)
    assert reply.verdict == "pass"
