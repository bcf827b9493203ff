"""A judgment's report record is built only where a report reads it: what each kind of run still shows."""

from __future__ import annotations

import json

from helpers import FAKE_CONFTEST

SECRET = "s3cr3t-value-0123456789"

LEAKY = f"""
from pytest_llmjudge import assert_judged

def test_leaky(monkeypatch):
    # The key exists only while the test runs: the report is written long after it is gone.
    monkeypatch.setenv("SERVICE_API_KEY", "{SECRET}")
    assert_judged("The key is {SECRET}. SCORE=0.9", "Says the key", threshold=0.7)

def test_low():
    assert_judged("Nothing to see. SCORE=0.2", "Says the key", threshold=0.7)
"""


def test_a_key_the_test_set_is_redacted_in_the_report_written_after_it(pytester):
    # Given a test that sets a credential-like variable and judges an output quoting it
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_leaky=LEAKY)
    # When the run writes a JSON report (after the test's monkeypatch is undone)
    result = pytester.runpytest("--judge-mode=auto", "--judge-report=report.json")
    # Then the report has the judgment, its output redacted as the test's environment required
    result.assert_outcomes(passed=1, failed=1)
    text = (pytester.path / "report.json").read_text()
    assert SECRET not in text
    leaky = next(j for j in json.loads(text)["judgments"] if j["nodeid"].endswith("test_leaky"))
    assert "[redacted]" in leaky["output"] and leaky["reasoning"] == "fake judge gave 0.9"


def test_a_run_without_reports_still_counts_and_lists_every_judgment(pytester):
    # Given judged tests, and a run that writes no report (only the summary counts the judgments)
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_leaky=LEAKY)
    # When it runs with -rA
    result = pytester.runpytest("--judge-mode=auto", "-rA")
    # Then the summary counts both judgments and each test's section lists its judgment
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["llmjudge: 2 judged, 0 replayed, 2 live, 1 below threshold, 0 unparseable, *"])
    result.stdout.fnmatch_lines(["*PASS 0.90 >= 0.70  live  fake-judge*Says the key*"])
    result.stdout.fnmatch_lines(["*FAIL 0.20 < 0.70  live  fake-judge*Says the key*"])
    assert SECRET not in result.stdout.str()
