"""Pass-rate gates on a group, through pytest itself: where the marker is placed is the group, the
session decides it from the cases' reports, and what is not a judgment's failure still fails its test.
The judge is the fake `judge_backend` of the helpers (it scores the SCORE=x in the output).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from helpers import FAKE_CONFTEST


@pytest.fixture
def fake(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(FAKE_CONFTEST)
    return pytester


def gate_lines(result: pytest.RunResult) -> list[str]:
    return [
        line
        for line in result.outlines
        if line.startswith(("llmjudge gate ", "  failed case", "  not counted", "  part of"))
    ]


def test_a_module_and_a_class_are_groups_and_a_closer_gate_is_its_own(fake):
    """Given a module gated at 0.5 holding a class gated at 1.0 and a function with a gate of its own, each
    marker's place is a group: the class's cases are decided by the class's gate, the function's by its own,
    the module's by what remains."""
    fake.makepyfile(
        test_groups="""
        import pytest
        from pytest_llmjudge import assert_judged

        pytestmark = pytest.mark.judge(pass_rate=0.5)

        def judged(score):
            assert_judged(f"An answer. SCORE={score}", "Is right", threshold=0.7)

        def test_module_a():
            judged(0.9)

        def test_module_b():
            judged(0.2)

        @pytest.mark.judge(pass_rate=1.0)
        class TestStrict:
            def test_one(self):
                judged(0.9)

            def test_two(self):
                judged(0.2)

        @pytest.mark.judge(pass_rate=0.75)
        @pytest.mark.parametrize("score", [0.9, 0.9, 0.9, 0.2])
        def test_cases(score):
            judged(score)
        """
    )
    result = fake.runpytest("--judge-mode=auto", "-p", "no:randomly")
    assert result.ret == 1
    result.assert_outcomes(passed=10, failed=1)  # 8 cases, 2 gates passed, 1 failed
    assert [line.split(": ")[0] for line in gate_lines(result) if line.startswith("llmjudge")] == [
        "llmjudge gate passed test_groups.py",
        "llmjudge gate FAILED test_groups.py::TestStrict",
        "llmjudge gate passed test_groups.py::test_cases",
    ]
    result.stdout.fnmatch_lines(
        [
            "llmjudge gate FAILED test_groups.py::TestStrict: 1 of 2 cases passed: 50.0%*; gate pass_rate=1: rate "
            "50.0% < 100.0%",
            "  failed case test_groups.py::TestStrict::test_two: judged 0.20 < threshold 0.70; reasoning: fake judge "
            "gave 0.2",
            "FAILED test_groups.py::TestStrict::llmjudge-gate*",
        ]
    )


def test_a_crash_in_a_gated_case_fails_its_test_and_is_not_counted(fake):
    """Given a gated group whose one case crashes (no judgment's failure), that test fails as usual and the
    gate decides on the other cases, naming the one it did not count."""
    fake.makepyfile(
        test_crash="""
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.judge(pass_rate=0.5)
        @pytest.mark.parametrize("n", range(3))
        def test_case(n):
            if n == 0:
                raise RuntimeError("the app crashed")
            assert_judged(f"Answer {n}. SCORE=0.9", "Is right", threshold=0.7)
        """
    )
    result = fake.runpytest("--judge-mode=auto", "-p", "no:randomly")
    result.assert_outcomes(passed=3, failed=1)  # two cases and the gate; the crash
    assert gate_lines(result) == [
        "llmjudge gate passed test_crash.py::test_case: 2 of 2 cases passed: 100.0% (95% Wilson interval 34.2% to "
        "100.0%); gate pass_rate=0.5: rate 100.0% >= 50.0%",
        "  not counted: test_crash.py::test_case[0] (its test failed on its own)",
    ]
    result.stdout.fnmatch_lines(["FAILED test_crash.py::test_case[0] - RuntimeError: the app crashed"])


def test_a_gate_whose_cases_make_no_judgment_fails_saying_so(fake):
    """Given a gate on tests that judge nothing, the run fails: the gate has no judged case, and each test
    that made no judgment is named."""
    fake.makepyfile(
        test_empty="""
        import pytest

        @pytest.mark.judge(pass_rate=0.9)
        @pytest.mark.parametrize("n", range(2))
        def test_case(n):
            pass
        """
    )
    result = fake.runpytest("--judge-mode=auto", "-p", "no:randomly")
    assert result.ret == 1
    assert gate_lines(result) == [
        "llmjudge gate FAILED test_empty.py::test_case: 0 of 0 cases passed; gate pass_rate=0.9: no judged case to "
        "decide on",
        "  not counted: test_empty.py::test_case[0] (it made no judgment)",
        "  not counted: test_empty.py::test_case[1] (it made no judgment)",
    ]


@pytest.mark.parametrize(
    ("gate", "ret", "line"),
    [
        ("mean_score=0.7", 0, "gate mean_score=0.7: mean score 0.75 >= 0.70"),
        ("mean_score=0.8", 1, "gate mean_score=0.8: mean score 0.75 < 0.80"),
        # t(0.975, 3) = 3.182; s = 0.3 (scores 0.9, 0.9, 0.9, 0.3), so 0.75 - 3.182 * 0.15 = 0.27
        (
            "mean_score=0.5, confidence=0.95",
            1,
            "gate mean_score=0.5, confidence=0.95: mean score lower bound 0.27 < 0.50",
        ),
    ],
)
def test_a_mean_score_gate(fake, gate, ret, line):
    """Given four cases scored 0.9, 0.9, 0.9 and 0.3, a gate on their mean score (0.75) passes or fails as
    its figure says; with confidence=, on the lower bound of the mean's Student-t interval."""
    fake.makepyfile(
        test_mean=f"""
        import pytest

        @pytest.mark.judge({gate})
        @pytest.mark.parametrize("score", [0.9, 0.9, 0.9, 0.3])
        def test_case(judge, score):
            judge.assert_judged(f"An answer. SCORE={{score}}", "Is right", threshold=0.1)
        """
    )
    result = fake.runpytest("--judge-mode=auto", "-p", "no:randomly")
    assert result.ret == ret
    result.stdout.fnmatch_lines([f"llmjudge gate * mean score 0.75 (95% Student-t interval 0.27 to 1.00); {line}"])


def test_the_json_and_html_reports_carry_each_group_with_its_cases(fake):
    fake.makepyfile(  # a module name no test module of this suite has (an in-process run imports it)
        test_gated_report="""
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.judge(pass_rate=0.9)
        @pytest.mark.parametrize("score", [0.9, 0.2])
        def test_case(score):
            assert_judged(f"An answer. SCORE={score}", "Is right", threshold=0.7)
        """
    )
    fake.runpytest("--judge-mode=auto", "--judge-report=report.json", "--judge-html=report.html").assert_outcomes(
        passed=2, failed=1
    )
    report = json.loads((fake.path / "report.json").read_text())
    (gate,) = report["gates"]
    assert gate["group"] == "test_gated_report.py::test_case" and gate["decision"] == "failed"
    assert gate["gate"] == {"pass_rate": 0.9} and (gate["passed_cases"], gate["judged_cases"]) == (1, 2)
    assert gate["rate"]["method"] == "wilson" and gate["rate"]["estimate"] == 0.5
    assert [(c["nodeid"], c["status"]) for c in gate["cases"]] == [
        ("test_gated_report.py::test_case[0.2]", "failed"),
        ("test_gated_report.py::test_case[0.9]", "passed"),
    ]
    assert "judged 0.20 < threshold 0.70" in gate["cases"][0]["failures"][0]
    assert {j["group"] for j in report["judgments"]} == {"test_gated_report.py::test_case"}
    html = (fake.path / "report.html").read_text()
    assert "Gate test_gated_report.py::test_case: failed" in html and "test_case[0.2]" in html


def test_a_repeated_case_in_a_gated_group_is_decided_by_its_runs(fake):
    """Given a gated function whose cases run three times (two must pass), a case with one failed run passes
    and one with two failed runs is the group's failed case, with its runs' reasoning."""
    fake.makepyfile(
        test_both="""
        import itertools
        import pytest
        from pytest_llmjudge import assert_judged

        RUNS = {"a": itertools.count(), "b": itertools.count()}

        @pytest.mark.judge(runs=3, min_passes=2, pass_rate=1.0)
        @pytest.mark.parametrize("case", ["a", "b"])
        def test_case(case):
            run = next(RUNS[case])
            failing = {"a": {1}, "b": {0, 2}}[case]
            score = 0.2 if run in failing else 0.9
            assert_judged(f"Case {case} run {run}. SCORE={score}", "Is right", threshold=0.7)
        """
    )
    result = fake.runpytest("--judge-mode=auto", "-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "llmjudge gate FAILED test_both.py::test_case: 1 of 2 cases passed*",
            "  failed case test_both.py::test_case[b]: 1 of 3 runs passed; @pytest.mark.judge(runs=3, min_passes=2) "
            "needs 2; reasoning: fake judge gave 0.2",
        ]
    )


def test_a_gate_that_sees_part_of_its_group_says_so(fake):
    """Given a gated group narrowed with -k (as a shard sees part of it), the gate decides on the cases that
    ran and says part of the group did not run here."""
    fake.makepyfile(
        test_part="""
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.judge(pass_rate=0.5)
        @pytest.mark.parametrize("n", range(4))
        def test_case(n):
            assert_judged(f"Answer {n}. SCORE=0.9", "Is right", threshold=0.7)
        """
    )
    result = fake.runpytest("--judge-mode=auto", "-k", "test_case[0] or test_case[1]")
    result.assert_outcomes(passed=3)
    assert gate_lines(result)[1:] == [
        "  part of the group did not run here (-k, -m or a shard): the gate decided on the cases that ran"
    ]


@pytest.mark.slow
def test_a_sharded_run_gates_on_its_shard_and_says_it_saw_part_of_the_group(fake):
    """Given pytest-shard (which narrows the items without telling plugins), each shard's gate decides on
    the cases of that shard, and says it saw part of the group."""
    fake.makepyfile(
        test_shard="""
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.judge(pass_rate=0.5)
        @pytest.mark.parametrize("n", range(8))  # pytest-shard's hash puts 6 in shard 0 and 2 in shard 1
        def test_case(n):
            assert_judged(f"Answer {n}. SCORE=0.9", "Is right", threshold=0.7)
        """
    )
    counted = 0
    for shard in ("0", "1"):
        result = fake.runpytest("--judge-mode=auto", "--num-shards=2", f"--shard-id={shard}")
        headline, *rest = gate_lines(result)
        counted += int(headline.split(": ")[1].split(" of ")[1].split(" ")[0])
        assert rest == [
            "  part of the group did not run here (-k, -m or a shard): the gate decided on the cases that ran"
        ]
    assert counted == 8


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        (
            "pass_rate=1.5",
            "@pytest.mark.judge(pass_rate=...) must be a number above 0 and at most 1 (0.9 is 90%), got 1.5",
        ),
        ("pass_rate=0", "@pytest.mark.judge(pass_rate=...) must be a number above 0 and at most 1 (0.9 is 90%), got 0"),
        (
            "mean_score=-0.1",
            "@pytest.mark.judge(mean_score=...) must be a number between 0 and 1 (0.9 is 90%), got -0.1",
        ),
        (
            "confidence=0.95",
            "@pytest.mark.judge(confidence=...) on test_bad.py::test_case gates on nothing: give pass_rate= or "
            "mean_score= in the same marker*",
        ),
        (
            "pass_rate=0.9, confidence=95",
            "@pytest.mark.judge(confidence=...): a confidence level is a number between 0 and 1 (such as 0.95), got 95",
        ),
        (
            "runs=3, min_passes=4",
            "@pytest.mark.judge(min_passes=4) needs more passing runs than the test has (runs=3): min_passes must be "
            "between 1 and runs",
        ),
        ("runs=0", "@pytest.mark.judge(runs=...) must be a whole number >= 1, got 0"),
        ("runs=2.5", "@pytest.mark.judge(runs=...) must be a whole number >= 1, got 2.5"),
        ("runs=3, min_passes=2, min_pass_rate=0.5", "@pytest.mark.judge: give min_passes= or min_pass_rate=, not both"),
        ("runs=3, min_pass_rate=1.2", "@pytest.mark.judge(min_pass_rate=...) must be a number above 0 and at most 1*"),
    ],
)
def test_a_bad_suite_marker_fails_each_test_at_setup_saying_what_is_wrong(fake, marker, message):
    """Given a bad runs or gate argument, each test under it errors at setup with a one-line message naming the
    argument and what it takes: nothing passes silently, no traceback from inside the plugin, and no gate."""
    fake.makepyfile(
        test_bad=f"""
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.judge({marker})
        @pytest.mark.parametrize("n", range(2))
        def test_case(n):
            assert_judged(f"Answer {{n}}. SCORE=0.9", "Is right", threshold=0.7)
        """
    )
    result = fake.runpytest("--judge-mode=auto")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines([f"test_bad.py::test_case[[]0[]]: {message}"])
    assert "Traceback" not in result.stdout.str() and "llmjudge gate" not in result.stdout.str()


SECRET = "sk-suite-canary-5e1f7a"
LEAKY_SUITE = """
import itertools, os
import pytest
from pytest_llmjudge import assert_judged

RUNS = itertools.count()

@pytest.mark.judge(runs=2, pass_rate=1.0)
@pytest.mark.parametrize("token", [os.environ["SERVICE_TOKEN"]], ids=[os.environ["SERVICE_TOKEN"]])
def test_leaky(token):
    score = 0.2 if next(RUNS) == 0 else 0.9
    assert_judged(f"Reply SCORE={score}", f"Never says {token}", threshold=0.7)
"""


def test_a_secret_in_a_gated_repeated_case_reaches_no_gate_line_report_or_file(fake, monkeypatch):
    """Given a secret (in a key-named variable) in a repeated, gated case's test id and criteria, whose first
    run fails, the case is counted (its test found by pytest's node id) and the secret appears in none of
    the plugin's summary lines, gate text, sections, JUnit properties, reports or verdict files (pytest's own
    lines and JUnit names show a test id as pytest has it)."""
    monkeypatch.setenv("SERVICE_TOKEN", SECRET)
    fake.makepyfile(test_leaky=LEAKY_SUITE)
    reports = ["--junitxml=junit.xml", "--judge-report=report.json", "--judge-html=report.html", "-rA"]
    result = fake.runpytest("--judge-mode=auto", "-p", "no:cacheprovider", *reports)
    result.assert_outcomes(passed=1, failed=1)  # the case (its runs failed: a failed case), and its gate
    result.stdout.fnmatch_lines(["llmjudge gate FAILED test_leaky.py::test_leaky: 0 of 1 case passed*"])
    ours = [line for line in result.outlines if "llmjudge" in line or "runs passed" in line or "Never says" in line]
    shown = result.stdout.str().partition("= FAILURES =")[2].partition("= short test summary")[0]
    failures = "\n".join(line for line in shown.splitlines() if not line.startswith("_"))  # not pytest's headings
    junit = ET.parse(fake.path / "junit.xml").getroot()
    properties = [p.get("value") or "" for p in junit.iter("property")]
    files = [p.read_text() for p in fake.path.rglob("*") if p.is_file() and p.suffix in (".json", ".html")]
    assert properties and files and failures
    for text in [*ours, failures, *properties, *files]:
        assert SECRET not in text
    assert not [p for p in fake.path.rglob("*") if SECRET in str(p)]
