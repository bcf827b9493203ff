"""Prune against a recorder writing at the same time: nothing recorded meanwhile is lost.

Prune plans from the files as they are, then applies; a recorder may add an entry in between.
Applying takes each file's lock (the one recorders take), re-reads it, and removes only the
entries still as planned.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from helpers import FAKE_CONFTEST
from helpers.verdicts import verdict_files
from pytest_llmjudge import cli
from pytest_llmjudge.prune import apply_prune, find_manifest, load_manifest, plan_prune
from pytest_llmjudge.store.verdict_file import VerdictFile, verdict_filename

TESTS = """
import pytest
from pytest_llmjudge import assert_judged

def test_refund():
    assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days")

@pytest.mark.parametrize("n", range(N))
def test_many(n):
    assert_judged(f"Answer {n}. SCORE=0.9", "CRITERIA")
"""


def write_tests(pytester: pytest.Pytester, n: int, criteria: str, *, refund: bool = True) -> None:
    source = TESTS.replace("N)", f"{n})").replace("CRITERIA", criteria)
    if not refund:
        source = source.replace("def test_refund", "def _gone")
    pytester.makepyfile(test_bot=source)


def recorded_then_changed(pytester: pytest.Pytester, n: int) -> Path:
    """Record n+1 tests, then change every test_many's criteria and drop test_refund, recording again:
    each test_many file holds one unused entry, and test_refund's file is unused as a whole."""
    pytester.makeconftest(FAKE_CONFTEST)
    write_tests(pytester, n, "Answers")
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=n + 1)
    write_tests(pytester, n, "Answers well", refund=False)
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=n)
    return find_manifest(None, pytester.path)


def entry(i: int) -> dict:
    return {"model": "recorder", "reply": json.dumps({"reasoning": f"recorded meanwhile {i}", "score": 1.0})}


def key(i: int) -> str:
    return f"{i:064x}"


def stored_keys(root: Path) -> set[str]:
    return {k for p in verdict_files(root) for k in json.loads(p.read_text())["verdicts"]}


def test_entries_recorded_between_plan_and_apply_are_kept(pytester):
    manifest = recorded_then_changed(pytester, 2)
    folder = pytester.path / "judge_verdicts" / "test_bot"
    plan = plan_prune(load_manifest(manifest))
    many = [folder / verdict_filename(f"test_many[{i}]") for i in range(2)]
    assert {a.path for a in plan.actions} == {folder / "test_refund.json", *many}
    # Another process records into a file planned for deletion and into one planned for a rewrite.
    VerdictFile(folder / "test_refund.json", "test_bot.py::test_refund").put(key(1), entry(1))
    VerdictFile(many[0], "test_bot.py::test_many[0]").put(key(2), entry(2))
    apply_prune(plan)
    kept = stored_keys(pytester.path)
    assert {key(1), key(2)} <= kept, "prune removed entries recorded after it planned"
    assert len(json.loads(many[1].read_text())["verdicts"]) == 1, "the unused one went"
    assert len(json.loads(many[0].read_text())["verdicts"]) == 2
    assert json.loads((folder / "test_refund.json").read_text())["verdicts"] == {key(1): entry(1)}
    pytester.runpytest("--judge-mode=replay", "-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_an_entry_re_recorded_between_plan_and_apply_is_kept(pytester):
    manifest = recorded_then_changed(pytester, 1)
    path = pytester.path / "judge_verdicts" / "test_bot" / "test_refund.json"
    plan = plan_prune(load_manifest(manifest))
    (old,) = json.loads(path.read_text())["verdicts"]
    VerdictFile(path, "test_bot.py::test_refund").put(old, entry(3))  # refreshed by another process
    apply_prune(plan)
    assert json.loads(path.read_text())["verdicts"] == {old: entry(3)}


def test_cli_prune_with_a_concurrent_recorder_loses_nothing(pytester, monkeypatch):
    n = 40
    recorded_then_changed(pytester, n)
    folder = pytester.path / "judge_verdicts" / "test_bot"
    files = sorted(folder.glob("test_many_*.json"))
    assert len(files) == n
    # The recorder writes as each file's own test does: a file whose test is gone is pruned whole.
    tests = {path: json.loads(path.read_text())["test"] for path in files}
    monkeypatch.chdir(pytester.path)
    done = threading.Event()
    written: list[str] = []

    def record() -> None:
        i = 0
        while not done.is_set() or i < 2 * n:
            path = files[i % n]
            VerdictFile(path, tests[path]).put(key(1000 + i), entry(i))
            written.append(key(1000 + i))
            i += 1

    recorder = threading.Thread(target=record)
    recorder.start()
    try:
        assert cli.main(["prune"]) == 0
    finally:
        done.set()
        recorder.join()
    lost = set(written) - stored_keys(pytester.path)
    assert not lost, f"{len(lost)} of {len(written)} entries recorded during the prune were lost"
