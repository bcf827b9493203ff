"""The run's figures say what happened: time spent on errors, LiteLLM's import, live calls only, one money
format, a warning at the test's line, an expected failure named as such.

Through pytest itself (pytester) with the real LiteLLM client against the local judge server.
"""

from __future__ import annotations

import json
import re

from helpers import JUDGED
from helpers.openai_server import Reply, reply_json
from helpers.verdicts import edit_only_entry

TWO = """
from pytest_llmjudge import assert_judged

def test_one():
    assert_judged("one. SCORE=0.9", "is good", threshold=0.7)

def test_two():
    assert_judged("two. SCORE=0.9", "is good", threshold=0.7)
"""


def judging_seconds(text: str) -> float:
    found = re.search(r"([0-9.]+) s judging", text)
    assert found, text
    return float(found.group(1))


def test_judgments_that_errored_count_in_the_judging_time(pytester, openai_server, live_args):
    openai_server.set_responder(lambda request: Reply(content="I would rather not say.", delay_s=0.6))
    pytester.makepyfile(test_two=TWO)
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "--judge-parse-retries=0")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["llmjudge: 2 live judge calls, *"])
    assert judging_seconds(result.stdout.str()) >= 1.2, "two calls of 0.6 s each were spent judging"


def test_litellms_import_is_charged_to_no_judgment(pytester, openai_server, live_args):
    pytester.makepyfile(test_two=TWO)
    # A process of its own: the outer session has imported LiteLLM already.
    result = pytester.runpytest_subprocess(*live_args, "--judge-mode=auto", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    line = next(text for text in result.outlines if "s judging" in text)
    found = re.search(r"slowest ([0-9.]+) s, .*LiteLLM import ([0-9.]+) s, charged to no judgment", line)
    assert found, line
    slowest, imported = float(found.group(1)), float(found.group(2))
    assert slowest < imported, line


def test_structured_output_counts_only_the_calls_that_went_live(pytester, openai_server, live_args):
    pytester.makepyfile(test_two=TWO.split("def test_two")[0])
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    pytester.makepyfile(test_two=TWO)
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["llmjudge: 2 judged, 1 replayed, 1 live, *", "llmjudge: structured output: 1 json_*"])
    pytester.runpytest(*live_args, "--judge-mode=replay").stdout.no_fnmatch_line("*structured output*")


def test_money_has_one_format_in_the_lines_and_the_summary(pytester, openai_server, live_args):
    pytester.makepyfile(test_refund=JUDGED)
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "--judge-price=1000", "-v")
    result.assert_outcomes(passed=1)
    # 20 prompt + 10 completion tokens at $1000 per million: $0.03, written alike everywhere.
    result.stdout.fnmatch_lines(
        ["llmjudge: 1 judged,*$0.0300", "*PASS 0.90 >= 0.70  live  openai/judge-test  $0.0300  *"]
    )
    assert "$0.030000" not in result.stdout.str()


STORED_SCORE = """
from pytest_llmjudge import assert_judged

def test_refund(judge):
    answer = "Returns are accepted within 30 days."
    assert_judged(answer, "Says returns are accepted within 30 days", threshold=0.1)
    judge.score(answer, "Says returns are accepted within 30 days")
"""


def test_a_stored_score_warning_points_at_the_tests_line(pytester, openai_server, live_args):
    openai_server.enqueue(reply_json(0.2, "misses the point"))
    pytester.makepyfile(test_refund=STORED_SCORE)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    edit_only_entry(pytester.path, score=1.0)  # a hand edit the reply contradicts
    result = pytester.runpytest(*live_args, "--judge-mode=replay")
    result.assert_outcomes(passed=1)
    # Once from assert_judged (line 5), once from judge.score (line 6): each at the test's own line.
    result.stdout.fnmatch_lines(
        ["*test_refund.py:5: StoredScoreWarning: *", "*test_refund.py:6: StoredScoreWarning: *"]
    )
    assert "pipeline" not in "".join(line for line in result.outlines if "StoredScoreWarning" in line)


XFAILED = """
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.xfail(reason="the bot cannot answer this yet")
def test_unknown():
    assert_judged("No idea. SCORE=0.1", "Answers the question", threshold=0.7)
"""


def test_the_html_report_names_an_expected_failure_as_such(pytester, openai_server, live_args):
    pytester.makepyfile(test_bot=XFAILED)
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "--judge-html=report.html", "--judge-report=r.json")
    result.assert_outcomes(xfailed=1)
    page = (pytester.path / "report.html").read_text()
    assert 'test <b class="mono">xfailed</b>' in page
    assert 'test <b class="mono">skipped</b>' not in page
    (record,) = json.loads((pytester.path / "r.json").read_text())["judgments"]
    assert record["test_outcome"] == "xfailed"
