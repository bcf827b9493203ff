"""Faults from the judge, through the real LiteLLM client against the local server.

Retryable faults (429, 5xx, timeouts, dropped or cut connections, malformed bodies) are retried by
`call_with_retries` with exponential backoff and jitter, honouring Retry-After, up to
--judge-retries, inside the --judge-timeout deadline; everything else fails after one request with
a message that says what to do.  Every count here is `server.request_count`: LiteLLM's and the
OpenAI SDK's own retries are off, so the counts are ours.
"""

from __future__ import annotations

import json
import random
import sqlite3
import time
from pathlib import Path

import pytest

from helpers import CANARY_KEY, MODEL
from helpers.backend import CONTEXT_OVERFLOW, call, fail
from helpers.openai_server import Reply
from helpers.verdicts import verdict_files
from pytest_llmjudge.backends import retry
from pytest_llmjudge.backends.protocol import CallRequest
from pytest_llmjudge.backends.retry import backoff_delay


def ask(server, *, model=MODEL, content="Output: SCORE=0.9") -> CallRequest:
    """A one-message judge request to `server`."""
    return CallRequest(model=model, messages=[{"role": "user", "content": content}], api_base=server.base_url)


@pytest.fixture(autouse=True)
def _warm(loop, session_server):
    """Import LiteLLM and open its client once, so timings below measure retries, not imports."""
    if not getattr(_warm, "done", False):
        session_server.reset()
        call(loop, ask(session_server), retries=3)
        _warm.done = True


RETRYABLE = {
    "429": Reply(status=429),
    "429-retry-after-0": Reply(status=429, retry_after=0),
    "500": Reply(status=500),
    "502": Reply(status=502),
    "503": Reply(status=503),
    "529": Reply(status=529),
    "408": Reply(status=408),
    "504": Reply(status=504),
    "503-invalid_request_error-body": Reply(status=503, error_type="invalid_request_error"),
    "dropped-connection": Reply(drop=True),
    "truncated-body": Reply(truncate=True),
    "malformed-json-body": Reply(body=b"<html>bad gateway</html>"),
}


@pytest.mark.parametrize("fault", list(RETRYABLE.values()), ids=list(RETRYABLE))
def test_retryable_fault_is_retried_then_succeeds(loop, openai_server, fast_backoff, fault):
    openai_server.enqueue(fault, fault)
    result = call(loop, ask(openai_server), retries=3)
    assert openai_server.request_count == 3
    assert result.attempts == 3
    assert json.loads(result.text)["score"] == 0.9


@pytest.mark.parametrize(
    "fault", [RETRYABLE[k] for k in ("429", "503", "dropped-connection")], ids=["429", "503", "drop"]
)
def test_retryable_fault_gives_up_after_judge_retries(loop, openai_server, fast_backoff, fault):
    openai_server.enqueue(*[fault] * 5)
    error = fail(loop, ask(openai_server), retries=2)
    assert openai_server.request_count == 3, "1 try + --judge-retries=2"
    assert error.retryable
    assert "gave up after 3 attempts; --judge-retries=2" in str(error)


def test_retries_zero_means_one_request(loop, openai_server, fast_backoff):
    openai_server.enqueue(Reply(status=500), Reply(status=500))
    fail(loop, ask(openai_server), retries=0)
    assert openai_server.request_count == 1


def test_retry_after_is_honoured_over_our_backoff(loop, openai_server, monkeypatch):
    monkeypatch.setattr(retry, "BACKOFF_BASE_S", 60.0)  # our backoff would wait 30-60 s
    openai_server.enqueue(Reply(status=429, retry_after=1))
    started = time.monotonic()
    result = call(loop, ask(openai_server), retries=2, timeout=20)
    elapsed = time.monotonic() - started
    assert openai_server.request_count == 2 and result.attempts == 2
    assert 1.0 <= elapsed < 5.0


def test_retry_after_past_the_deadline_gives_up_at_once(loop, openai_server, fast_backoff):
    # Wide margins, so a loaded machine cannot blur right (at once) and wrong (10 s or 60 s).
    openai_server.enqueue(Reply(status=429, retry_after=60))
    started = time.monotonic()
    error = fail(loop, ask(openai_server), retries=5, timeout=10)
    assert time.monotonic() - started < 5, "must not sleep towards a retry it cannot make"
    assert openai_server.request_count == 1
    assert "the next retry (in 60.0s) would pass --judge-timeout=10s" in str(error)


def test_backoff_is_exponential_with_jitter():
    rng = random.Random(7)
    # Each attempt waits between half its step and its step: 0.5 s doubling, capped at 30 s.
    ranges = {
        0: (0.25, 0.5),
        1: (0.5, 1.0),
        2: (1.0, 2.0),
        3: (2.0, 4.0),
        4: (4.0, 8.0),
        5: (8.0, 16.0),
        6: (15.0, 30.0),
        30: (15.0, 30.0),
    }
    for attempt, (low, high) in ranges.items():
        delays = [backoff_delay(attempt, rng) for _ in range(200)]
        assert all(low <= d <= high for d in delays), attempt
        assert len(set(delays)) > 150, "jittered, not fixed"


def test_backoff_waits_between_attempts(loop, openai_server, monkeypatch):
    monkeypatch.setattr(retry, "BACKOFF_BASE_S", 0.2)  # waits of 0.1-0.2, 0.2-0.4, 0.4-0.8 s
    openai_server.enqueue(Reply(status=500), Reply(status=500), Reply(status=500))
    started = time.monotonic()
    call(loop, ask(openai_server), retries=3)
    assert time.monotonic() - started >= 0.7
    assert openai_server.request_count == 4


def test_a_slow_judge_is_cut_off_at_the_judgment_deadline(loop, openai_server, fast_backoff):
    openai_server.enqueue(*[Reply(delay_s=10)] * 4)
    started = time.monotonic()
    error = fail(loop, ask(openai_server), retries=5, timeout=1)
    assert time.monotonic() - started < 5, "cut off at the 1 s deadline, not after the 10 s reply"
    assert "--judge-timeout=1s" in str(error)
    assert openai_server.request_count == 1


def test_retries_stop_at_the_deadline_not_at_the_count(loop, openai_server, fast_backoff):
    openai_server.enqueue(*[Reply(status=503, delay_s=0.4)] * 20)
    started = time.monotonic()
    error = fail(loop, ask(openai_server), retries=50, timeout=1.5)
    assert time.monotonic() - started < 6, "50 retries of 0.4 s would take 20 s"
    assert 2 <= openai_server.request_count <= 4
    assert "--judge-timeout=1.5s" in str(error)


FATAL = {
    "400": (
        Reply(status=400),
        ["rejected the request (HTTP 400, not retried", "'openai/judge-test' as sent to LiteLLM"],
    ),
    "422": (Reply(status=422), ["rejected the request (HTTP 422"]),
    "401": (Reply(status=401), ["refused the credentials", "Set OPENAI_API_KEY"]),
    "403": (Reply(status=403), ["OPENAI_API_KEY is not allowed to use model 'openai/judge-test'"]),
    "404": (Reply(status=404), ["model 'openai/judge-test' (as sent to LiteLLM) was not found", "--judge-model"]),
    "context-window": (
        Reply(status=400, error_message=CONTEXT_OVERFLOW),
        ["too long for openai/judge-test: 5010 characters (about 1252 tokens)"],
    ),
}


@pytest.mark.parametrize("fault, expected", list(FATAL.values()), ids=list(FATAL))
def test_fatal_fault_fails_at_once_saying_what_to_do(loop, openai_server, fast_backoff, fault, expected):
    openai_server.enqueue(fault, fault, fault)
    error = fail(loop, ask(openai_server, content="x" * 5000 + " SCORE=0.9"), retries=3)
    assert openai_server.request_count == 1
    assert not error.retryable
    for text in expected:
        assert text in str(error)


@pytest.mark.parametrize(
    "fault",
    [Reply(status=401), Reply(status=400), Reply(status=403), Reply(status=404), Reply(status=500), Reply(status=429)],
    ids=["401", "400", "403", "404", "500", "429"],
)
def test_an_echoed_key_never_reaches_the_error(loop, openai_server, fast_backoff, fault):
    fault.error_message = "Incorrect API key provided: {api_key} (Bearer {api_key})"
    openai_server.enqueue(fault, fault)
    error = fail(loop, ask(openai_server), retries=1)
    assert openai_server.request_headers[0]["authorization"] == f"Bearer {CANARY_KEY}", "the key really was sent"
    assert CANARY_KEY not in str(error) and CANARY_KEY[6:] not in str(error)
    assert "[redacted]" in str(error)


# -- end to end: pytest runs against the local server ------------------------------------------

JUDGED = """
from pytest_llmjudge import assert_judged

def test_judged():
    assert_judged("Returns are accepted within 30 days. SCORE=0.9", "Says returns are accepted within 30 days")
"""


def cache_rows(cache_dir: Path) -> int:
    db = cache_dir / "cache.db"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as con:
        return con.execute("SELECT COUNT(*) FROM Cache").fetchone()[0]


def test_e2e_retries_then_records(pytester, openai_server, fast_backoff):
    openai_server.enqueue(Reply(status=503), Reply(drop=True))
    pytester.makepyfile(test_x=JUDGED)
    result = pytester.runpytest(
        f"--judge-model={MODEL}", f"--judge-api-base={openai_server.base_url}", "--judge-retries=2"
    )
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 3
    assert len(verdict_files(pytester.path)) == 1


def test_e2e_gives_up_with_a_clear_failure_and_stores_nothing(pytester, openai_server, fast_backoff):
    openai_server.enqueue(*[Reply(status=500)] * 5)
    pytester.makepyfile(test_x=JUDGED)
    result = pytester.runpytest(
        f"--judge-model={MODEL}",
        f"--judge-api-base={openai_server.base_url}",
        "--judge-retries=2",
        "--judge-cache-dir=cache",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*BackendError: InternalServerError from openai/judge-test*gave up after 3 attempts; --judge-retries=2*"]
    )
    result.stdout.fnmatch_lines(
        ["llmjudge: 1 judged, 0 replayed, 0 live, 0 below threshold, 0 unparseable, 1 judge errors*"]
    )
    assert openai_server.request_count == 3
    assert verdict_files(pytester.path) == [] and cache_rows(pytester.path / "cache") == 0


def test_e2e_bad_key_fails_after_one_request(pytester, openai_server, fast_backoff):
    openai_server.enqueue(Reply(status=401, error_message="bad key {api_key}"))
    pytester.makepyfile(test_x=JUDGED)
    result = pytester.runpytest(
        f"--judge-model={MODEL}", f"--judge-api-base={openai_server.base_url}", "--judge-retries=3"
    )
    result.assert_outcomes(failed=1)
    assert openai_server.request_count == 1
    result.stdout.fnmatch_lines(["*Set OPENAI_API_KEY to a valid key*"])
    assert CANARY_KEY not in result.stdout.str() + result.stderr.str()


UNPARSEABLE = {
    "cut-off-at-max-tokens": Reply(
        content='{"reasoning": "The answer covers the refund policy and', finish_reason="length"
    ),
    "cut-off-but-parseable": Reply(content='{"reasoning": "fine", "score": 0.9', finish_reason="length"),
    "empty-reply": Reply(content=""),
    "whitespace-reply": Reply(content="  \n "),
    "no-verdict": Reply(content="I am not able to evaluate this output."),
    "refusal-with-number-in-json-string": Reply(content='{"reasoning": "I rate nothing above 9000"}'),
}


@pytest.mark.parametrize("fault", list(UNPARSEABLE.values()), ids=list(UNPARSEABLE))
def test_e2e_unparseable_replies_are_errors_never_scores_and_never_stored(pytester, openai_server, fault):
    openai_server.enqueue(fault)
    pytester.makepyfile(test_x=JUDGED)
    # One reply, read as it came: asking again for the format is tested on its own (test_structured_output).
    args = [
        f"--judge-model={MODEL}",
        f"--judge-api-base={openai_server.base_url}",
        "--judge-cache-dir=cache",
        "--judge-parse-retries=0",
    ]
    result = pytester.runpytest(*args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*VerdictParseError*"])
    result.stdout.no_fnmatch_line("*JudgmentFailed*")
    result.stdout.fnmatch_lines(["llmjudge: 1 judged, 0 replayed, 0 live, 0 below threshold, 1 unparseable*"])
    assert verdict_files(pytester.path) == [], "a parse failure is never a stored verdict"
    assert cache_rows(pytester.path / "cache") == 0, "nor a cached one"
    # Nothing was stored, so the next run asks the judge again (and this time gets a verdict).
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 2
