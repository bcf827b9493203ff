"""A newcomer's first hour: a clone replays with plain `pytest`, and the marker on a test beats the flags.

Each test drives pytest itself (pytester) with the real LiteLLM client against the local server.
"""

from __future__ import annotations

from helpers import JUDGED

# -- plain `pytest` after a clone replays, with no model and no CI variable ---------------------


def test_plain_pytest_replays_what_was_recorded_with_no_model_configured(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    # A teammate's clone: no --judge-model, no CI variable (auto mode, the local default).
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 1, "replayed, not judged again"


def test_plain_pytest_replays_a_sample_and_a_marker_recorded_with_no_model(pytester, openai_server, live_args):
    pytester.makepyfile(
        test_refund="""
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.judge(threshold=0.6)
        def test_marked():
            assert_judged("SCORE=0.7", "is good")

        def test_judge(judge):
            assert judge.score("SCORE=0.8", "is good").score == 0.8
        """
    )
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=2)
    pytester.runpytest().assert_outcomes(passed=2)
    assert openai_server.request_count == 2


def test_a_miss_with_no_model_in_auto_mode_says_how_to_configure_one(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    pytester.makepyfile(test_refund=JUDGED.replace("30 days.", "thirty days."))
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no judge model configured: pass --judge-model=MODEL*LLMJUDGE_MODEL*"])
    assert "Traceback" not in result.stdout.str()
    assert openai_server.request_count == 1, "a miss with no model never calls out"
