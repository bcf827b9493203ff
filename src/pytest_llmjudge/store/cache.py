"""The local cache: git-ignored diskcache under the verdict file, keyed the same way, never trusted.

It spares repeated calls across tests and re-records.  diskcache is imported only when a cache is
first used (replay never opens it), through `json_disk`, which reads back JSON text and nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import Redacted, first_line
from ..keys import canonical_json

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from .locks import HeldLock

__all__ = ["CacheWarning", "LocalCache"]

_T = TypeVar("_T")


class CacheWarning(Redacted, UserWarning):
    """The local cache was unusable and was set aside; the run goes on without it."""


class LocalCache:
    """The git-ignored diskcache layer: JSON text per key, opened once per process, never trusted.

    Any failure (corrupt database, read-only directory, an unsafe row) sets the directory aside
    with a `CacheWarning` and the run continues from the verdict file and the judge.

    Every database operation runs on one thread of the cache's own: diskcache keeps one SQLite
    connection per thread and `close()` closes only the calling thread's, so calls from the event
    loop's worker threads would leave connections (and locks) open after the session.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._cache: Any = None  # a diskcache.Cache (untyped), once opened
        self._disabled = False
        self._open_lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._notices: list[str] = []
        self._unstored: set[str] = set()  # keys whose reply could not be stored here
        self._lost: set[str] = set()  # ... and whose verdict file could not be written either

    def _on_thread(self, fn: Callable[[], _T]) -> _T:
        with self._open_lock:
            if self._executor is None:
                from concurrent.futures import ThreadPoolExecutor  # only once a cache is used

                self._executor = ThreadPoolExecutor(1, thread_name_prefix="llmjudge-cache")
            executor = self._executor
        return executor.submit(fn).result()

    def _open(self) -> Any:
        """Open the cache once (on the cache's thread); None when it is unusable."""
        if self._cache is None and not self._disabled:
            from .json_disk import open_cache

            try:
                self._cache = open_cache(self.directory)
            except Exception as exc:  # noqa: BLE001 - any failure to open means "no cache", never a failed run
                from .json_disk import is_full

                if is_full(exc):  # nothing is wrong with the cache: try again on the next use
                    self._full(exc)
                    return None
                moved = self._set_aside(exc)
                try:
                    if not moved:
                        raise
                    self._cache = open_cache(self.directory)
                except Exception as exc2:  # noqa: BLE001 - as above
                    self._disabled, self._cache = True, None
                    why = _describe(exc2)
                    self._notice(f"llmjudge: local cache {self.directory} cannot be used ({why}); going on without it")
        return self._cache

    def _notice(self, message: str) -> None:
        if message in self._notices:
            return
        self._notices.append(message)
        # Warnings turned into errors: the notice still reaches the summary, the run goes on.
        with contextlib.suppress(Warning):
            warnings.warn(CacheWarning(message), stacklevel=3)

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
        self._notice(
            f"llmjudge: local cache {self.directory} was unusable ({_describe(exc)}); "
            f"moved to {aside}, starting a new one"
        )
        return True

    def _full(self, exc: BaseException) -> None:
        self._notice(
            f"llmjudge: local cache {self.directory} is out of space ({_describe(exc)}); what it could not "
            "store is not cached, and it is used again once there is room"
        )

    def _guarded(self, fn: Callable[[Any], _T]) -> _T | None:
        return self._on_thread(lambda: self._guarded_here(fn))

    def _guarded_here(self, fn: Callable[[Any], _T]) -> _T | None:
        """`fn(cache)` on the cache's thread; None when the cache is unusable, busy or full."""
        cache = self._open()
        if cache is None:
            return None
        try:
            return fn(cache)
        except Exception as exc:  # noqa: BLE001 - sqlite3.DatabaseError surfaces late, from any call
            from .json_disk import is_busy, is_full

            if is_busy(exc):  # another worker holds the database longer than the lock timeout
                self._notice(f"llmjudge: local cache {self.directory} was busy ({_describe(exc)}); skipped it once")
                return None
            if is_full(exc):  # the cache is sound and is used again once there is room
                self._full(exc)
                return None
            self._disabled = True  # one bad cache per session is enough: go on without one
            if not self._set_aside(exc):
                self._notice(
                    f"llmjudge: local cache {self.directory} was unusable ({_describe(exc)}); going on without it"
                )
            return None

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached entry for `key`, or None (a malformed entry is ignored with a notice)."""
        text: object = self._guarded(lambda cache: cache.get(key))
        if text is None:
            return None
        try:
            value = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            value = None
        if not isinstance(value, dict) or not isinstance(value.get("reply"), str):
            self._notice(f"llmjudge: ignored a malformed local cache entry for key {key[:12]}")
            return None
        return value

    def set(self, key: str, value: Mapping[str, Any]) -> bool:
        """Store `value`, redacted as the verdict file stores it, as canonical JSON text under `key`; return
        whether it was stored (not when the cache is unusable or out of space)."""
        from .verdict_file import redact_entry

        text = canonical_json(redact_entry(value))
        stored = bool(self._guarded(lambda cache: cache.set(key, text)))
        if stored:
            self._unstored.discard(key)
        else:
            self._unstored.add(key)
        return stored

    def keeps(self, key: str) -> bool:
        """Whether the reply for `key`, whose verdict file could not be written, is kept here (if not, it
        is counted as lost, for the run's summary)."""
        if key in self._unstored or self._disabled:
            self._lost.add(key)
            return False
        return True

    @property
    def notices(self) -> list[str]:
        """What the user should read after the run: the cache set aside or full, and replies kept nowhere."""
        n = len(self._lost)
        lost = (
            f"llmjudge: {n} judged repl{'ies were' if n != 1 else 'y was'} stored nowhere (neither the verdict "
            f"file nor the local cache could be written): {'they' if n != 1 else 'it'} must be judged again"
        )
        return [*self._notices, lost] if n else list(self._notices)

    def acquire(self, key: str, deadline: float) -> HeldLock | None:
        """Take an inter-process lock on `key` so two xdist workers do not pay for one call twice; polls
        until `deadline`, then goes ahead unlocked (None; on Windows, always None)."""
        from .locks import TAKES_LOCKS, LockTimeout, take_lock

        if not TAKES_LOCKS:
            return None
        folder = self.directory.with_name(self.directory.name + ".locks")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            return take_lock(folder / f"{key[:16]}.lock", deadline)
        except (OSError, LockTimeout):
            return None

    @staticmethod
    def release(held: HeldLock | None) -> None:
        """Release a lock taken by `acquire`, removing its file (None is accepted and ignored)."""
        if held is not None:
            held.release()

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


def _describe(exc: BaseException) -> str:
    text = first_line(exc, default="")
    return f"{exc.__class__.__name__}: {text[:200]}" if text else exc.__class__.__name__
