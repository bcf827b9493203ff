"""Time is counted where the judge spends it: --judge-timeout runs while a judgment's calls are in flight
(not while it waits for a slot, looks up or copies), its message says what took the time, and the
summary's judging time is wall time, judgments in flight together counted once."""

from __future__ import annotations

import re

import pytest

from helpers import MODEL
from helpers.openai_server import OpenAIServer, Reply

MANY = """
def test_many(judge):
    verdicts = judge.score_many([(f"Answer {i}. SCORE=0.9", "Answers") for i in range(14)])
    assert [v.score for v in verdicts] == [0.9] * 14
"""


def run_live(pytester: pytest.Pytester, server: OpenAIServer, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        f"--judge-model={MODEL}",
        f"--judge-api-base={server.base_url}",
        "--judge-mode=live",
        "-p",
        "no:cacheprovider",
        *args,
    )


def test_waiting_for_a_slot_does_not_count_against_the_timeout(pytester):
    pytester.makepyfile(test_many=MANY)
    with OpenAIServer(latency_s=0.3) as server:  # 14 calls one at a time: over 4 s, each 0.3 s
        result = run_live(pytester, server, "--judge-concurrency=1", "--judge-timeout=3", "--judge-retries=0")
    result.assert_outcomes(passed=1)
    assert server.max_in_flight == 1


def test_the_summary_counts_judgments_in_flight_together_once(pytester):
    pytester.makepyfile(test_many=MANY)
    with OpenAIServer(latency_s=0.3) as server:
        result = run_live(pytester, server)
    result.assert_outcomes(passed=1)
    line = next(line for line in result.outlines if "live judge calls" in line)
    found = re.search(r"([\d.]+) s judging \(([\d.]+) s summed over 14 judgments in flight together\)", line)
    assert found is not None, line
    wall, summed = float(found[1]), float(found[2])
    assert 0.3 <= wall < summed, line  # 14 calls of 0.3 s, 8 at a time: about 0.6 s of wall time
    assert summed >= 14 * 0.3, line


SLOW = """
def test_slow():
    from pytest_llmjudge import assert_judged
    assert_judged("Answer. SCORE=0.9", "Answers")
"""


def test_a_timeout_says_what_took_the_time(pytester):
    pytester.makepyfile(test_slow=SLOW)
    with OpenAIServer() as server:
        server.enqueue(Reply(content='{"reasoning": "late", "score": 0.9}', delay_s=3))
        result = run_live(pytester, server, "--judge-timeout=0.5", "--judge-retries=0", "-W", "error::RuntimeWarning")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*BackendError: no reply from openai/judge-test within --judge-timeout=0.5s (1 request to the judge took 0.5s)*"
        ]
    )
    assert "never awaited" not in result.stdout.str() + result.stderr.str()


UNREADABLE = """
def test_unreadable():
    from pytest_llmjudge import assert_judged
    assert_judged("Answer.", "Answers")
"""


def test_an_unparseable_reply_shows_its_start_and_its_end_only(pytester):
    pytester.makepyfile(test_unreadable=UNREADABLE)
    reply = "START " + "claim, " * 30_000 + " END"
    with OpenAIServer(lambda request: reply) as server:
        result = run_live(pytester, server)
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    section = text[text.index("unparseable judge reply") :]
    assert "START" in section and "END" in section and "characters left out" in section
    assert len(text) < 20_000, "a reply of 210 KB is not printed whole"


HUNG_BACKEND = """
import asyncio, threading, time
import pytest

@pytest.fixture(scope="session")
def judge_backend():
    def hung(messages):
        {hang}
        return '{{"reasoning": "late", "score": 1.0}}'
    hung.name = "hung-judge"
    return hung
"""
HANGS = {
    "a sleep far longer than the timeout": ("time.sleep(600)", ()),
    "no end at all": ("threading.Event().wait()", ()),
    "no end at all, in xdist workers": ("threading.Event().wait()", ("-n", "2")),
}


@pytest.mark.slow
@pytest.mark.parametrize("hang, args", HANGS.values(), ids=list(HANGS))
def test_a_hung_judge_backend_does_not_keep_pytest_alive_after_the_timeout(pytester, hang, args):
    """The tests fail at --judge-timeout, and pytest exits then: the abandoned calls hold nothing."""
    import time

    pytester.makeconftest(HUNG_BACKEND.format(hang=hang))
    pytester.makepyfile(
        test_hung="""
        from pytest_llmjudge import assert_judged

        def test_judged():
            assert_judged("An answer.", "Answers", threshold=0.5)

        def test_judged_too():
            assert_judged("Another answer.", "Answers", threshold=0.5)
        """
    )
    began = time.monotonic()
    # pytester kills the run and raises if it outlives its timeout: the bound is generous, not a timing
    result = pytester.runpytest_subprocess(
        "--judge-mode=live", "--judge-timeout=2", "--judge-retries=0", "-p", "no:cacheprovider", *args, timeout=60
    )
    took = time.monotonic() - began
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*no reply from hung-judge within --judge-timeout=2s*"])
    assert took < 60, f"pytest took {took:.1f} s to exit after a 2 s timeout"
