"""A full disk while recording: the warnings say only what is true, the local cache stays usable
once space returns, and the run's summary counts the replies stored nowhere.

The disk is filled by faults injected where the plugin's writes meet the system: `os.fsync` of a
verdict file fails with ENOSPC, and SQLite's "database or disk is full" is raised from the cache's
`set`, each while a marker file exists in the test project.
"""

from __future__ import annotations

import pytest

from helpers.verdicts import verdict_files

FULL_DISK_CONFTEST = """
import errno, os, sqlite3
from pathlib import Path

import diskcache

_fsync, _set = os.fsync, diskcache.Cache.set


def fsync(fd):
    if Path("VERDICT_FILE_FULL").exists():
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return _fsync(fd)


def cache_set(self, *args, **kwargs):
    if Path("CACHE_FULL").exists():
        raise sqlite3.OperationalError("database or disk is full")
    return _set(self, *args, **kwargs)


def pytest_configure(config):
    os.fsync, diskcache.Cache.set = fsync, cache_set


def pytest_unconfigure(config):
    os.fsync, diskcache.Cache.set = _fsync, _set
"""

TESTS = """
from pathlib import Path
from pytest_llmjudge import assert_judged

def test_a():
    assert_judged("Answer a. SCORE=0.9", "Answers")

def test_b():
    assert_judged("Answer b. SCORE=0.9", "Answers")

def test_c():
    Path("CACHE_FULL").touch()  # the cache's database fills up too
    assert_judged("Answer c. SCORE=0.9", "Answers")

def test_d():
    Path("CACHE_FULL").unlink()  # some space returns
    assert_judged("Answer d. SCORE=0.9", "Answers")
"""


def test_a_full_disk_loses_only_what_nothing_could_store_and_says_so(pytester, openai_server, live_args):
    pytester.makeconftest(FULL_DISK_CONFTEST)
    pytester.makepyfile(test_bot=TESTS)
    (pytester.path / "VERDICT_FILE_FULL").touch()
    full = pytester.runpytest(*live_args, "--judge-mode=auto", "-W", "always::UserWarning")
    full.assert_outcomes(passed=4)
    assert verdict_files(pytester.path) == [], "no verdict file could be written"
    assert openai_server.request_count == 4
    out = full.stdout.str()
    assert out.count("It is kept in the local cache") == 3, "a, b and d were cached"
    full.stdout.fnmatch_lines(
        [
            "*VerdictFileWriteWarning: *key * was not stored there. The local cache could not store it either*",
            "*1 judged reply was stored nowhere (neither the verdict file nor the local cache could be written)*",
        ]
    )
    assert "moved to" not in out, "a full cache is not set aside: what it holds stays usable"

    (pytester.path / "VERDICT_FILE_FULL").unlink()  # space returns
    again = pytester.runpytest(*live_args, "--judge-mode=auto")
    again.assert_outcomes(passed=4)
    assert openai_server.request_count == 5, "only c, stored nowhere, was judged again"
    assert len(verdict_files(pytester.path)) == 4
    pytester.runpytest(*live_args, "--judge-mode=replay", "-p", "no:cacheprovider").assert_outcomes(passed=4)


@pytest.mark.parametrize("when", ["opening", "storing"])
def test_a_cache_out_of_space_is_kept_and_used_once_space_returns(tmp_path, monkeypatch, when):
    import sqlite3

    import diskcache

    from pytest_llmjudge.store.cache import LocalCache

    cache = LocalCache(tmp_path / "cache")
    cache.set("a" * 64, {"reply": "kept"})
    cache.close()
    method = "__init__" if when == "opening" else "set"
    real = getattr(diskcache.Cache, method)

    def full(self, *args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(diskcache.Cache, method, full)
    cache = LocalCache(tmp_path / "cache")
    assert cache.set("b" * 64, {"reply": "lost"}) is False
    assert not cache.keeps("b" * 64)
    assert "out of space" in cache.notices[0] and "stored nowhere" in cache.notices[-1]
    monkeypatch.setattr(diskcache.Cache, method, real)
    assert cache.set("c" * 64, {"reply": "stored"}) is True, "usable again once there is room"
    assert cache.get("a" * 64) == {"reply": "kept"}, "what it held before stays"
    cache.close()
    assert [p.name for p in tmp_path.iterdir()] == ["cache"], "nothing was set aside"
