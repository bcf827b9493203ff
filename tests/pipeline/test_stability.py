"""Stable verdicts: samples, the inconclusive band, panels of judge models, concurrency bounds."""

from __future__ import annotations

import json
import re
import threading

import pytest

from helpers.runtime import own_judges
from pytest_llmjudge.pipeline.aggregate import combine_panel, undecided

# -- units ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scores", "combined", "band", "expected"),
    [
        ([0.6, 0.4, 0.55], 0.516667, 0.05, True),  # near the threshold and split: undecided
        ([0.52, 0.53, 0.54], 0.53, 0.05, False),  # near, but unanimous: a decision
        ([0.9, 0.1, 0.2], 0.4, 0.05, False),  # split, but clearly under
        ([0.6, 0.4], 0.5, 0.0, False),  # no band, never undecided
        ([0.55], 0.55, 0.1, False),  # one sample cannot disagree with itself
        ([0.45, 0.6], 0.55, 0.05, True),  # the band's edge is inside
    ],
)
def test_undecided_rule(scores, combined, band, expected):
    assert undecided(scores, combined, 0.5, band) is expected


def test_a_panel_combines_each_model_first_and_measures_agreement_over_every_sample():
    # Given one model judging five times and another once
    combined = combine_panel({"a": [0.9, 0.9, 0.9, 0.9, 0.9], "b": [0.2]}, 0.5, "mean")
    # Then each model counts once in the score, but every sample counts in agreement and spread
    assert combined.score == 0.55
    assert combined.per_model == {"a": 0.9, "b": 0.2}
    assert (combined.agreement, combined.spread) == (round(5 / 6, 6), 0.7)


def test_one_sample_has_no_agreement_or_spread():
    combined = combine_panel({"m": [0.6]}, 0.5, "mean")
    assert (combined.score, combined.agreement, combined.spread) == (0.6, None, None)


def scripted_by_criteria(scripts: dict[str, list[float]]):
    """A responder that answers each criteria's calls with its scores, in arrival order."""
    lock = threading.Lock()
    queues = {k: list(v) for k, v in scripts.items()}

    def respond(request: dict) -> str:
        user = request["messages"][-1]["content"]
        criteria = re.search(r"Criteria:\n(.*)", user).group(1).strip()
        with lock:
            score = queues[criteria].pop(0)
        return json.dumps({"reasoning": f"{criteria} -> {score}", "score": score})

    return respond


SAMPLE_TESTS = """
import pytest
from pytest_llmjudge import assert_judged

OUT = "Returns are accepted within 30 days."

def test_five_samples_mean(judge):
    v = judge.score(OUT, "mean5", samples=5)
    assert v.score == 0.7 and len(v.samples) == 5 and len(set(v.keys)) == 5
    assert sorted(s.score for s in v.samples) == [0.3, 0.6, 0.8, 0.9, 0.9]
    assert sorted(s.sample for s in v.samples) == [0, 1, 2, 3, 4]
    assert (v.agreement, v.spread, v.undecided, v.passed) == (0.8, 0.6, False, True)

@pytest.mark.judge(samples=3, aggregate="majority")
def test_majority_from_marker(judge):
    v = judge.assert_judged(OUT, "majority3")
    assert v.score == 0.8 and v.agreement == pytest.approx(2 / 3)

@pytest.mark.judge(samples=3, aggregate="majority")
def test_majority_fails():
    assert_judged(OUT, "majority-fail")

def test_undecided_within_band():
    assert_judged(OUT, "split", samples=3, band=0.05)

@pytest.mark.judge(samples=3, band=0.05)
def test_unanimous_near_threshold_passes(judge):
    v = judge.assert_judged(OUT, "unanimous")
    assert v.score == 0.53 and not v.undecided
"""
SAMPLE_SCRIPTS = {
    "mean5": [0.9, 0.8, 0.3, 0.9, 0.6],
    "majority3": [0.9, 0.2, 0.7],
    "majority-fail": [0.2, 0.3, 0.9],
    "split": [0.6, 0.4, 0.55],
    "unanimous": [0.52, 0.53, 0.54],
}
SAMPLE_FAILURES = [
    "*test_majority_fails*",
    "*JudgmentFailed: judged 0.25 < threshold 0.50",
    "*samples:   3 (agreement 67%, spread 0.70): openai/judge-test#0=*",
    "*test_undecided_within_band*",
    "*JudgmentFailed: judge undecided: 0.52 is within the inconclusive band around 0.50",
    "*samples:   3 (agreement 67%, spread 0.20)*",
]


def test_samples_majority_and_band_record_then_replay(pytester, openai_server, live_args):
    openai_server.set_responder(scripted_by_criteria(SAMPLE_SCRIPTS))
    # With no latency, concurrent samples can finish before the next one arrives, under load.
    openai_server.latency_s = 0.2
    pytester.makepyfile(test_samples=SAMPLE_TESTS)
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(SAMPLE_FAILURES)
    assert openai_server.request_count == 5 + 3 * 4
    assert openai_server.max_in_flight >= 2, "a judgment's samples run concurrently"

    result = pytester.runpytest(*live_args, "--judge-mode=replay")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(SAMPLE_FAILURES)
    assert openai_server.request_count == 17, "replay must not call the judge"


def test_samples_from_the_command_line(pytester, openai_server, live_args):
    pytester.makepyfile(
        """
        def test_it(judge):
            v = judge.score("SCORE=0.8", "anything")
            assert len(v.samples) == 4 and v.score == 0.8 and v.spread == 0.0
        """
    )
    pytester.runpytest(*live_args, "--judge-mode=live", "--judge-samples=4").assert_outcomes(passed=1)
    assert openai_server.request_count == 4


PANEL = "openai/judge-a,openai/judge-b,openai/judge-c"
PANEL_TESTS = """
import pytest
from pytest_llmjudge import assert_judged

OUT = "Returns are accepted within 30 days."
PER_MODEL = {"openai/judge-a": 0.9, "openai/judge-b": 0.8, "openai/judge-c": 0.2}

def test_panel_mean(judge):
    v = judge.score(OUT, "panel mean")
    assert v.score == pytest.approx(0.633333) and v.per_model == PER_MODEL
    assert v.details["per_model"] == PER_MODEL and v.model == "openai/judge-a,openai/judge-b,openai/judge-c"
    assert len(v.keys) == 3 and v.agreement == pytest.approx(2 / 3)

@pytest.mark.judge(aggregate="majority")
def test_panel_majority(judge):
    v = judge.assert_judged(OUT, "panel majority", threshold=0.7)
    assert v.score == 0.85

def test_panel_fails_with_each_model_score():
    assert_judged(OUT, "panel fails", threshold=0.7)

def test_two_model_panel_from_the_argument(judge):
    v = judge.score(OUT, "two", model=["openai/judge-a", "openai/judge-c"])
    assert v.per_model == {"openai/judge-a": 0.9, "openai/judge-c": 0.2} and v.score == 0.55
"""
PANEL_FAILURES = [
    "*JudgmentFailed: judged 0.63 < threshold 0.70",
    "*panel:     openai/judge-a=0.90, openai/judge-b=0.80, openai/judge-c=0.20",
]


def by_model(request: dict) -> str:
    score = {"judge-a": 0.9, "judge-b": 0.8, "judge-c": 0.2}[request["model"]]
    return json.dumps({"reasoning": f"{request['model']} says {score}", "score": score})


def test_panel_judges_concurrently_then_replays(pytester, openai_server, live_args):
    openai_server.set_responder(by_model)
    openai_server.latency_s = 0.2
    args = [a for a in live_args if not a.startswith("--judge-model")] + [f"--judge-model={PANEL}"]
    pytester.makepyfile(test_panel=PANEL_TESTS)
    result = pytester.runpytest(*args, "--judge-mode=auto")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(PANEL_FAILURES)
    assert openai_server.request_count == 3 + 3 + 3 + 2
    assert sorted({r["model"] for r in openai_server.requests}) == ["judge-a", "judge-b", "judge-c"]
    assert openai_server.max_in_flight == 3, "the panel's calls run at the same time"

    result = pytester.runpytest(*args, "--judge-mode=replay")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(PANEL_FAILURES)
    assert openai_server.request_count == 11, "replay must not call the judge"


@pytest.mark.parametrize(("concurrency", "in_flight"), [("1", 1), ("2", 2), ("8", 4)])
def test_calls_in_one_judgment_are_bounded_by_concurrency(pytester, openai_server, live_args, concurrency, in_flight):
    openai_server.latency_s = 0.1
    pytester.makepyfile(
        """
        def test_it(judge):
            assert len(judge.score("SCORE=0.8", "anything", samples=4).samples) == 4
        """
    )
    # Structured output off: the first call to a model not yet seen in this process goes alone (it
    # finds which response_format the model takes), and the test must not depend on what ran before.
    result = pytester.runpytest(
        *live_args, "--judge-mode=live", f"--judge-concurrency={concurrency}", "--judge-structured=off"
    )
    result.assert_outcomes(passed=1)
    assert openai_server.max_in_flight == in_flight


# -- replay with no judge configured: the recorded model is found ---------------------------------

RECORDED = """
from pytest_llmjudge import assert_judged

def test_refund():
    assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days")
"""


def test_replay_without_a_model_uses_the_recorded_one_and_misses_as_usual_when_none_matches(
    pytester, openai_server, live_args
):
    # Given a verdict recorded with a configured model,
    pytester.makepyfile(test_refund=RECORDED)
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    # when replay runs with no model at all, it finds the recorded model by its key,
    result = pytester.runpytest("--judge-mode=replay")
    result.assert_outcomes(passed=1)
    (header,) = [line for line in result.stdout.lines if line.startswith("llmjudge: mode")]
    assert "openai/judge-test" not in header, "the header claims no model"
    # and when the output changed, no stored model gives its key: the usual replay miss, with a model to record.
    pytester.makepyfile(test_refund=RECORDED.replace("SCORE=0.9", "SCORE=0.8"))
    result = pytester.runpytest("--judge-mode=replay")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no stored verdict for this judgment*", "*differs in output*", "*--judge-model=*"])
    assert openai_server.request_count == 1


def test_the_rest_of_the_store_is_read_once_and_a_broken_file_there_is_skipped(tmp_path):
    from pytest_llmjudge.store.index import VerdictIndex

    folder = tmp_path / "judge_verdicts" / "test_mod"
    folder.mkdir(parents=True)
    key = "a" * 64
    entry = {"reply": '{"score": 0.9}', "model": "m"}
    (folder / "test_old.json").write_text(json.dumps({"format": 1, "test": "t", "verdicts": {key: entry}}))
    (folder / "test_broken.json").write_text("{ not json")
    (tmp_path / "unrelated.json").write_text("{}")
    elsewhere = VerdictIndex.for_layout(tmp_path)
    found = elsewhere.find(key)
    assert found is not None and (found.path, found.entry) == (folder / "test_old.json", entry)
    assert elsewhere.find("b" * 64) is None
    assert len(elsewhere.problems) == 1 and "test_broken.json" in elsewhere.problems[0]


def test_a_failed_verdict_write_keeps_the_paid_verdict_and_says_so(pytester, openai_server, live_args):
    # Given a test whose verdict file cannot be written (a read-only file system; root ignores chmod),
    pytester.makepyfile(test_refund=RECORDED)
    pytester.makeconftest(
        """
        import errno, pytest
        from pytest_llmjudge.store.verdict_file import VerdictFile

        @pytest.fixture(autouse=True)
        def read_only_tree(monkeypatch):
            def put_many(self, entries, *args, **kwargs):
                raise OSError(errno.EROFS, "Read-only file system", str(self.path))
            monkeypatch.setattr(VerdictFile, "put_many", put_many)
        """
    )
    result = pytester.runpytest(*live_args, "--judge-mode=auto")
    # then the test passes on the paid verdict, with a plain notice and no traceback,
    result.assert_outcomes(passed=1)
    assert "Traceback" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*cannot write the verdict file*test_refund*local cache*writes it*"])
    assert openai_server.request_count == 1
    # and the next writable run stores it from the local cache, without paying again.
    (pytester.path / "conftest.py").unlink()
    pytester.runpytest(*live_args, "--judge-mode=auto").assert_outcomes(passed=1)
    assert openai_server.request_count == 1
    assert list(pytester.path.glob("judge_verdicts/test_refund/*.json"))


def test_records_count_every_live_call_and_a_score_without_a_threshold_has_none(pytester, openai_server, live_args):
    pytester.makepyfile(
        """
        import pytest
        from pytest_llmjudge import JudgeError, assert_judged

        def test_scored(judge):
            assert judge.score("Returns within 30 days. SCORE=0.5", "Says the return window").score == 0.5

        def test_asserted():
            assert_judged("Returns within 30 days. SCORE=0.9", "Says the return window")

        def test_unparseable(judge):
            with pytest.raises(JudgeError):
                judge.score("no score here, NOSCORE", "Says the return window")
        """
    )
    from helpers.openai_server import score_from_prompt

    openai_server.set_responder(
        lambda request: (
            "I cannot say."
            if any("NOSCORE" in m["content"] for m in request["messages"] if m["role"] == "user")
            else score_from_prompt(request)
        )
    )
    result = pytester.runpytest(*live_args, "--judge-mode=auto", "--judge-report=report.json")
    result.assert_outcomes(passed=3)
    judgments = {
        j["nodeid"].split("::")[1]: j for j in json.loads((pytester.path / "report.json").read_text())["judgments"]
    }
    assert judgments["test_scored"]["threshold"] is None
    assert judgments["test_asserted"]["threshold"] == 0.5
    # The unreadable reply was asked again once for its format (--judge-parse-retries defaults to 1).
    assert [judgments[t]["live_calls"] for t in ("test_scored", "test_asserted", "test_unparseable")] == [1, 1, 2]


@pytest.mark.parametrize("band", [0.7, -0.1, True, "0.1"])
def test_a_band_outside_its_range_is_a_clear_error(band):
    from pytest_llmjudge import JudgeError

    # Judges of their own (live, nothing stored), so the judgments stay out of this session's summary.
    with own_judges(mode="live") as make_judge:
        judge = make_judge(lambda messages: '{"reasoning": "fine", "score": 0.9}')
        with pytest.raises(JudgeError, match=r"band must be a number in \[0, 0.5\]"):
            judge.score("Returns within 30 days.", "Says the return window", band=band)
        # from a Judge's own settings too, and a band in range judges as usual
        with pytest.raises(JudgeError, match="band must be"):
            make_judge(lambda messages: "{}", band=band).score("x", "Says the return window")
        assert judge.score("Returns within 30 days.", "Says the return window", band=0.1).score == 0.9
