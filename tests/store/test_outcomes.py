"""A verdict file's "outcomes": what each judgment decided, written by the store's writer with its entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import FAKE_CONFTEST
from helpers.verdicts import verdict_files
from pytest_llmjudge.errors import StoreError
from pytest_llmjudge.store.verdict_file import VerdictDocument

TESTS = """
from pytest_llmjudge import assert_judged

THRESHOLD = {threshold!r}
ANSWERS = {answers!r}

def test_answers(judge):
    for answer in ANSWERS:
        assert_judged(answer, "Is polite", threshold=THRESHOLD)
    judge.score("Plain. SCORE=0.4", "Is short")
"""


def write(pytester: pytest.Pytester, answers: list[str], threshold: float = 0.5) -> None:
    pytester.makepyfile(test_bot=TESTS.format(answers=answers, threshold=threshold))


def run(pytester: pytest.Pytester, mode: str) -> pytest.RunResult:
    return pytester.runpytest(f"--judge-mode={mode}", "-p", "no:cacheprovider")


def the_file(root: Path) -> Path:
    (path,) = verdict_files(root)
    return path


@pytest.fixture
def recorded(pytester: pytest.Pytester) -> Path:
    pytester.makeconftest(FAKE_CONFTEST)
    write(pytester, ["Hello. SCORE=0.9", "Hi. SCORE=0.8"])
    run(pytester, "auto").assert_outcomes(passed=1)
    return the_file(pytester.path)


def test_each_judgment_keeps_the_projection_of_its_record(recorded):
    document = json.loads(recorded.read_text())
    outcomes = sorted(document["outcomes"].values(), key=lambda o: (o["criteria"], o.get("position", 0)))
    assert outcomes == [
        {"criteria": "Is polite", "passed": True, "rubric": "score", "score": 0.9, "threshold": 0.5},
        {"criteria": "Is polite", "passed": True, "position": 1, "rubric": "score", "score": 0.8, "threshold": 0.5},
        {"criteria": "Is short", "rubric": "score", "score": 0.4},  # a score with no threshold decides nothing
    ]
    assert set(document["outcomes"]) <= set(document["verdicts"])  # under the judgment's (first call's) key


def test_re_recording_an_unchanged_verdict_changes_no_byte(pytester, recorded):
    before = recorded.read_bytes()
    run(pytester, "auto").assert_outcomes(passed=1)
    run(pytester, "refresh").assert_outcomes(passed=1)
    assert recorded.read_bytes() == before


def test_replay_never_writes_and_auto_brings_a_file_without_outcomes_up_to_date(pytester, recorded):
    document = json.loads(recorded.read_text())
    outcomes = document.pop("outcomes")
    recorded.write_text(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    old = recorded.read_bytes()
    run(pytester, "replay").assert_outcomes(passed=1)  # a file without the section still replays
    assert recorded.read_bytes() == old
    run(pytester, "auto").assert_outcomes(passed=1)  # every verdict replayed; the outcomes written
    assert json.loads(recorded.read_text())["outcomes"] == outcomes


def test_a_stored_outcome_that_differs_is_brought_up_to_date(pytester, recorded):
    write(pytester, ["Hello. SCORE=0.9", "Hi. SCORE=0.8"], threshold=0.85)  # same keys: the threshold is not keyed
    run(pytester, "replay").assert_outcomes(failed=1)
    assert all(
        o.get("threshold") == 0.5 for o in json.loads(recorded.read_text())["outcomes"].values() if "threshold" in o
    )
    run(pytester, "auto").assert_outcomes(failed=1)
    decided = {
        o.get("position", 0): o for o in json.loads(recorded.read_text())["outcomes"].values() if "threshold" in o
    }
    assert (decided[0]["passed"], decided[1]["passed"]) == (True, False)
    assert {o["threshold"] for o in decided.values()} == {0.85}


def test_a_changed_output_takes_its_place_and_its_old_entry_stays_until_pruned(pytester, recorded):
    old = json.loads(recorded.read_text())
    write(pytester, ["Hello. SCORE=0.9", "Go away. SCORE=0.1"])
    run(pytester, "auto").assert_outcomes(failed=1)
    new = json.loads(recorded.read_text())
    assert set(old["verdicts"]) < set(new["verdicts"])  # the old judgment's entry is still there
    assert len(new["outcomes"]) == 3  # but only the latest judgment at each place has an outcome
    second = [o for o in new["outcomes"].values() if o.get("position") == 1]
    assert [o["score"] for o in second] == [0.1]

    pytester.runpytest("--judge-mode=auto", "--judge-prune").assert_outcomes(failed=1)  # a failed run prunes nothing
    write(pytester, ["Hello. SCORE=0.9", "Go away. SCORE=0.6"])
    run(pytester, "auto").assert_outcomes(passed=1)
    pytester.runpytest("--judge-mode=auto", "--judge-prune").assert_outcomes(passed=1)
    pruned = json.loads(recorded.read_text())
    assert set(pruned["outcomes"]) == set(pruned["verdicts"])  # prune keeps the outcomes of what stays


def test_outcomes_are_redacted_as_everything_written(pytester, monkeypatch):
    pytester.makeconftest(FAKE_CONFTEST)
    monkeypatch.setenv("SERVICE_TOKEN", "tok-1234567890abcdef")
    pytester.makepyfile(
        test_secret="""
import os
from pytest_llmjudge import assert_judged

def test_secret():
    assert_judged("Fine. SCORE=0.9", "Never says " + os.environ["SERVICE_TOKEN"])
"""
    )
    run(pytester, "auto").assert_outcomes(passed=1)
    text = the_file(pytester.path).read_text()
    assert "tok-1234567890abcdef" not in text
    (outcome,) = json.loads(text)["outcomes"].values()
    assert outcome["criteria"] == "Never says [redacted]"


def test_a_malformed_outcomes_section_is_named_where_it_is_read(pytester, recorded):
    document = json.loads(recorded.read_text())
    key = next(iter(document["outcomes"]))
    document["outcomes"][key]["score"] = "high"
    recorded.write_text(json.dumps(document, indent=2))
    run(pytester, "replay").assert_outcomes(passed=1)  # replay does not read what it does not use
    with pytest.raises(StoreError, match=rf"the outcome of key {key[:12]} has 'score' 'high', not a number"):
        _ = VerdictDocument.read(recorded).outcomes


def test_the_merge_driver_keeps_the_outcomes(pytester, recorded, tmp_path):
    from pytest_llmjudge.store.merge import merge_verdict_files

    base = tmp_path / "base.json"
    base.write_text("")
    ours = tmp_path / "ours.json"
    ours.write_bytes(recorded.read_bytes())
    theirs = tmp_path / "theirs.json"
    theirs.write_bytes(recorded.read_bytes())
    assert merge_verdict_files(base, ours, theirs).clean
    assert json.loads(ours.read_text())["outcomes"] == json.loads(recorded.read_text())["outcomes"]


def test_a_repeated_tests_judgments_count_their_positions_within_their_run(pytester):
    """Given the same test body recorded plainly and then with runs=3, every run's outcomes are the plain
    test's (the same positions, 0 and 1 for the two judgments of one criteria), each later run's naming
    its run: a judgment pairs with the same one of the next recording, run for run."""
    pytester.makeconftest(FAKE_CONFTEST)
    write(pytester, ["Hello. SCORE=0.9", "Hi. SCORE=0.8"])
    run(pytester, "auto").assert_outcomes(passed=1)
    plain = sorted(json.loads(the_file(pytester.path).read_text())["outcomes"].values(), key=json.dumps)
    the_file(pytester.path).unlink()
    pytester.runpytest("--judge-mode=auto", "-p", "no:cacheprovider", "--judge-runs=3").assert_outcomes(passed=1)
    outcomes = json.loads(the_file(pytester.path).read_text())["outcomes"].values()
    assert len(outcomes) == 3 * len(plain)
    for each in range(3):
        in_run = [{k: v for k, v in o.items() if k != "run"} for o in outcomes if o.get("run", 0) == each]
        assert sorted(in_run, key=json.dumps) == plain, f"run {each}"
