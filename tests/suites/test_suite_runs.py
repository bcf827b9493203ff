"""Repeated runs of one test: `@pytest.mark.judge(runs=N, min_passes=K)` and `--judge-runs=N`, through pytest
itself.  The judge is the fake `judge_backend` of the helpers, which scores the SCORE=x in the output; a
module-level counter makes chosen runs' outputs fail, the same way in every session (so a replay sees the
outputs it recorded).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from helpers import FAKE_CONFTEST, MODEL
from helpers.openai_server import OpenAIServer, score_from_prompt

FLAKY = """
import itertools
import pytest
from pytest_llmjudge import assert_judged

RUNS = itertools.count()

@pytest.mark.judge({marker})
def test_flaky():
    run = next(RUNS)
    score = 0.2 if run in {failing} else 0.9
    assert_judged(f"Run {{run}}: returns are accepted within 30 days. SCORE={{score}}", "Says 30 days", threshold=0.7)
"""


@pytest.fixture
def fake(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(FAKE_CONFTEST)
    return pytester


def flaky(pytester: pytest.Pytester, marker: str = "runs=5, min_passes=4", failing: tuple[int, ...] = (2,)) -> None:
    pytester.makepyfile(test_flaky=FLAKY.format(marker=marker, failing=set(failing) or "()"))


def test_four_of_five_passing_runs_pass_and_the_failed_run_is_shown_with_its_reasoning(fake):
    """Given runs=5, min_passes=4 and a judge that fails the third run, the test passes once (one test, not
    five), the summary names it with 4 of 5, and -rA shows the failed run's reasoning."""
    flaky(fake)
    result = fake.runpytest("--judge-mode=auto", "-rA")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*- llmjudge runs -*",
            "4 of 5 runs passed; @pytest.mark.judge(runs=5, min_passes=4) needs 4",
            "run 2: judged 0.20 < threshold 0.70",
            "*reasoning: fake judge gave 0.2",
            "llmjudge: 5 judged, 0 replayed, 5 live, 1 below threshold (1 in repeated tests or gated groups, which "
            "decide on them)*",
            "llmjudge runs: test_flaky.py::test_flaky passed: 4 of 5 runs passed; @pytest.mark.judge(runs=5, "
            "min_passes=4) needs 4",
            "llmjudge runs: 1 repeated test, 5 runs, 1 with both passing and failing runs",
        ]
    )


def test_too_few_passing_runs_fail_the_test_with_k_of_n_and_each_failed_runs_reasoning(fake):
    """Given runs=3 (all must pass) and a judge that fails runs 0 and 2, the test fails with 1 of 3 and the
    judge's reasoning of each failed run; JUnit and the JSON report carry the runs."""
    flaky(fake, "runs=3", (0, 2))
    result = fake.runpytest("--judge-mode=auto", "--junitxml=junit.xml", "--judge-report=report.json")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_flaky _*",
            "1 of 3 runs passed; @pytest.mark.judge(runs=3) needs 3",
            "run 0: judged 0.20 < threshold 0.70",
            "*criteria:  Says 30 days",
            "*reasoning: fake judge gave 0.2",
            "run 2: judged 0.20 < threshold 0.70",
            "*reasoning: fake judge gave 0.2",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    (case,) = ET.parse(fake.path / "junit.xml").getroot().iter("testcase")
    properties = [(p.get("name"), p.get("value")) for p in case.iter("property")]
    assert ("llmjudge.runs", "3") in properties and ("llmjudge.passed_runs", "1") in properties
    assert ("llmjudge.failed_runs", "0 2") in properties
    assert [value for name, value in properties if name == "llmjudge.run"] == ["1", "2"]  # run 0 has none
    report = json.loads((fake.path / "report.json").read_text())
    assert [j.get("run", 0) for j in report["judgments"]] == [0, 1, 2]
    assert report["repeats"][0]["decided"] == "failed"


def test_each_run_has_fresh_function_fixtures_and_shares_the_module_ones(fake):
    """Given a repeated test using tmp_path, monkeypatch, a function fixture with a finalizer and a module
    fixture, each run gets its own function fixtures (the last run's torn down before the next is set up;
    tmp_path, read at teardown by pytest itself, works) and all runs share the module fixture."""
    fake.makepyfile(
        test_fresh="""
        import os
        import pytest
        from pytest_llmjudge import assert_judged

        EVENTS = []

        @pytest.fixture(scope="module")
        def shared():
            EVENTS.append("module up")
            yield object()
            EVENTS.append("module down")

        @pytest.fixture
        def fresh():
            EVENTS.append("up")
            yield object()
            EVENTS.append("down")

        @pytest.mark.judge(runs=3)
        def test_repeated(shared, fresh, tmp_path, monkeypatch):
            assert os.environ.get("SET_BY_A_RUN") is None, "monkeypatch was undone after the last run"
            monkeypatch.setenv("SET_BY_A_RUN", "1")
            assert not (tmp_path / "mark").exists(), "a new tmp_path each run"
            (tmp_path / "mark").write_text("x")
            EVENTS.append(("run", id(shared), id(fresh)))
            assert_judged("Returns within 30 days. SCORE=0.9", "Says 30 days", threshold=0.7)

        def test_after():
            runs = [e for e in EVENTS if isinstance(e, tuple)]
            assert len(runs) == 3
            assert len({module for _, module, _ in runs}) == 1, "one module fixture for every run"
            assert [e for e in EVENTS if isinstance(e, str)] == ["module up", "up", "down", "up", "down", "up", "down"]
        """
    )
    fake.runpytest("--judge-mode=auto", "-p", "no:randomly").assert_outcomes(passed=2)


def test_a_crash_in_a_run_is_an_error_as_usual_naming_the_run_and_ends_the_runs(fake):
    """Given runs=4 whose second run raises (a crash in the app, not a judgment), the test fails with that
    exception and its traceback, says which run raised it, and runs no more."""
    fake.makepyfile(
        test_crash="""
        import itertools
        import pytest
        from pytest_llmjudge import assert_judged

        RUNS = itertools.count()

        @pytest.mark.judge(runs=4)
        def test_app():
            run = next(RUNS)
            if run == 1:
                raise ConnectionError("the app's database is down")
            assert_judged("Returns within 30 days. SCORE=0.9", "Says 30 days", threshold=0.7)

        def test_runs_made():
            assert next(RUNS) == 2, "no run after the one that crashed"
        """
    )
    result = fake.runpytest("--judge-mode=auto", "-p", "no:randomly")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*raise ConnectionError*",
            "E*ConnectionError: the app's database is down",
            "*- llmjudge runs -*",
            "the run that failed: 1 of runs 0 to 3",
        ]
    )


def test_runs_on_a_test_that_makes_no_judgment_fail_it_saying_so(fake):
    """Given runs=3 on a test that judges nothing, the test fails with a clear message, not a silent pass;
    under --judge-runs alone such a test runs once and passes, as without it."""
    fake.makepyfile(
        test_plain="""
        import pytest

        @pytest.mark.judge(runs=3)
        def test_marked():
            pass

        def test_unmarked():
            pass
        """
    )
    result = fake.runpytest("--judge-mode=auto", "--judge-runs=3")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_marked _*",
            "@pytest.mark.judge(runs=3) on test_plain.py::test_marked, which made no judgment in its first run: runs "
            "repeat a test to judge it again. Judge in it (assert_judged, the judge fixture), or take runs= off its marker",
            "FAILED test_plain.py::test_marked*",
        ]
    )


def test_judge_runs_repeats_every_judged_test_and_the_marker_wins(fake):
    """Given --judge-runs=3, an unmarked judged test runs three times (all must pass), and a test whose
    marker says runs=2 runs twice."""
    flaky(fake, marker="", failing=(1,))
    fake.makepyfile(
        test_marked="""
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.judge(runs=2)
        def test_twice():
            assert_judged("Returns within 30 days. SCORE=0.9", "Says 30 days", threshold=0.7)
        """
    )
    result = fake.runpytest("--judge-mode=auto", "--judge-runs=3")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "2 of 3 runs passed; --judge-runs=3 needs 3",
            "llmjudge runs: test_flaky.py::test_flaky FAILED: 2 of 3 runs passed; --judge-runs=3 needs 3",
            "llmjudge runs: 2 repeated tests, 5 runs, 1 with both passing and failing runs",
        ]
    )


@pytest.mark.parametrize(
    ("marker", "failing", "outcome", "line"),
    [
        (
            "runs=5, min_pass_rate=0.6",
            (0, 1),
            "passed",
            "3 of 5 runs passed; @pytest.mark.judge(runs=5, min_passes=3)*",
        ),
        (
            "runs=5, min_pass_rate=0.6",
            (0, 1, 2),
            "failed",
            "2 of 5 runs passed; @pytest.mark.judge(runs=5, min_passes=3)*",
        ),
    ],
)
def test_min_pass_rate_asks_for_the_least_whole_number_of_passing_runs(fake, marker, failing, outcome, line):
    flaky(fake, marker, failing)
    result = fake.runpytest("--judge-mode=auto", "-rA")
    result.assert_outcomes(**{outcome: 1})
    result.stdout.fnmatch_lines([line])


def test_a_replay_decides_the_runs_as_recorded(fake, monkeypatch):
    """Given a repeated test recorded (2 of 3 runs pass, min_passes=2), replayed with CI=true it sends no
    call and comes to the same decision, from the same runs."""
    flaky(fake, "runs=3, min_passes=2", (1,))
    recorded = fake.runpytest("--judge-mode=auto")
    recorded.assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    replayed = fake.runpytest("-rA")
    replayed.assert_outcomes(passed=1)
    replayed.stdout.fnmatch_lines(
        [
            "run 1: judged 0.20 < threshold 0.70",
            "llmjudge: 3 judged, 3 replayed, 0 live*",
            "llmjudge runs: test_flaky.py::test_flaky passed: 2 of 3 runs passed*",
        ]
    )


@pytest.mark.slow
def test_a_repeated_test_under_xdist_runs_on_one_worker_and_reports_once(fake):
    """Given repeated tests run with -n 2, each is one test on one worker: the same outcomes and summary
    lines as a sequential run."""
    flaky(fake, "runs=3, min_passes=2", (1,))
    fake.makepyfile(
        test_more="""
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.judge(runs=3)
        @pytest.mark.parametrize("n", range(4))
        def test_case(n):
            assert_judged(f"Case {n}: returns within 30 days. SCORE=0.9", "Says 30 days", threshold=0.7)
        """
    )
    sequential = fake.runpytest("--judge-mode=auto")
    parallel = fake.runpytest("--judge-mode=replay", "-n", "2", "-p", "xdist")
    sequential.assert_outcomes(passed=5)
    parallel.assert_outcomes(passed=5)

    def runs_lines(result: pytest.RunResult) -> list[str]:
        return [line for line in result.outlines if line.startswith("llmjudge runs:")]

    assert runs_lines(parallel) == runs_lines(sequential) != []


def test_pytest_rerunfailures_does_not_rerun_a_repeated_test(fake):
    """Given --reruns=2 and a repeated test whose runs fail, it is reported failed once: its runs decide it."""
    flaky(fake, "runs=2", (0, 1))
    result = fake.runpytest("--judge-mode=auto", "--reruns=2")
    result.assert_outcomes(failed=1)
    assert "rerun" not in result.stdout.lines[-1]


SIMULATED = """
import pytest
from pytest_llmjudge import assert_judged, simulate

@pytest.mark.judge(runs=2)
def test_chat():
    chat = simulate(lambda messages: {reply!r}, "A shopper whose shoes are too small, who wants a refund", turns=2)
    assert_judged(chat[-1]["content"], "Tells the shopper how to return the shoes", threshold=0.7)
"""


def test_a_simulated_users_turns_are_recorded_per_run_and_a_miss_names_the_run(pytester, monkeypatch):
    """Given a repeated test whose app talks with a simulated user (the local server plays the user and the
    judge), each run's user turns are recorded under the run; replayed on CI it passes sending nothing;
    with the app's reply changed, the replay misses the user's second turn and names the run."""

    def respond(request: dict) -> str:
        if request["messages"][0]["content"].startswith("You are role-playing a user"):
            said = sum(1 for m in request["messages"] if m["role"] == "assistant")
            return ["My shoes are too small.", "How do I send them back?"][said]
        return score_from_prompt(request)

    pytester.makepyfile(test_chat=SIMULATED.format(reply="Print the label and post the parcel. SCORE=0.9"))
    with OpenAIServer(respond) as server:
        args = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
        pytester.runpytest(*args, "--judge-mode=auto").assert_outcomes(passed=1)
        assert server.request_count == 6, "two user turns and a verdict, in each of two runs"
    stored = json.loads((pytester.path / "judge_verdicts" / "test_chat" / "test_chat.json").read_text())
    assert sorted(entry.get("run", 0) for entry in stored["generations"].values()) == [0, 0, 1, 1]
    monkeypatch.setenv("CI", "true")
    pytester.runpytest().assert_outcomes(passed=1)
    pytester.makepyfile(test_chat=SIMULATED.format(reply="Keep them. SCORE=0.9"))
    changed = pytester.runpytest()
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(["*no recorded user turn 2 for this conversation*", "*run:     0 of runs 0 to 1"])


THREE_RUNS = """
import pytest
from pytest_llmjudge import assert_judged, simulate

@pytest.mark.judge(runs=3)
def test_chat():
    chat = simulate(lambda messages: "Print the label and post the parcel. SCORE=0.9", "A shopper", turns=3)
    assert [m["role"] for m in chat] == ["user", "assistant"] * 3
    assert_judged(chat[-1]["content"], "Tells the shopper how to return the shoes", threshold=0.7)
"""


def test_each_runs_simulated_turns_continue_that_runs_own_conversation(pytester, monkeypatch):
    """Given runs=3 of a test whose app talks three turns with a simulated user and says the same in every run
    (so every run's conversation is the same), each run's later turns are stored as continuations of that
    run's own earlier turn, never run 0's; the file reads back whole, and replays under CI=true with the
    server stopped."""
    from pytest_llmjudge.store.verdict_file import VerdictDocument

    lines = ["My shoes are too small.", "How do I send them back?", "When do I get my money?"]

    def respond(request: dict) -> str:
        if request["messages"][0]["content"].startswith("You are role-playing a user"):
            return lines[sum(1 for m in request["messages"] if m["role"] == "assistant")]
        return score_from_prompt(request)

    pytester.makepyfile(test_chat=THREE_RUNS)
    with OpenAIServer(respond) as server:
        args = [f"--judge-model={MODEL}", f"--judge-api-base={server.base_url}", "--judge-retries=0"]
        pytester.runpytest(*args, "--judge-mode=auto", "-p", "no:cacheprovider").assert_outcomes(passed=1)
        assert server.request_count == 12, "three user turns and a verdict, in each of three runs"
    path = pytester.path / "judge_verdicts" / "test_chat" / "test_chat.json"
    stored = json.loads(path.read_text())["generations"]
    assert sorted(entry.get("run", 0) for entry in stored.values()) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    for run in range(3):
        turns = {key: entry for key, entry in stored.items() if entry.get("run", 0) == run}
        followed = [turns[entry["follows"]].get("run", 0) if entry["follows"] in turns else "another run's"
                    for entry in turns.values() if "follows" in entry]  # fmt: skip
        assert followed == [run, run], f"run {run}'s later turns continue its own earlier turns"
        assert sum("messages" in entry for entry in turns.values()) == 1  # the later ones: what they add
    read = VerdictDocument.read(path).generations
    by_run = {run: sorted((e for e in read.values() if e.get("run", 0) == run), key=lambda e: len(e["messages"]))
              for run in range(3)}  # fmt: skip
    assert [len(e["messages"]) for e in by_run[1]] == [2, 4, 6]
    assert (
        [e["messages"] for e in by_run[1]] == [e["messages"] for e in by_run[0]] == [e["messages"] for e in by_run[2]]
    )

    monkeypatch.setenv("CI", "true")  # the server is stopped: every run's turns and verdict come from the file
    replayed = pytester.runpytest("-p", "no:cacheprovider")
    replayed.assert_outcomes(passed=1)
    assert "3 judged, 3 replayed, 0 live" in replayed.stdout.str()
