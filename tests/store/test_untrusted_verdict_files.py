"""Verdict files are untrusted input: anyone can commit one.  Through pytest runs and the CLI:

* a FIFO, a device or an oversized file is refused unread, named in one line, and never hangs a
  run (its own test, or a miss that searches every verdict file) or `llmjudge stats`;
* JSON nested too deeply, or naming a field twice, is a StoreError naming the file;
* a stored score that is not a number is a StoredScoreWarning;
* an entry filed under a key it was not recorded for is a StoreError naming the file and the key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import FAKE_CONFTEST
from helpers.verdicts import verdict_files

TESTS = """
from pytest_llmjudge import assert_judged

def test_refund():
    assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days", threshold=0.7)

def test_tone():
    assert_judged("Whatever. SCORE=0.2", "Is polite", threshold=0.7)
"""

MISSING = """
from pytest_llmjudge import assert_judged

def test_new():
    assert_judged("Never judged before. SCORE=0.9", "Is new", threshold=0.7)
"""

REPLAY = ("--judge-mode=replay", "-p", "no:cacheprovider")
TIMEOUT_S = 60  # a run that hangs on a file fails here instead of hanging the suite


@pytest.fixture
def project(pytester: pytest.Pytester) -> Path:
    """A recorded project: test_refund passes, test_tone fails (its verdict is stored all the same)."""
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_bot=TESTS)
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=1, failed=1)
    return pytester.path


def own_file(project: Path, test: str = "test_refund") -> Path:
    return project / "judge_verdicts" / "test_bot" / f"{test}.json"


def only_item(path: Path) -> tuple[str, dict]:
    ((key, entry),) = json.loads(path.read_text())["verdicts"].items()
    return key, entry


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_llmjudge", *args], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


# -- files that are not regular files, or too large -------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_as_a_verdict_file_is_refused_naming_it_and_hangs_nothing(pytester, project):
    path = own_file(project)
    path.unlink()
    os.mkfifo(path)
    result = pytester.runpytest_subprocess(*REPLAY, timeout=TIMEOUT_S)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [f"*StoreError: {path}: refused to read the verdict file: not a regular file (a FIFO)*"]
    )
    assert_one_line_error(cli(project, "stats"), str(path.relative_to(project)), "a FIFO")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_another_modules_folder_does_not_hang_a_miss(pytester, project):
    fifo = project / "judge_verdicts" / "test_elsewhere" / "test_x.json"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    pytester.makepyfile(test_new=MISSING)
    result = pytester.runpytest_subprocess(*REPLAY, "test_new.py", timeout=TIMEOUT_S)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ReplayMiss*", f"*skipped a verdict file: {fifo}: *not a regular file (a FIFO)*"])


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_symlink_to_dev_zero_is_refused_unread(pytester, project):
    path = own_file(project)
    path.unlink()
    path.symlink_to("/dev/zero")
    result = pytester.runpytest_subprocess(*REPLAY, timeout=TIMEOUT_S)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([f"*StoreError: {path}: refused to read the verdict file: *a character device*"])
    assert_one_line_error(cli(project, "stats"), str(path.relative_to(project)), "a character device")


def test_an_oversized_verdict_file_is_refused_unread(pytester, project, monkeypatch):
    from pytest_llmjudge.store import verdict_file

    monkeypatch.setattr(verdict_file, "MAX_FILE_BYTES", 1000)
    path = own_file(project)
    document = json.loads(path.read_text())
    document["padding"] = "x" * 2000
    path.write_text(json.dumps(document))
    result = pytester.runpytest(*REPLAY)
    result.assert_outcomes(passed=0, failed=2)
    result.stdout.fnmatch_lines([f"*StoreError: {path}: refused to read the verdict file: * over the limit of 1000*"])
    # Said for what it is, a file too large (not a FIFO or a device): what to do is to record less.
    assert "the most a verdict file may hold" in result.stdout.str()
    assert "delete the file and record it again" in result.stdout.str()
    assert "replace it with a regular file" not in result.stdout.str()


# -- JSON that is hostile in shape ------------------------------------------------------------------


DEEP = '{"format": 1, "test": "x", "verdicts": ' + "[" * 100_000 + "]" * 100_000 + "}"


def test_json_nested_100000_deep_is_a_store_error_naming_the_file(pytester, project):
    path = own_file(project)
    path.write_text(DEEP)
    result = pytester.runpytest(*REPLAY, "-k", "refund")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*StoreError: {path}: the verdict file nests too deeply*"])
    assert "RecursionError" not in result.stdout.str()
    assert_one_line_error(cli(project, "stats"), str(path.relative_to(project)), "nests too deeply")


def test_json_nested_deep_elsewhere_does_not_break_an_unrelated_miss(pytester, project):
    deep = project / "judge_verdicts" / "test_elsewhere" / "test_x.json"
    deep.parent.mkdir()
    deep.write_text(DEEP)
    pytester.makepyfile(test_new=MISSING)
    result = pytester.runpytest(*REPLAY)
    result.assert_outcomes(passed=1, failed=2)  # test_tone fails on its score, test_new misses
    result.stdout.fnmatch_lines(["*ReplayMiss*", f"*skipped a verdict file: {deep}: *nests too deeply*"])
    assert "RecursionError" not in result.stdout.str()


def test_a_field_named_twice_is_a_store_error_naming_file_and_field(pytester, project):
    path = own_file(project)
    text = path.read_text()
    path.write_text(text.replace('"reply": ', '"reply": "{\\"score\\": 1.0}",\n      "reply": ', 1))
    assert text != path.read_text()
    result = pytester.runpytest(*REPLAY, "-k", "refund")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*StoreError: {path}: the field 'reply' appears twice in one object*"])


@pytest.mark.parametrize("score", ['"high"', "NaN", "Infinity", "true"])
def test_a_stored_score_that_is_not_a_number_is_warned_about(pytester, project, score):
    path = own_file(project)
    text = path.read_text()
    path.write_text(text.replace('"score": 0.9', f'"score": {score}'))
    assert text != path.read_text()
    result = pytester.runpytest(*REPLAY, "-k", "refund")
    result.assert_outcomes(passed=1)  # its reply decides
    result.stdout.fnmatch_lines(
        [f"*StoredScoreWarning: {path}: key * stores score *, not a number; its reply decides*"]
    )


# -- entries checked against their key --------------------------------------------------------------


def test_an_entry_copied_under_another_key_is_refused_naming_file_and_key(pytester, project):
    _, passing = only_item(own_file(project, "test_refund"))
    failing_path = own_file(project, "test_tone")
    key, _ = only_item(failing_path)
    document = json.loads(failing_path.read_text())
    document["verdicts"][key] = passing  # test_refund's passing judgment filed under test_tone's key
    failing_path.write_text(json.dumps(document, indent=2))
    result = pytester.runpytest(*REPLAY)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [f"*StoreError: {failing_path}: the entry under key {key[:12]} does not belong under it (*messages_sha256*"]
    )


def test_an_entry_of_another_model_under_a_key_is_refused(pytester, project):
    path = own_file(project)
    key, entry = only_item(path)
    path.write_text(path.read_text().replace(f'"model": "{entry["model"]}"', '"model": "openai/other"'))
    result = pytester.runpytest(*REPLAY, "-k", "refund")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*StoreError: {path}: the entry under key {key[:12]} does not belong under it*"])


def test_a_copied_entry_found_elsewhere_is_refused_and_never_adopted(pytester, project):
    _, passing = only_item(own_file(project, "test_refund"))
    key, _ = only_item(own_file(project, "test_tone"))
    own_file(project, "test_tone").unlink()
    elsewhere = project / "judge_verdicts" / "test_old" / "test_tone.json"
    elsewhere.parent.mkdir()
    elsewhere.write_text(json.dumps({"format": 1, "test": "test_old.py::test_tone", "verdicts": {key: passing}}))
    result = pytester.runpytest("--judge-mode=auto", "-k", "tone")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*StoreError: {elsewhere}: the entry under key {key[:12]} does not belong under it*"])
    assert not own_file(project, "test_tone").exists(), "a refused entry is not copied"
    assert len(verdict_files(project)) == 2
