"""The dollars and tokens one run spent, shared by its xdist workers through a small file under a lock."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .atomic import write_atomically

__all__ = ["SharedSpend", "locked", "number", "prune_old", "read_object", "run_file"]


def run_file(
    cache_dir: Path | Callable[[], Path | None] | None, kind: str, environ: Mapping[str, str] | None = None
) -> Path | None:
    """The file this xdist run's workers share for `kind` ("spend", "pace"), keyed by xdist's test-run
    id (the same in every worker of one run); None outside an xdist worker.  It lives beside the local
    cache (`<cache dir>.<kind>/`), or in the temp dir without one.  `cache_dir` may be a function giving
    it, called only inside a worker (it may create the directory)."""
    environ = os.environ if environ is None else environ
    run_id = environ.get("PYTEST_XDIST_TESTRUNUID", "")
    if not run_id or not environ.get("PYTEST_XDIST_WORKER") or not run_id.replace("-", "").isalnum():
        return None
    if callable(cache_dir):
        cache_dir = cache_dir()
    folder = (
        cache_dir.with_name(f"{cache_dir.name}.{kind}")
        if cache_dir is not None
        else Path(tempfile.gettempdir()) / f"pytest-llmjudge-{kind}"
    )
    return folder / f"{run_id[:64]}.json"


def prune_old(path: Path, max_age_s: float = 86400.0) -> None:
    """Remove the files (and their locks) of runs over a day old beside `path`: of no further use."""
    now = time.time()
    for old in path.parent.glob("*.json"):
        with contextlib.suppress(OSError):
            if old != path and now - old.stat().st_mtime > max_age_s:
                old.unlink()
                old.with_suffix(".lock").unlink(missing_ok=True)


def read_object(path: Path) -> dict[str, Any]:
    """The JSON object a run file holds; empty when it is missing or not one (sharing is best effort)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def number(value: Any) -> float:
    """`value` when it is a number (not a bool), else 0."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold `path`'s lock file (beside it) exclusively: one worker at a time reads and writes `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a+") as handle:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: each worker keeps its own count
            pass
        else:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield


class SharedSpend:
    """The dollars and tokens one run spent: in the run's file (`run_file`) inside xdist, else in memory.

    Calls already in flight when a budget (--judge-budget, --judge-budget-tokens) is reached still
    finish, so a run can overshoot by at most --judge-concurrency calls per worker.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.shared = path is not None
        self._local = 0.0
        self._local_tokens = 0
        self._lock = threading.Lock()

    @classmethod
    def for_run(cls, cache_dir: Path | None, environ: Mapping[str, str] | None = None) -> SharedSpend:
        """The spend of this run: a shared file inside an xdist worker, in memory otherwise."""
        return cls(run_file(cache_dir, "spend", environ))

    @staticmethod
    def _read(path: Path) -> tuple[float, int]:
        document = read_object(path)
        tokens = document.get("tokens")
        return number(document.get("spent_usd")), tokens if isinstance(tokens, int) and not isinstance(
            tokens, bool
        ) else 0

    def _totals(self) -> tuple[float, int]:
        if self.path is None:
            return self._local, self._local_tokens
        try:
            with locked(self.path):
                usd, tokens = self._read(self.path)
        except OSError:
            return self._local, self._local_tokens
        return max(self._local, usd), max(self._local_tokens, tokens)

    def total(self) -> float:
        """The run's spend in dollars so far: every worker's, when shared."""
        return self._totals()[0]

    def tokens(self) -> int:
        """The run's tokens (prompt + completion) so far: every worker's, when shared."""
        return self._totals()[1]

    def add(self, cost_usd: float, tokens: int = 0) -> float:
        """Count `cost_usd` and `tokens`, and return the run's new total in dollars."""
        with self._lock:
            self._local += cost_usd
            self._local_tokens += tokens
            if self.path is None:
                return self._local
            try:
                with locked(self.path):
                    usd, used = self._read(self.path)
                    total = usd + cost_usd
                    write_atomically(self.path, json.dumps({"spent_usd": total, "tokens": used + tokens}))
                    prune_old(self.path)
                    return total
            except OSError:
                return self._local
