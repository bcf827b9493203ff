"""The JSON report, per-judgment lines (-rA, -v), the summary, and drift in refresh mode (also under xdist)."""

from __future__ import annotations

import json
import re

import pytest

from helpers import FAKE_CONFTEST

JUDGED = """
import pytest
from pytest_llmjudge import assert_judged

def test_good():
    assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days", threshold=0.7)

def test_near():
    assert_judged("Returns within 30 days, mostly. SCORE=0.75", "Says returns are accepted within 30 days", threshold=0.7)

def test_bad():
    assert_judged("No returns, ever. SCORE=0.2", "Says returns are accepted within 30 days", threshold=0.7)

def test_garbled():
    assert_judged("GARBLE", "Is readable")

def test_samples(judge):
    verdict = judge.score("Action items: a, b. SCORE=0.8", "Mentions every action item", samples=2)
    assert verdict.passed

def test_plain():
    assert True
"""

FIELDS = (
    "nodeid",
    "criteria",
    "rubric",
    "score",
    "threshold",
    "passed",
    "verdict",
    "confidence",
    "reasoning",
    "model",
    "source",
    "key",
    "samples",
    "cost_usd",
    "latency_s",
    "status",
    "drift",
    "test_outcome",
)


def _setup(pytester: pytest.Pytester, body: str = JUDGED) -> None:
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_refunds=body)


def test_json_report_has_every_judgment_with_its_fields(pytester):
    _setup(pytester)
    result = pytester.runpytest("--judge-mode=auto", "--judge-report=out/report.json")
    result.assert_outcomes(passed=4, failed=2)
    path = pytester.path / "out" / "report.json"
    result.stdout.fnmatch_lines([f"llmjudge: wrote JSON report {path}"])
    document = json.loads(path.read_text())
    assert document["format"] == 1 and document["exitstatus"] == 1
    assert document["settings"]["mode"] == "auto"
    judgments = {j["nodeid"].split("::")[1]: j for j in document["judgments"]}
    assert sorted(judgments) == ["test_bad", "test_garbled", "test_good", "test_near", "test_samples"]

    good = judgments["test_good"]
    for name in FIELDS:
        assert name in good, name
    assert good["score"] == pytest.approx(0.9) and good["threshold"] == 0.7 and good["passed"] is True
    assert good["status"] == "passed" and good["source"] == "live" and good["model"] == "fake-judge"
    assert re.fullmatch(r"[0-9a-f]{64}", good["key"])
    assert good["reasoning"] == "fake judge gave 0.9"
    assert good["latency_s"] is not None and good["latency_s"] >= 0 and good["live_calls"] == 1
    assert "SCORE=0.9" in good["output"] and good["test_outcome"] == "passed"
    assert judgments["test_near"]["status"] == "near"
    bad = judgments["test_bad"]
    assert bad["status"] == "failed" and bad["passed"] is False and bad["test_outcome"] == "failed"
    garbled = judgments["test_garbled"]
    assert garbled["status"] == "error" and garbled["error"] == "VerdictParseError" and "key" in garbled
    samples = judgments["test_samples"]
    assert len(samples["samples"]) == 2 and samples["live_calls"] == 2
    assert {s["sample"] for s in samples["samples"]} == {0, 1}

    totals = document["totals"]
    # judge.score with no threshold is scored, not passed; the unparseable reply was a live call too.
    assert samples["status"] == "scored"
    assert totals == {
        **totals,
        "judged": 5,
        "passed": 2,
        "scored": 1,
        "near_threshold": 1,
        "failed": 1,
        "errors": 1,
        "live": 4,
        "live_calls": 7,  # the unreadable reply was asked again for its format: two calls
        "replayed": 0,
        "cached": 0,
        "drifted": 0,
    }
    assert totals["errors_by_type"] == {"VerdictParseError": 1}
    assert not [p for p in path.parent.iterdir() if p.name != "report.json"], "no temporary file is left behind"


def test_replayed_judgments_are_reported_as_replayed_with_no_live_calls(pytester):
    _setup(pytester)
    pytester.runpytest("--judge-mode=auto")
    result = pytester.runpytest("--judge-mode=replay", "--judge-report=report.json")
    result.assert_outcomes(passed=4, failed=2)
    document = json.loads((pytester.path / "report.json").read_text())
    verdicts = [j for j in document["judgments"] if j["status"] != "error"]
    assert {j["source"] for j in verdicts} == {"replayed"}
    assert all(j["latency_s"] is None and j["live_calls"] == 0 for j in verdicts)
    assert document["totals"]["live_calls"] == 0 and document["totals"]["replayed"] == 4
    assert document["settings"]["mode"] == "replay"


def test_each_judged_test_lists_cost_and_latency_in_rA_and_v_output(pytester):
    _setup(pytester)
    result = pytester.runpytest("--judge-mode=auto", "-rA")
    result.stdout.fnmatch_lines(
        [
            "*_ test_good _*",
            "*- llmjudge -*",
            "PASS 0.90 >= 0.70  live  fake-judge  cost unknown  *.** s  key *  Says returns are accepted within 30 days",
        ]
    )
    result.stdout.fnmatch_lines(["FAIL 0.20 < 0.70  live  fake-judge  cost unknown  *"])
    result.stdout.fnmatch_lines(
        [
            "llmjudge: 5 judged, 0 replayed, 4 live, 1 below threshold, 1 scored without a threshold, 1 unparseable, cost unknown",
            "llmjudge: 7 live judge calls, *.** s judging (slowest *)",  # GARBLE was asked again
        ]
    )
    result = pytester.runpytest("--judge-mode=replay", "-v")
    result.stdout.fnmatch_lines(
        ["  test_refunds.py::test_bad  FAIL 0.20 < 0.70  replayed  fake-judge  $0.0000  -  key *"]
    )
    assert "live judge call" not in result.stdout.str(), "nothing went live: no timing line"


def test_no_report_and_no_summary_when_nothing_is_judged(pytester):
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert "llmjudge:" not in result.stdout.str() and "llmjudge drift" not in result.stdout.str()


def test_report_from_ini_is_written_relative_to_rootdir(pytester):
    _setup(pytester)
    pytester.makeini("[pytest]\njudge_report = reports/judged.json\n")
    sub = pytester.mkdir("elsewhere")
    result = pytester.runpytest(
        "--judge-mode=auto", f"--rootdir={pytester.path}", str(pytester.path), "-p", "no:cacheprovider"
    )
    assert (pytester.path / "reports" / "judged.json").exists(), result.stdout.str()
    assert not (sub / "reports").exists()


def test_refresh_reports_drift_in_summary_and_report(pytester, monkeypatch):
    body = """
from pytest_llmjudge import assert_judged

def test_moves_and_flips():
    assert_judged("WORD=a SCORE=0.9", "criteria a", threshold=0.7)

def test_moves_a_little():
    assert_judged("WORD=b SCORE=0.9", "criteria b", threshold=0.5)

def test_moves_within_drift():
    assert_judged("WORD=c SCORE=0.9", "criteria c", threshold=0.5)

def test_steady():
    assert_judged("WORD=d SCORE=0.9", "criteria d", threshold=0.5)
"""
    _setup(pytester, body)
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=4)
    monkeypatch.setenv("FAKE_SCORE_a", "0.3")
    monkeypatch.setenv("FAKE_SCORE_b", "0.6")
    monkeypatch.setenv("FAKE_SCORE_c", "0.85")
    result = pytester.runpytest("--judge-mode=refresh", "--judge-drift=0.2", "--judge-report=r.json")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "llmjudge drift: test_refunds.py::test_moves_a_little key *: 0.90 -> 0.60",
            "llmjudge drift: test_refunds.py::test_moves_and_flips key *: 0.90 -> 0.30, pass/fail flipped",
        ]
    )
    assert "test_moves_within_drift key" not in result.stdout.str() and "test_steady key" not in result.stdout.str()
    document = json.loads((pytester.path / "r.json").read_text())
    assert [(d["test"].split("::")[1], d["flipped"]) for d in document["drift"]] == [
        ("test_moves_a_little", False),
        ("test_moves_and_flips", True),
    ]
    by_test = {j["nodeid"].split("::")[1]: j for j in document["judgments"]}
    assert by_test["test_moves_and_flips"]["drift"] == {"old": 0.9, "new": 0.3, "flipped": True}
    assert by_test["test_steady"]["drift"] is None
    assert document["totals"]["drifted"] == 2


def test_xdist_report_merges_every_worker_and_keeps_their_drift(pytester, monkeypatch):
    body = "\n".join(
        [
            "import pytest",
            "from pytest_llmjudge import assert_judged",
            "",
            "@pytest.mark.parametrize('n', range(8))",
            "def test_many(n):",
            "    assert_judged(f'WORD=w{n} SCORE=0.9', f'criteria {n}', threshold=0.5)",
        ]
    )
    _setup(pytester, body)
    pytester.runpytest_subprocess("-n", "2", "--judge-mode=auto").assert_outcomes(passed=8)
    for n in (1, 4, 6):
        monkeypatch.setenv(f"FAKE_SCORE_w{n}", "0.1")
    result = pytester.runpytest_subprocess("-n", "2", "--judge-mode=refresh", "--judge-report=r.json")
    result.assert_outcomes(passed=5, failed=3)
    document = json.loads((pytester.path / "r.json").read_text())
    assert [j["nodeid"] for j in document["judgments"]] == sorted(f"test_refunds.py::test_many[{n}]" for n in range(8))
    assert len({j["key"] for j in document["judgments"]}) == 8
    assert sorted(d["test"] for d in document["drift"]) == [f"test_refunds.py::test_many[{n}]" for n in (1, 4, 6)]
    result.stdout.fnmatch_lines(["llmjudge: 8 judged, 0 replayed, 8 live, 3 below threshold*"])
    assert result.stdout.str().count("llmjudge drift:") == 3
    assert result.stdout.str().count("llmjudge: wrote JSON report") == 1
    assert sorted(p.name for p in pytester.path.iterdir() if p.suffix == ".json") == ["r.json"]


def test_summary_never_shows_a_real_spend_as_zero():
    from pytest_llmjudge.reporting.terminal import Tally, format_usd

    assert format_usd(0.0) == "$0.0000"
    assert format_usd(0.00001) == "<$0.0001"
    assert format_usd(0.0312) == "$0.0312"
    records = [{"source": "live", "passed": True, "cost_usd": 0.00002}]
    assert Tally.of(records).sentence().endswith(", <$0.0001")


def test_worker_notices_reach_the_summary_under_xdist(pytester, openai_server, live_args):
    # A corrupt local cache is set aside by each worker that opens it; the notice must not die
    # with the worker.
    cache = pytester.path / "judge-cache"
    cache.mkdir()
    (cache / "cache.db").write_bytes(b"this is not a sqlite database" * 100)
    pytester.makepyfile(
        """
        import pytest
        from pytest_llmjudge import assert_judged

        @pytest.mark.parametrize("n", range(4))
        def test_judged(n):
            assert_judged(f"answer {n} SCORE=0.9", "is good")
        """
    )
    result = pytester.runpytest(
        *live_args,
        "--judge-mode=auto",
        f"--judge-cache-dir={cache}",
        "-n",
        "2",
        "-p",
        "xdist",
        "-W",
        "ignore::UserWarning",
    )
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["llmjudge: 4 judged*", "llmjudge: local cache *judge-cache* was unusable*"])


def test_summary_counts_errors_by_their_kind():
    from pytest_llmjudge.reporting.terminal import Tally

    records = [
        {"error": "VerdictParseError", "error_kind": "unparseable"},
        {"error": "ReplayMiss"},  # a record without error_kind: counted by its class
        {"error": "SomeNewError", "error_kind": "over budget"},
        {"error": "StoreError", "error_kind": "error"},
    ]
    assert Tally.of(records).sentence() == (
        "llmjudge: 4 judged, 0 replayed, 0 live, 0 below threshold, 1 unparseable, 1 missing, 1 over budget, 1 other errors, $0.0000"
    )


def test_a_rerun_reports_each_attempts_judgments_once_marked_with_its_attempt(pytester):
    """Given a test judged in two attempts (pytest-rerunfailures), the JSON report lists each
    attempt's judgment once with its attempt number, and JUnit carries the final attempt's only."""
    pytest.importorskip("pytest_rerunfailures")
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(
        """
        from pathlib import Path
        from pytest_llmjudge import assert_judged

        def test_flaky():
            marker = Path(__file__).with_name("attempted")
            assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days")
            if not marker.exists():
                marker.write_text("1")
                raise AssertionError("first attempt fails")
            assert_judged("Thanks! SCORE=0.8", "Is polite")
        """
    )
    result = pytester.runpytest("--judge-mode=auto", "--reruns=1", "--judge-report=r.json", "--junitxml=out.xml")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["llmjudge: 3 judged, *"])
    judgments = json.loads((pytester.path / "r.json").read_text())["judgments"]
    assert [(j["criteria"], j["attempt"]) for j in judgments] == [
        ("Says returns are accepted within 30 days", 1),
        ("Says returns are accepted within 30 days", 2),
        ("Is polite", 2),
    ]
    xml = (pytester.path / "out.xml").read_text()
    assert xml.count('name="llmjudge.score"') == 2, "the final attempt's two judgments"


def test_cost_reads_unknown_when_unpriced_and_says_so_when_partly_priced():
    from pytest_llmjudge.reporting.terminal import Tally

    priced = {"source": "live", "passed": True, "threshold": 0.5, "cost_usd": 0.001}
    unpriced = {"source": "live", "passed": True, "threshold": 0.5, "cost_usd": None}
    replayed = {"source": "replayed", "passed": True, "threshold": 0.5, "cost_usd": 0.0}
    assert Tally.of([unpriced, replayed]).sentence().endswith(", cost unknown")
    assert Tally.of([priced, unpriced]).sentence().endswith(", at least $0.0010 (1 of 2 live calls unpriced)")
    assert Tally.of([priced, replayed]).sentence().endswith(", $0.0010")
    # The pipeline's own counts win: an unparseable reply was a live call, and it was not priced.
    unparseable = {"error": "VerdictParseError", "error_kind": "unparseable", "live_calls": 1, "unpriced_calls": 1}
    assert Tally.of([priced, unparseable]).sentence().endswith(", at least $0.0010 (1 of 2 live calls unpriced)")


def test_a_score_given_no_threshold_is_reported_as_scored_not_passed():
    from pytest_llmjudge.reporting.json_report import judgment_status
    from pytest_llmjudge.reporting.terminal import Tally, judgment_lines

    scored = {"source": "replayed", "score": 0.5, "threshold": 0.5, "passed": True, "asserted": False, "key": "ab" * 32}
    failed = {"source": "replayed", "score": 0.2, "threshold": 0.7, "passed": False, "key": "cd" * 32}
    assert judgment_lines([scored])[0].startswith("SCORED 0.50  replayed")
    assert judgment_status(scored) == "scored"
    sentence = Tally.of([scored, failed]).sentence()
    assert sentence.startswith(
        "llmjudge: 2 judged, 2 replayed, 0 live, 1 below threshold, 1 scored without a threshold, 0 unparseable"
    )


def test_without_a_report_the_run_keeps_counters_not_records(pytester):
    """Given a judged run with no JSON/HTML report and no -v, the summary is complete while the
    run holds no record: none in the recorder, none left on pytest's stored test reports."""
    pytester.makeconftest(
        FAKE_CONFTEST
        + """

@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter, config):
    recorder = config.pluginmanager.get_plugin("llmjudge-recorder")
    reports = [r for reports in terminalreporter.stats.values() for r in reports]
    held = [r for r in reports if hasattr(r, "llmjudge")]
    open("held.txt", "w").write(f"{len(recorder.records)} {len(held)} {len(reports)}")
"""
    )
    pytester.makepyfile(JUDGED)
    result = pytester.runpytest("--judge-mode=auto")
    result.stdout.fnmatch_lines(
        [
            "llmjudge: 5 judged, 0 replayed, 4 live, 1 below threshold, 1 scored without a threshold, 1 unparseable, cost unknown"
        ]
    )
    records, held, reports = map(int, (pytester.path / "held.txt").read_text().split())
    assert reports > 0 and (records, held) == (0, 0)
