"""Where verdicts live: keys, the committed ledger files, and the local cache.

Two tiers.  The *ledger* is the source of truth for replay: one readable JSON file per test item,
sorted, with no timestamps or costs, so that re-recording an unchanged verdict changes no byte
and a review diff shows only what the judge said differently.  The *local cache* (diskcache) sits
under it, git-ignored, keyed the same way, and spares repeated calls across tests and re-records.

Both are untrusted input: a ledger file may be hand-edited and a cache directory may be shared.
Files are parsed as JSON and validated; cache rows are read back only when they hold inline text,
so no row can make the cache unpickle, or read a file named by the row.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .errors import StoreError
from .keys import canonical_json, judgment_key  # noqa: F401  (re-exported for callers of store)

# Bump when the prompt template or the stored format changes meaning: every key changes with it.
LEDGER_FORMAT = 1

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.\-]")


class CacheWarning(UserWarning):
    """The local cache was unusable and was set aside; the run goes on without it."""


def ledger_filename(test_name: str) -> str:
    """A file name for a test (`TestX::test_y[a/b]`), unique even where characters were replaced."""
    cleaned = _UNSAFE_NAME.sub("_", test_name.replace("::", "."))
    if cleaned != test_name.replace("::", ".") or len(cleaned) > 120:
        digest = hashlib.sha256(test_name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        cleaned = f"{cleaned[:120]}-{digest}"
    return cleaned + ".json"


def ledger_path(module_path: Path, test_name: str, *, store_root: Path | None, rootdir: Path) -> Path:
    """Where one test item's verdicts live.

    By default beside the test module, in `judge_verdicts/<module>/<test>.json` (so a test and its
    verdicts move together, as pytest-recording does with cassettes); with `--judge-store DIR`,
    in `DIR/<module path relative to rootdir>/<test>.json`.
    """
    if store_root is None:
        folder = module_path.parent / "judge_verdicts" / module_path.stem
    else:
        try:
            relative = module_path.resolve().relative_to(rootdir.resolve())
        except ValueError:
            relative = Path(module_path.name)
        folder = store_root / relative.with_suffix("")
    return folder / ledger_filename(test_name)


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` so a reader sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _validate_entry(path: Path, key: str, entry: Any) -> dict[str, Any]:
    if not re.fullmatch(r"[0-9a-f]{64}", key):
        raise StoreError(f"{path}: {key!r} is not a verdict key (64 hex digits)")
    if not isinstance(entry, dict):
        raise StoreError(f"{path}: the entry for key {key[:12]} is not a JSON object")
    if not isinstance(entry.get("reply"), str):
        raise StoreError(f"{path}: the entry for key {key[:12]} has no 'reply' text")
    return entry


def _read_document(path: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "", {}
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path}: cannot read the verdict file ({exc.__class__.__name__})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise StoreError(f"{path}: the verdict file is not valid JSON ({exc}); fix it, or delete it and re-record") from None
    if not isinstance(data, dict) or not isinstance(data.get("verdicts"), dict):
        raise StoreError(f"{path}: not a verdict file (expected an object with a 'verdicts' object)")
    if data.get("format") != LEDGER_FORMAT:
        raise StoreError(f"{path}: verdict file format {data.get('format')!r}, this plugin reads format {LEDGER_FORMAT}")
    entries = {key: _validate_entry(path, key, entry) for key, entry in data["verdicts"].items()}
    return str(data.get("test") or ""), entries


def read_ledger_file(path: Path) -> dict[str, dict[str, Any]]:
    """Read and validate one ledger file; raise StoreError naming the file when it is malformed."""
    return _read_document(path)[1]


@dataclass
class LedgerDocument:
    """One verdict file as it is on disk: the only code that reads or writes the file format."""

    path: Path
    test: str
    entries: dict[str, dict[str, Any]]

    @classmethod
    def read(cls, path: Path) -> LedgerDocument:
        """Read and validate `path` (a missing file is empty); StoreError names a malformed one."""
        test, entries = _read_document(path)
        return cls(path, test, entries)

    def write(self) -> None:
        """Rewrite atomically in the one layout (sorted, indented), so a diff shows only the change."""
        clean = {k: {f: v for f, v in e.items() if v is not None} for k, e in self.entries.items()}
        document = {"format": LEDGER_FORMAT, "test": self.test, "verdicts": clean}
        write_atomically(self.path, json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n")


class Ledger:
    """The committed verdicts of one test item, loaded on first use and rewritten when changed."""

    def __init__(self, path: Path, nodeid: str) -> None:
        self.path = path
        self.nodeid = nodeid
        self._entries: dict[str, dict[str, Any]] | None = None
        self._lock = threading.Lock()  # score_many may record from several threads
        self.used: set[str] = set()  # keys this run read or wrote (for prune)

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            self._entries = read_ledger_file(self.path)
        return self._entries

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            entry = self._load().get(key)
            if entry is not None:
                self.used.add(key)
            return entry

    def entries(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            return dict(self._load())

    def put(self, key: str, entry: Mapping[str, Any]) -> bool:
        """Store `entry` under `key` and rewrite the file if anything changed; return whether it did."""
        clean = {k: v for k, v in entry.items() if v is not None}
        with self._lock:
            entries = self._load()
            self.used.add(key)
            if entries.get(key) == clean:
                return False
            entries[key] = clean
            LedgerDocument(self.path, self.nodeid, entries).write()
            return True


class _CacheUnsafe(Exception):
    """A cache row is not inline text: never decoded, the cache is set aside."""


def _json_only_disk():
    import diskcache

    class JsonOnlyDisk(diskcache.Disk):
        """Reads back inline text only: no pickle, and no file a row could name."""

        def get(self, key: Any, raw: bool) -> Any:
            if not raw:
                raise _CacheUnsafe("a cache key is pickled")
            return super().get(key, raw)

        def fetch(self, mode: int, filename: Any, value: Any, read: bool) -> Any:
            if mode != diskcache.core.MODE_RAW or not isinstance(value, str):
                raise _CacheUnsafe(f"a cache row has mode {mode}, not inline text")
            return value

        def remove(self, file_path: Any) -> None:
            # Every value is stored inline, so no row names a file of ours.  diskcache removes the
            # file a row names when the row is overwritten or expires (`os.remove(join(dir, name))`,
            # then `os.removedirs`); a crafted row naming `/home/me/.ssh/id_rsa` would delete it.
            return None

    return JsonOnlyDisk


_SQLITE_VALUE = re.compile(r"-?[0-9]{1,20}|[A-Za-z]{1,16}")


def _check_settings(directory: Path) -> None:
    """Refuse a cache whose Settings table diskcache would act on unsafely, before diskcache opens it.

    diskcache runs `PRAGMA <name> = <value>` for every `sqlite_*` row of the database's own
    Settings table, and passes every `disk_*` row to the Disk: a crafted database chooses both.
    """
    import sqlite3

    import diskcache

    db = directory / diskcache.core.DBNAME
    if not db.is_file() or db.stat().st_size == 0:
        return
    known = set(diskcache.core.DEFAULT_SETTINGS) | set(diskcache.core.METADATA)
    con = sqlite3.connect(str(db), timeout=60, isolation_level=None)
    try:
        try:
            rows = con.execute("SELECT key, value FROM Settings").fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return
            raise
    finally:
        con.close()
    for key, value in rows:
        if key not in known:
            raise _CacheUnsafe(f"the cache database has an unknown setting {str(key)[:40]!r}")
        if str(key).startswith("sqlite_") and not _SQLITE_VALUE.fullmatch(str(value)):
            raise _CacheUnsafe(f"the cache database sets {key} to {str(value)[:40]!r}")


class LocalCache:
    """The git-ignored diskcache layer: JSON text per key, opened once per process, never trusted.

    Any failure (corrupt database, read-only directory, an unsafe row) sets the directory aside
    with a `CacheWarning` and the run continues from the ledger and the judge.

    Every database operation runs on one thread of the cache's own: diskcache keeps one SQLite
    connection per thread and `close()` closes only the calling thread's, so calls from the event
    loop's worker threads would leave connections (and locks) open after the session.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._cache: Any = None
        self._disabled = False
        self._open_lock = threading.Lock()
        self._executor: Any = None
        self.notices: list[str] = []

    def _on_thread(self, fn: Any, *args: Any) -> Any:
        with self._open_lock:
            if self._executor is None:
                from concurrent.futures import ThreadPoolExecutor

                self._executor = ThreadPoolExecutor(1, thread_name_prefix="llmjudge-cache")
            executor = self._executor
        return executor.submit(fn, *args).result()

    def _open(self) -> Any:
        """Open the cache once (on the cache's thread); None when it is unusable."""
        if self._cache is None and not self._disabled:
            try:
                self._cache = self._connect()
            except Exception as exc:  # noqa: BLE001 - any failure here means "no cache"
                moved = self._set_aside(exc)
                try:
                    if not moved:
                        raise exc
                    self._cache = self._connect()
                except Exception as exc2:  # noqa: BLE001
                    self._disable(exc2)
        return self._cache

    def _connect(self) -> Any:
        import diskcache

        _check_settings(self.directory)
        # Settings persist in the database, so pass them all on every open (a crafted database
        # cannot choose any): eviction off (a silently evicted verdict is a lost one), every value
        # inline, a generous lock timeout for xdist.
        settings = dict(diskcache.core.DEFAULT_SETTINGS)
        settings.update(eviction_policy="none", size_limit=2**62, disk_min_file_size=2**31, statistics=0, tag_index=0)
        return diskcache.Cache(str(self.directory), timeout=60, disk=_json_only_disk(), **settings)

    def _notice(self, message: str) -> None:
        self.notices.append(message)
        try:
            warnings.warn(CacheWarning(message), stacklevel=3)
        except Warning:
            pass  # warnings turned into errors: the notice still reaches the summary, the run goes on

    def _set_aside(self, exc: BaseException) -> bool:
        if self._cache is not None:
            with contextlib.suppress(Exception):
                self._cache.close()
            self._cache = None
        aside = self.directory.with_name(f"{self.directory.name}.broken-{int(time.time())}-{os.getpid()}")
        try:
            os.replace(self.directory, aside)
        except OSError:
            return False
        self._notice(f"llmjudge: local cache {self.directory} was unusable ({_describe(exc)}); moved to {aside}, starting a new one")
        return True

    def _disable(self, exc: BaseException) -> None:
        self._disabled = True
        self._cache = None
        self._notice(f"llmjudge: local cache {self.directory} cannot be used ({_describe(exc)}); going on without it")

    def _guarded(self, fn: Any) -> Any:
        return self._on_thread(self._guarded_here, fn)

    def _guarded_here(self, fn: Any) -> Any:
        cache = self._open()
        if cache is None:
            return None
        try:
            return fn(cache)
        except Exception as exc:  # noqa: BLE001 - sqlite3.DatabaseError surfaces late, from any call
            if _is_busy(exc):  # another worker holds the database longer than the lock timeout
                self._notice(f"llmjudge: local cache {self.directory} was busy ({_describe(exc)}); skipped it once")
                return None
            self._disabled = True  # one bad cache per session is enough: go on without one
            if not self._set_aside(exc):
                self._notice(f"llmjudge: local cache {self.directory} was unusable ({_describe(exc)}); going on without it")
            return None

    def get(self, key: str) -> dict[str, Any] | None:
        text = self._guarded(lambda cache: cache.get(key))
        if text is None:
            return None
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if not isinstance(value, dict) or not isinstance(value.get("reply"), str):
            self._notice(f"llmjudge: ignored a malformed local cache entry for key {key[:12]}")
            return None
        return value

    def set(self, key: str, value: Mapping[str, Any]) -> None:
        text = canonical_json(dict(value))
        self._guarded(lambda cache: cache.set(key, text))

    def acquire(self, key: str, deadline: float) -> Any:
        """Take an inter-process lock on `key` so two xdist workers do not pay for one call twice.

        Blocks (polling) until `deadline` at most, then goes ahead unlocked rather than fail the
        judgment.  Returns a handle for `release`, or None where locking is not possible.
        """
        try:
            import fcntl
        except ImportError:  # Windows: no cross-process dedupe, a call may be paid twice
            return None
        folder = self.directory.with_name(self.directory.name + ".locks")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            handle = open(folder / f"{key[:16]}.lock", "a+")
        except OSError:
            return None
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                return handle
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return handle
                time.sleep(0.02)

    @staticmethod
    def release(handle: Any) -> None:
        if handle is not None:
            handle.close()  # closing the file releases its flock

    def close(self) -> None:
        """Close the database (on the thread that opened it) and stop that thread."""
        with self._open_lock:
            executor, self._executor = self._executor, None
        if executor is None:
            return

        def close_here() -> None:
            if self._cache is not None:
                with contextlib.suppress(Exception):
                    self._cache.close()
                self._cache = None

        with contextlib.suppress(Exception):
            executor.submit(close_here).result()
        executor.shutdown(wait=True)


def _is_busy(exc: BaseException) -> bool:
    """A lock timeout (diskcache.Timeout, "database is locked"): contention, not corruption."""
    import sqlite3

    if exc.__class__.__name__ == "Timeout" and exc.__class__.__module__.startswith("diskcache"):
        return True
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc).lower()


def _describe(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{exc.__class__.__name__}: {text[:200]}" if text else exc.__class__.__name__
