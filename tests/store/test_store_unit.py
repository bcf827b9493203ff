"""Unit tests of the store package: keys, file names, atomic verdict file writes, the local cache and its lock."""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import diskcache
import pytest

from pytest_llmjudge.errors import StoreError
from pytest_llmjudge.keys import canonical_json, judgment_key
from pytest_llmjudge.parsing import parse_verdict
from pytest_llmjudge.store.atomic import write_atomically
from pytest_llmjudge.store.cache import CacheWarning, LocalCache
from pytest_llmjudge.store.finder import find_verdict_files
from pytest_llmjudge.store.index import VerdictIndex
from pytest_llmjudge.store.locks import default_lock_dir
from pytest_llmjudge.store.spend import SharedSpend
from pytest_llmjudge.store.verdict_file import (
    VerdictDocument,
    VerdictFile,
    VerdictFileWriteError,
    redact_entry,
    verdict_file_path,
    verdict_filename,
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
def test_verdict_file_filename_is_safe(name):
    filename = verdict_filename(name)
    assert Path(filename).name == filename and "/" not in filename and "\x00" not in filename
    assert filename.endswith(".json") and len(filename) < 200
    assert filename.isascii()


def test_verdict_file_filenames_do_not_collide_when_characters_are_replaced():
    names = ["test_p[a/b]", "test_p[a_b]", "test_p[a:b]", "test_p[a b]"]
    assert len({verdict_filename(n) for n in names}) == len(names)


def test_verdict_file_path_stays_under_the_store(tmp_path):
    path = verdict_file_path(tmp_path / "tests" / "test_m.py", "test_p[../../x]", store_root=None, rootdir=tmp_path)
    assert path.resolve().is_relative_to((tmp_path / "tests" / "judge_verdicts").resolve())
    outside = verdict_file_path(Path("/elsewhere/test_m.py"), "test_x", store_root=tmp_path / "store", rootdir=tmp_path)
    assert outside.resolve().is_relative_to((tmp_path / "store").resolve())


# -- atomic writes and the verdict file ----------------------------------------------------------------


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
from pytest_llmjudge.store.verdict_file import VerdictFile
verdict_file = VerdictFile(Path(sys.argv[1]), "test_x")
i = 1
verdict_file.put(format(i, "064x"), {"reply": "x" * 20000, "score": 0.5})
# Ready once one entry is on disk: on a loaded machine the kill may come before a second put.
print("ready", flush=True)
while True:
    i += 1
    verdict_file.put(format(i, "064x"), {"reply": "x" * 20000, "score": 0.5})
"""


def test_a_verdict_file_killed_mid_write_is_old_or_new_never_half(tmp_path):
    path = tmp_path / "judge_verdicts" / "test_m" / "test_x.json"
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        entries = VerdictDocument.read(path).entries  # raises if half-written
        assert entries and all(e["reply"] == "x" * 20000 for e in entries.values())
    # Stray temporary files of the killed writers do not disturb reading or writing.
    verdict_file = VerdictFile(path, "test_x")
    assert verdict_file.get(format(1, "064x")) is not None
    assert verdict_file.put(KEY, entry())
    assert KEY in VerdictDocument.read(path).entries


def test_verdict_file_rewrites_only_when_something_changed(tmp_path):
    path = tmp_path / "v.json"
    verdict_file = VerdictFile(path, "t::x")
    assert verdict_file.put(KEY, entry()) is True
    before = path.stat().st_mtime_ns
    time.sleep(0.01)
    assert VerdictFile(path, "t::x").put(KEY, entry()) is False
    assert path.stat().st_mtime_ns == before
    document = json.loads(path.read_text())
    assert document == {"format": 1, "test": "t::x", "verdicts": {KEY: entry()}}
    assert path.read_text().endswith("}\n")


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "is not valid JSON"),
        ("", "is not valid JSON"),
        ('\ufeff{"format": 1, "verdicts": {}}', "is not valid JSON (Unexpected UTF-8 BOM"),
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
def test_malformed_verdict_file_files_raise_naming_the_file(tmp_path, text, message):
    path = tmp_path / "test_x.json"
    path.write_text(text)
    with pytest.raises(StoreError) as info:
        VerdictDocument.read(path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_undecodable_verdict_file_file_raises_naming_the_file(tmp_path):
    path = tmp_path / "test_x.json"
    path.write_bytes(b'{"format": 1, "verdicts": {}} \xff\xfe')
    with pytest.raises(StoreError, match="test_x.json: cannot read"):
        VerdictDocument.read(path)


_RECORDER = """
import sys, time
from pathlib import Path
from pytest_llmjudge.store.verdict_file import VerdictFile
path, who, start = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
time.sleep(max(0.0, start - time.time()))
for i in range(25):
    verdict_file = VerdictFile(path, "t::x")  # each write from a fresh load, as separate test runs would
    verdict_file.get("0" * 64)
    verdict_file.put(f"{who}{i:063x}"[-64:], {"reply": f"{who} {i}", "model": who})
"""


def test_recorders_writing_one_file_at_once_keep_every_entry(tmp_path):
    """Given four processes that each add 25 entries to one verdict file at the same moments,
    then the file holds all 100 (each write re-reads the file under a cross-process lock)."""
    path = tmp_path / "judge_verdicts" / "test_m" / "t.x.json"
    start = time.time() + 1.5
    procs = [
        subprocess.Popen([sys.executable, "-c", _RECORDER, str(path), who, str(start)]) for who in ("a", "b", "c", "d")
    ]
    assert [proc.wait(60) for proc in procs] == [0, 0, 0, 0]
    entries = VerdictDocument.read(path).entries
    assert len(entries) == 100
    assert sorted({e["model"] for e in entries.values()}) == ["a", "b", "c", "d"]


def test_a_write_keeps_entries_another_process_wrote_after_this_one_loaded(tmp_path):
    path = tmp_path / "t.json"
    mine, theirs = VerdictFile(path, "t"), VerdictFile(path, "t")
    assert mine.get(KEY) is None and theirs.get(KEY) is None  # both loaded the empty file
    assert theirs.put("b" * 64, entry(0.2))
    assert mine.put(KEY, entry(0.9))
    assert sorted(VerdictDocument.read(path).entries) == [KEY, "b" * 64]
    assert mine.get("b" * 64) == entry(0.2), "the re-read file is what the verdict file now serves"


def test_no_lock_file_is_left_beside_the_verdict_files(tmp_path):
    folder = tmp_path / "judge_verdicts" / "test_m"
    VerdictFile(folder / "t.json", "t").put(KEY, entry())
    # Beside the verdict files: only the folder of temporary files, which git ignores as a whole.
    assert sorted(p.name for p in folder.iterdir()) == [".llmjudge-tmp", "t.json"]
    assert [p.name for p in (folder / ".llmjudge-tmp").iterdir()] == [".gitignore"]
    locks = tmp_path / "locks"
    VerdictFile(folder / "u.json", "u", lock_dir=locks).put(KEY, entry())
    assert locks.is_dir() and list(locks.iterdir()) == [], "the lock file goes after the write"
    assert default_lock_dir().parent == Path(tempfile.gettempdir())


def test_verdict_files_get_the_umask_permissions(tmp_path):
    old = os.umask(0o027)
    try:
        VerdictFile(tmp_path / "a.json", "a").put(KEY, entry())
        write_atomically(tmp_path / "b.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "b.txt").stat().st_mode) == 0o640


# -- redaction of what is stored ---------------------------------------------------------------------

SECRET = "sk-proj-" + "Zq8" * 12


def test_secrets_in_the_stored_fields_are_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "hunter2-correct-horse")
    path = tmp_path / "t.json"
    reply = json.dumps({"reasoning": f"It shows the key {SECRET}; logs in fine.", "score": 0.9})
    stored = {
        "reply": reply,
        "output": {"text": f"use {SECRET}", "list": ["hunter2-correct-horse", 3], SECRET: None},
        "input": f"my token is hunter2-correct-horse and {SECRET}",
        "expected": f"Bearer {SECRET}",
        "criteria": "Explains how to log in",
        "reasoning": f"It shows the key {SECRET}",
        "model": "openai/m",
        "score": 0.9,
    }
    verdict_file = VerdictFile(path, "t")
    assert verdict_file.put(KEY, stored)
    text = path.read_text()
    assert SECRET not in text and "hunter2-correct-horse" not in text
    saved = VerdictDocument.read(path).entries[KEY]
    assert saved["output"]["list"] == ["[redacted]", 3] and saved["model"] == "openai/m"
    assert saved["criteria"] == "Explains how to log in"
    # The redacted reply parses to the score the real one gave.
    assert parse_verdict(saved["reply"]).score == parse_verdict(reply).score == 0.9
    # Putting the same entry again changes nothing: redaction is idempotent.
    assert verdict_file.put(KEY, stored) is False
    assert VerdictFile(path, "t").put(KEY, saved) is False
    assert redact_entry(saved) == saved


@pytest.mark.parametrize(
    "reply",
    [
        '{"reasoning": "quotes sk-proj-AAAAAAAAAAAAAAAAAAAA", "score": 0.4}',
        "The output leaks sk-AAAAAAAAAAAAAAAAAAAAAAAA.\nSCORE: 0.3",
        '```json\n{"score": 0.7, "reasoning": "Bearer abcdefgh12345678 is shown"}\n```',
    ],
)
def test_a_redacted_reply_parses_to_the_same_score(reply):
    redacted = redact_entry({"reply": reply})["reply"]
    assert redacted != reply
    assert parse_verdict(redacted).score == parse_verdict(reply).score


def test_the_local_cache_stores_the_reply_redacted(tmp_path):
    cache = LocalCache(tmp_path / "c")
    try:
        cache.set(KEY, {"reply": f'{{"reasoning": "{SECRET}", "score": 0.5}}', "model": "m", "cost_usd": None})
        value = cache.get(KEY)
    finally:
        cache.close()
    assert value == {"reply": '{"reasoning": "[redacted]", "score": 0.5}', "model": "m"}


# -- a store that cannot be written ------------------------------------------------------------------


def test_a_file_where_the_store_folder_should_be_is_a_clear_store_error(tmp_path):
    (tmp_path / "blocked").write_text("not a folder")
    path = tmp_path / "blocked" / "test_m" / "t.json"
    verdict_file = VerdictFile(path, "t")
    assert verdict_file.get(KEY) is None, "nothing can be stored there, so nothing is"
    with pytest.raises(VerdictFileWriteError) as info:
        verdict_file.put(KEY, entry())
    error = info.value
    assert isinstance(error, StoreError)
    assert error.path == path and error.key == KEY and "Error" in error.reason
    message = str(error)
    assert str(path) in message and error.reason in message and KEY[:12] in message


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs POSIX permissions, not root")
def test_a_read_only_store_is_a_clear_store_error_and_the_file_is_untouched(tmp_path):
    folder = tmp_path / "judge_verdicts" / "test_m"
    path = folder / "t.json"
    VerdictFile(path, "t").put(KEY, entry())
    before = path.read_bytes()
    folder.chmod(0o555)
    try:
        with pytest.raises(VerdictFileWriteError, match="PermissionError") as info:
            VerdictFile(path, "t").put("b" * 64, entry())
        assert str(folder) in str(info.value)
    finally:
        folder.chmod(0o755)
    assert path.read_bytes() == before


def test_a_malformed_file_is_never_overwritten_by_a_write(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("{not json")
    with pytest.raises(StoreError, match="not valid JSON"):
        VerdictFile(path, "t").put(KEY, entry())
    assert path.read_text() == "{not json"


# -- adopting an entry found elsewhere, and releasing a finished test ----------------------------------


def test_adopt_copies_an_entry_but_never_replaces_one(tmp_path):
    path = tmp_path / "t.json"
    verdict_file = VerdictFile(path, "t")
    assert verdict_file.put(KEY, entry(0.9), replace=False) is True
    assert verdict_file.put(KEY, entry(0.1), replace=False) is False, "the file's own entry wins"
    assert VerdictDocument.read(path).entries[KEY]["score"] == 0.9
    assert KEY in verdict_file.used
    with pytest.raises(StoreError, match="has no 'reply' text"):
        verdict_file.put("b" * 64, {"score": 0.5}, replace=False)
    assert verdict_file.put(KEY, entry(0.1)) is True, "put (refresh) does replace"


def test_release_forgets_entries_but_keeps_used_keys(tmp_path):
    path = tmp_path / "t.json"
    verdict_file = VerdictFile(path, "t")
    verdict_file.put(KEY, entry())
    assert verdict_file.get(KEY) == entry()
    verdict_file.release()
    assert verdict_file.used == {KEY}
    VerdictFile(path, "t").put(KEY, entry(0.1))  # another process replaces the entry on disk
    assert verdict_file.get(KEY) == entry(0.1), "a later get reads the file again"


# -- finding a verdict wherever it is stored -----------------------------------------------------------


def _record(path: Path, key: str, **fields) -> None:
    VerdictFile(path, path.stem).put(key, {"reply": '{"score": 0.9}', "score": 0.9, **fields})


def test_the_finder_skips_tools_caches_and_virtual_environments(tmp_path):
    keep = tmp_path / "tests" / "judge_verdicts" / "test_m" / "t.json"
    _record(keep, KEY)
    for folder in (".tox/py311", "node_modules/x", "env3/lib", ".git/x", "build/cache"):
        _record(tmp_path / folder / "judge_verdicts" / "m" / "t.json", KEY)
    (tmp_path / "env3" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "build" / "cache" / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    store = tmp_path / "verdicts" / "tests" / "test_m" / "t.json"
    _record(store, KEY)
    (tmp_path / "verdicts" / "other.json").write_text('{"not": "a verdict file"}')
    (keep.parent / ".t.json.abc.tmp").write_text("{")
    assert find_verdict_files([tmp_path]) == sorted([keep, store])
    assert find_verdict_files([tmp_path], sniff=False) == [keep], "without sniffing only judge_verdicts/ counts"
    assert find_verdict_files([store]) == [store]
    with pytest.raises(FileNotFoundError, match="missing"):
        find_verdict_files([tmp_path / "missing"])


def test_the_index_finds_a_key_in_any_verdict_file_and_is_built_once(tmp_path, monkeypatch):
    elsewhere = tmp_path / "tests" / "judge_verdicts" / "test_a" / "test_it.json"
    _record(elsewhere, KEY, model="m1", criteria="c", output=f"o {SECRET}")
    store = tmp_path / "store"
    _record(store / "tests" / "test_b" / "test_it.json", "b" * 64, model="m2", criteria="c", output=f"o {SECRET}")
    (tmp_path / "tests" / "judge_verdicts" / "test_a" / "broken.json").write_text("{not json")
    with monkeypatch.context() as patched:  # built on first use, not before
        patched.setattr(VerdictDocument, "read", lambda path: pytest.fail("read before a lookup"))
        index = VerdictIndex.for_layout(tmp_path, store)
    hit = index.find(KEY)
    assert hit is not None and hit.path == elsewhere and hit.test == "test_it" and hit.entry["model"] == "m1"
    assert index.find("b" * 64).entry["model"] == "m2"
    assert index.find("c" * 64) is None
    assert len(index.problems) == 1 and "broken.json" in index.problems[0]
    # Built once: later lookups read no file.
    monkeypatch.setattr(VerdictDocument, "read", lambda path: pytest.fail("read again"))
    assert index.find("d" * 64) is None
    index.note(tmp_path / "new.json", "e" * 64, {"reply": "x", "model": "m3"}, test="t::new")
    assert index.find("e" * 64).test == "t::new"


def test_an_index_over_missing_roots_is_empty(tmp_path):
    index = VerdictIndex([(tmp_path / "nowhere", True)])
    assert index.find(KEY) is None and index.by_model() == {}


def test_adopting_from_the_index_migrates_an_entry(tmp_path):
    old = tmp_path / "judge_verdicts" / "test_m" / "test_old.json"
    _record(old, KEY, model="m")
    hit = VerdictIndex.for_layout(tmp_path).find(KEY)
    new = VerdictFile(tmp_path / "judge_verdicts" / "test_m" / "test_new.json", "test_m.py::test_new")
    assert new.get(KEY) is None
    assert new.put(hit.key, hit.entry, replace=False)
    assert new.get(KEY) == VerdictDocument.read(old).entries[KEY]
    assert json.loads(new.path.read_text())["test"] == "test_m.py::test_new"


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


@pytest.mark.parametrize(
    "busy",
    [diskcache.Timeout("database is locked"), sqlite3.OperationalError("database is locked")],
    ids=["diskcache-timeout", "sqlite-locked"],
)
def test_a_busy_database_is_skipped_not_set_aside(tmp_path, monkeypatch, busy):
    directory = fresh_cache(tmp_path)
    cache = LocalCache(directory)

    def locked(*args, **kwargs):
        raise busy

    # Another worker holds the database longer than diskcache's lock timeout (60 s: too long to wait
    # for here), so diskcache's read fails as it then would.
    with monkeypatch.context() as patch:
        patch.setattr(diskcache.Cache, "get", locked)
        with pytest.warns(CacheWarning, match="busy"):
            assert cache.get("b" * 64) is None
    assert cache.get("b" * 64) == entry(), "still in use"
    assert directory.exists() and not list(tmp_path.glob("llmjudge.broken-*")), "not set aside"
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


# -- a run's spend, shared between xdist workers --------------------------------------------------


def test_shared_spend_is_per_run_and_shared_between_processes(tmp_path):
    environ = {"PYTEST_XDIST_TESTRUNUID": "abc123", "PYTEST_XDIST_WORKER": "gw0"}
    first = SharedSpend.for_run(tmp_path / "llmjudge", environ)
    second = SharedSpend.for_run(tmp_path / "llmjudge", {**environ, "PYTEST_XDIST_WORKER": "gw1"})
    first.add(0.01)
    second.add(0.02)
    assert first.total() == pytest.approx(0.03) and second.total() == pytest.approx(0.03)
    other_run = SharedSpend.for_run(tmp_path / "llmjudge", {**environ, "PYTEST_XDIST_TESTRUNUID": "def456"})
    assert other_run.total() == 0.0
    assert not SharedSpend.for_run(tmp_path / "llmjudge", {}).shared, "outside xdist the spend stays in memory"
    assert not SharedSpend.for_run(tmp_path, {**environ, "PYTEST_XDIST_TESTRUNUID": "../../etc"}).shared


def _turns(n: int) -> dict[str, dict]:
    """A simulated conversation's n user turns as generation entries: each continues the one before."""
    entries: dict[str, dict] = {}
    messages = [{"role": "system", "content": "persona"}, {"role": "user", "content": "(start)"}]
    earlier: tuple[str, int] | None = None
    for turn in range(n):
        key = f"{turn + 1:x}" * 64
        entry = {"model": "m", "messages": [dict(m) for m in messages], "params": {}, "index": 0, "reply": f"q{turn}"}
        if earlier is not None:
            entry |= {"follows": earlier[0], "added": entry["messages"][earlier[1] :]}
        entries[key[:64]] = entry
        earlier = (key[:64], len(messages))
        messages += [{"role": "assistant", "content": f"q{turn}"}, {"role": "user", "content": f"answer {turn}"}]
    return entries


def test_a_continued_conversation_is_written_as_what_each_turn_adds_and_read_back_whole(tmp_path):
    path = tmp_path / "t.json"
    turns = _turns(4)
    store = VerdictFile(path, "t")
    for key, entry in turns.items():  # a turn at a time, as simulate records them
        store.put(key, entry, "generation")
    on_disk = json.loads(path.read_text())["generations"]
    assert [("messages" in e, len(e.get("added", []))) for e in on_disk.values()] == [(True, 0)] + [(False, 2)] * 3
    assert VerdictDocument.read(path).generations == turns  # whole again, as recorded
    assert not VerdictFile(path, "t").put_many(turns, "generation"), "recording it again changes nothing"

    # Without the turn it follows (pruned), a turn is written whole; a file naming a missing one is refused.
    document = VerdictDocument.read(path)
    del document.generations[next(iter(turns))]
    document.write()
    assert ["messages" in e for e in json.loads(path.read_text())["generations"].values()] == [True, False, False]
    assert VerdictDocument.read(path).generations == dict(list(turns.items())[1:])
    broken = json.loads(path.read_text())
    del broken["generations"][next(iter(broken["generations"]))]
    path.write_text(json.dumps(broken))
    with pytest.raises(
        StoreError, match="generation 333333333333 continues '22222222222222222222', which is not in the file"
    ):
        VerdictDocument.read(path)
    looped = json.loads(path.read_text())
    first, second = list(looped["generations"])[:2]
    looped["generations"][first]["follows"] = second  # two turns that continue each other, neither whole
    looped["generations"][second] |= {"follows": first, "added": []}
    path.write_text(json.dumps(looped))
    with pytest.raises(StoreError, match=r"continues itself \(a cycle\)"):
        VerdictDocument.read(path)
