"""What the tests share: constants, a fake judge conftest for pytester runs, the local OpenAI server.

Tests import these from here (``from helpers import MODEL``), never from conftest.py or from
another test module.
"""

from __future__ import annotations

# A key-shaped canary: it must never appear in a stored verdict, a report or any output.
CANARY_KEY = "sk-canary-7d41c0ffee5ca1ab1e"
# The local OpenAI-compatible server's model, as LiteLLM addresses it.
MODEL = "openai/judge-test"

# A test module with one judged test that passes (at threshold 0.7) against the local server's default
# judge, which scores the SCORE=x it finds in the output.
JUDGED = """
from pytest_llmjudge import assert_judged

def test_refund():
    assert_judged("Returns are accepted within 30 days. SCORE=0.9", "Says returns are accepted within 30 days", threshold=0.7)
"""
# A test module with one test judged by Likert(logprobs=True): its judge must give a score of 3 or more of 5.
LIKERT_LOGPROBS = """
from pytest_llmjudge import assert_judged
from pytest_llmjudge import Likert

def test_refund():
    assert_judged("Returns are accepted within 30 days.", "Says returns are accepted within 30 days",
                  rubric=Likert(logprobs=True), threshold=0.5)
"""

# A judge that needs no network and no LiteLLM: it obeys SCORE=x in the output under test, unless
# FAKE_SCORE_<WORD> (a word in the output) overrides it; GARBLE in the output gets an unreadable reply.
FAKE_CONFTEST = r"""
import json, os, re, pytest

@pytest.fixture(scope="session")
def judge_backend():
    def fake(messages):
        # The case is in the first user message; a re-ask for the format adds later ones.
        text = next(m["content"] for m in messages if m["role"] == "user")
        if "GARBLE" in text:
            return "I would rather not say."
        m = re.search(r"SCORE=([0-9.]+)", text)
        score = float(m.group(1)) if m else 0.5
        for word in re.findall(r"WORD=(\w+)", text):
            score = float(os.environ.get("FAKE_SCORE_" + word, score))
        return json.dumps({"reasoning": f"fake judge gave {score}", "score": score})
    fake.name = "fake-judge"
    return fake
"""
