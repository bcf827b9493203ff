"""A logprobs rubric on a judge that refuses log-probabilities: asked again plainly, said once, replayed alike.

LiteLLM refuses them before sending for some providers (see test_providers) and for OpenAI reasoning
models; the OpenAI-shaped server here also refuses them itself, as an OpenAI model without logprobs
does (HTTP 400 "Unsupported parameter").
"""

from __future__ import annotations

import json

from helpers import CANARY_KEY, LIKERT_LOGPROBS, MODEL
from helpers.openai_server import Reply
from helpers.providers import ReasoningServer, Turn

REFUSAL = Reply(status=400, error_message="Unsupported parameter: 'logprobs' is not supported with this model.")


def test_server_refusing_logprobs_gets_a_plain_call_and_the_verdict_replays(pytester, openai_server):
    openai_server.enqueue(REFUSAL, '{"reasoning": "Matches.", "score": 5}')
    pytester.makepyfile(test_judged=LIKERT_LOGPROBS)
    args = [f"--judge-model={MODEL}", f"--judge-api-base={openai_server.base_url}", "--judge-retries=0"]
    result = pytester.runpytest(*args, "--judge-mode=auto", "--judge-report=report.json")
    result.assert_outcomes(passed=1)
    asked, plain = openai_server.requests
    assert asked["logprobs"] is True and asked["top_logprobs"] == 5
    assert "logprobs" not in plain and "top_logprobs" not in plain and plain["messages"] == asked["messages"]
    result.stdout.fnmatch_lines(
        ["*LogprobsFallbackWarning: llmjudge: openai/judge-test takes no log-probabilities (logprobs refused)*"]
    )
    (judgment,) = json.loads((pytester.path / "report.json").read_text())["judgments"]
    assert judgment["score"] == 1.0

    # The plain reply is stored under the judgment's usual key: a replay finds it and calls nothing.
    result = pytester.runpytest(*args, "--judge-mode=replay", "--judge-report=replayed.json")
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 2
    (replayed,) = json.loads((pytester.path / "replayed.json").read_text())["judgments"]
    assert replayed["key"] == judgment["key"] and replayed["source"] == "replayed"


def test_other_refusals_are_not_retried_without_logprobs(pytester, openai_server):
    openai_server.enqueue(Reply(status=400, error_message="Unsupported parameter: 'seed' is not supported."))
    pytester.makepyfile(test_judged=LIKERT_LOGPROBS)
    result = pytester.runpytest(
        f"--judge-model={MODEL}", f"--judge-api-base={openai_server.base_url}", "--judge-retries=0", "--judge-mode=live"
    )
    result.assert_outcomes(failed=1)
    assert openai_server.request_count == 1


def test_reasoning_model_refused_logprobs_by_litellm_judges_plainly(pytester, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY_KEY)
    pytester.makepyfile(test_judged=LIKERT_LOGPROBS)
    with ReasoningServer(key=CANARY_KEY) as server:
        server.enqueue(Turn(text='{"reasoning": "Matches.", "score": 5}'))
        result = pytester.runpytest(
            "--judge-model=openai/o3-mini", f"--judge-api-base={server.api_base}", "--judge-mode=live"
        )
        (request,) = server.received
    result.assert_outcomes(passed=1)
    assert "logprobs" not in request.body and "top_logprobs" not in request.body
    result.stdout.fnmatch_lines(["*LogprobsFallbackWarning: llmjudge: openai/o3-mini takes no log-probabilities*"])
