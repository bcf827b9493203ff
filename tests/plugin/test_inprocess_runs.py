"""pytest run in-process several times in one process (pytester): each run judges with its own modules.

An in-process run drops every module it imported first when it ends, so the next run imports the
plugin's pipeline, rubrics and errors anew: nothing an earlier run imported may be kept and used.
The runs here start in a fresh process, which has imported none of the plugin beyond its entry point.
"""

from __future__ import annotations

from helpers import FAKE_CONFTEST

JUDGED_TWICE = """
import pytest
from pytest_llmjudge import JudgeError, assert_judged
from pytest_llmjudge import Likert


def test_the_default_rubric():
    assert_judged("Returns are accepted within 30 days. SCORE=0.9", "Says returns are accepted", threshold=0.5)


def test_a_rubric_made_here_is_a_rubric_to_the_plugin():
    assert_judged("Returns are accepted within 30 days. SCORE=5", "Says returns are accepted", rubric=Likert())


def test_an_error_the_plugin_raises_is_the_class_imported_here():
    with pytest.raises(JudgeError, match="threshold"):
        assert_judged("Returns are accepted within 30 days.", "Says returns are accepted", threshold=True)
"""

RUNS_IN_PROCESS = f"""
pytest_plugins = ["pytester"]


def test_each_in_process_run_judges_with_its_own_modules(pytester):
    pytester.makeconftest({FAKE_CONFTEST!r})
    pytester.makepyfile(test_judged={JUDGED_TWICE!r})
    for _ in range(3):
        result = pytester.runpytest("--judge-mode=live", "-p", "no:cacheprovider")
        result.assert_outcomes(passed=3)
"""


def test_each_in_process_run_judges_with_its_own_modules(pytester):
    pytester.makepyfile(test_runs=RUNS_IN_PROCESS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(passed=1)
