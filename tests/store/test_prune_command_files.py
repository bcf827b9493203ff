"""Prune removes the verdicts of tests that no longer exist, and never a command's own verdict files
(`judge_verdicts/calibration/`, `judge_verdicts/qualification/` at the rootdir), which no test uses."""

from __future__ import annotations

import hashlib

from helpers import FAKE_CONFTEST
from pytest_llmjudge.store.verdict_file import VerdictDocument

JUDGED_AT_THE_ROOT = """
from pytest_llmjudge import assert_judged

def test_refund():
    assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days", threshold=0.7)
"""


def test_prune_keeps_the_commands_verdict_files_beside_a_root_test_module(pytester):
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_root=JUDGED_AT_THE_ROOT)
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=1)
    entry = {"reply": '{"reasoning": "r", "winner": "A"}', "model": "m", "sample": 0}
    kept = []
    for command, name in (("qualification", "GPTInst"), ("calibration", "labels"), ("test_gone", "test_old")):
        path = pytester.path / "judge_verdicts" / command / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        VerdictDocument(path, f"{command}::{name}", {hashlib.sha256(name.encode()).hexdigest(): entry}).write()
        kept.append(path)
    pytester.runpytest("--judge-mode=auto", "--judge-prune").assert_outcomes(passed=1)
    qualification, calibration, gone = kept
    assert qualification.is_file() and calibration.is_file(), "a command's files are no test's to prune"
    assert not gone.exists(), "the verdicts of a module that no longer exists still go"


def test_every_commands_folder_is_known_to_prune():
    from pytest_llmjudge.calibration.command import COMMAND as CALIBRATION
    from pytest_llmjudge.qualification.runner import COMMAND as QUALIFICATION
    from pytest_llmjudge.runtime import COMMAND_FOLDERS

    assert set(COMMAND_FOLDERS) == {CALIBRATION, QUALIFICATION}
