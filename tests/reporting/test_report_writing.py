"""A report that cannot be written is a warning: the run, its summary and its other reports go on."""

from __future__ import annotations

import pytest

from helpers import FAKE_CONFTEST

JUDGED = """
from pytest_llmjudge import assert_judged

def test_good():
    assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days", threshold=0.7)
"""


@pytest.mark.parametrize("broken", ["report", "html"])
def test_an_unwritable_report_is_a_warning_and_the_run_goes_on(pytester, broken):
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_refunds=JUDGED)
    (pytester.path / "blocker").write_text("a file, so nothing can be written beneath it")
    paths = {"report": "out/report.json", "html": "out/report.html", broken: f"blocker/report.{broken}"}
    result = pytester.runpytest(
        "--judge-mode=auto", f"--judge-report={paths['report']}", f"--judge-html={paths['html']}"
    )
    result.assert_outcomes(passed=1)
    assert result.ret == 0
    out = result.stdout.str()
    assert "Traceback" not in out and "INTERNALERROR" not in out + result.stderr.str()
    assert "llmjudge: 1 judged" in out, "the summary is kept"
    what = "JSON" if broken == "report" else "HTML"
    result.stdout.fnmatch_lines([f"llmjudge: could not write the {what} report *blocker/report.{broken}: *"])
    other = "html" if broken == "report" else "report"
    assert (pytester.path / paths[other]).is_file(), "the other report is still written"
    result.stdout.fnmatch_lines([f"llmjudge: wrote * {pytester.path / paths[other]}"])
