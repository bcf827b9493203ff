"""What writing verdicts leaves behind: no temporary file for `git add`, no growing lock directory.

* A write killed half-way leaves its temporary file in a folder git ignores, and the next write
  (or a prune) removes it once stale; temporary files earlier versions left beside the verdict files go too.
* Lock files are removed after each write; a lock directory someone else could have made (a plain
  file, a directory others can write to) is not used, and a LockDirWarning says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from helpers import FAKE_CONFTEST
from helpers.verdicts import verdict_files

TESTS = """
from pytest_llmjudge import assert_judged

def test_refund():
    assert_judged("Returns within 30 days. SCORE=0.9", "Says returns are accepted within 30 days")

def test_tone():
    assert_judged("Thanks for asking! SCORE=0.8", "Is polite")

def test_other():
    assert_judged("Hello. SCORE=0.6", "Greets the user")
"""

KILLED_MID_WRITE = """
import os, signal, sys
from pathlib import Path
from pytest_llmjudge.store.verdict_file import VerdictFile

os.replace = lambda *args: os.kill(os.getpid(), signal.SIGKILL)  # killed just before the rename
VerdictFile(Path(sys.argv[1]), "test_bot.py::test_x").put("ab" * 32, {"reply": '{"score": 1.0}', "model": "m"})
"""


@pytest.fixture
def temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temp dir the plugin sees (where its lock directory goes), private to this test."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))  # where untrusted locks move
    return folder


def lock_dir(temp_dir: Path) -> Path:
    return temp_dir / f"pytest-llmjudge-locks-{os.getuid()}"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def make_old(path: Path) -> None:
    old = time.time() - 3600
    os.utime(path, (old, old))


# -- temporary files ----------------------------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
def test_a_write_killed_midway_leaves_nothing_git_add_takes(tmp_path):
    git(tmp_path, "init", "-q")
    target = tmp_path / "judge_verdicts" / "test_bot" / "test_x.json"
    killed = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE, str(target)], cwd=tmp_path, timeout=60)
    assert killed.returncode == -9
    leftovers = [p for p in tmp_path.rglob("*.tmp")]
    assert leftovers, "the kill left a temporary file, as a real one does"
    git(tmp_path, "add", "judge_verdicts")
    staged = git(tmp_path, "diff", "--cached", "--name-only").split()
    assert staged == [], f"git add staged {staged}"


def test_the_next_write_and_prune_remove_stale_temporary_files(pytester):
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_bot=TESTS.split("def test_tone")[0])
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=1)
    folder = pytester.path / "judge_verdicts" / "test_bot"
    beside = folder / ".test_refund.json.6oucvgtm.tmp"  # as earlier versions left them
    beside.write_text('{"format": 1, "verdi')
    fresh = folder / ".test_refund.json.inflight.tmp"  # a write in progress elsewhere
    fresh.write_text("")
    make_old(beside)
    pytester.makepyfile(test_bot=TESTS.split("def test_other")[0])
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=2)
    assert not beside.exists(), "the next write removes a stale temporary file"
    assert fresh.exists(), "a recent one may be a write in progress"

    make_old(fresh)
    pytester.runpytest("--judge-mode=auto", "--judge-prune").assert_outcomes(passed=2)
    assert not fresh.exists(), "prune removes stale temporary files"
    assert [p.name for p in verdict_files(pytester.path)] == ["test_refund.json", "test_tone.json"]


# -- lock files ----------------------------------------------------------------------------------------


def test_lock_files_are_removed_after_each_write(pytester, temp_dir):
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_bot=TESTS)
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=3)
    assert len(verdict_files(pytester.path)) == 3
    assert lock_dir(temp_dir).is_dir()
    assert sorted(p.name for p in lock_dir(temp_dir).iterdir()) == []


def test_a_lock_directory_removed_after_it_was_checked_is_made_again(tmp_path, temp_dir):
    from pytest_llmjudge.store.verdict_file import VerdictFile

    verdict_file = VerdictFile(tmp_path / "judge_verdicts" / "test_m" / "t.json", "t")
    assert verdict_file.put("a" * 64, {"reply": '{"score": 1.0}'})
    lock_dir(temp_dir).rmdir()  # a temp-dir cleaner between two writes
    assert verdict_file.put("b" * 64, {"reply": '{"score": 0.0}'})
    assert lock_dir(temp_dir).is_dir()


def test_the_local_caches_lock_files_are_removed_after_each_call(pytester):
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_bot=TESTS)
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=3)
    locks = pytester.path / ".pytest_cache" / "d" / "llmjudge.locks"
    assert locks.is_dir()
    assert list(locks.iterdir()) == []


def test_stale_lock_files_of_earlier_runs_are_swept(pytester, temp_dir):
    folder = lock_dir(temp_dir)
    folder.mkdir(mode=0o700)
    for i in range(50):
        (folder / f"{i:032x}.lock").write_text("")
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_bot=TESTS)
    pytester.runpytest("--judge-mode=auto").assert_outcomes(passed=3)
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("squatted", ["a plain file", "a directory others can write to"])
def test_a_lock_directory_someone_else_could_have_made_is_not_used(pytester, temp_dir, squatted):
    folder = lock_dir(temp_dir)
    if squatted == "a plain file":
        folder.write_text("not a directory")
    else:
        folder.mkdir()
        folder.chmod(0o777)
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_bot=TESTS)
    result = pytester.runpytest("--judge-mode=auto", "-W", "always::UserWarning")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines([f"*LockDirWarning: llmjudge: not using the lock directory {folder} (*"])
    assert "VerdictFileWriteWarning" not in result.stdout.str()
    assert len(verdict_files(pytester.path)) == 3, "every verdict was stored all the same"
    if folder.is_dir():
        assert list(folder.iterdir()) == [], "no lock file was made in it"
    pytester.runpytest("--judge-mode=replay", "-p", "no:cacheprovider").assert_outcomes(passed=3)
    for path in verdict_files(pytester.path):
        assert json.loads(path.read_text())["verdicts"]
