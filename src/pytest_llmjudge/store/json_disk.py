"""diskcache made safe to open on an untrusted directory: JSON text in, JSON text out, nothing else.

A cache directory may be shared or hand-edited.  diskcache would unpickle a row whose mode says
so, delete a file a row names, and act on the database's own Settings table; this module refuses
all three.  It imports diskcache, so it is loaded only when a cache is opened.
"""

from __future__ import annotations

import errno
import re
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

import diskcache

__all__ = ["JsonOnlyDisk", "check_settings", "is_busy", "is_full", "open_cache"]


class _CacheUnsafe(Exception):
    """A cache row or setting is not what this plugin writes: never decoded, the cache is set aside."""


if TYPE_CHECKING:  # diskcache ships no types: the two methods overridden here, as diskcache defines them

    class _Disk:
        def __init__(self, directory: str, **kwargs: Any) -> None: ...
        def get(self, key: Any, raw: bool) -> Any: ...

else:
    _Disk = diskcache.Disk


class JsonOnlyDisk(_Disk):
    """Reads back inline text only: no pickle, and no file a row could name."""

    def get(self, key: Any, raw: bool) -> Any:
        if not raw:
            raise _CacheUnsafe("a cache key is pickled")
        return super().get(key, raw)

    def fetch(self, mode: int, filename: object, value: object, read: bool) -> str:
        if mode != diskcache.core.MODE_RAW or not isinstance(value, str):
            raise _CacheUnsafe(f"a cache row has mode {mode}, not inline text")
        return value

    def remove(self, file_path: object) -> None:
        # Every value is stored inline, so no row names a file of ours.  diskcache removes the
        # file a row names when the row is overwritten or expires (`os.remove(join(dir, name))`,
        # then `os.removedirs`); a crafted row naming `/home/me/.ssh/id_rsa` would delete it.
        return None


_SQLITE_VALUE = re.compile(r"-?[0-9]{1,20}|[A-Za-z]{1,16}")


def check_settings(directory: Path) -> None:
    """Refuse a cache whose Settings table diskcache would act on unsafely, before diskcache opens it.

    diskcache runs `PRAGMA <name> = <value>` for every `sqlite_*` row of the database's own
    Settings table, and passes every `disk_*` row to the Disk: a crafted database chooses both.
    """
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


def open_cache(directory: Path) -> Any:
    """Check the settings, then open a `diskcache.Cache` that stores and reads back JSON text only."""
    check_settings(directory)
    # Settings persist in the database, so pass them all on every open (a crafted database
    # cannot choose any): eviction off (a silently evicted verdict is a lost one), every value
    # inline, a generous lock timeout for xdist.
    settings = dict(diskcache.core.DEFAULT_SETTINGS)
    settings.update(eviction_policy="none", size_limit=2**62, disk_min_file_size=2**31, statistics=0, tag_index=0)
    return diskcache.Cache(str(directory), timeout=60, disk=JsonOnlyDisk, **settings)


def is_busy(exc: BaseException) -> bool:
    """A lock timeout (diskcache.Timeout, "database is locked"): contention, not corruption."""
    return isinstance(exc, diskcache.Timeout) or (
        isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc).lower()
    )


_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)})


def is_full(exc: BaseException) -> bool:
    """A full disk or quota ("database or disk is full", ENOSPC): the cache is sound, only out of room."""
    if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS:
        return True
    return isinstance(exc, sqlite3.DatabaseError) and "full" in str(exc).lower()
