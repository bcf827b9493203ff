"""A rate limit pauses the judge that asked for it: its model at its api base, no other."""

from __future__ import annotations

from typing import Any

from helpers import MODEL
from helpers.openai_server import Reply, score_from_prompt

TWO_JUDGES = """
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.judge(model="openai/limited")
def test_a_limited_judge():
    assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days")

def test_another_judge():
    assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days")
"""


def test_one_models_retry_after_pauses_only_that_model(pytester, openai_server, monkeypatch):
    def respond(request: dict[str, Any]) -> Reply | str:
        if request["model"] == "limited":
            return Reply(status=429, retry_after=3600, error_message="Rate limit reached for limited")
        return score_from_prompt(request)

    openai_server.set_responder(respond)
    pytester.makepyfile(test_two=TWO_JUDGES)
    monkeypatch.setenv("LLMJUDGE_MODEL", MODEL)  # the marker's model wins over the environment's, not the CLI's
    base = f"--judge-api-base={openai_server.base_url}"
    result = pytester.runpytest(base, "--judge-retries=0", "--judge-mode=live", "--judge-timeout=20")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*BackendError: RateLimitError from openai/limited*"])
    assert "openai/judge-test is rate limited" not in result.stdout.str()
    assert [r["model"] for r in openai_server.requests] == ["limited", "judge-test"]
