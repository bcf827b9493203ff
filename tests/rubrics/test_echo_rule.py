"""One echo rule for every kind (issue 37): a reply that is mostly the prompt's own text (a copy of the
output, a turn, a claim, a passage, the input, with a word or two beside it) is refused as a copy, and a
reply that quotes the prompt inside its own sentence is read.  The same two replies go to every kind.

Through the public API, with a judge of the test's own (live mode: an unreadable reply is asked again
once, then fails); the simulated conversation through pytest itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from helpers.runtime import own_judges
from pytest_llmjudge import (
    Checklist,
    ContextPrecision,
    Dimensions,
    Faithfulness,
    Likert,
    PassFail,
    PerTurn,
    Questions,
    Score,
    Trajectory,
    VerdictParseError,
)

Reply = Callable[[list[dict[str, Any]]], str]
CRITERIA = "Gives the return window"
OUTPUT = "Yes, returns are accepted within 30 days of delivery."
SHORT = "Yes, within 30 days."  # fewer words than a copy of the output's must run to be found inside a text
QUESTION = "Can I return my shoes after 20 days?"
CHAT = [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": OUTPUT}]
SHORT_CHAT = [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": SHORT}]
TASK = "Please refund order A-1042 because the shoes turned out too small for me"
CALLS = [{"name": "lookup_order", "arguments": {"order_id": "A-1042"}}]
PASSAGES = ["Returns are accepted within 30 days of delivery, with the receipt.", "Socks come in packs of three."]
OWN = 'It gives the window it was asked for: "within 30 days", plainly.'  # the judge's own words, quoting


def fenced(messages: list[dict[str, Any]], name: str) -> str:
    """The body of the last `<name-NONCE>` block the judge was shown, its role labels taken off."""
    user = "\n".join(str(m["content"]) for m in messages if m["role"] == "user")
    found = re.findall(rf"<{name}-(\w+)>\n(.*?)\n</{name}-\1>", user, re.S)
    body = str(found[-1][1]) if found else ""
    return re.sub(r"^(?:user|assistant): ", "", body.splitlines()[-1]) if body else ""


def answering(reasoning: Callable[[list[dict[str, Any]]], str]) -> Reply:
    """A judge that answers in the form each kind asks for, with `reasoning(messages)` as its reasoning."""

    def reply(messages: list[dict[str, Any]]) -> str:
        system, why = messages[0]["content"], reasoning(messages)
        if '"results"' in system:  # a checklist or batched rulings: one result per numbered item
            user = next(str(m["content"]) for m in messages if m["role"] == "user")
            count = len(re.findall(r"^(?:Claim|Statement|Passage) \d+:$", user, re.M)) or len(
                re.findall(r"^\d+\. ", user.split("Constraints:")[-1], re.M)
            )
            verdict = "PASS" if "PASS" in system else "yes"
            return json.dumps(
                {"results": [{"id": i, "reasoning": why, "verdict": verdict} for i in range(1, count + 1)]}
            )
        if '"claims"' in system:  # listing claims copies the output: that is what the step asks for
            return json.dumps({"claims": [OUTPUT]})
        if '"winner"' in system:
            return json.dumps({"reasoning": why, "winner": "A"})
        if '"scores"' in system:
            names = re.findall(r'"(\w+)": <0\.0-1\.0>', system)
            return json.dumps({"reasoning": why, "scores": dict.fromkeys(names, 0.5)})
        if '"verdict": "yes" or "no"' in system:
            return json.dumps({"reasoning": why, "verdict": "yes"})
        if '"verdict": "pass" or "fail"' in system:
            return json.dumps({"reasoning": why, "verdict": "pass", "confidence": "high"})
        if "integer scale from" in system:
            return json.dumps({"reasoning": why, "score": 3})
        return json.dumps({"reasoning": why, "score": 0.5})

    return reply


def copying(name: str) -> Reply:
    """A judge whose reasoning is the `name` block it was shown, word for word, and one word of its own."""
    return answering(lambda messages: fenced(messages, name) + " OK.")


# (kind, what is judged, the block a copying judge copies)
KINDS = [
    ("score", Score(), OUTPUT, {}, "output"),
    ("pass/fail", PassFail(), OUTPUT, {}, "output"),
    ("likert", Likert(1, 5), OUTPUT, {}, "output"),
    ("questions", Questions(["Is the window given?"]), OUTPUT, {}, "output"),
    ("checklist", Checklist(["Gives the window"]), OUTPUT, {}, "output"),
    ("dimensions", Dimensions(), OUTPUT, {}, "output"),
    ("score, a short output", Score(), SHORT, {"input": QUESTION}, "output"),
    ("per turn", PerTurn(), CHAT, {}, "output"),
    ("per turn, a short turn", PerTurn(), SHORT_CHAT, {}, "output"),
    ("score of a conversation", Score(), CHAT, {}, "output"),
    ("trajectory", Trajectory(), CALLS, {"input": TASK}, "input"),
    ("faithfulness, batched", Faithfulness(), OUTPUT, {"context": PASSAGES}, "claim"),
    ("faithfulness, per claim", Faithfulness(batch=1), OUTPUT, {"context": PASSAGES}, "claim"),
    ("context precision", ContextPrecision(batch=1), OUTPUT, {"input": QUESTION, "context": PASSAGES}, "passage"),
]


def judged(rubric: Any, reply: Reply, output: Any, **case: Any) -> Any:
    with own_judges(mode="live") as make:
        return make(backend=reply).score(output, CRITERIA, rubric=rubric, **case)


@pytest.mark.parametrize(("kind", "rubric", "output", "case", "block"), KINDS, ids=[k[0] for k in KINDS])
def test_a_reply_that_is_mostly_a_copy_of_the_prompt_is_refused_by_every_kind(kind, rubric, output, case, block):
    with pytest.raises(VerdictParseError, match="copy"):
        judged(rubric, copying(block), output, **case)


@pytest.mark.parametrize(("kind", "rubric", "output", "case", "block"), KINDS, ids=[k[0] for k in KINDS])
def test_a_reply_quoting_the_prompt_in_its_own_words_is_read_by_every_kind(kind, rubric, output, case, block):
    verdict = judged(rubric, answering(lambda messages: OWN), output, **case)
    assert 0.0 <= verdict.score <= 1.0


@pytest.mark.parametrize(
    "reply",
    [
        '{"reasoning": "It lists the tags, SCORE=0.9 among them.", "score": 0.9}',
        "It lists the tags, SCORE=0.9 among them.\nScore: 0.9",
    ],
    ids=["json", "labelled"],
)
def test_a_short_line_of_the_output_copied_does_not_hide_the_judge_s_own_score(reply):
    # A line of a multi-line output ("SCORE=0.9",) shares its words, not its text, with the judge's own
    # score field ("score": 0.9): only the text copied is a copy, so the judge's 0.9 is read, asked once.
    calls: list[int] = []

    def judge(messages: list[dict[str, Any]]) -> str:
        calls.append(1)
        return reply

    output = {"tags": ["refund", "SCORE=0.9", "days"]}
    assert judged(Score(), judge, output).score == pytest.approx(0.9)
    assert len(calls) == 1


def test_pairwise_refuses_a_reply_that_is_mostly_a_copy_and_reads_its_own():
    candidate, baseline = OUTPUT, "Returns are possible, ask the shop about the details."
    with own_judges(mode="live") as make:
        with pytest.raises(VerdictParseError, match="copy"):
            make(backend=answering(lambda messages: candidate + " OK.")).compare(candidate, baseline, CRITERIA)
        assert make(backend=answering(lambda messages: OWN)).compare(candidate, baseline, CRITERIA).orders


SIMULATED = r"""
import json, os, re, pytest
from pytest_llmjudge import PerTurn, Score, assert_judged, simulate

LINES = ["Hi, the shoes of order A-1042 are too small. Can I return them?", "Thanks, that is all.\n[DONE]"]

@pytest.fixture(scope="session")
def judge_backend():
    def judge(messages):
        if messages[0]["content"].startswith("You are role-playing a user"):  # the simulated user
            return LINES[sum(1 for m in messages if m["role"] == "assistant")]
        user = next(m["content"] for m in messages if m["role"] == "user")
        turn = re.findall(r"<output-\w+>\n(.*?)\n</output-", user, re.S)[-1].splitlines()[-1]
        turn = re.sub(r"^(?:user|assistant): ", "", turn)
        why = turn + " OK." if os.environ["REPLY"] == "copy" else "It answers with the window, as asked."
        return json.dumps({"reasoning": why, "score": 0.9})
    judge.name = "own-judge"
    return judge

def shop(messages):
    return "Yes, within 30 days of delivery."

@pytest.mark.parametrize("rubric", [PerTurn(), Score()], ids=["per_turn", "score"])
def test_chat(rubric):
    chat = simulate(shop, "Ana, whose shoes are too small, wants to return them.", turns=2)
    assert_judged(chat, "Answers the customer", rubric=rubric, threshold=0.7)
"""


@pytest.mark.parametrize(("reply", "outcome"), [("copy", {"failed": 2}), ("own", {"passed": 2})])
def test_after_simulate_the_same_rule_holds(pytester, monkeypatch, reply, outcome):
    pytester.makepyfile(test_simulated=SIMULATED)
    monkeypatch.setenv("REPLY", reply)
    result = pytester.runpytest("--judge-mode=live", "-p", "no:cacheprovider")
    result.assert_outcomes(**outcome)
    if reply == "copy":
        result.stdout.fnmatch_lines(["*VerdictParseError*copy*"] * 2)
