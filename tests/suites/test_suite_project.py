"""Issue 39's project: 40 parametrized cases judged by a judge that passes a known share of them, gated
on their pass rate; and a test run five times whose app is `generate()`, recorded and replayed.

The judge is the local OpenAI-compatible server, reached by the real LiteLLM client over HTTP: it
scores each case by the SCORE=x its output carries, so the share that passes is set by the project.
The figures checked here are the Wilson score interval's, worked out by hand from its formula
(Wilson 1927): 36 of 40 at 95% is [0.7695, 0.9604], 34 of 40 is [0.7094, 0.9294].
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers import MODEL
from helpers.openai_server import OpenAIServer, score_from_prompt
from helpers.verdicts import verdict_files

pytestmark = pytest.mark.slow

CASES = """
import pytest
from pytest_llmjudge import assert_judged

@pytest.mark.judge({gate})
@pytest.mark.parametrize("n", range(40))
def test_answer(n):
    score = 0.9 if n < {passing} else 0.2
    assert_judged(
        f"Answer {{n}}: returns are accepted within 30 days. SCORE={{score}}",
        "Says returns are accepted within 30 days",
        threshold=0.7,
    )
"""
GROUP = "test_answers.py::test_answer"


def project(pytester: pytest.Pytester, passing: int, gate: str) -> None:
    pytester.makepyfile(test_answers=CASES.format(passing=passing, gate=gate))


def gate_lines(result: pytest.RunResult) -> list[str]:
    """The summary's lines of the gate (its headline and the lines under it)."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if line.startswith("llmjudge gate "))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return lines[start:end]


def gate_testcases(path: Path) -> list[dict]:
    """The JUnit testcases of gates: name, class, outcome, failure message, properties."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.get("name") != "llmjudge-gate":
            continue
        failure = case.find("failure")
        cases.append(
            {
                "classname": case.get("classname"),
                "failure": failure.get("message") if failure is not None else None,
                "properties": {p.get("name"): p.get("value") for p in case.iter("property")},
            }
        )
    return cases


def run(pytester: pytest.Pytester, live_args: list[str], *args: str, mode: str = "auto") -> pytest.RunResult:
    return pytester.runpytest(*live_args, f"--judge-mode={mode}", "-p", "no:randomly", *args)


def test_36_of_40_clears_a_pass_rate_of_90_percent(pytester, live_args):
    """Given 40 cases of which the judge passes 36, gated at pass_rate=0.9, the run passes: the four
    failed cases fail nothing alone, and the gate is reported passed, with its rate and interval."""
    project(pytester, passing=36, gate="pass_rate=0.9")
    result = run(pytester, live_args, "--junitxml=junit.xml")
    assert result.ret == 0
    result.assert_outcomes(passed=41)  # the 40 cases, and the gate
    assert gate_lines(result) == [
        f"llmjudge gate passed {GROUP}: 36 of 40 cases passed: 90.0% (95% Wilson interval 76.9% to 96.0%); "
        "gate pass_rate=0.9: rate 90.0% >= 90.0%"
    ]
    result.stdout.fnmatch_lines(["*4 below threshold (4 in repeated tests or gated groups, which decide on them)*"])
    (case,) = gate_testcases(pytester.path / "junit.xml")
    assert case["failure"] is None and case["properties"]["llmjudge.decision"] == "passed"
    assert case["properties"]["llmjudge.passed_cases"] == "36" and case["properties"]["llmjudge.cases"] == "40"


def test_34_of_40_fails_the_gate_naming_the_group_its_rate_and_its_failed_cases(pytester, live_args):
    """Given 34 of 40 passing at pass_rate=0.9, the run exits 1, the summary names the group with its rate
    and interval and each failed case with the judge's reasoning, and JUnit holds a failed gate testcase."""
    project(pytester, passing=34, gate="pass_rate=0.9")
    result = run(pytester, live_args, "--junitxml=junit.xml")
    assert result.ret == 1
    result.assert_outcomes(passed=40, failed=1)
    lines = gate_lines(result)
    assert lines[0] == (
        f"llmjudge gate FAILED {GROUP}: 34 of 40 cases passed: 85.0% (95% Wilson interval 70.9% to 92.9%); "
        "gate pass_rate=0.9: rate 85.0% < 90.0%"
    )
    assert lines[1:] == [
        f"  failed case {GROUP}[{n}]: judged 0.20 < threshold 0.70; reasoning: fake judge: found SCORE=0.2 in the output"
        for n in range(34, 40)
    ]
    result.stdout.fnmatch_lines([f"FAILED {GROUP}::llmjudge-gate - gate FAILED*"])
    (case,) = gate_testcases(pytester.path / "junit.xml")
    assert case["classname"] == "test_answers.test_answer"
    assert case["failure"].startswith(f"gate FAILED {GROUP}: 34 of 40 cases passed: 85.0%")
    assert case["properties"]["llmjudge.rate"] == "0.85"
    assert case["properties"]["llmjudge.decision"] == "failed"


def test_with_confidence_36_of_40_fails_on_the_wilson_lower_bound(pytester, live_args):
    """Given 36 of 40 at pass_rate=0.9 with confidence=0.95, the gate fails: the Wilson lower bound is about
    0.77, and the line says how many passing cases of 40 would clear it."""
    project(pytester, passing=36, gate="pass_rate=0.9, confidence=0.95")
    result = run(pytester, live_args)
    assert result.ret == 1
    assert gate_lines(result)[0] == (
        f"llmjudge gate FAILED {GROUP}: 36 of 40 cases passed: 90.0% (95% Wilson interval 76.9% to 96.0%); "
        "gate pass_rate=0.9, confidence=0.95: Wilson lower bound 76.9% < 90.0% (40 of 40 passing would clear it)"
    )


@pytest.mark.parametrize("workers", ["2", "4"])
def test_a_group_split_across_xdist_workers_is_decided_as_in_a_sequential_run(pytester, live_args, workers):
    """Given the 34-of-40 project recorded, then replayed sequentially and with -n 2 / -n 4 (its cases spread
    over the workers, decided on the controller), the exit status, the gate's summary lines and its JUnit
    testcase are the same."""
    project(pytester, passing=34, gate="pass_rate=0.9")
    assert run(pytester, live_args).ret == 1
    sequential = run(pytester, live_args, "--junitxml=one.xml", "-v", mode="replay")
    parallel = run(pytester, live_args, "--junitxml=many.xml", "-v", "-n", workers, "-p", "xdist", mode="replay")
    assert (sequential.ret, parallel.ret) == (1, 1)
    assert gate_lines(parallel) == gate_lines(sequential)
    assert gate_testcases(pytester.path / "many.xml") == gate_testcases(pytester.path / "one.xml")
    parallel.assert_outcomes(passed=40, failed=1)
    ran_on = {line.split("]")[0] for line in parallel.outlines if line.startswith("[gw") and "test_answer[" in line}
    assert len(ran_on) > 1, "the group's cases ran on more than one worker"


# -- a repeated test whose app is generate() ---------------------------------------------------------

GEN_MODEL = "openai/gen-test"
REPEATED = """
import pytest
from pytest_llmjudge import assert_judged, generate

@pytest.mark.judge(runs=5, min_passes=4)
def test_bot():
    reply = generate("{prompt}", temperature=0.7)
    assert_judged(reply, "Says returns are accepted within 30 days", threshold=0.7)
"""


class FlakyApp:
    """The model under test (gen-test): its third reply of five is wrong (the judge scores it 0.2); the
    fake judge for everything else."""

    def __init__(self) -> None:
        self.replies = 0

    def __call__(self, request: dict) -> str:
        if request.get("model") != "gen-test":
            return score_from_prompt(request)
        self.replies += 1
        score = 0.2 if self.replies == 3 else 0.9
        return f"Reply {self.replies}: returns are accepted within 30 days. SCORE={score}"


def test_five_runs_of_a_generating_test_record_five_generations_and_verdicts_and_replay_offline(pytester, monkeypatch):
    """Given runs=5, min_passes=4 on a test whose app is generate(), recorded against a model whose third
    reply is wrong, the test passes (4 of 5), with five generations and five verdicts stored, each run
    under its own key; with CI=true and the server gone it replays the same, sending nothing; and a
    changed prompt fails the replay, naming the run."""
    monkeypatch.setenv("CI", "true")  # the recording says --judge-mode=auto; the replays are CI's
    pytester.makepyfile(test_bot=REPEATED.format(prompt="Can I return shoes after 20 days?"))
    with OpenAIServer(FlakyApp()) as server:
        args = [
            f"--judge-model={MODEL}",
            f"--judge-api-base={server.base_url}",
            f"--generate-model={GEN_MODEL}",
            f"--generate-api-base={server.base_url}",
            "--judge-retries=0",
        ]
        recorded = pytester.runpytest(*args, "--judge-mode=auto", "-p", "no:randomly")
        assert server.request_count == 10, "five generations and five verdicts"
    recorded.assert_outcomes(passed=1)
    summary = [
        "llmjudge runs: test_bot.py::test_bot passed: 4 of 5 runs passed; @pytest.mark.judge(runs=5, min_passes=4) "
        "needs 4",
        "llmjudge runs: 1 repeated test, 5 runs, 1 with both passing and failing runs",
    ]
    recorded.stdout.fnmatch_lines(summary)
    (path,) = verdict_files(pytester.path)
    stored = json.loads(path.read_text())
    generations, verdicts = stored["generations"], stored["verdicts"]
    assert len(generations) == 5 and len(verdicts) == 5
    assert sorted(entry.get("run", 0) for entry in generations.values()) == [0, 1, 2, 3, 4]

    # Replayed on CI with no server: the same outcome, every run's generation and verdict from the file.
    replayed = pytester.runpytest("--judge-report=report.json", "-p", "no:randomly", "-rA")
    replayed.assert_outcomes(passed=1)
    replayed.stdout.fnmatch_lines(["llmjudge: 5 judged, 5 replayed, 0 live, 1 below threshold*", *summary])
    report = json.loads((pytester.path / "report.json").read_text())
    assert [j.get("run", 0) for j in report["judgments"]] == [0, 1, 2, 3, 4]
    (repeat,) = report["repeats"]
    assert (repeat["passed"], repeat["done"], [f["run"] for f in repeat["failed"]]) == (4, 5, [2])

    # A changed prompt: the replay misses at once, and says which run it was.
    pytester.makepyfile(test_bot=REPEATED.format(prompt="May I return shoes after 20 days?"))
    changed = pytester.runpytest("-p", "no:randomly")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(
        [
            "*no stored generation for this call of generate() (mode replay: CI detected: CI is set)",
            "*  test:  test_bot.py::test_bot",
            "*  run:   0 of runs 0 to 4",
            "*nearest stored: key *, which differs in *prompt",  # (and the model: none is configured on CI)
        ]
    )
