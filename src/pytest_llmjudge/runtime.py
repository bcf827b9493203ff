"""Per-session state: the resolved settings, the stores, the background loop, the running test.

The pytest layer creates one `JudgeRuntime` per session (per xdist worker) and tells it which test
is running; `assert_judged` finds both here, so it works without a fixture.  A runtime stack,
rather than one global, keeps nested pytest runs (pytester) from clobbering the outer one.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator

from .errors import BudgetExceeded
from .settings import Settings, resolve
from .store.spend import SharedSpend

if TYPE_CHECKING:
    import asyncio

    from .runner import LoopThread
    from .store import Ledger, LocalCache

_UNSET: Any = object()


@dataclass
class TestContext:
    """The test a judgment belongs to: where its verdicts live and what it has judged so far."""

    nodeid: str
    module_path: Path | None
    test_name: str
    marker: dict[str, Any] = field(default_factory=dict)
    request: Any = None  # the item's FixtureRequest: resolves `judge_backend` on first need
    records: list[dict[str, Any]] = field(default_factory=list)  # one per judgment, for reports
    sections: list[tuple[str, str]] = field(default_factory=list)  # report sections (raw replies)
    ledger: Ledger | None = None  # this test's verdict file, once a judgment asked for it
    backend: Any = _UNSET

    def judge_backend(self) -> Any:
        """The `judge_backend` fixture's value for this test (None: use LiteLLM)."""
        if self.backend is _UNSET:
            self.backend = None
            if self.request is not None:
                self.backend = self.request.getfixturevalue("judge_backend")
        return self.backend


class JudgeRuntime:
    """Everything one process shares across judgments."""

    def __init__(
        self,
        settings: Settings,
        *,
        rootdir: Path,
        cache_dir: Path | None = None,
        store_root: Path | None = None,
    ) -> None:
        self.settings = settings
        self.rootdir = rootdir
        self.store_root = store_root
        # Replay reads the ledger only, and live stores nothing: neither opens the cache.
        self._cache_dir = cache_dir if settings.mode in ("auto", "refresh") else None
        self._cache: LocalCache | None = None
        self._loop: LoopThread | None = None
        self.ledgers: dict[Path, Ledger] = {}
        self.current: TestContext | None = None
        self.spent_usd = 0.0  # this process's live calls
        self.shared_spend = SharedSpend.for_run(cache_dir) if settings.budget is not None else None
        self._notices: list[str] = []
        self.drift: list[dict[str, Any]] = []
        self._key_locks: dict[str, asyncio.Lock] = {}
        self._semaphore: asyncio.Semaphore | None = None

    @classmethod
    def standalone(cls) -> "JudgeRuntime":
        """A runtime outside pytest: settings from the environment, nothing committed."""
        return cls(resolve({}, {}, os.environ), rootdir=Path.cwd())

    def ledger_for(self, context: TestContext | None) -> Ledger | None:
        """The test's verdict file, found once per test and shared by every judgment in it."""
        if context is None or context.module_path is None:
            return None
        if context.ledger is None:
            from .store import Ledger, ledger_path

            path = ledger_path(context.module_path, context.test_name, store_root=self.store_root, rootdir=self.rootdir)
            ledger = self.ledgers.get(path)
            if ledger is None:
                ledger = self.ledgers[path] = Ledger(path, context.nodeid)
            context.ledger = ledger
        return context.ledger

    # -- live-call plumbing, used on the background loop only --------------------------------

    @property
    def loop(self) -> LoopThread:
        """The background loop for live calls, started on first need (asyncio stays unimported until then)."""
        if self._loop is None:
            from .runner import LoopThread

            self._loop = LoopThread()
        return self._loop

    def semaphore(self) -> asyncio.Semaphore:
        import asyncio

        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.settings.concurrency)
        return self._semaphore

    @asynccontextmanager
    async def key_lock(self, key: str) -> AsyncIterator[None]:
        """One live call per key at a time in this process (the second finds the first's result)."""
        import asyncio

        lock = self._key_locks.setdefault(key, asyncio.Lock())
        async with lock:
            yield

    @property
    def cache(self) -> LocalCache | None:
        """The local cache (auto and refresh modes), made on first use: a session that never
        judges imports no storage code."""
        if self._cache is None and self._cache_dir is not None:
            from .store import LocalCache

            self._cache = LocalCache(self._cache_dir)
        return self._cache

    @property
    def notices(self) -> list[str]:
        """Things the user should read after the run (cache set aside, budget reached), oldest first."""
        cache_notices = self._cache.notices if self._cache is not None else []
        return list(dict.fromkeys([*self._notices, *cache_notices]))

    def total_spent(self) -> float:
        """Dollars spent on live calls in this run: across every xdist worker where it is shared."""
        if self.shared_spend is not None:
            return max(self.spent_usd, self.shared_spend.total())
        return self.spent_usd

    def check_budget(self) -> None:
        """Refuse a live call once --judge-budget is spent (calls already in flight still finish)."""
        budget = self.settings.budget
        if budget is None:
            return
        spent = self.total_spent()
        if spent >= budget:
            where = " by all xdist workers" if self.shared_spend is not None and self.shared_spend.shared else ""
            message = (
                f"--judge-budget=${budget:g} is spent (${spent:.4f} so far{where}): no further live judge calls "
                "this run. Raise --judge-budget, or replay stored verdicts."
            )
            notice = f"llmjudge: --judge-budget=${budget:g} reached (${spent:.4f} spent); later live judge calls were refused"
            if not any(n.startswith(f"llmjudge: --judge-budget=${budget:g} reached") for n in self._notices):
                self._notices.append(notice)
            raise BudgetExceeded(message)

    def spend(self, cost_usd: float | None) -> None:
        if cost_usd:
            self.spent_usd += cost_usd
            if self.shared_spend is not None:
                self.shared_spend.add(cost_usd)

    def close(self) -> None:
        if self._loop is not None:
            self._loop.stop()
        if self._cache is not None:
            self._notices[:] = self.notices
            self._cache.close()


_ACTIVE: list[JudgeRuntime] = []


def activate(runtime: JudgeRuntime) -> None:
    _ACTIVE.append(runtime)


def deactivate(runtime: JudgeRuntime) -> None:
    if runtime in _ACTIVE:
        _ACTIVE.remove(runtime)


def active() -> JudgeRuntime | None:
    """The innermost running session's runtime, or None outside pytest."""
    return _ACTIVE[-1] if _ACTIVE else None
