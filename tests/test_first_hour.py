"""A newcomer's first hour: a clone replays with plain `pytest`, and the marker on a test beats the flags.

Each test drives pytest itself (pytester) with the real LiteLLM client against the local server.
"""

from __future__ import annotations

from helpers import JUDGED, MODEL

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


# -- precedence: ini < environment < command line < marker < the call's own arguments ----------


MARKED = """
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.judge(threshold=0.85)
def test_marked():
    assert_judged("SCORE=0.9", "is good")

def test_plain():
    assert_judged("SCORE=0.9", "is good")

@pytest.mark.judge(threshold=0.95)
def test_argument():
    assert_judged("SCORE=0.9", "is good", threshold=0.8)
"""


def test_the_marker_on_a_test_beats_the_command_line(pytester, openai_server, live_args, monkeypatch):
    pytester.makepyfile(test_marked=MARKED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=3)
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest("--judge-threshold=0.95", "-rf")
    # The marker's 0.85 beats the command line's 0.95; the argument's 0.8 beats the marker's 0.95.
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["FAILED test_marked.py::test_plain*"])
    assert openai_server.request_count == 1


def test_the_marker_beats_the_command_line_for_every_marker_argument(pytester, openai_server, monkeypatch):
    # The marker names the judge model and api base; the command line names others that do not exist.
    pytester.makepyfile(
        test_marked=f"""
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.judge(model="{MODEL}", api_base="{openai_server.base_url}", temperature=0.0, samples=1)
        def test_marked():
            assert_judged("SCORE=0.9", "is good")
        """
    )
    bogus = ["--judge-model=openai/nobody", "--judge-api-base=http://127.0.0.1:9/v1", "--judge-retries=0"]
    result = pytester.runpytest(*bogus, "--judge-mode=auto", "--judge-temperature=0.7", "--judge-samples=3")
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 1
    assert openai_server.requests[0]["model"] == MODEL.removeprefix("openai/")
    assert openai_server.requests[0]["temperature"] == 0.0
