"""`assert_judge_qualified` in pytest: a suite that refuses to trust a judge that fails, and a qualification that
replays under CI=true with no call, from the same files `llmjudge qualify` records."""

from __future__ import annotations

import pytest

from helpers import MODEL
from helpers.qualify_judges import always_better, always_first
from pytest_llmjudge.cli import main
from pytest_llmjudge.store.verdict_file import VerdictDocument

SESSION_GUARD = """
import pytest
from pytest_llmjudge import assert_judge_qualified

@pytest.fixture(scope="session", autouse=True)
def qualified_judge():
    assert_judge_qualified(quick=True)
"""

TESTS = """
def test_one():
    pass

def test_two():
    pass
"""

ASSERTED = """
from pytest_llmjudge import assert_judge_qualified

def test_judge_is_qualified():
    report = assert_judge_qualified(quick=True, min_kappa=0.5)
    assert report.qualified and report.figures.overall.n == 40
"""


def test_a_suite_refuses_a_judge_that_fails_with_the_report_in_the_failure(pytester, openai_server, live_args):
    openai_server.set_responder(always_first)
    pytester.makeconftest(SESSION_GUARD)
    pytester.makepyfile(test_suite=TESTS)
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "*QualificationFailed: the judge is not qualified:",
            "*judge qualification: openai/judge-test, Pairwise with its default prompt; 40 pairs in 4 sets*",
            "*GPTInst *10 *50.0%*",
            "*NOT QUALIFIED: accuracy 50.0% < min_accuracy 75.0%; position consistency 0.0% < min_position_*",
        ]
    )
    assert "qualification/runner.py" not in result.stdout.str(), "no traceback into the plugin"
    assert openai_server.request_count == 80, "a session fixture qualifies once"


MODULE_GUARD = """
import pytest
from pytest_llmjudge import assert_judge_qualified

@pytest.fixture(scope="module", autouse=True)
def qualified_judge():
    assert_judge_qualified(quick=True)

def test_judged_here():
    pass
"""


def test_a_modules_fixture_refuses_that_modules_tests_only(pytester, openai_server, live_args):
    openai_server.set_responder(always_first)
    pytester.makepyfile(test_guarded=MODULE_GUARD, test_elsewhere=TESTS)
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "-p", "no:randomly")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at setup of test_judged_here*", "*NOT QUALIFIED: accuracy 50.0%*"])
    assert openai_server.request_count == 80


COMPARED = """
from pytest_llmjudge.qualification.pairs import bundled_subsets
from pytest_llmjudge.qualification.runner import CRITERIA

def test_compare(judge):
    pair = bundled_subsets()[0].pairs[0]
    assert judge.compare(pair.output_1, pair.output_2, CRITERIA, input=pair.input).winner == "baseline"
"""


def test_the_qualification_asks_what_judge_compare_asks_in_a_test(
    pytester, openai_server, live_args, monkeypatch, capsys
):
    # The same pair, compared in a test with the same settings, has the same two keys (model, prompt, parameters)
    # as the qualification's two orders of it: the qualification replays what the test recorded.
    openai_server.set_responder(always_better)
    pytester.makepyfile(test_compared=COMPARED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    assert openai_server.request_count == 2  # both orders
    monkeypatch.chdir(pytester.path)
    assert main(["qualify", "--quick", "--judge-mode=auto", *live_args]) == 0
    capsys.readouterr()
    assert openai_server.request_count == 80, "40 pairs in both orders, two of them replayed from the test's file"
    stored = pytester.path / "judge_verdicts"
    (compared,) = [p for p in stored.rglob("*.json") if "qualification" not in p.parts]
    tested = set(VerdictDocument.read(compared).entries)
    qualified = set(VerdictDocument.read(stored / "qualification" / "GPTInst.json").entries)
    assert len(tested) == 2 and tested <= qualified


def test_a_qualification_asserted_in_a_test_replays_under_ci_with_no_call(
    pytester, openai_server, live_args, monkeypatch
):
    openai_server.set_responder(always_better)
    pytester.makepyfile(test_qualified=ASSERTED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    assert openai_server.request_count == 80
    assert (pytester.path / "judge_verdicts" / "qualification" / "MT-Bench.json").is_file()

    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest("-rP")  # no judge configured: the recorded one stands
    result.assert_outcomes(passed=1)
    assert openai_server.request_count == 80, "replay makes no call"
    result.stdout.fnmatch_lines(["*llmjudge: judge qualification*", "*80 replayed*", "*qualified: every figure*"])


ASYNC_ASSERTED = """
import pytest
from pytest_llmjudge import assert_judge_qualified

@pytest.mark.asyncio
async def test_judge_is_qualified_from_an_async_test():
    assert assert_judge_qualified(quick=True).qualified
"""


def test_the_commands_recording_serves_the_assertion_in_sync_and_async_tests(
    pytester, openai_server, live_args, monkeypatch, capsys
):
    openai_server.set_responder(always_better)
    monkeypatch.chdir(pytester.path)
    pytester.makeini("[pytest]\n")
    assert main(["qualify", "--quick", *live_args]) == 0
    capsys.readouterr()
    assert openai_server.request_count == 80
    pytester.makepyfile(test_qualified=ASSERTED, test_async=ASYNC_ASSERTED)
    monkeypatch.setenv("CI", "true")
    pytester.runpytest().assert_outcomes(passed=2)  # an event loop runs in the async test: judged beside it
    assert openai_server.request_count == 80


def test_a_replay_miss_fails_the_test_where_it_asserted(pytester, monkeypatch):
    monkeypatch.setenv("CI", "true")
    pytester.makepyfile(test_qualified=ASSERTED)
    result = pytester.runpytest(f"--judge-model={MODEL}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*PairError: GPTInst pair 0 (output 1 shown first): no stored verdict*"])
    assert "qualification/runner.py" not in result.stdout.str()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("assert_judge_qualified(min_accuracy=2)", "min_accuracy must be a number in [[]0, 1]*"),
        ("assert_judge_qualified(rubric='pairwise')", "rubric must be a Pairwise (your comparison prompt)*"),
        ("assert_judge_qualified(data=['missing.json'])", "missing.json: cannot read the pairs file*"),
    ],
)
def test_bad_arguments_are_clear_errors(pytester, call, message):
    pytester.makepyfile(test_bad=f"from pytest_llmjudge import assert_judge_qualified\n\ndef test_it():\n    {call}\n")
    result = pytester.runpytest("--judge-mode=replay")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*QualificationError: {message}"])


@pytest.mark.slow
def test_under_xdist_each_worker_qualifies_and_the_judge_is_asked_once_per_answer(
    pytester, openai_server, live_args, monkeypatch
):
    openai_server.set_responder(always_better)
    pytester.makeconftest(SESSION_GUARD)
    pytester.makepyfile(test_suite=TESTS)
    pytester.runpytest(*live_args, "--judge-mode=auto", "-n", "2").assert_outcomes(passed=2)
    # Both workers ran the session fixture; a worker waits for the other's call of the same key.
    assert openai_server.request_count == 80
    monkeypatch.setenv("CI", "true")
    pytester.runpytest("-n", "2").assert_outcomes(passed=2)
    assert openai_server.request_count == 80
