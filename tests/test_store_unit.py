"""Unit tests of the store package: keys, file names, atomic ledger writes, the local cache and its lock."""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from pytest_llmjudge.errors import StoreError
from pytest_llmjudge.store import (
    CacheWarning,
    Ledger,
    LocalCache,
    canonical_json,
    judgment_key,
    ledger_filename,
    ledger_path,
    read_ledger_file,
    write_atomically,
)

KEY = "a" * 64


def entry(score: float = 0.9) -> dict:
    return {"reply": json.dumps({"reasoning": "ok", "score": score}), "score": score, "model": "m"}


# -- keys and names ------------------------------------------------------------------------------


def test_key_is_stable_and_order_independent():
    a = judgment_key({"model": "m", "messages": [{"role": "user", "content": "x"}], "params": {"temperature": 0}})
    b = judgment_key({"params": {"temperature": 0}, "messages": [{"content": "x", "role": "user"}], "model": "m"})
    assert a == b and len(a) == 64
    assert a != judgment_key(
        {"model": "m2", "messages": [{"role": "user", "content": "x"}], "params": {"temperature": 0}}
    )


def test_key_accepts_lone_surrogates_and_nul():
    assert judgment_key({"messages": ["\ud800 \x00"]}) != judgment_key({"messages": ["\ud801 \x00"]})


def test_canonical_json_refuses_nan():
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


@pytest.mark.parametrize(
    "name",
    [
        "test_a",
        "TestX::test_y",
        "test_p[a/b]",
        "test_p[a_b]",
        "test_p[../../etc/passwd]",
        "test_p[\x00]",
        "t" * 500,
        "test_p[ü]",
        "test_p[\ud800]",
    ],
)
def test_ledger_filename_is_safe(name):
    filename = ledger_filename(name)
    assert Path(filename).name == filename and "/" not in filename and "\x00" not in filename
    assert filename.endswith(".json") and len(filename) < 200
    assert filename.isascii()


def test_ledger_filenames_do_not_collide_when_characters_are_replaced():
    names = ["test_p[a/b]", "test_p[a_b]", "test_p[a:b]", "test_p[a b]"]
    assert len({ledger_filename(n) for n in names}) == len(names)


def test_ledger_path_stays_under_the_store(tmp_path):
    path = ledger_path(tmp_path / "tests" / "test_m.py", "test_p[../../x]", store_root=None, rootdir=tmp_path)
    assert path.resolve().is_relative_to((tmp_path / "tests" / "judge_verdicts").resolve())
    outside = ledger_path(Path("/elsewhere/test_m.py"), "test_x", store_root=tmp_path / "store", rootdir=tmp_path)
    assert outside.resolve().is_relative_to((tmp_path / "store").resolve())


# -- atomic writes and the ledger ----------------------------------------------------------------


def test_write_atomically_keeps_the_old_file_when_the_write_fails(tmp_path, monkeypatch):
    path = tmp_path / "v.json"
    write_atomically(path, "old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_atomically(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["v.json"], "the temporary file is removed"


def test_write_atomically_on_interrupt_mid_write(tmp_path, monkeypatch):
    path = tmp_path / "v.json"
    write_atomically(path, "old")
    real_fsync = os.fsync

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, "new")
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert path.read_text() == "old"
    assert len(list(tmp_path.iterdir())) == 1


_WRITER = """
import sys
from pathlib import Path
from pytest_llmjudge.store import Ledger
ledger = Ledger(Path(sys.argv[1]), "test_x")
print("ready", flush=True)
i = 0
while True:
    i += 1
    ledger.put(format(i, "064x"), {"reply": "x" * 20000, "score": 0.5})
"""


def test_a_ledger_killed_mid_write_is_old_or_new_never_half(tmp_path):
    path = tmp_path / "judge_verdicts" / "test_m" / "test_x.json"
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        entries = read_ledger_file(path)  # raises if half-written
        assert entries and all(e["reply"] == "x" * 20000 for e in entries.values())
    # Stray temporary files of the killed writers do not disturb reading or writing.
    ledger = Ledger(path, "test_x")
    assert ledger.get(format(1, "064x")) is not None
    assert ledger.put(KEY, entry())
    assert KEY in read_ledger_file(path)


def test_ledger_rewrites_only_when_something_changed(tmp_path):
    path = tmp_path / "v.json"
    ledger = Ledger(path, "t::x")
    assert ledger.put(KEY, entry()) is True
    before = path.stat().st_mtime_ns
    time.sleep(0.01)
    assert Ledger(path, "t::x").put(KEY, entry()) is False
    assert path.stat().st_mtime_ns == before
    document = json.loads(path.read_text())
    assert document == {"format": 1, "test": "t::x", "verdicts": {KEY: entry()}}
    assert path.read_text().endswith("}\n")


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "is not valid JSON"),
        ("", "is not valid JSON"),
        ("[]", "not a verdict file"),
        ('{"format": 1}', "not a verdict file"),
        ('{"format": 1, "verdicts": []}', "not a verdict file"),
        ('{"format": 99, "verdicts": {}}', "format 99"),
        ('{"format": 1, "verdicts": {"../../x": {"reply": "x"}}}', "is not a verdict key"),
        (f'{{"format": 1, "verdicts": {{"{KEY}": "x"}}}}', "is not a JSON object"),
        (f'{{"format": 1, "verdicts": {{"{KEY}": {{"score": 1.0}}}}}}', "has no 'reply' text"),
        (f'{{"format": 1, "verdicts": {{"{KEY}": {{"reply": 1.0}}}}}}', "has no 'reply' text"),
    ],
)
def test_malformed_ledger_files_raise_naming_the_file(tmp_path, text, message):
    path = tmp_path / "test_x.json"
    path.write_text(text)
    with pytest.raises(StoreError) as info:
        read_ledger_file(path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_undecodable_ledger_file_raises_naming_the_file(tmp_path):
    path = tmp_path / "test_x.json"
    path.write_bytes(b'{"format": 1, "verdicts": {}} \xff\xfe')
    with pytest.raises(StoreError, match="test_x.json: cannot read"):
        read_ledger_file(path)


# -- the local cache ------------------------------------------------------------------------------


def test_cache_round_trip_and_persistence(tmp_path):
    cache = LocalCache(tmp_path / "c")
    assert cache.get(KEY) is None
    cache.set(KEY, entry())
    assert cache.get(KEY) == entry()
    cache.close()
    again = LocalCache(tmp_path / "c")
    assert again.get(KEY) == entry()
    again.close()


def test_cache_keeps_every_entry(tmp_path):
    """Eviction is off: no verdict silently disappears."""
    cache = LocalCache(tmp_path / "c")
    for i in range(300):
        cache.set(format(i, "064x"), {"reply": "x" * 5000})
    assert all(cache.get(format(i, "064x")) for i in range(300))
    cache.close()


def crafted_row(directory: Path, key: str, *, mode: int, value, filename=None, expire_time=None) -> None:
    """A row as a hostile collaborator would commit it: straight into diskcache's SQLite table."""
    with sqlite3.connect(directory / "cache.db") as con:
        con.execute("DELETE FROM Cache WHERE key = ?", (key,))
        con.execute(
            "INSERT INTO Cache (key, raw, store_time, expire_time, access_time, access_count, tag, size, mode, filename, value)"
            " VALUES (?, 1, 0, ?, 0, 0, NULL, 0, ?, ?, ?)",
            (key, expire_time, mode, filename, value),
        )


class _Marker:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))  # unpickling creates the marker file


def fresh_cache(tmp_path: Path) -> Path:
    directory = tmp_path / "llmjudge"
    cache = LocalCache(directory)
    cache.set("b" * 64, entry())
    cache.close()
    return directory


def test_a_pickled_row_is_never_unpickled(tmp_path):
    directory = fresh_cache(tmp_path)
    marker = tmp_path / "PWNED"
    crafted_row(directory, KEY, mode=4, value=pickle.dumps(_Marker(str(marker))))  # 4: diskcache MODE_PICKLE
    cache = LocalCache(directory)
    with pytest.warns(CacheWarning, match="unusable.*mode 4, not inline text.*moved to"):
        assert cache.get(KEY) is None
    assert not marker.exists()
    assert cache.get(KEY) is None, "the cache is off for the rest of the session"
    cache.close()
    assert not directory.exists() and list(tmp_path.glob("llmjudge.broken-*")), "set aside, not deleted"
    assert not marker.exists()


@pytest.mark.parametrize("mode", [2, 3], ids=["binary-file", "text-file"])
def test_a_row_naming_a_file_is_never_read(tmp_path, mode):
    directory = fresh_cache(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text('{"reply": "stolen"}')
    crafted_row(directory, KEY, mode=mode, value=None, filename=str(secret))
    cache = LocalCache(directory)
    with pytest.warns(CacheWarning):
        assert cache.get(KEY) is None
    cache.close()


@pytest.mark.parametrize("how", ["overwritten", "expired"])
def test_a_row_naming_a_file_cannot_make_the_cache_delete_it(tmp_path, how):
    """diskcache removes the file a row names when the row is replaced or culled; ours never does."""
    directory = fresh_cache(tmp_path)
    victim = tmp_path / "victim" / "id_rsa"
    victim.parent.mkdir()
    victim.write_text("precious")
    # mode 1 (raw) with a value that is not a verdict: read back as malformed, then overwritten.
    key = KEY if how == "overwritten" else "c" * 64
    crafted_row(
        directory, key, mode=1, value="not json", filename=str(victim), expire_time=1.0 if how == "expired" else None
    )
    cache = LocalCache(directory)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cache.get(KEY) is None
    cache.set(KEY, entry())
    cache.close()
    assert victim.read_text() == "precious"


@pytest.mark.parametrize(
    "key, value",
    [("sqlite_temp_store_directory", "'/tmp'"), ("evil", "1"), ("sqlite_journal_mode", "wal; drop table Cache")],
)
def test_crafted_settings_are_refused_before_diskcache_acts_on_them(tmp_path, key, value):
    directory = fresh_cache(tmp_path)
    with sqlite3.connect(directory / "cache.db") as con:
        con.execute("INSERT OR REPLACE INTO Settings VALUES (?, ?)", (key, value))
    cache = LocalCache(directory)
    with pytest.warns(CacheWarning, match="setting"):
        assert cache.get("b" * 64) is None  # a fresh cache replaced the refused one
    cache.set(KEY, entry())
    assert cache.get(KEY) == entry()
    cache.close()


def test_a_corrupt_database_is_set_aside_and_rebuilt(tmp_path):
    directory = fresh_cache(tmp_path)
    (directory / "cache.db").write_bytes(b"this is not a database" * 100)
    for extra in directory.glob("cache.db-*"):
        extra.unlink()
    cache = LocalCache(directory)
    with pytest.warns(CacheWarning, match="unusable.*DatabaseError"):
        assert cache.get(KEY) is None
    cache.set(KEY, entry())
    assert cache.get(KEY) == entry(), "a new cache was started in its place"
    cache.close()


def test_a_zero_length_database_is_an_empty_cache(tmp_path):
    directory = fresh_cache(tmp_path)
    for path in directory.glob("cache.db*"):
        path.write_bytes(b"")
    cache = LocalCache(directory)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.get("b" * 64) is None
        cache.set(KEY, entry())
        assert cache.get(KEY) == entry()
    cache.close()


def test_a_cache_path_that_cannot_be_a_directory_means_no_cache(tmp_path):
    (tmp_path / "parent").write_text("a file where the cache's parent directory should be")
    cache = LocalCache(tmp_path / "parent" / "llmjudge")
    with pytest.warns(CacheWarning):
        assert cache.get(KEY) is None
    assert "cannot be used" in cache.notices[-1] and "going on without it" in cache.notices[-1]
    cache.set(KEY, entry())  # a no-op, not an error
    assert cache.acquire(KEY, time.monotonic() + 1) is None
    cache.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_a_read_only_cache_means_no_cache(tmp_path):
    directory = fresh_cache(tmp_path)
    for path in [*directory.iterdir(), directory, tmp_path]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        cache = LocalCache(directory)
        with pytest.warns(CacheWarning):
            cache.set(KEY, entry())
        cache.close()
    finally:
        for path in [tmp_path, directory, *directory.iterdir()]:
            path.chmod(0o755 if path.is_dir() else 0o644)


def test_cache_warnings_as_errors_do_not_break_the_run(tmp_path):
    directory = fresh_cache(tmp_path)
    (directory / "cache.db").write_bytes(b"garbage" * 100)
    cache = LocalCache(directory)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.get(KEY) is None
    assert cache.notices and "unusable" in cache.notices[0]
    cache.close()


def test_a_busy_database_is_skipped_not_set_aside(tmp_path):
    directory = fresh_cache(tmp_path)
    cache = LocalCache(directory)
    cache._open()

    def locked(_cache):
        raise sqlite3.OperationalError("database is locked")

    with pytest.warns(CacheWarning, match="busy"):
        assert cache._guarded(locked) is None
    assert cache.get("b" * 64) == entry(), "still in use"
    assert directory.exists()
    cache.close()


# -- the per-key lock between processes ----------------------------------------------------------


def _hold(directory: str, key: str, ready, release) -> None:
    cache = LocalCache(Path(directory))
    handle = cache.acquire(key, time.monotonic() + 10)
    ready.set()
    release.wait(10)
    cache.release(handle)


def test_acquire_blocks_while_another_process_holds_the_key(tmp_path):
    context = multiprocessing.get_context("spawn")
    ready, release = context.Event(), context.Event()
    holder = context.Process(target=_hold, args=(str(tmp_path / "c"), KEY, ready, release))
    holder.start()
    try:
        assert ready.wait(30)
        cache = LocalCache(tmp_path / "c")
        started = time.monotonic()
        handle = cache.acquire(KEY, time.monotonic() + 0.5)  # gives up waiting at the deadline
        assert 0.45 <= time.monotonic() - started < 2
        cache.release(handle)
        other = cache.acquire("d" * 64, time.monotonic() + 5)  # another key is not blocked
        cache.release(other)
        release.set()
        started = time.monotonic()
        handle = cache.acquire(KEY, time.monotonic() + 10)
        assert time.monotonic() - started < 5
        cache.release(handle)
    finally:
        release.set()
        holder.join(10)
