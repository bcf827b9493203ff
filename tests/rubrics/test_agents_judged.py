"""PerTurn and Trajectory judged through pytest: recorded by the real LiteLLM client against a local server
(structured output on), then replayed with CI=true and the server stopped, with no call.

The local server's judge is scripted: a keyword-overlap scorer that reads only what each prompt holds
(the fenced turn, and the user message before it).  It cannot show that a real model would score an
irrelevant turn low; it shows that each turn's prompt holds that turn and its history (a prompt with
the wrong turn or history would score differently), that the lowest turn decides under "min", and
that the failure names and quotes it.
"""

from __future__ import annotations

import json
import re

import pytest

from helpers import MODEL
from helpers.openai_server import OpenAIServer
from helpers.verdicts import stored_entries

STOP = {"what", "your", "with", "does", "have", "about", "when", "where", "which", "there", "their", "this", "that"}


def _fenced(text: str, name: str) -> str | None:
    found = re.search(rf"<{name}-([0-9a-f]+)>\n(.*?)\n</{name}-\1>", text, re.S)
    return found.group(2) if found else None


def _terms(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 4 and w not in STOP}


def keyword_judge(request: dict) -> str:
    """Per turn: the share of the last user message's key terms the turn repeats.  Trajectory: 0.9 when
    the steps call the reference's tools in its order, else 0.2."""
    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    output = _fenced(user, "output") or ""
    if "agent's trajectory" in system:
        tools = re.findall(r"^\d+\. (\w+)\(", output, re.M)
        wanted = re.findall(r"^\d+\. (\w+)\(", _fenced(user, "expected") or "", re.M)
        score = 0.9 if tools == wanted else 0.2
        return json.dumps({"reasoning": f"steps {tools}, reference {wanted}", "score": score})
    history = _fenced(user, "input") or ""
    asked = [line for line in history.splitlines() if line.startswith("user: ")][-1]
    wanted_terms = _terms(asked.removeprefix("user: "))
    found = sorted(wanted_terms & _terms(output))
    score = round(len(found) / len(wanted_terms), 2) if wanted_terms else 0.0
    return json.dumps({"reasoning": f"repeats {found or 'nothing'} of the question", "score": score})


TESTS = """
import pytest
from pytest_llmjudge import JudgeError, PerTurn, Trajectory, assert_judged

SUPPORT = [
    {"role": "system", "content": "You are the support assistant of a shoe shop."},
    {"role": "user", "content": "Can I return shoes after twenty days?"},
    {"role": "assistant", "content": "Yes: shoes can be returned within thirty days, so twenty days is fine."},
    {"role": "user", "content": "How do I reset my account password?"},
    {"role": "assistant", "content": "Bananas are a good source of potassium."},
    {"role": "user", "content": "What are your opening hours?"},
    {"role": "assistant", "content": "Our opening hours are nine to six, Monday to Saturday."},
]

# Deliberately irrelevant replies (the DeepEval #2321 complaint: a per-turn metric gave them 0.90+).
IRRELEVANT = [
    ("How do I reset my account password?", "Bananas are a good source of potassium."),
    ("What are your opening hours?", "The mitochondria is the powerhouse of the cell."),
    ("Can I return shoes after twenty days?", "Jupiter has at least ninety five known moons."),
    ("Do you ship parcels to Canada?", "Sure! Here is a poem about autumn leaves falling softly."),
]

AGENT = [
    {"role": "user", "content": "Refund order 7, the shoes were too small."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "lookup_order", "arguments": '{"order_id": 7}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "order 7: shoes, 59 EUR, delivered 5 days ago"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c2", "type": "function", "function": {"name": "refund", "arguments": '{"order_id": 7, "amount": 59}'}}]},
    {"role": "tool", "tool_call_id": "c2", "content": "refund issued"},
    {"role": "assistant", "content": "Your refund of 59 EUR is on its way."},
]
REFERENCE = [{"name": "lookup_order", "arguments": {"order_id": 7}}, {"name": "refund", "arguments": {"order_id": 7}}]


def test_every_turn_answers_the_user():
    assert_judged(SUPPORT, "Each reply answers the user's last message", rubric=PerTurn(), threshold=0.5)


@pytest.mark.parametrize("question, reply", IRRELEVANT)
def test_an_irrelevant_turn_scores_low(judge, question, reply):
    verdict = judge.score([{"role": "user", "content": question}, {"role": "assistant", "content": reply}],
                          "The reply answers the user's question", rubric=PerTurn())
    assert verdict.score <= 0.1, verdict.reasoning


def test_the_mean_of_the_turns(judge):
    verdict = judge.score(SUPPORT, "Each reply answers the user's last message", rubric=PerTurn(aggregate="mean"))
    assert [t["turn"] for t in verdict.details["turns"]] == [2, 4, 6]
    assert len(verdict.keys) == 3


def test_the_agent_looks_the_order_up_before_refunding():
    verdict = assert_judged(AGENT, "Looks the order up before refunding it", input="Refund order 7",
                            rubric=Trajectory(reference=REFERENCE), threshold=0.5)
    assert verdict.score == 0.9 and verdict.rubric == "trajectory"


def test_a_refund_without_a_lookup_fails():
    assert_judged(AGENT[:1] + AGENT[3:], "Looks the order up before refunding it", input="Refund order 7",
                  rubric=Trajectory(reference=REFERENCE), threshold=0.5)


def test_a_message_without_a_role_is_refused_before_any_call():
    with pytest.raises(JudgeError, match=r"output\\[1\\] is not a chat message: it has no role"):
        assert_judged([SUPPORT[1], {"content": "who said this?"}], "Answers", rubric=PerTurn())
"""

SUPPORT_REPLIES = {
    2: "Yes: shoes can be returned within thirty days, so twenty days is fine.",
    4: "Bananas are a good source of potassium.",
    6: "Our opening hours are nine to six, Monday to Saturday.",
}
OUTCOMES = {"passed": 7, "failed": 2}
FAILURES = [
    "*test_every_turn_answers_the_user*",
    "*JudgmentFailed: judged 0.00 < threshold 0.50",
    "*reasoning: lowest turn, output?4? (0.00): repeats nothing of the question",  # (? for fnmatch's [ and ])
    "*lowest turn: output?4?, scored 0.00:",
    "*  > assistant: Bananas are a good source of potassium.",
    "*turn scores: output?2? 0.60, output?4? 0.00, output?6? 1.00",
    "*test_a_refund_without_a_lookup_fails*",
    "*JudgmentFailed: judged 0.20 < threshold 0.50",
]


def test_per_turn_and_trajectory_record_then_replay_offline(pytester, monkeypatch):
    pytester.makepyfile(test_agent=TESTS)
    with OpenAIServer(keyword_judge) as server:
        args = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
        result = pytester.runpytest(*args, "--judge-mode=auto", "--judge-structured=on", "-p", "no:cacheprovider")
        result.assert_outcomes(**OUTCOMES)
        result.stdout.fnmatch_lines(FAILURES)
        requests = list(server.requests)
    # One call per assistant turn: 3 for the conversation, 3 again for its mean (the aggregate is part of
    # the rubric, so of the key), 4 for the irrelevant turns; one per trajectory.
    assert len(requests) == 3 + 3 + 4 + 2
    assert all(r["response_format"]["type"] == "json_schema" for r in requests)
    turns = [r["messages"][-1]["content"] for r in requests if "agent's trajectory" not in r["messages"][0]["content"]]
    # The calls of one judgment go out together: each turn's prompt is found by what it holds.
    judged = {(_fenced(t, "output"), _fenced(t, "input")) for t in turns}
    assert len(turns) == 10 and len(judged) == 3 + 4  # the mean's prompts are the min's
    # Each turn's prompt holds that turn as the output and exactly the turns before it as the input.
    history = ["system: You are the support assistant of a shoe shop.", "user: Can I return shoes after twenty days?"]
    for turn, question in [(2, "How do I reset my account password?"), (4, "What are your opening hours?"), (6, None)]:
        reply = "assistant: " + SUPPORT_REPLIES[turn]
        assert (reply, "\n".join(history)) in judged
        history += [reply, f"user: {question}"]
    assert (
        "assistant: Jupiter has at least ninety five known moons.",
        "user: Can I return shoes after twenty days?",
    ) in judged
    trajectory = next(
        r["messages"][-1]["content"] for r in requests if "agent's trajectory" in r["messages"][0]["content"]
    )
    assert _fenced(trajectory, "output") == (
        '1. lookup_order({"order_id": 7})\n   result: order 7: shoes, 59 EUR, delivered 5 days ago\n'
        '2. refund({"amount": 59, "order_id": 7})\n   result: refund issued'
    )
    assert _fenced(trajectory, "input") == "Refund order 7"
    assert _fenced(trajectory, "expected") == '1. lookup_order({"order_id": 7})\n2. refund({"order_id": 7})'
    assert {e["rubric"] for e in stored_entries(pytester.path)} == {"per_turn", "trajectory"}
    assert len(stored_entries(pytester.path)) == len(requests)

    # The server is stopped: a replay that called out would fail.
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest(*args, "-p", "no:cacheprovider")
    result.assert_outcomes(**OUTCOMES)
    result.stdout.fnmatch_lines(FAILURES)
    result.stdout.fnmatch_lines(["llmjudge: * replayed, 0 live*"])
    assert len(server.requests) == len(requests)


@pytest.mark.parametrize("rubric", ["PerTurn()", "Trajectory()"])
def test_a_rubric_that_reads_messages_refuses_plain_text(pytester, rubric):
    pytester.makepyfile(
        f"""
        import pytest
        from pytest_llmjudge import JudgeError, PerTurn, Trajectory, assert_judged

        def test_it():
            with pytest.raises(JudgeError, match="pass .* as the output"):
                assert_judged("just text", "Answers", rubric={rubric})
        """
    )
    pytester.runpytest("--judge-mode=replay", "-p", "no:cacheprovider").assert_outcomes(passed=1)


INNER_KINDS = """
import json, pytest
from pytest_llmjudge import PassFail, PerTurn, Questions, assert_judged

CHAT = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello! GOOD"},
    {"role": "user", "content": "And?"},
    {"role": "assistant", "content": "Whatever. BAD"},
]

@pytest.fixture(scope="session")
def judge_backend():
    def fake(messages):
        system, user = messages[0]["content"], messages[-1]["content"]
        good = "GOOD" in user.rsplit("Output to evaluate:", 1)[1]
        if '"verdict": "pass" or "fail"' in system:
            return json.dumps({"reasoning": "r", "verdict": "pass" if good else "fail", "confidence": "high"})
        score = 0.9 if good else (0.6 if "Question: Is it polite?" in user else 0.1)
        return json.dumps({"reasoning": "r", "score": score})
    fake.name = "fake-judge"
    return fake

def test_pass_fail_per_turn(judge):
    verdict = judge.score(CHAT, "Replies well", rubric=PerTurn(PassFail()))
    assert verdict.score == 0.0 and [t["score"] for t in verdict.details["turns"]] == [1.0, 0.0]

def test_questions_per_turn(judge):
    verdict = judge.score(CHAT, "Replies well", rubric=PerTurn(Questions(["Is it polite?", "Is it on topic?"]), "mean"))
    assert len(verdict.keys) == 4  # two questions for each of two turns
    assert [t["score"] for t in verdict.details["turns"]] == [0.9, 0.35]
    assert verdict.score == 0.625 and verdict.details["lowest_turn"] == 3

@pytest.mark.parametrize("bad", ["PerTurn(PerTurn())", "PerTurn(aggregate='max')", "PerTurn(rubric='score')"])
def test_bad_definitions(bad):
    with pytest.raises(Exception, match="PerTurn|rubric must be a Rubric"):
        eval(bad)
"""


def test_per_turn_judges_each_turn_with_any_kind_and_refuses_bad_definitions(pytester):
    pytester.makepyfile(test_inner=INNER_KINDS)
    pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider").assert_outcomes(passed=5)
