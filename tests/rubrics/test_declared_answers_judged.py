"""Issue 38 through pytest: a judge's reply, returned as it is by a `judge_backend`, read by `judge.compare` and by a
`PassFail` judgment; never as the opposite of what it says, and in a template's declared vocabulary."""

from __future__ import annotations

import json

import pytest

# The judge answers with reply number n of REPLIES for a prompt whose criteria say CASE=n, as it is, in both orders
# of a comparison (the reply itself is never in the prompt, where it would be a copy).
CONFTEST = r"""
import json, re, pytest

REPLIES = json.loads(%r)

@pytest.fixture(scope="session")
def judge_backend():
    def as_it_is(messages):
        user = next(m["content"] for m in messages if m["role"] == "user")
        return REPLIES[int(re.search(r"CASE=(\d+)", user).group(1))]
    as_it_is.name = "as-it-is"
    return as_it_is
"""

COMPARE = """
import json, pytest
from pytest_llmjudge import Pairwise

NUMBERS = Pairwise("{criteria}\\n1: {response_a}\\n2: {response_b}\\nOutput 1, 2 or 3.",
                   answer={"1": "first", "2": "second", "3": "tie"})

@pytest.mark.parametrize("case, preferred", %s)
def test_compare(judge, case, preferred):
    comparison = judge.compare("candidate text", "baseline text", f"CASE={case}", rubric=NUMBERS)
    # The same reply in both orders: the first-order reading, then the swapped one.
    first, second = (o.preferred for o in comparison.orders)
    assert (first, second) == preferred, comparison.failure_message()

@pytest.mark.parametrize("case", %s)
def test_compare_fails_closed(judge, case):
    from pytest_llmjudge import VerdictParseError
    with pytest.raises(VerdictParseError):
        judge.compare("candidate text", "baseline text", f"CASE={case}", rubric=NUMBERS)
"""

PASSFAIL = """
import pytest
from pytest_llmjudge import Answer, PassFail, VerdictParseError

TAGGED = PassFail(template="{criteria}\\nIs this right? {output}\\nAnswer in <is_correct> tags.",
                  answer=Answer({"true": "pass", "false": "fail"}, tag="is_correct"))

@pytest.mark.parametrize("case, verdict", %s)
def test_passfail(judge, case, verdict):
    got = judge.score("The answer is 84.", f"CASE={case}", rubric=PassFail())
    assert got.verdict == verdict, got.reasoning

@pytest.mark.parametrize("case", %s)
def test_passfail_fails_closed(judge, case):
    with pytest.raises(VerdictParseError):
        judge.score("The answer is 84.", f"CASE={case}", rubric=PassFail())

def test_declared_tag(judge):
    got = judge.score("The answer is 84.", "CASE=%d", rubric=TAGGED)
    assert got.verdict == "fail"
"""


def run(pytester: pytest.Pytester, tests: str, replies: list[str]) -> pytest.RunResult:
    pytester.makeconftest(CONFTEST % json.dumps(replies))
    pytester.makepyfile(test_it=tests)
    return pytester.runpytest("--judge-mode=live", "-p", "no:randomly", "-p", "no:cacheprovider")


def test_compare_reads_the_side_the_judge_favours_and_its_declared_numbers(pytester: pytest.Pytester) -> None:
    # In the candidate-first order A is the candidate; in the baseline-first order A is the baseline.
    read = [
        ("Final verdict: Response B is worse than Response A.", ("candidate", "baseline")),
        ("WINNER: B is inferior", ("candidate", "baseline")),
        ("Output: 2", ("baseline", "candidate")),
        ("Choice: 3", ("tie", "tie")),
        ("I would choose:\n\n1\n\nIt covers every step.", ("candidate", "baseline")),
        ("以上の理由から、アシスタント1の回答を選択します。1", ("candidate", "baseline")),
        ("…ほぼ同等であり…したがって、3を出力します。", ("tie", "tie")),
        (
            "したがって、アシスタント2の回答がアシスタント1の回答よりも優れていると評価します。",
            ("baseline", "candidate"),
        ),
        ("Answer: Same", ("tie", "tie")),
    ]
    refused = ["Verdict: B is not better than A", "My final verdict: A is not the better one.", "B is worse than A."]
    replies = [r for r, _ in read] + refused
    tests = COMPARE % (repr([(i, p) for i, (_, p) in enumerate(read)]), repr(list(range(len(read), len(replies)))))
    result = run(pytester, tests, replies)
    result.assert_outcomes(passed=len(read) + len(refused))


def test_a_passfail_judgment_reads_tags_boxes_and_takes_no_retracted_verdict(pytester: pytest.Pytester) -> None:
    read = [
        ("VERDICT: PASS. No wait, FAIL.", "fail"),
        ("Verdict: PASS (no, FAIL)", "fail"),
        ("<explanation><thinking>x</thinking><answer>84</answer></explanation>\n<is_correct>true</is_correct>", "pass"),
        ("Analysis ...\n\nFinal Judgment: \\boxed{B} - INCORRECT", "fail"),
        ('Draft: {"verdict": "pass"}\nFinal: {"verdict": "fail"}', "fail"),
    ]
    refused = ["Result: would PASS if it cited sources, but it does not", "Final Judgment: \\boxed{C} - INCOMPLETE"]
    # The template's own tag, declared: its false is a fail even though the reply's <answer> is right.
    tagged = "<explanation><thinking>12*7</thinking><answer>84</answer> is 12*7.</explanation>\n<is_correct>false</is_correct>"
    replies = [r for r, _ in read] + refused + [tagged]
    cases = repr([(i, v) for i, (_, v) in enumerate(read)]), repr(list(range(len(read), len(read) + len(refused))))
    tests = PASSFAIL % (*cases, len(replies) - 1)
    result = run(pytester, tests, replies)
    result.assert_outcomes(passed=len(read) + len(refused) + 1)


def test_a_declaration_is_checked_where_the_rubric_is_defined() -> None:
    from pytest_llmjudge import Answer, Pairwise, PassFail, RubricError, Template

    with pytest.raises(RubricError, match="describes your own template"):
        Pairwise(answer={"1": "first", "2": "second"})
    with pytest.raises(RubricError, match="use one of first, second, tie"):
        Pairwise("{response_a} {response_b}", answer={"1": "winner"})
    with pytest.raises(RubricError, match="answer words"):
        Pairwise("{response_a} {response_b}", answer=Answer(tag="choice"))
    with pytest.raises(RubricError, match="use one of pass, fail"):
        PassFail(template="{output}", answer={"A": "first"})
    with pytest.raises(RubricError, match="not words"):
        Template("{output}", answer=Answer({"A": "pass"}))


def test_a_declaration_joins_the_key_and_only_a_declaring_rubrics_key() -> None:
    from pytest_llmjudge import Answer, Pairwise, PassFail, Template

    assert "answer" not in PassFail().parameters() and "template" not in PassFail().parameters()
    assert Template("{output}").parameters() == {"text": "{output}", "scale": [0, 1]}
    assert Pairwise("{response_a} {response_b}").parameters()["answer"] == "labels"
    declared = Pairwise("{response_a} {response_b}", answer={"1": "first", "2": "second", "3": "tie"})
    assert declared.parameters()["answer"] == {"words": {"1": "first", "2": "second", "3": "tie"}}
    field = Template("{output}", scale=(1, 4), answer=Answer(field="relevancy"))
    assert field.parameters()["answer"] == {"field": "relevancy"} and field.reply_schema() is None


def test_a_batched_faithfulness_ruling_reads_the_final_object_not_the_draft() -> None:
    # Issue 38: the first of two objects won, so a draft that ruled both claims supported scored 1.0.
    from helpers.rag_judge import rag_backend
    from helpers.runtime import own_judges
    from pytest_llmjudge import Faithfulness

    def rulings(*verdicts: str) -> str:
        return json.dumps({"results": [{"id": i, "reasoning": "r", "verdict": v} for i, v in enumerate(verdicts, 1)]})

    def judge(messages: list[dict[str, str]]) -> str:
        if '"claims"' in messages[0]["content"]:
            return rag_backend(messages)  # the output's two sentences, as claims
        return f"Draft:\n{rulings('yes', 'yes')}\n\nFinal:\n{rulings('yes', 'no')}"

    with own_judges(mode="live") as make:
        verdict = make(backend=judge).score(
            "Refunds take 5 days. Gift cards never expire.", "Grounded", rubric=Faithfulness(), context=["Refunds."]
        )
    assert verdict.score == 0.5
