"""What a judge fault says: what happened, in words a user can act on (never an internal exception's)."""

from __future__ import annotations

import json

from helpers import MODEL
from helpers.backend import fail
from helpers.openai_server import Reply
from helpers.process import free_port
from pytest_llmjudge.backends.protocol import CallRequest

JUDGED = """
from pytest_llmjudge import assert_judged

def test_judged():
    assert_judged("Returns are accepted within 30 days. SCORE=0.9", "Says returns are accepted within 30 days")
"""


def ask(api_base: str, model: str = MODEL) -> CallRequest:
    return CallRequest(model=model, messages=[{"role": "user", "content": "Output: SCORE=0.9"}], api_base=api_base)


def test_a_reply_with_no_choices_says_so(loop, openai_server, fast_backoff):
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "judge-test", "choices": []}
    openai_server.enqueue(Reply(body=json.dumps(body).encode()))
    error = fail(loop, ask(openai_server.base_url))
    message = str(error)
    assert "IndexError" not in message and "list index out of range" not in message
    assert "no choices" in message and MODEL in message


def test_a_refused_connection_says_nothing_listens_there(loop, fast_backoff):
    base = f"http://127.0.0.1:{free_port()}/v1"
    error = fail(loop, ask(base), retries=1)
    message = str(error)
    assert error.retryable
    assert "InternalServerError" not in message
    assert "could not connect" in message and base in message
    assert "--judge-api-base" in message


def test_a_model_without_a_provider_says_nothing_was_sent_and_suggests_one(pytester, openai_server):
    pytester.makepyfile(test_judged=JUDGED)
    result = pytester.runpytest("--judge-model=stub", f"--judge-api-base={openai_server.base_url}", "--judge-mode=auto")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert openai_server.request_count == 0
    assert "rejected the request" not in out
    assert "nothing was sent" in out and "--judge-model=openai/stub" in out
