"""One write per judgment: a judgment's entries land in one write of its verdict file, and what they say of
the case (the context, the output) is stored once per judgment, not once per call.  Files written the old
way (the case in every entry) still replay; the merge driver and prune keep working on the new ones."""

from __future__ import annotations

import json

import pytest

from helpers.verdicts import verdict_files

CONFTEST = r"""
import json, os, pytest

# Every file the store puts in place (written to a temporary file, then renamed over the verdict file).
WRITES = []
_replace = os.replace

def _counted(src, dst, *args, **kwargs):
    if "judge_verdicts" in str(dst):
        WRITES.append(os.path.basename(str(dst)))
    return _replace(src, dst, *args, **kwargs)

os.replace = _counted

@pytest.fixture(scope="session")
def judge_backend():
    def judge(messages):
        assert not os.environ.get("CI"), "a replay called the judge"
        if '"verdict"' in messages[0]["content"]:
            return json.dumps({"reasoning": "it helps", "verdict": "yes"})
        return json.dumps({"reasoning": "fine", "score": 0.9})
    judge.name = "passage-judge"
    return judge

def pytest_sessionfinish(session):
    print(f"\nverdict file writes: {sorted(WRITES)}")
"""

TESTS = """
import pytest
from pytest_llmjudge import ContextPrecision, assert_judged

PASSAGES = [f"Passage {i}: the return window of store {i} is {i} days, refunds go to the card." for i in range(30)]

def test_ranked():
    assert_judged("Within 30 days.", "Ranks the useful passages first", input="Can I return shoes?",
                  context=PASSAGES, rubric=ContextPrecision(batch=1), threshold=0.5)

def test_plain():
    assert_judged("Within 30 days.", "Says the return window", threshold=0.5)
"""


@pytest.fixture
def recorded(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_store=TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--judge-mode=auto", "-s")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["verdict file writes: ['test_plain.json', 'test_ranked.json']"])
    return pytester


def _file(pytester: pytest.Pytester, name: str) -> dict:
    (path,) = [p for p in verdict_files(pytester.path) if p.name == name]
    return json.loads(path.read_text())


def test_a_judgment_of_thirty_calls_is_one_write_with_its_context_stored_once(recorded, monkeypatch):
    path = next(p for p in verdict_files(recorded.path) if p.name == "test_ranked.json")
    text = path.read_text()
    assert text.count("the return window of store 17 is 17 days") == 1, "the context, once for the judgment"
    document = json.loads(text)
    (case,) = document["cases"].values()
    assert case["input"] == "Can I return shoes?" and len(case["context"]) == 30
    assert len(document["verdicts"]) == 30
    assert {entry["case"] for entry in document["verdicts"].values()} == set(document["cases"])
    assert all("context" not in entry and "output" not in entry for entry in document["verdicts"].values())
    plain = _file(recorded, "test_plain.json")  # a judgment of one call reads as it always has
    (entry,) = plain["verdicts"].values()
    assert "cases" not in plain and entry["output"] == "Within 30 days." and "case" not in entry

    monkeypatch.setenv("CI", "true")  # the judge refuses calls: everything replays
    recorded.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_files_written_with_the_case_in_every_entry_still_replay(recorded, monkeypatch):
    for path in verdict_files(recorded.path):
        document = json.loads(path.read_text())
        cases = document.pop("cases", {})
        for entry in document["verdicts"].values():  # the layout of files written before
            entry.update(cases.get(entry.pop("case", None), {}))
        path.write_text(json.dumps(document, indent=2, sort_keys=True))
    monkeypatch.setenv("CI", "true")
    recorded.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_re_recording_an_unchanged_judgment_changes_no_byte(recorded):
    before = {p: p.read_bytes() for p in verdict_files(recorded.path)}
    result = recorded.runpytest("-p", "no:cacheprovider", "--judge-mode=refresh", "-s")
    result.assert_outcomes(passed=2)
    assert {p: p.read_bytes() for p in verdict_files(recorded.path)} == before


TWO_JUDGMENTS = """
from pytest_llmjudge import ContextPrecision, assert_judged

def test_two():
    for store in ("north", "south") if JUDGE_SOUTH else ("north",):
        passages = [f"The {store} store takes returns for {d} days." for d in (10, 20, 30)]
        assert_judged("Within 30 days.", "Ranks well", input="Returns?", context=passages,
                      rubric=ContextPrecision(batch=1), threshold=0.5)
"""


def test_prune_drops_the_case_of_a_judgment_no_test_made(pytester, monkeypatch):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_two="JUDGE_SOUTH = True\n" + TWO_JUDGMENTS)
    pytester.runpytest("-p", "no:cacheprovider", "--judge-mode=auto").assert_outcomes(passed=1)
    (path,) = verdict_files(pytester.path)
    assert len(json.loads(path.read_text())["cases"]) == 2
    pytester.makepyfile(test_two="JUDGE_SOUTH = False\n" + TWO_JUDGMENTS)
    pytester.runpytest("-p", "no:cacheprovider", "--judge-mode=auto", "--judge-prune").assert_outcomes(passed=1)
    document = json.loads(path.read_text())
    (case,) = document["cases"].values()
    assert "north" in case["context"][0] and "south" not in path.read_text()
    assert len(document["verdicts"]) == 3
    monkeypatch.setenv("CI", "true")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
