"""What a replay that passes does not do, and the secrets it still keeps out of what is shown.

A quiet run (no report, no -v) that replays and passes shows no judgment: its records are counted,
not named, so the environment is not read to redact them.  What is shown later (the slowest live
judgment in the summary) is still redacted with the secrets of the judgment's own moment.
"""

from __future__ import annotations

import pytest

from helpers import FAKE_CONFTEST

FLEETING_ID = """
import os
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.parametrize("case", [os.environ["FLEETING_VALUE"]], ids=[os.environ["FLEETING_VALUE"]])
def test_timed(case, monkeypatch):
    monkeypatch.setenv("SERVICE_TOKEN", case)  # a credential, set while this test runs only
    assert_judged("fine SCORE=0.9", "Is fine", threshold=0.5)
"""


def test_the_slowest_judgment_named_after_its_test_keeps_the_secrets_of_its_moment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The summary names the slowest live judgment after the test's teardown has removed the credential
    # from the environment: its record is redacted under the environment the judgment ran in.
    monkeypatch.delenv("SERVICE_TOKEN", raising=False)
    monkeypatch.setenv("FLEETING_VALUE", "fleeting-canary-token-6174")  # a name no one takes for a secret
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_timed=FLEETING_ID)
    result = pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "slowest" in out and "test_timed[[redacted]]" in out, out
    assert "fleeting-canary-token-6174" not in out


def test_a_quiet_replay_that_passes_counts_its_judgments(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(
        test_quiet="""
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.parametrize("i", range(3))
        def test_answer(i):
            assert_judged(f"Answer {i} SCORE=0.9", "Says so", threshold=0.5)
        """
    )
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=3)
    result = pytester.runpytest("--judge-mode=replay", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["llmjudge: 3 judged, 3 replayed, 0 live, 0 below threshold*"])
